// The shape of every "the literature calls this safe" sweep test: the same
// configuration, its fault drawn per seed, run over many seeds, and not one
// violation, error or idle run allowed.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "faults/fault_schedule.h"
#include "harness/run.h"

namespace locksim::testing {

struct CleanSweep {
  int64_t acquisitions = 0;
  int64_t deadlocks = 0;  // MySQL v1's, harmless
};

// Runs `make(seed)` for seeds 1..seeds and fails at the first violation, run
// error, or run with fewer than `min_acquisitions_per_run` acquisitions (a
// run where nobody gets the lock proves nothing), naming the seed and the
// replay command; stops there. Records the acquisitions as a test property.
template <class Make>
CleanSweep expect_clean(uint64_t seeds, Make make, int64_t min_acquisitions_per_run = 1) {
  CleanSweep sweep;
  for (uint64_t seed = 1; seed <= seeds; ++seed) {
    const harness::RunConfig c = make(seed);
    const harness::SimRunReport r = harness::simulate_and_check(c);
    EXPECT_EQ(r.result.mutex.kind, checkers::Verdict::Kind::kValid)
        << "seed " << seed << ": " << r.result.mutex.explanation
        << "\nreplay: " << r.result.replay_command;
    EXPECT_TRUE(r.result.errors.empty()) << "seed " << seed << ": " << r.result.errors.front();
    EXPECT_GE(r.result.acquisitions, min_acquisitions_per_run)
        << "seed " << seed
        << ": a run where nobody gets the lock proves nothing\nreplay: " << r.result.replay_command;
    if (::testing::Test::HasFailure()) break;
    sweep.acquisitions += r.result.acquisitions;
    sweep.deadlocks += r.result.deadlocks;
  }
  ::testing::Test::RecordProperty("acquisitions", std::to_string(sweep.acquisitions));
  return sweep;
}

// Crash `node` at `at`; restart it after `down` (zero: it stays down).
inline faults::FaultEvent crash_fault(const std::string& node, Duration at, Duration down) {
  faults::FaultEvent e;
  e.kind = faults::FaultKind::kCrash;
  e.node = node;
  e.at = at;
  e.duration = down;
  return e;
}

}  // namespace locksim::testing
