// A history file in either format locksim reads, told apart by its content,
// never by its name: EDN (a Jepsen test's history.edn, locksim's
// history.edn; edn_history.h) or JSON lines (locksim's history.jsonl;
// history_io.h). `locksim check` takes both, so the file a run wrote can be
// checked whichever of the two a user picks.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "history/edn_history.h"

namespace locksim::history {

enum class HistoryFormat { kEdn, kJsonLines, kJsonArray };

// JSON lines when the first thing in the text is a JSON object with a string
// key (`{"index":0,...`); a JSON array when it is `[` and such an object (no
// format locksim reads, but one a user's tool may write: the load names it);
// EDN otherwise (an op map's keys are keywords, `{:process 0 ...}`, and a
// vector of maps, a #tag or a ; comment is EDN only).
HistoryFormat detect_history_format(std::string_view text);

// The most bytes read_history_text reads: about 17 M ops of EDN. A regular
// file is mapped instead (load_history_file) and has no such bound; this one
// is for a pipe or a device (`check <(zcat h.edn.gz)`, `check /dev/zero`),
// whose bytes are held in memory and might never end.
inline constexpr size_t kHistoryTextBytesMax = size_t{1} << 30;

// The file's bytes. Throws ConfigError naming the path when it is a
// directory, cannot be read, or holds more than kHistoryTextBytesMax.
std::string read_history_text(const std::string& path);

// Reads and parses a history file of either format into the shape the EDN
// reader gives (client ops with their lines, nemesis ops counted and
// skipped). Throws ConfigError with one line naming the path, and the line
// (and for EDN the column), for any input it cannot read. A regular file is
// mapped, and an EDN one's pages are given back as the parse passes them,
// so peak memory is about the ops alone (144 bytes each): a 1 M-op, 86 MB
// history peaks at about 177 MB in `locksim check`. Anything else (a pipe)
// is read whole first. A big EDN file of bare op maps is read in two halves
// on two threads (parse_edn_history_split), with the same result and errors.
EdnHistory load_history_file(const std::string& path);

}  // namespace locksim::history
