// `locksim explain` on a finished simulated run: the run's records handed to
// the story teller (checkers/explain.h), with what it needs to know of the
// algorithm (its backend, for what would have prevented the finding).
#pragma once

#include "checkers/explain.h"
#include "harness/run_result.h"

namespace locksim::harness {

// The story of `result`. A result whose lock trace was not recorded
// (RunExtras::trace_lock off) can still be told, with fewer causes found.
checkers::Story explain_result(const RunResult& result);

}  // namespace locksim::harness
