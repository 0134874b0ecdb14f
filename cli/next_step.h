// The one "next:" line a command prints after a finding, a sweep or a check:
// the step a newcomer would take next to look closer (issue 28). Each is a
// pure function of what the command was given and what it found, so a test
// holds the words to the flags, and a command that prints nothing else
// (--quiet) prints none.
#pragma once

#include <string>

#include "checkers/check.h"

namespace locksim::cli {

// After `locksim run`: "" for a run that found nothing; otherwise one line,
// ending in a newline, with the two closer looks at this very finding: its
// timeline (the replay command with `--html`, or the file `html` when the run
// already drew it) and `locksim shrink` with the same flags. `replay` is the
// run's replay command ("locksim run ...": it carries the seed and every
// setting), `html` the --html flag given ("" for none).
std::string next_after_run(const std::string& finding, const std::string& replay,
                           const std::string& html);

// After `locksim sweep` or `merge`: open the HTML matrix in `out` (the
// directory the reports were written to).
std::string next_after_sweep(const std::string& out);

// After `locksim check HISTORY`: "" for a valid history; for an invalid one
// without Knossos, the command that has Knossos referee the same file; with
// Knossos, where the shortest failing prefix can be read.
std::string next_after_check(checkers::Validity validity, const std::string& history,
                             bool knossos_asked);

}  // namespace locksim::cli
