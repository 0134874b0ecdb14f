// The simulated ZooKeeper ensemble and the lock variants under faults, run in
// a sim::World directly (without the runner), continued from zk_sim_test.cpp:
// the recipes' pause boundary, the lost create reply's stall, and a holder
// partitioned past its session.
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "algorithms/zk_lock.h"
#include "harness/workload.h"
#include "history/history.h"
#include "tests/zk_sim_run.h"

namespace locksim::sim::zookeeper {
namespace {

// Pauses whoever holds the lock at `at` for `pause`, as a GC pause would;
// `paused` says whether anyone held it then (nobody: no pause).
void pause_holder_at(ZkRun& run, TimePoint at, Duration pause, bool& paused) {
  run.world().at(at, [&run, pause, &paused] {
    const int holder = run.current_holder();
    if (holder < 0) return;
    paused = true;
    Node* n = &run.client(holder);
    n->pause();
    run.world().after(pause, [n] { n->resume(); });
  });
}

// ---------------------------------------------------------------- the pause boundary

// Pauses whoever holds the lock at 5 s for `pause`; nullopt when nobody held
// it then (the seed is skipped), else whether two beliefs overlapped.
std::optional<bool> pause_holder(const std::string& variant, uint64_t seed, Duration pause) {
  const auto algorithm = make(variant);
  ZkParams p;  // tick 2 s, T 10 s, 3 servers
  ZkRun run(seed, p, 3, Duration::seconds(40));
  bool paused = false;
  pause_holder_at(run, TimePoint{} + Duration::seconds(5), pause, paused);
  harness::WorkloadParams w = workload(3);
  w.hold_min = Duration::millis(500);
  w.hold_max = Duration::millis(1500);
  const history::History h = run.run_workload(*algorithm, w);
  if (!paused) return std::nullopt;
  return overlaps(h);
}

class ZkPauseBoundary : public ::testing::TestWithParam<const char*> {};

TEST_P(ZkPauseBoundary, HalfTheTimeoutIsSafeAndTimeoutPlusATickIsNot) {
  const ZkParams p;
  const Duration t = p.negotiate(p.session_timeout);
  int checked = 0;
  for (uint64_t seed = 1; seed <= 30; ++seed) {
    const auto safe = pause_holder(GetParam(), seed, t / 2);
    const auto unsafe = pause_holder(GetParam(), seed, t + p.tick);
    if (!safe || !unsafe) continue;
    ++checked;
    EXPECT_FALSE(*safe) << GetParam() << " seed " << seed << ": a pause of T/2 overlapped";
    EXPECT_TRUE(*unsafe) << GetParam() << " seed " << seed << ": a pause of T + tick was safe";
  }
  EXPECT_GE(checked, 20);
}

// A paused process notices nothing: Curator's connection-state rule does not
// save it, any more than the bare recipe.
INSTANTIATE_TEST_SUITE_P(Variants, ZkPauseBoundary, ::testing::Values("zk-recipe", "zk-curator"));

// Between 2T/3 and T the outcome depends on where the holder's last
// heartbeat fell before the pause: the leader's deadline is that packet + T,
// rounded up to the tick, so the same pause ends before the deadline on one
// seed and after it on another.
struct PauseDetail {
  bool overlap = false;
  bool expired_before_resume = false;  // a session expired while the holder slept
};

std::optional<PauseDetail> pause_holder_detail(const std::string& variant, uint64_t seed,
                                               Duration pause) {
  const auto algorithm = make(variant);
  ZkParams p;  // tick 2 s, T 10 s, 3 servers
  const Duration t = p.negotiate(p.session_timeout);
  ZkRun run(seed, p, 3, Duration::seconds(40));
  const TimePoint pause_at = TimePoint{} + Duration::seconds(5);
  bool paused = false;
  pause_holder_at(run, pause_at, pause, paused);
  // Holds of 2 s to 6 s: the holder's last packet before the pause is its
  // acquire or, past T/3 of silence, a ping, so it falls anywhere in the
  // T/3 before the pause, and the tick-rounded deadline moves with it.
  harness::WorkloadParams w = workload(3);
  w.hold_min = Duration::seconds(2);
  w.hold_max = Duration::seconds(6);
  const history::History h = run.run_workload(*algorithm, w);
  if (!paused) return std::nullopt;
  PauseDetail d;
  d.overlap = overlaps(h);
  for (const SessionExpiry& e : run.deployment().ensemble().expiries()) {
    // The deadline is the last packet + T, rounded up to the next tick.
    EXPECT_EQ(e.deadline_ns, ((e.last_heard_ns + t.ns) / p.tick.ns + 1) * p.tick.ns);
    EXPECT_GT(e.at.ns, e.last_heard_ns + t.ns - p.tick.ns);
    if (e.at < pause_at + pause) d.expired_before_resume = true;
  }
  return d;
}

TEST(ZkPauseBoundary, BetweenTwoThirdsAndTBothOutcomesOccurByTheLastHeartbeat) {
  const ZkParams p;
  const Duration t = p.negotiate(p.session_timeout);
  for (const char* variant : {"zk-recipe", "zk-curator"}) {
    int safe = 0;
    int unsafe = 0;
    // Paused at 5 s, resumed at 14.5 s or 14.75 s: a last packet before 4 s
    // gives a deadline of 14 s (expired while asleep), one from 4 s on 16 s.
    for (const Duration pause : {t * 19 / 20, t * 39 / 40}) {
      ASSERT_GT(pause, t * 2 / 3);
      ASSERT_LT(pause, t);
      for (uint64_t seed = 1; seed <= 30; ++seed) {
        const auto d = pause_holder_detail(variant, seed, pause);
        if (!d) continue;
        // An overlap needs the session to have expired while the holder slept.
        if (d->overlap) {
          EXPECT_TRUE(d->expired_before_resume) << variant << " seed " << seed;
        }
        (d->overlap ? unsafe : safe) += 1;
      }
    }
    EXPECT_GT(safe, 0) << variant << ": no pause in (2T/3, T) was safe";
    EXPECT_GT(unsafe, 0) << variant << ": no pause in (2T/3, T) was a violation";
  }
}

// ---------------------------------------------------------------- the lost create reply

struct LostReplyOutcome {
  algorithms::Outcome first = algorithms::Outcome::kFail;   // c1's acquire
  algorithms::Outcome second = algorithms::Outcome::kFail;  // c2's, 20 s later
  size_t children_at_end = 0;
  bool free_at_end = false;
  bool cut = false;    // the partition really hit between commit and reply
  bool recut = false;  // the second one hit after c1 was connected again
};

// c1 acquires at 1 s; the moment its node is committed, c1 is cut off from
// every server for 8 s. TCP holds the create's reply, so the partition must
// outlast the client's patience (2T/3 = 6.7 s without a packet: it drops the
// connection and the held reply with it) but not the session (T = 10 s). c1
// releases whatever it got and then idles with its session alive; c2 tries at
// 20 s.
//
// With `lose_lookup`, c1 is cut off a second time, for 8 s again, the moment
// it is connected after the first cut: Curator's lookup for the node it may
// have made (getChildren) loses its reply as the create did.
LostReplyOutcome lose_create_reply(const std::string& variant, bool lose_lookup = false) {
  const auto algorithm = make(variant);
  ZkParams p;
  ZkRun run(11, p, 2, Duration::seconds(60));
  const std::string lock = algorithms::zk_lock_path("r");
  LostReplyOutcome out;
  run.world().spawn("c1", &run.client(0), [&] {
    ASSERT_EQ(run.zk(0).connect(), ZkError::kOk);
    run.env(0).sleep(Duration::seconds(1));
    const auto r = algorithm->acquire(run.env(0), "r");
    out.first = r.outcome;
    if (r.outcome == algorithms::Outcome::kOk) algorithm->release(run.env(0), r.lease);
  });
  run.world().spawn("c2", &run.client(1), [&] {
    run.env(1).sleep(Duration::seconds(20));
    const auto r = algorithm->acquire(run.env(1), "r");
    out.second = r.outcome;
    if (r.outcome == algorithms::Outcome::kOk) algorithm->release(run.env(1), r.lease);
  });
  std::vector<const Node*> servers;
  for (Node* n : run.deployment().nodes()) servers.push_back(n);
  const auto cut_c1 = [&run, servers] {
    run.net().partition({&run.client(0)}, servers);
    run.world().after(Duration::seconds(8), [&run] { run.net().heal(); });
  };
  // After the first cut heals, watch c1's session closely; cut c1 off again
  // the moment it is connected, while its lookup is on the wire.
  auto recut = std::make_shared<std::function<void()>>();
  *recut = [&run, &out, cut_c1, recut] {
    if (run.zk(0).state() == ZkSessionState::kConnected) {
      cut_c1();
      out.recut = true;
    } else if (run.world().now() < TimePoint{} + Duration::seconds(19)) {
      run.world().after(Duration::micros(10), *recut);
    }
  };
  // Watch the leader's tree closely from 1 s on; cut c1 off at the commit.
  auto cut = std::make_shared<std::function<void()>>();
  *cut = [&run, &out, lock, cut, cut_c1, recut, lose_lookup] {
    ZkServer* leader = run.deployment().ensemble().serving_leader();
    if (leader != nullptr && !leader->tree().children(lock).children.empty()) {
      cut_c1();
      out.cut = true;
      if (lose_lookup) run.world().after(Duration::seconds(8), *recut);
      return;
    }
    if (run.world().now() < TimePoint{} + Duration::seconds(2)) {
      run.world().after(Duration::micros(10), *cut);
    }
  };
  run.world().at(TimePoint{} + Duration::seconds(1), *cut);
  run.world().run_until(TimePoint{} + Duration::seconds(60));
  EXPECT_TRUE(run.world().errors().empty());
  ZkServer* leader = run.deployment().ensemble().serving_leader();
  EXPECT_NE(leader, nullptr);
  if (leader != nullptr) out.children_at_end = leader->tree().children(lock).children.size();
  out.free_at_end = run.deployment().lock_free_for_fresh_contender(lock);
  return out;
}

TEST(ZkLostCreateReply, TheRecipesOrphanBlocksEveryoneWhileItsSessionLives) {
  const LostReplyOutcome o = lose_create_reply("zk-recipe");
  ASSERT_TRUE(o.cut);
  // c1 waited on its own orphan until its bounded wait ran out...
  EXPECT_EQ(o.first, algorithms::Outcome::kFail);
  // ...and c2, 20 s later, waits behind it too: a stall, not an expiry.
  EXPECT_EQ(o.second, algorithms::Outcome::kFail);
  EXPECT_EQ(o.children_at_end, 1u);  // the orphan, at 60 s, its session alive
  EXPECT_FALSE(o.free_at_end);
}

TEST(ZkLostCreateReply, CuratorsProtectedModeFindsItsOwnNode) {
  const LostReplyOutcome o = lose_create_reply("zk-curator");
  ASSERT_TRUE(o.cut);
  EXPECT_EQ(o.first, algorithms::Outcome::kOk);
  EXPECT_EQ(o.second, algorithms::Outcome::kOk);
  EXPECT_EQ(o.children_at_end, 0u);
  EXPECT_TRUE(o.free_at_end);
}

// Curator retries look-then-create as one step (CreateBuilderImpl's
// protected mode): after a lost reply, no create is sent before a lookup has
// answered. A lookup lost too is retried, never skipped: creating a second
// node would leave the first, the client's own, blocking everyone while its
// session lives, as the bare recipe's orphan does.
TEST(ZkLostCreateReply, CuratorRetriesALostLookupBeforeCreatingAgain) {
  const LostReplyOutcome o = lose_create_reply("zk-curator", /*lose_lookup=*/true);
  ASSERT_TRUE(o.cut);
  ASSERT_TRUE(o.recut);
  // c1's bounded wait (10 s) ran out during the two cuts...
  EXPECT_NE(o.first, algorithms::Outcome::kOk);
  // ...but it left nothing behind: c2 acquires at 20 s.
  EXPECT_EQ(o.second, algorithms::Outcome::kOk);
  EXPECT_EQ(o.children_at_end, 0u);
  EXPECT_TRUE(o.free_at_end);
}

// ---------------------------------------------------------------- a partitioned holder

// Cuts whoever holds the lock at 5 s off from every server for 15 s (past
// T = 10 s); nullopt when nobody held it, else whether beliefs overlapped.
std::optional<bool> partition_holder(const std::string& variant, uint64_t seed) {
  const auto algorithm = make(variant);
  ZkParams p;
  ZkRun run(seed, p, 3, Duration::seconds(60));
  bool cut = false;
  run.world().at(TimePoint{} + Duration::seconds(5), [&] {
    const int holder = run.current_holder();
    if (holder < 0) return;
    cut = true;
    std::vector<const Node*> servers;
    for (Node* n : run.deployment().nodes()) servers.push_back(n);
    run.net().partition({&run.client(holder)}, servers);
    run.world().after(Duration::seconds(15), [&run] { run.net().heal(); });
  });
  harness::WorkloadParams w = workload(3);
  // Holds long enough to outlast the session: the recipe is still working
  // when its session expires.
  w.hold_min = Duration::seconds(25);
  w.hold_max = Duration::seconds(30);
  const history::History h = run.run_workload(*algorithm, w);
  if (!cut) return std::nullopt;
  return overlaps(h);
}

TEST(ZkPartition, TheRecipeKeepsWorkingAndCuratorStopsAtSuspended) {
  int checked = 0;
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    const auto recipe = partition_holder("zk-recipe", seed);
    const auto curator = partition_holder("zk-curator", seed);
    if (!recipe || !curator) continue;
    ++checked;
    EXPECT_TRUE(*recipe) << "seed " << seed << ": the recipe's partitioned holder did not overlap";
    EXPECT_FALSE(*curator) << "seed " << seed << ": Curator's partitioned holder overlapped";
  }
  EXPECT_GE(checked, 15);
}

}  // namespace
}  // namespace locksim::sim::zookeeper
