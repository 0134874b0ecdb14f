// What a story shows, as a QA pass (2026-11-29) checked stories against
// their histories: a holder cut off by a delay is cut off as by a
// partition, a grant heard one network hop after its write is not a late
// grant, and the promotion a cause reads is not dropped for later faults.
#include <gtest/gtest.h>

#include <string>

#include "tests/locksim_binary.h"

namespace {

using locksim::testing::locksim;
using locksim::testing::Outcome;

// A delay that holds the watchdog's renewals for 30 s cuts the holder off
// as a partition does; it was told as "the hold outlasted the lease (no
// fault froze it)", under a step saying the holder was cut off.
TEST(ExplainStory, ALeaseRunOutUnderADelayIsCutOff) {
  const Outcome o = locksim(
      "explain --algorithm redisson --seed 3 --clients 1 --hold 40s..40s --duration 60s "
      "--timeout 1m --fault 'delay c1|redis-1 at 5s for 40s by 30s'");
  EXPECT_NE(o.out.find("mechanism: lease-expired-while-cut-off"), std::string::npos) << o.out;
  // The same run under a partition says the same.
  const Outcome cut = locksim(
      "explain --algorithm redisson --seed 3 --clients 1 --hold 40s..40s --duration 60s "
      "--timeout 1m --fault 'partition c1|redis-1 at 5s for 40s'");
  EXPECT_NE(cut.out.find("mechanism: lease-expired-while-cut-off"), std::string::npos) << cut.out;
}

// A 30 s hold on a 30 s lease, its grant heard 1 ms after the write: not a
// late grant (it said "heard of its grant only at 0.001s, with 29.999s of
// the lease left"); the watchdog's renewals were cut off.
TEST(ExplainStory, AGrantHeardAHopAfterItsWriteIsNotLate) {
  const Outcome o = locksim(
      "explain --algorithm redisson --seed 3 --clients 2 --hold 30s..30s --retry-pause 218ms "
      "--stuck-after 10s --timeout 1m --profile partition");
  EXPECT_EQ(o.out.find("mechanism: late-grant"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("mechanism: lease-expired-while-cut-off"), std::string::npos) << o.out;
}

// The cause reads redis-1-r1 as "a primary a failover had replaced": its
// promotion at 5.3 s stays in the story although eight later faults would
// have pushed it out.
TEST(ExplainStory, ThePromotionTheCauseReadsIsKept) {
  const Outcome o = locksim(
      "explain --algorithm getset-timestamp --seed 1 --duration 20s --clients 3 "
      "--retry-pause 446ms --idle 3s..8s --stuck-after 10s --replicas 1 --replication-lag 2s "
      "--failover --down-after 1s --discovery-delay 200ms --profile failover");
  EXPECT_NE(o.out.find("mechanism: stale-primary-grant"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("5.300s  failover: redis-1-r1 was promoted to primary"), std::string::npos)
      << o.out;
}

// MySQL's default deadline is a year away: it read "until 31535944s from
// now", a count nobody reads as a year.
TEST(ExplainStory, AFarDeadlineSaysHowManyDays) {
  const Outcome o =
      locksim("explain --algorithm mysql-v1 --fault 'crash @holder at 5s' --duration 60s");
  EXPECT_NE(o.out.find("mechanism: deadline-too-far"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("'s lock until 31535944s (about 364 days) from now"), std::string::npos)
      << o.out;
}

}  // namespace
