// Every kind of invariant trips on a planted breach, in this (optimised)
// build, with exit code 70 and the message env/assert.h promises:
//   locksim: invariant broken: <condition> (<why>) at <file>:<line>
//   locksim: in run: <context>                      (inside a run only)
//
// One test per kind: the World's time, the event queue, the scheduler, node
// states, clocks, the network, the keyspace, replication roles, the history
// recorder, the workload loop, the live layer, and the run context line.
#include <gtest/gtest.h>

#include <cstdlib>
#include <stdexcept>
#include <string>

#include "algorithms/lock_algorithm.h"
#include "env/assert.h"
#include "env/random.h"
#include "history/history.h"
#include "live/live_env.h"
#include "harness/workload.h"
#include "sim/clock.h"
#include "sim/event_queue.h"
#include "sim/network.h"
#include "sim/node.h"
#include "sim/redis/keyspace.h"
#include "sim/redis/redis_node.h"
#include "sim/world.h"

namespace locksim {
namespace {

// POSIX extended regex (what GoogleTest uses on Linux) with `text` literal.
std::string literal(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (std::string("\\^$.|?*+()[]{}").find(c) != std::string::npos) out += '\\';
    out += c;
  }
  return out;
}

// The first line of a broken invariant, as env/assert.h prints it.
std::string broken(const std::string& condition, const std::string& why, const std::string& file) {
  return "locksim: invariant broken: " + literal(condition) + " \\(" + literal(why) +
         "\\) at [^ ]*" + literal(file) + ":[0-9]+";
}

const auto kInvariantExit = ::testing::ExitedWithCode(kExitInvariant);

class InvariantsDeathTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // Fibers (and in the live tests, threads) may exist: re-execute the
    // binary for each death rather than fork a copy of a running process.
    GTEST_FLAG_SET(death_test_style, "threadsafe");
#if defined(LOCKSIM_ASSERTS_DISABLED)
    const char* ci = std::getenv("CI");
    if (ci != nullptr && std::string(ci) == "true") {
      FAIL() << "built with -DLOCKSIM_ASSERTS=OFF: assertions must be on in CI";
    }
    GTEST_SKIP() << "built with -DLOCKSIM_ASSERTS=OFF (only for measuring their cost)";
#endif
  }
};

TEST_F(InvariantsDeathTest, ExitCodeIsDocumentedAndOutsideTheVerdictCodes) {
  EXPECT_EQ(kExitInvariant, 70);
  EXPECT_EXIT(LOCKSIM_ASSERT(1 + 1 == 3), kInvariantExit,
              "locksim: invariant broken: 1 \\+ 1 == 3 at [^ ]*invariants_death_test.cpp:[0-9]+");
}

TEST_F(InvariantsDeathTest, RunContextNamesTheSeedAndReplayCommand) {
  EXPECT_EXIT(
      {
        AssertContext outer("seed 1; replay: locksim run --seed 1");
        AssertContext inner("seed 42; replay: locksim run --algorithm redlock --seed 42");
        LOCKSIM_ASSERT_MSG(2 < 1, "planted");
      },
      kInvariantExit,
      broken("2 < 1", "planted", "invariants_death_test.cpp") +
          "\nlocksim: in run: seed 42; replay: locksim run --algorithm redlock --seed 42\n");
}

TEST_F(InvariantsDeathTest, WorldNeverSchedulesInThePast) {
  EXPECT_EXIT(
      {
        sim::World w(sim::WorldOptions{});
        w.run_until(TimePoint{} + Duration::seconds(10));
        w.at(TimePoint{} + Duration::seconds(5), [] {});
      },
      kInvariantExit, broken("when >= now_", "an event scheduled in the past", "sim/world.h"));
}

TEST_F(InvariantsDeathTest, AFiberCannotSleepANegativeTime) {
  EXPECT_EXIT(
      {
        sim::World w(sim::WorldOptions{});
        w.spawn("c1", nullptr, [&w] { w.sleep(-Duration::nanos(1)); });
        w.run_until(TimePoint{} + Duration::seconds(1));
      },
      kInvariantExit, broken("d >= Duration::zero()", "a negative sleep", "sim/world.cpp"));
}

TEST_F(InvariantsDeathTest, EventQueueTimeNeverGoesBack) {
  EXPECT_EXIT(
      {
        sim::EventQueue q;
        q.push(TimePoint{5}, [] {});
        q.pop();
        q.push(TimePoint{3}, [] {});
      },
      kInvariantExit,
      broken("at >= last_popped_", "an event scheduled before the last one run",
             "sim/event_queue.h"));
}

TEST_F(InvariantsDeathTest, OneWorldPerSchedulerAtATime) {
  EXPECT_EXIT(
      {
        sim::World first(sim::WorldOptions{});
        sim::World second(sim::WorldOptions{});
      },
      kInvariantExit,
      broken("!attached_", "a second World attached on this thread", "sim/scheduler.cpp"));
}

TEST_F(InvariantsDeathTest, OnlyACrashedNodeHasItsFibersCancelled) {
  EXPECT_EXIT(
      {
        sim::World w(sim::WorldOptions{});
        sim::Node n(w, "c1");
        w.cancel_fibers_of(n);  // running: a crash must come first
      },
      kInvariantExit,
      broken("node.crashed()", "fibers cancelled on a node that did not crash", "sim/world.cpp"));
}

TEST_F(InvariantsDeathTest, OnlyARunningNodeGetsItsHeldWakes) {
  EXPECT_EXIT(
      {
        sim::World w(sim::WorldOptions{});
        sim::Node n(w, "c1");
        n.pause();
        w.release_held_wakes(n);  // still paused: its fibers must stay frozen
      },
      kInvariantExit,
      broken("node.running()", "held wakes released on a node that is not running",
             "sim/world.cpp"));
}

TEST_F(InvariantsDeathTest, ClockDriftStaysBelowOneHundredPercent) {
  EXPECT_EXIT(
      {
        sim::LocalClock c;
        c.set_drift(TimePoint{}, -1'000'000);  // a clock standing still
      },
      kInvariantExit,
      broken("drift_ppm > -1'000'000 && drift_ppm < 1'000'000", "drift out of range",
             "sim/clock.cpp"));
}

TEST_F(InvariantsDeathTest, ClockIsNeverReadBeforeItsLastChange) {
  EXPECT_EXIT(
      {
        sim::LocalClock c;
        c.jump(TimePoint{} + Duration::seconds(10), Duration::seconds(1));
        (void)c.local(TimePoint{} + Duration::seconds(5));
      },
      kInvariantExit,
      broken("true_now >= base_true_", "a clock read before its last change", "sim/clock.cpp"));
}

TEST_F(InvariantsDeathTest, NetworkLinkParametersAreInRange) {
  EXPECT_EXIT(
      {
        sim::World w(sim::WorldOptions{});
        sim::Network net(w, sim::Rng(1));
        sim::LinkParams p;
        p.loss_probability = 1.5;
        net.set_default_link(p);
      },
      kInvariantExit, broken("valid(p)", "link parameters out of range", "sim/network.cpp"));
}

TEST_F(InvariantsDeathTest, KeyspaceExpiresOnlyKeysItHas) {
  EXPECT_EXIT(
      {
        sim::redis::Keyspace ks;
        ks.put("lock", "c1", std::nullopt);
        ks.set_expire("other", 1'700'000'000'000);
      },
      kInvariantExit,
      broken("it != entries_.end()", "set_expire on a missing key", "sim/redis/keyspace.cpp"));
}

TEST_F(InvariantsDeathTest, ANodeIsNeverItsOwnReplica) {
  EXPECT_EXIT(
      {
        sim::World w(sim::WorldOptions{});
        sim::Network net(w, sim::Rng(1));
        sim::redis::RedisNode node(w, net, "redis-1", 1, sim::redis::Topology{});
        node.become_replica_of(node);
      },
      kInvariantExit,
      broken("&primary != this", "a node made a replica of itself", "sim/replication.h"));
}

TEST_F(InvariantsDeathTest, HistoryRecorderKeepsTimeMonotone) {
  EXPECT_EXIT(
      {
        history::HistoryRecorder recorder;
        history::Op invoke;
        invoke.time_ns = 10;
        recorder.record(invoke);
        history::Op fail = invoke;
        fail.type = history::OpType::kFail;
        fail.time_ns = 5;
        recorder.record(fail);
      },
      kInvariantExit,
      broken("broken.empty()", "time goes back (5 after 10) (rule 1: ops are in true-time order)",
             "history/history.cpp"));
}

TEST_F(InvariantsDeathTest, HistoryRecorderAllowsOneOpenOpPerProcess) {
  EXPECT_EXIT(
      {
        history::HistoryRecorder recorder;
        history::Op invoke;
        recorder.record(invoke);
        recorder.record(invoke);  // the first :acquire was never completed
      },
      kInvariantExit,
      "locksim: invariant broken: " + literal("broken.empty() (process 0 invokes") + ".*rule 3");
}

// An algorithm that breaks LockAlgorithm's contract: :ok without a token.
class OkWithoutToken : public algorithms::LockAlgorithm {
 public:
  algorithms::AcquireResult acquire(Env& /*env*/, const std::string& resource) override {
    algorithms::AcquireResult r;
    r.outcome = algorithms::Outcome::kOk;
    r.lease.resource = resource;
    return r;
  }
  algorithms::ReleaseResult release(Env& /*env*/, const algorithms::Lease& /*lease*/) override {
    return {};
  }
  std::string name() const override { return "ok-without-token"; }
};

class StillEnv : public Env {
 public:
  TimePoint now() override { return TimePoint{}; }
  void sleep(Duration /*d*/) override {}
  uint64_t random() override { return 4; }
  RedisConnection& redis(size_t /*i*/) override { throw std::logic_error("no servers"); }
  size_t redis_count() const override { return 0; }
  std::string client_name() const override { return "c1"; }
};

class CountingTruth : public harness::Truth {
 public:
  TimePoint true_now() override { return TimePoint{}; }
  bool stopping() override { return false; }
  int64_t fresh_process() override { return next_process_++; }
  int64_t record(history::Op /*op*/, bool /*begin_hold*/, bool /*end_hold*/) override {
    return next_index_++;
  }

 private:
  int64_t next_process_ = 100;
  int64_t next_index_ = 0;
};

TEST_F(InvariantsDeathTest, WorkloadUsesOnlyLeasesItWasGiven) {
  EXPECT_EXIT(
      {
        StillEnv env;
        OkWithoutToken algorithm;
        CountingTruth truth;
        harness::WorkloadParams params;
        harness::run_client(env, algorithm, 0, params, truth);
      },
      kInvariantExit,
      broken("acquired.lease.resource == params_.resource && !acquired.lease.token.empty()",
             "an :ok acquire without a lease on the resource", "harness/workload.cpp"));
}

TEST_F(InvariantsDeathTest, LiveEnvRejectsANegativeSleep) {
  EXPECT_EXIT(
      {
        // No server needed: a LiveEnv connects on its first command only.
        live::LiveEnv env(0, {{"127.0.0.1", 6379}}, Duration::millis(100), /*seed=*/1);
        env.sleep(-Duration::millis(1));
      },
      kInvariantExit,
      broken("d >= Duration::zero()", "an algorithm slept a negative time",
             "live/live_env.cpp"));
}

TEST_F(InvariantsDeathTest, UniformDrawNeedsANonEmptyRange) {
  EXPECT_EXIT(
      {
        uint64_t word = 1;
        (void)uniform_between([&word] { return word++; }, 5, 4);
      },
      kInvariantExit, broken("lo <= hi", "a uniform draw from an empty range", "env/random.h"));
}

}  // namespace
}  // namespace locksim
