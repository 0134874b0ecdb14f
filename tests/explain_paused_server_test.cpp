// `locksim explain` when the server that keeps the lock is paused: a paused
// Redis shows in the lock trace as down, and back it acts at once on what
// came due while it was stopped. A lease that ran out meanwhile expires as
// it resumes, and a contender's queued SET NX takes the lock in the same
// instant. That was told as "cause not determined", or, when the key was
// gone without a new grant, as a restart that lost what it had not written
// to disk (17 of seeds 101-300 of the pause profile): a pause loses nothing.
#include <gtest/gtest.h>

#include <string>

#include "tests/locksim_binary.h"

namespace {

using locksim::testing::locksim;
using locksim::testing::Outcome;

// c1 holds until 11.31 s and is paused from 3.3 s; redis-1 is paused from
// 7.3 s to 12.3 s. The lease runs out at 11.31 s while both are stopped, and
// c5's SET NX, queued at redis-1, takes the lock the moment it resumes.
TEST(ExplainPausedServer, ALeaseThatRanOutDuringTheServersPauseExpiresAsItResumes) {
  const Outcome o = locksim(
      "explain --algorithm set-nx-lua --seed 230 --duration 20s --stuck-after 10s "
      "--profile pause");
  EXPECT_EQ(o.exit_code, 1) << o.err;
  for (const char* step :
       {"11.310s  the lock expired on redis-1 by its own clock; c1 was paused (since 3.316s) and "
        "could not notice",
        "12.253s  redis-1 resumed (paused since 7.263s) and acted at once on the expiry that "
        "came due while it was stopped",
        "mechanism: pause-outlasted-lease"})
    EXPECT_NE(o.out.find(step), std::string::npos) << step << "\n" << o.out;
  EXPECT_EQ(o.out.find("restarted"), std::string::npos) << o.out;
  EXPECT_EQ(o.out.find("cause not determined"), std::string::npos) << o.out;
}

// A crashed server that comes back without the lock is still a restart
// that lost it (set-nx-lua-restart-no-fsync).
TEST(ExplainPausedServer, ACrashedServerBackWithoutTheLockIsStillARestart) {
  const Outcome o = locksim("explain --scenario set-nx-lua-restart-no-fsync");
  EXPECT_NE(o.out.find("mechanism: restart-lost-lock"), std::string::npos) << o.out;
}

}  // namespace

namespace {

// A pause of a holder already paused is nested in the one in force: "paused
// (since X)" names when the holder stopped, not the later, shorter pause
// (it said "since 5.000s" under a pause that began at 2 s).
TEST(ExplainPausedServer, ANestedPauseDoesNotMoveWhenTheHolderStopped) {
  const Outcome o = locksim(
      "explain --algorithm set-nx-lua --seed 1 --clients 2 --hold 4s..4s --duration 30s "
      "--fault 'pause c1 at 2s for 20s' --fault 'pause c1 at 5s for 1s'");
  EXPECT_EQ(o.exit_code, 1) << o.err;
  EXPECT_NE(o.out.find("10.001s  the lock expired on redis-1 by its own clock; c1 was paused "
                       "(since 2.000s) and could not notice"),
            std::string::npos)
      << o.out;
}

}  // namespace
