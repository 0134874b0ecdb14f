// Redisson's RLock with its watchdog (algorithms/redisson_lock.h): a pause
// breaks it once it outlasts the 30 s lease counted from the last renewal,
// so the pause it survives lies between 20 and 30 s and moves with where the
// pause falls in the 10 s renewal period; without the watchdog the fixed
// lease is all there is. And its waiters: woken by the unlock message within
// a round trip, or, with the message lost, only by the PTTL.
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "faults/fault_schedule.h"
#include "harness/margin/margin.h"
#include "harness/run.h"
#include "harness/scenario.h"
#include "tests/locksim_binary.h"

namespace locksim::harness {
namespace {

// Two clients that each hold for 45 s (past the 30 s lease); the holder at
// `start` pauses for `pause`.
RunConfig paused_holder(const std::string& algorithm, Duration start, Duration pause) {
  RunConfig c;
  c.algorithm = algorithm;
  c.seed = 1;
  c.duration = Duration::seconds(100);
  c.workload.clients = 2;
  c.workload.hold_min = Duration::seconds(45);
  c.workload.hold_max = Duration::seconds(45);
  c.faults.events.push_back(faults::parse_fault("pause @holder at " +
                                                    std::to_string(start.to_ms()) + "ms for " +
                                                    std::to_string(pause.to_ms()) + "ms",
                                                "f"));
  return c;
}

checkers::Verdict::Kind mutex(const RunConfig& c) {
  return simulate_and_check(c).result.mutex.kind;
}

constexpr auto kSafe = checkers::Verdict::Kind::kValid;
constexpr auto kViolation = checkers::Verdict::Kind::kInvalid;

// A waiter whose resubscription after a failover outlasts its wait for the
// unlock message (it connects, then subscribes, each within the time left)
// ends the wait and goes on: the run is not cut short. It once scheduled its
// wake in the past and stopped the fixed-workload matrix at this seed.
// A client that takes and releases its lock hundreds of times a watchdog
// period: each release ends its lock's watchdog then (Redisson cancels the
// renewal timer at unlock), so the client's process never has more than a
// few tasks. Watchdogs that slept out their 10 s period first piled up past
// the process's task limit and stopped the run on a broken invariant.
TEST(Redisson, ShortHoldsEndTheirWatchdogsAtRelease) {
  for (const char* algorithm : {"redisson", "redisson-fenced", "redisson-fair"}) {
    const testing::Outcome o = testing::locksim(std::string("run --algorithm ") + algorithm +
                                                " --seed 1 --duration 30s --clients 1 --hold "
                                                "5ms..10ms");
    EXPECT_EQ(o.exit_code, 0) << algorithm << ": " << o.err;
    EXPECT_EQ(o.err.find("invariant broken"), std::string::npos) << o.err;
    EXPECT_NE(o.out.find("OK: no mutual-exclusion violation in"), std::string::npos) << o.out;
  }
}

TEST(Redisson, AWaiterWhoseResubscribeOutlastsItsWaitGoesOn) {
  const testing::ScratchDir dir("locksim_redisson_");
  const testing::Outcome o = testing::locksim(
      "run --algorithm redisson-leased --seed 118 --duration 20s --stuck-after 10s --replicas 1 "
      "--replication-lag 1s --failover --down-after 1s --discovery-delay 200ms --profile failover "
      "--out " +
      dir.path().string());
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(o.err.find("invariant broken"), std::string::npos) << o.err;
  EXPECT_NE(o.out.find("wrote "), std::string::npos) << o.out;
}

// A pause that starts just after the acquire (the lease was just set) may
// last almost the whole 30 s: the renewal due at 10 s runs when it ends.
TEST(Redisson, APauseRightAfterARenewalBreaksTheLockOnlyNearThirtySeconds) {
  EXPECT_EQ(mutex(paused_holder("redisson", Duration::seconds(1), Duration::millis(28'500))),
            kSafe);
  EXPECT_EQ(mutex(paused_holder("redisson", Duration::seconds(1), Duration::seconds(31))),
            kViolation);
}

// A pause that starts just before the renewal due at 10 s has only 20 s left
// of the lease set at the acquire.
TEST(Redisson, APauseJustBeforeARenewalBreaksTheLockAfterTwentySeconds) {
  EXPECT_EQ(mutex(paused_holder("redisson", Duration::millis(9'500), Duration::seconds(20))),
            kSafe);
  EXPECT_EQ(mutex(paused_holder("redisson", Duration::millis(9'500), Duration::millis(21'500))),
            kViolation);
}

// Without faults the watchdog carries 45 s holds through a 30 s lease; with
// the same fixed lease (no watchdog) the same holds overlap.
TEST(Redisson, TheWatchdogCarriesHoldsPastTheLeaseAndAFixedLeaseDoesNot) {
  RunConfig c = paused_holder("redisson", Duration::seconds(1), Duration::zero());
  c.faults.events.clear();
  const SimRunReport watched = simulate_and_check(c);
  EXPECT_EQ(watched.result.mutex.kind, kSafe) << watched.result.mutex.explanation;
  EXPECT_GE(watched.result.acquisitions, 2);
  c.algorithm = "redisson-leased";
  c.algorithm_params["ttl"] = "30s";
  EXPECT_EQ(mutex(c), kViolation);
}

// A hung holder (its work stuck, its process running): the watchdog, a task
// of the process, keeps renewing, so the lock is held for good; without the
// watchdog the lease runs out under the hung holder, the next client takes
// it, and the first, unhung, still believes it holds.
TEST(Redisson, AHungHolderKeepsTheLockWithTheWatchdogAndLosesItWithout) {
  RunConfig c = paused_holder("redisson", Duration::seconds(1), Duration::zero());
  c.faults.events = {faults::parse_fault("hang @holder at 2s", "f")};
  c.workload.hold_min = c.workload.hold_max = Duration::seconds(5);
  const SimRunReport hung = simulate_and_check(c);
  EXPECT_EQ(hung.result.mutex.kind, kSafe) << hung.result.mutex.explanation;
  EXPECT_EQ(hung.result.acquisitions, 1) << "nobody else ever gets the lock";
  c.algorithm = "redisson-leased";
  c.faults.events = {faults::parse_fault("hang @holder at 2s for 20s", "f")};
  EXPECT_EQ(mutex(c), kViolation);
}

// A hang for good stays for good: a later timed hang of the same client
// ends at its time only if nothing holds the client longer.
TEST(Redisson, AHangForGoodIsNotEndedByALaterTimedOne) {
  RunConfig c = paused_holder("redisson", Duration::seconds(1), Duration::zero());
  c.faults.events = {faults::parse_fault("hang c1 at 1s", "f"),
                     faults::parse_fault("hang c1 at 2s for 1s", "f")};
  int hangs = 0;
  int unhangs = 0;
  for (const history::Op& op : simulate_and_check(c).result.history.ops) {
    hangs += op.f == history::OpF::kHang;
    unhangs += op.f == history::OpF::kUnhang;
  }
  EXPECT_EQ(hangs, 2);
  EXPECT_EQ(unhangs, 0);
}

// `locksim margin --algorithm redisson --fault pause`: a lone holder paused
// 1 ms before its release. The pause it survives is the 30 s lease less the
// time since the watchdog's last renewal: ~28 s after a 2 s hold (no renewal
// yet), ~20.1 s after a 9.9 s hold (the renewal at 10 s not yet run).
TEST(Redisson, ThePauseMarginLiesBetweenTwentyAndThirtySecondsByTheRenewalPhase) {
  for (const int64_t hold_ms : {2'000, 9'900}) {
    SCOPED_TRACE("hold " + std::to_string(hold_ms) + " ms");
    margin::MarginRequest request;
    request.base.algorithm = "redisson";
    request.base.seed = 7;
    request.base.workload.hold_min = Duration::millis(hold_ms);
    request.base.workload.hold_max = Duration::millis(hold_ms);
    request.kind = margin::Kind::kPause;
    margin::set_default_range(request);
    const margin::MarginResult m = margin::measure_margin(request);
    ASSERT_EQ(m.outcome, margin::Bisection::Outcome::kFound);
    ASSERT_TRUE(m.above.has_value() && m.theory.has_value());
    const int64_t expected_ns = Duration::millis(30'000 - (hold_ms - 1) % 10'000).ns;
    EXPECT_EQ(*m.theory, expected_ns) << m.theory_formula;
    EXPECT_LE(std::llabs(m.above->size - expected_ns), expected_ns / 100) << m.theory_formula;
    EXPECT_GE(m.above->size, Duration::seconds(20).ns);
    EXPECT_LE(m.above->size, Duration::seconds(30).ns);
  }
}

// The watchdog renews a lease the holder never sees end: when a cut-off
// holder's lease runs out, the store lets go and nothing tells the holder
// (the "holder never told" finding); a fixed lease it overran is not that.
TEST(Redisson, ACutOffHolderIsNeverToldItLostTheLock) {
  const SimRunReport r = simulate_and_check(load_scenario("redisson-partition").config);
  EXPECT_EQ(r.result.mutex.kind, kViolation);
  EXPECT_FALSE(r.result.exposure.never_told.empty()) << r.result.exposure.explanation;
  const SimRunReport leased =
      simulate_and_check(load_scenario("redisson-leased-long-holds").config);
  EXPECT_EQ(leased.result.mutex.kind, kViolation);
  EXPECT_TRUE(leased.result.exposure.never_told.empty()) << leased.result.exposure.explanation;
}

// A holder whose work hangs keeps the lock for the rest of the run: the
// liveness checker calls it stuck with its holder, and explain names why.
TEST(Redisson, AHungHolderLeavesTheLockStuckWithIt) {
  const SimRunReport r = simulate_and_check(load_scenario("redisson-hung-holder").config);
  EXPECT_EQ(r.result.mutex.kind, kSafe);
  EXPECT_EQ(r.result.liveness.kind, kViolation) << r.result.liveness.explanation;
  EXPECT_GE(r.result.liveness.held_by, 0);  // whoever got the lock first (c3 on seed 1)
}

// --- waiting on the unlock message (step 2) --------------------------------

// Each acquire that succeeded, as the history shows it: when it was invoked,
// when it returned :ok, and when the release before it (by anyone) returned.
struct Grant {
  int client = 0;
  Duration latency;   // invoke to :ok
  Duration handover;  // the previous release's :ok to this :ok
};

std::vector<Grant> grants(const history::History& h) {
  std::vector<Grant> out;
  std::map<int64_t, int64_t> invoked_ns;  // process -> its open acquire
  int64_t released_ns = -1;
  for (const history::Op& op : h.ops) {
    if (!history::is_client_op(op)) continue;
    if (op.f == history::OpF::kAcquire && op.type == history::OpType::kInvoke) {
      invoked_ns[op.process] = op.time_ns;
    } else if (op.f == history::OpF::kAcquire && op.type == history::OpType::kOk) {
      const Duration handover{released_ns < 0 ? 0 : op.time_ns - released_ns};
      out.push_back({op.client, Duration{op.time_ns - invoked_ns.at(op.process)}, handover});
    } else if (op.f == history::OpF::kRelease && op.type == history::OpType::kOk) {
      released_ns = op.time_ns;
    }
  }
  return out;
}

// A refused waiter subscribes and sleeps on the channel; the release's
// PUBLISH wakes it, so it takes the lock a round trip after the release
// (the message's way to it, its acquire's way there and back), not after
// the 30 s PTTL or a polling pause.
TEST(Redisson, AWaiterTakesTheLockWithinARoundTripOfTheRelease) {
  RunConfig c = paused_holder("redisson-leased", Duration::seconds(1), Duration::zero());
  c.faults.events.clear();
  c.algorithm_params["ttl"] = "30s";
  c.duration = Duration::seconds(40);
  c.workload.hold_min = c.workload.hold_max = Duration::seconds(5);
  c.workload.idle_min = c.workload.idle_max = Duration::seconds(1);  // the releaser stands back
  const SimRunReport r = simulate_and_check(c);
  EXPECT_EQ(r.result.mutex.kind, kSafe) << r.result.mutex.explanation;
  const std::vector<Grant> g = grants(r.result.history);
  ASSERT_GE(g.size(), 5u);
  for (size_t i = 1; i < g.size(); ++i) {
    SCOPED_TRACE("grant " + std::to_string(i));
    EXPECT_NE(g[i].client, g[i - 1].client) << "the waiter, not the releaser";
    EXPECT_LT(g[i].handover, Duration::millis(5)) << "one round trip is about 1 ms";
    EXPECT_GT(g[i].handover, Duration::zero());
  }
}

// redisson-lost-unlock: c2's pub/sub connection is closed by its keepalive
// during a 36 s cut, losing the unlock message of c1's release at 40 s. c2
// waits out the PTTL its refusal at 0 s returned (90 s) and takes the lock
// 50 s after the release; later c1, waiting in its turn with its connection
// whole, takes it within a round trip of c2's release.
TEST(Redisson, AWaiterThatMissedTheUnlockMessageWaitsOutThePttl) {
  const SimRunReport r = simulate_and_check(load_scenario("redisson-lost-unlock").config);
  EXPECT_EQ(r.result.mutex.kind, kSafe) << r.result.mutex.explanation;
  const std::vector<Grant> g = grants(r.result.history);
  ASSERT_GE(g.size(), 3u);
  EXPECT_EQ(g[1].client, 1) << "c2, cut off";
  EXPECT_GT(g[1].latency, Duration::seconds(89));
  EXPECT_LT(g[1].latency, Duration::seconds(91)) << "the PTTL its first refusal returned";
  EXPECT_GT(g[1].handover, Duration::seconds(49)) << "the lock stood free while c2 waited";
  EXPECT_EQ(g[2].client, 0);
  EXPECT_LT(g[2].handover, Duration::millis(5)) << "c1 got its message";
  // Without the cut, c2 gets the message too.
  RunConfig whole = load_scenario("redisson-lost-unlock").config;
  whole.faults.events.clear();
  const std::vector<Grant> fast = grants(simulate_and_check(whole).result.history);
  ASSERT_GE(fast.size(), 2u);
  EXPECT_LT(fast[1].handover, Duration::millis(5));
  EXPECT_LT(fast[1].latency, Duration::seconds(41));
}

// --- replicas: WAIT after a grant ------------------------------------------

// One acknowledgement is all Redisson asks of the replicas it knows of. With
// one replica that has the grant, a failover keeps the lock; with two, the
// grant stands on r1's acknowledgement alone (after waiting out the second
// for r2, cut off), and promoting r2 loses it.
TEST(Redisson, AFailoverKeepsAnAcknowledgedGrantButNotOneOnlyTheOtherReplicaHas) {
  const SimRunReport acked = simulate_and_check(load_scenario("redisson-failover-acked").config);
  EXPECT_EQ(acked.result.mutex.kind, kSafe) << acked.result.mutex.explanation;
  const SimRunReport unacked =
      simulate_and_check(load_scenario("redisson-failover-unacked").config);
  EXPECT_EQ(unacked.result.mutex.kind, kViolation);
  const std::vector<Grant> g = grants(unacked.result.history);
  ASSERT_FALSE(g.empty());
  EXPECT_GE(g[0].latency, Duration::seconds(1)) << "WAIT 2 1000 waited out r2";
  EXPECT_LT(g[0].latency, Duration::millis(1050));
  EXPECT_LT(grants(acked.result.history)[0].latency, Duration::millis(300)) << "r1 acks at once";
}

// A grant no replica acknowledged within the second is undone and the call
// fails (Redisson's "None of slaves were synced"): with the only replica cut
// off from the master, nobody ever holds the lock.
TEST(Redisson, AGrantNoReplicaAcknowledgedIsUndoneAndTheAcquireFails) {
  RunConfig c = load_scenario("redisson-failover-acked").config;
  c.duration = Duration::seconds(20);
  c.workload.hold_min = c.workload.hold_max = Duration::seconds(1);
  c.faults.events = {faults::parse_fault("partition redis-1|redis-1-r1 at 0s", "f")};
  auto count = [](const history::History& h, history::OpType type) {
    int n = 0;
    for (const history::Op& op : h.ops) {
      n += history::is_client_op(op) && op.f == history::OpF::kAcquire && op.type == type;
    }
    return n;
  };
  const SimRunReport cut = simulate_and_check(c);
  EXPECT_EQ(cut.result.mutex.kind, kSafe);
  EXPECT_EQ(count(cut.result.history, history::OpType::kOk), 0);
  EXPECT_GE(count(cut.result.history, history::OpType::kFail), 10)
      << "each failed call leaves the lock free for the next";
  c.faults.events.clear();
  EXPECT_GE(count(simulate_and_check(c).result.history, history::OpType::kOk), 10);
}

}  // namespace
}  // namespace locksim::harness
