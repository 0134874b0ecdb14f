// Swarm workloads (harness/workload_draw.h): what a `sweep` user relies
// on — a drawn run replays byte for byte from its replay command's values,
// what they gave is kept, the shapes all occur, no drawn hold outruns a TTL
// lease on its own, and an idle gap is really left idle.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "faults/profile.h"
#include "harness/profile_deployment.h"
#include "harness/run.h"
#include "harness/settings.h"
#include "harness/sweep/sweep.h"
#include "harness/workload_draw.h"
#include "history/history_io.h"

namespace locksim::harness {
namespace {

RunConfig drawn(const std::string& algorithm, const std::string& profile, uint64_t seed) {
  RunConfig c;
  c.algorithm = algorithm;
  c.profile = profile;
  c.seed = seed;
  c.duration = Duration::seconds(20);
  c.workload.draw = true;
  return c;
}

TEST(WorkloadDraw, ADrawnRunReplaysByteForByteFromItsValues) {
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    const RunConfig given = drawn("set-nx-lua", "failover", seed);
    const RunConfig resolved = with_drawn_workload(given);
    EXPECT_FALSE(resolved.workload.draw);
    // A second draw changes nothing: the replay's values are final.
    EXPECT_EQ(replay_command(with_drawn_workload(resolved)), replay_command(resolved));
    const SimRunReport a = simulate_and_check(given);
    const SimRunReport b = simulate_and_check(resolved);
    EXPECT_EQ(history::to_jsonl(a.result.history), history::to_jsonl(b.result.history))
        << "seed " << seed;
    EXPECT_EQ(a.result.replay_command, replay_command(with_profile_deployment(resolved)))
        << "seed " << seed;
    EXPECT_EQ(a.result.replay_command.find("draw"), std::string::npos);
  }
}

TEST(WorkloadDraw, GivenSettingsAreKeptAndOnlyDefaultsDrawn) {
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    RunConfig c = drawn("set-nx-lua", "partition", seed);
    c.workload.clients = 7;
    c.workload.retry_pause = Duration::millis(20);
    const RunConfig r = with_drawn_workload(c);
    EXPECT_EQ(r.workload.clients, 7);
    EXPECT_EQ(r.workload.retry_pause, Duration::millis(20));
  }
}

// The four shapes all occur, a lock that reports a validity is always held by
// a careful client, and a TTL lock without one is never held past 85 % of its
// lease by the draw alone (a careless client's overrun is not the fault's finding).
TEST(WorkloadDraw, EveryShapeOccursAndNoDrawnHoldOutrunsATtlLease) {
  std::set<std::string> shapes;
  for (uint64_t seed = 1; seed <= 200; ++seed) {
    const RunConfig red = with_drawn_workload(drawn("redlock", "client-clock", seed));
    EXPECT_TRUE(red.workload.hold_within_validity) << "seed " << seed;
    const WorkloadParams& w = with_drawn_workload(drawn("set-nx-lua", "pause", seed)).workload;
    EXPECT_LE(w.hold_max, Duration::millis(8'500)) << "seed " << seed << " (ttl 10s)";
    EXPECT_LE(w.hold_min, w.hold_max);
    if (w.clients == 5 && w.hold_max == Duration::seconds(3) && w.idle_max == Duration::zero())
      shapes.insert("contended");
    if (w.idle_min >= Duration::millis(1500)) shapes.insert("quiet");
    if (w.hold_min >= Duration::seconds(4)) shapes.insert("long or edge");
    if (red.workload.hold_min >= Duration::seconds(10)) shapes.insert("to the validity's end");
  }
  EXPECT_EQ(shapes.size(), 4u);
}

// A seed that draws long holds gets a run in which every client can hold
// twice (at most 60 s); the others keep the sweep's run.
TEST(WorkloadDraw, LongHoldsGetARunForEveryClientToHoldTwice) {
  int long_seeds = 0;
  for (uint64_t seed = 1; seed <= 100; ++seed) {
    const RunConfig before = drawn("zk-recipe", "client-clock", seed);
    const RunConfig c = with_drawn_workload(before);
    const WorkloadParams& w = c.workload;
    const Duration turns = (w.hold_max + w.idle_max) * (2 * static_cast<int64_t>(w.clients));
    if (w.hold_min >= Duration::seconds(4)) {
      ++long_seeds;
      EXPECT_EQ(c.duration, std::max(before.duration, std::min(turns, Duration::seconds(60))))
          << "seed " << seed;
    } else {
      EXPECT_EQ(c.duration, before.duration) << "seed " << seed;
    }
  }
  EXPECT_GT(long_seeds, 10);
}

// A quiet lock's gaps outlast the failover deployment's replication lag, so a
// grant can follow a free period long enough for the replica to have the
// release and not the grant.
TEST(WorkloadDraw, QuietGapsOutlastTheReplicationLag) {
  int quiet = 0;
  for (uint64_t seed = 1; seed <= 100; ++seed) {
    const RunConfig r = with_drawn_workload(drawn("mysql-center", "failover", seed));
    if (r.workload.idle_min < Duration::millis(1500)) continue;
    ++quiet;
    const Duration lag = faults::profile_replication_lag(seed);
    EXPECT_GT(r.workload.idle_min, lag) << "seed " << seed;
  }
  EXPECT_GE(quiet, 20);
}

// After each release the client waits its drawn idle time before it asks again.
TEST(WorkloadDraw, AnIdleGapSeparatesAReleaseFromTheNextAcquire) {
  RunConfig c;
  c.algorithm = "set-nx-lua";
  c.duration = Duration::seconds(30);
  c.workload.clients = 1;
  c.workload.idle_min = Duration::seconds(2);
  c.workload.idle_max = Duration::seconds(3);
  const SimRunReport r = simulate_and_check(c);
  const auto& ops = r.result.history.ops;
  int gaps = 0;
  for (size_t i = 0; i + 1 < ops.size(); ++i) {
    if (ops[i].f != history::OpF::kRelease || ops[i].type != history::OpType::kOk) continue;
    const auto& next = ops[i + 1];
    ASSERT_EQ(next.f, history::OpF::kAcquire);
    EXPECT_GE(next.time_ns - ops[i].time_ns, Duration::seconds(2).ns);
    EXPECT_LE(next.time_ns - ops[i].time_ns, Duration::seconds(3).ns);
    ++gaps;
  }
  EXPECT_GE(gaps, 5);
}

// A sweep run's replay command gives the drawn values, and the plan
// keeps the choice across a resume (sweep.json's "swarm").
TEST(WorkloadDraw, ASwarmSweepsRunsReplayByTheirDrawnValues) {
  SweepPlan plan;
  plan.algorithms = {"redlock"};
  plan.profiles = {"client-clock"};
  plan.base.duration = Duration::seconds(20);
  plan.base.workload.draw = true;
  const RunConfig c = plan.config_of("redlock", "client-clock", 3);
  EXPECT_FALSE(c.workload.draw);
  EXPECT_NE(replay_command(c).find("--hold-within-validity"), std::string::npos)
      << replay_command(c);
  EXPECT_TRUE(plan_from_json(plan_to_json(plan, false), "sweep.json").base.workload.draw);
  plan.base.workload.draw = false;
  EXPECT_FALSE(plan_from_json(plan_to_json(plan, false), "sweep.json").base.workload.draw);
  EXPECT_EQ(plan.config_of("redlock", "client-clock", 3).workload.clients, 5);
}

}  // namespace
}  // namespace locksim::harness
