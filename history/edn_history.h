// Reading Jepsen histories written in EDN: locksim's own history.edn, a
// Jepsen test's history.edn, or anyone's, so `locksim check` can judge them.
//
// Accepted, as knossos.cli reads them: a file of op maps, one after another
// (one per line, usually), or a single vector or list holding the op maps.
// An op map needs :process, :type and :f; :index, :time and :value are
// optional, and other keys (:error, :node, ...) are ignored. The reader is a
// real EDN reader (strings, characters, numbers, keywords, symbols, nested
// collections, sets, #tags, comments, #_ discards), so any valid EDN value may
// sit in :value or an ignored key.
//
// How ops map onto harness::Op:
//   - :process an integer >= 0: a client op. :f must be :acquire or :release
//     (the mutex model's ops) and :type one of :invoke :ok :fail :info.
//   - :process anything else (:nemesis, the usual case): not a client op, as
//     Jepsen's client-op? says. Such ops are counted and skipped, whatever
//     their :f and :type, so faults in a history never stop a check.
//   - :index: every op has one or none does; they must be unique. Without
//     them, an op's index is its position in the file (nemesis ops counted),
//     as Knossos numbers them.
//   - :time: nanoseconds, kept for messages; never used for ordering (the
//     file's order is the real-time order).
//   - Op::client is -1 (unknown): a foreign history has processes only.
//
// Errors: a ConfigError (exit 2 in the CLI) with one line naming the source,
// the line and column, and what was expected, e.g.
//   history.edn:3:41: :type: expected one of :invoke :ok :fail :info, got :done
//   history.edn:7:1: expected '}' to close the map opened at 6:1, got end of input
// Jepsen's history rules (see find_rule_break) are checked by the caller.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "history/history.h"

namespace locksim::history {

struct EdnHistory {
  std::vector<Op> ops;      // the client ops, in file order
  std::vector<int> lines;   // lines[i]: the 1-based line where ops[i] starts
  int64_t skipped_ops = 0;  // non-client (nemesis) ops, skipped
  int64_t total_ops = 0;    // every op map in the file
};

// Called while a parse goes on with an offset into its text: the parse never
// reads the bytes before it again, so their memory may be given back
// (history_file.cpp drops those pages of a mapped file). Offsets grow, but
// for one case: a text whose :index values do not strictly increase is read
// twice (the first read keeps no list of them), the second time from 0.
using TextDone = std::function<void(size_t offset)>;

// How often `done` is called: every this many bytes of text, at an op's end.
// A page-sized step would be a system call per 50 ops; 1 MiB keeps that cost
// nil and what a big history holds of its text at once small.
inline constexpr size_t kTextDoneStep = size_t{1} << 20;
// For reserving the ops vector up front, so it never grows (growing holds
// the old and the new buffer at once): no op map is shorter than
// `{:process 0 :type :ok :f :acquire}` (34 bytes; 32 leaves slack). A hint
// only: a file of denser ops just grows the vector. Capped at
// kOpsReservedMax ops (2.4 GB of address space; memory is given only to
// what is written).
inline constexpr size_t kOpBytesMin = 32;
inline constexpr size_t kOpsReservedMax = size_t{16} << 20;

// Parses `text`; `source` names it in errors (a path, or "history.edn");
// `done`, if set, is told how far the parse got (see TextDone). Throws
// ConfigError. Never crashes on any input (fuzzed: fuzz/edn_history_fuzz.cpp).
// O(n) time; memory: the ops (sizeof(Op) each), no EDN tree.
EdnHistory parse_edn_history(std::string_view text, const std::string& source,
                             const TextDone& done = {});

// Called by parse_edn_history_split as each half goes on: the parse never
// reads [begin, end) again. A half's calls are contiguous (each begins where
// its last ended, the first at the half's start); the two halves call from
// two threads at once, with disjoint ranges.
using TextRangeDone = std::function<void(size_t begin, size_t end)>;

// Texts shorter than this are read in one piece: a thread costs more than
// it saves below a few MB, and a small history's result is the same either way.
inline constexpr size_t kSplitBytesMin = size_t{4} << 20;
// How far past the middle the split looks for a line that starts an op map;
// a text without one there is read in one piece.
inline constexpr size_t kSplitSearchMax = size_t{1} << 20;

// Where parse_edn_history_split would cut `text` (given split_bytes_min), or
// npos when it would read it in one piece: just after the first newline at
// or past the middle that is followed by '{' or '#' (an op map or a
// record), within kSplitSearchMax, in a text of bare op maps (not one
// vector of them) of at least split_bytes_min bytes.
size_t edn_split_point(std::string_view text, size_t split_bytes_min = kSplitBytesMin);

// parse_edn_history with the same result and the same error for every input,
// in about half the wall time on two cores: a big file of bare op maps (what
// locksim and Jepsen write, one per line) is cut at a line (edn_split_point)
// and its halves read on two threads, then joined. EDN holds no state across
// a newline between two top-level forms, so when both halves read cleanly
// and their :index rules join (both indexed or neither; the first's indices
// all below the second's), the join is exactly the one-piece read. Anything
// else (an error in either half, a cut that fell inside a multi-line form,
// unsorted indices) is read again in one piece, so every error, its line and
// column are parse_edn_history's. `done` (optional) is told which bytes are
// done with (see TextRangeDone), and must be safe to call from two threads.
EdnHistory parse_edn_history_split(std::string_view text, const std::string& source,
                                   const TextRangeDone& done = {},
                                   size_t split_bytes_min = kSplitBytesMin);

// Reads and parses a file. Throws ConfigError, also when it cannot be read.
EdnHistory load_edn_history(const std::string& path);

}  // namespace locksim::history
