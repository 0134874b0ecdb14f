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
//
// A lock can also be stuck *held*: a holder whose work hangs while its
// process keeps the lease alive (Redisson's watchdog renews it forever). Told
// by the workload's longest planned hold (`hold_max`): if one client still
// holds at the end, has held for longer than `hold_max` + `stuck_after`, and
// since `hold_max` into its hold nobody else got the lock while clients kept
// trying (acquires failed, or were still waiting at the end: a Redisson
// waiter sleeps on the release and never fails), the lock is stuck with
// that holder — unless a pause fault still freezes the holder at the end
// (the pause is that run's story; a frozen process is not a hung hold).
// Without `hold_max` (zero: a history from a
// file) this rule is off: a long hold is not a hung one.
#pragma once

#include <cstdint>
#include <string>

#include "checkers/mutex_checker.h"
#include "env/time.h"
#include "history/history.h"

namespace locksim::checkers {

struct LivenessVerdict {
  Verdict::Kind kind = Verdict::Kind::kValid;  // kInvalid: stuck
  std::string checker = "liveness";
  TimePoint unheld_since;  // start of the final unheld stretch (if stuck)
  Duration unheld_for = Duration::zero();
  int64_t failed_attempts = 0;   // acquires that did not succeed in that stretch
  int64_t unknown_attempts = 0;  // of those, the ones whose outcome is unknown (:info)
  int last_holder = -1;          // client whose interval ended it, or -1
  int64_t last_acquire_index = -1;
  // Stuck held (see above): the holder, its acquire op, and since when its
  // hold outlasted any planned one; held_by -1 when the lock is not stuck held.
  int held_by = -1;
  int64_t held_acquire_index = -1;
  TimePoint overdue_since;
  int64_t waiting_at_end = 0;  // acquires still waiting when the run ended (stuck held)
  Duration longest_gap = Duration::zero();  // longest unheld stretch in the run
  TimePoint longest_gap_start;
  std::string explanation;
};

// "4 acquire attempts failed and 5 ended unknown": `total` acquires that
// did not succeed, `unknown` of them of unknown outcome, as `noun` ("acquire
// attempt"; an s is added for more than one). An :info acquire may well have
// been granted (that is often the stuck lock's cause), so it is not told as
// failed.
std::string unsuccessful_text(int64_t total, int64_t unknown, const std::string& noun);

// Precondition: stuck_after > 0 (RunConfig validation rejects the rest);
// hold_max >= 0, zero when unknown.
LivenessVerdict check_liveness(const history::History& history, Duration stuck_after,
                               Duration hold_max = Duration::zero());

}  // namespace locksim::checkers
