// One part of a history's text read on its own, for the split read of
// edn_split.cpp: what parse_edn_history does to a file of op maps, applied
// to a slice of it, with what the caller needs to join two slices (where
// the second's lines and positions start) and to tell whether the join is
// exactly what one read of the whole would give. Internal to history/ (and
// its tests).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "history/edn_history.h"

namespace locksim::history {

// An op as a part kept compact: 32 bytes where an Op takes 144, so a second
// half of a 1 M-op history held beside the first's Ops costs 16 MB, not 72.
struct PartOp {
  int64_t index = 0;  // :index, or the op's position in its part (nemesis counted)
  int64_t time_ns = 0;
  int64_t process = 0;
  int32_t line = 0;  // 1-based, counted from the part's start
  uint8_t type = 0;  // OpType
  uint8_t f = 0;     // OpF
};

struct EdnPart {
  EdnHistory history;           // ops and lines, unless compact; the counts always
  std::vector<PartOp> compact;  // the client ops, when asked for compact ones
  bool indexed = false;         // its ops carry :index (meaningful when total_ops > 0)
  int64_t index_min = 0;        // the least and greatest :index, when indexed
  int64_t index_max = 0;
  int end_line = 1;  // the line the reader ended on (1 + the part's newlines)
};

// Reads `text` as a sequence of top-level forms, each an op map (never as
// one vector of them: a part is a slice of a file of bare op maps), with the
// checks and errors of parse_edn_history, lines and columns counted from
// the part's start. Client ops go to history.ops/lines, or to `compact`
// when `compact` is set. `ops_reserved` is reserved up front (for the whole
// file when the part is its first half). Throws ConfigError, and another
// exception when its :index values do not strictly increase (it keeps no
// list of them, see edn_history.cpp's OpCollector): the split read then
// reads the whole text, which sorts them out.
EdnPart parse_edn_part(std::string_view text, const std::string& source, bool compact,
                       size_t ops_reserved, const TextDone& done);

// parse_edn_history_split cut at `cut` (edn_split_point's choice there; any
// line start for tests, which is what makes it exact). Precondition: cut is
// inside the text, just after a newline.
EdnHistory parse_edn_history_cut(std::string_view text, const std::string& source, size_t cut,
                                 const TextRangeDone& done);

}  // namespace locksim::history
