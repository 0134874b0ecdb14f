// The liveness checker: was the lock stuck?
//
// A lock that nobody can take is not a safety violation, but it is what a
// client crashing between SETNX and EXPIRE does to the naive lock, and users
// need it told apart from a violation. This checker looks at the end of the
// run: if no client has held the lock for at least `stuck_after`, while
// clients kept trying (acquire ops that did not succeed), the lock is stuck.
// It also reports the longest unheld stretch anywhere in the run, as a
// measure of delay, without judging it. Nemesis ops (faults) are skipped:
// only client acquires count as attempts, as in Jepsen's checkers.
#pragma once

#include <cstdint>
#include <string>

#include "env/time.h"
#include "checkers/mutex_checker.h"
#include "history/history.h"

namespace locksim::checkers {

struct LivenessVerdict {
  Verdict::Kind kind = Verdict::Kind::kValid;  // kInvalid: stuck
  std::string checker = "liveness";
  TimePoint unheld_since;  // start of the final unheld stretch (if stuck)
  Duration unheld_for = Duration::zero();
  int64_t failed_attempts = 0;  // acquires that did not succeed in that stretch
  int last_holder = -1;         // client whose interval ended it, or -1
  int64_t last_acquire_index = -1;
  Duration longest_gap = Duration::zero();  // longest unheld stretch in the run
  TimePoint longest_gap_start;
  std::string explanation;
};

// Precondition: stuck_after > 0 (RunConfig validation rejects the rest).
LivenessVerdict check_liveness(const history::History& history, Duration stuck_after);

}  // namespace locksim::checkers
