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
// (history_file.cpp drops those pages of a mapped file). Offsets only grow.
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

// Reads and parses a file. Throws ConfigError, also when it cannot be read.
EdnHistory load_edn_history(const std::string& path);

}  // namespace locksim::history
