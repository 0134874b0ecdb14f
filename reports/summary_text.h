// A run's result as text for people (`locksim run` prints it): the verdict
// in a few words, the counts, the evidence (overlaps, faults, errors), the
// history-only checkers' word, and the one command that replays the run.
#pragma once

#include <string>

#include "harness/run_result.h"

namespace locksim::reports {

std::string summary_text(const harness::RunResult& result);

}  // namespace locksim::reports
