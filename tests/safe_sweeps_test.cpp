// The configurations the literature calls safe stay clean over >= 1,000
// seeds, with their fault randomised per seed (when, how long, which node).
// A testbed that cries wolf is as useless as one that sleeps.
#include <gtest/gtest.h>

#include <string>

#include "clean_sweep.h"
#include "harness/run.h"
#include "sim/rng.h"

namespace locksim::harness {
namespace {

constexpr uint64_t kSeeds = 1000;

using testing::crash_fault;

// `make` over kSeeds seeds.
template <class Make>
void expect_clean(Make make, int64_t min_acquisitions_per_run = 1) {
  testing::expect_clean(kSeeds, make, min_acquisitions_per_run);
}

TEST(SafeSweep, EveryAlgorithmWithoutFaults) {
  for (const char* algorithm : {"set-nx-lua", "naive-setnx", "getset-timestamp", "redlock"}) {
    SCOPED_TRACE(algorithm);
    expect_clean(
        [algorithm](uint64_t seed) {
          RunConfig c;
          c.algorithm = algorithm;
          c.seed = seed;
          c.duration = Duration::seconds(20);
          c.workload.clients = 4;
          return c;
        },
        3);
  }
}

TEST(SafeSweep, SetNxLuaWithFsyncAlwaysSurvivesCrashRestart) {
  expect_clean([](uint64_t seed) {
    sim::Rng rng(seed * 7919);
    RunConfig c;
    c.algorithm = "set-nx-lua";
    c.seed = seed;
    c.duration = Duration::seconds(30);
    c.workload.clients = 3;
    c.redis.persistence = sim::redis::Persistence::kAofAlways;
    c.faults.events.push_back(
        crash_fault("redis-1", rng.uniform_duration(Duration::millis(100), Duration::seconds(25)),
                    rng.uniform_duration(Duration::millis(100), Duration::seconds(5))));
    return c;
  });
}

TEST(SafeSweep, RedlockWithDelayedRestartSurvivesCrashRestart) {
  expect_clean([](uint64_t seed) {
    sim::Rng rng(seed * 104729);
    RunConfig c;
    c.algorithm = "redlock";
    c.algorithm_params["ttl"] = "10s";
    c.seed = seed;
    c.duration = Duration::seconds(40);
    c.workload.clients = 3;
    c.workload.hold_within_validity = true;
    c.redis.masters = 5;
    c.redis.timeout = Duration::millis(50);
    // One or two nodes (never a majority) crash and stay down at least a TTL.
    const int crashes = static_cast<int>(rng.between(1, 2));
    for (int i = 0; i < crashes; ++i) {
      const std::string node = "redis-" + std::to_string(rng.between(1, 5));
      c.faults.events.push_back(
          crash_fault(node, rng.uniform_duration(Duration::zero(), Duration::seconds(25)),
                      rng.uniform_duration(Duration::seconds(10), Duration::seconds(20))));
    }
    return c;
  });
}

TEST(SafeSweep, RedlockUnderServerDriftBelowItsDriftFactor) {
  expect_clean([](uint64_t seed) {
    sim::Rng rng(seed * 15485863);
    RunConfig c;
    c.algorithm = "redlock";
    c.algorithm_params["ttl"] = "10s";  // drift factor 0.01 = 10000 ppm
    c.seed = seed;
    c.duration = Duration::seconds(40);
    c.workload.clients = 3;
    // Careful clients that work right up to the end of their validity: the
    // tightest use of the drift allowance.
    c.workload.hold_min = Duration::seconds(5);
    c.workload.hold_max = Duration::seconds(12);
    c.workload.hold_within_validity = true;
    c.redis.masters = 5;
    c.redis.timeout = Duration::millis(50);
    for (int i = 1; i <= 5; ++i) {
      faults::FaultEvent e;
      e.kind = faults::FaultKind::kSetDrift;
      e.node = "redis-" + std::to_string(i);
      e.at = rng.uniform_duration(Duration::zero(), Duration::seconds(5));
      e.drift_ppm = rng.between(-20'000, 9'000);  // slow is always safe; fast stays under 1 %
      c.faults.events.push_back(e);
    }
    return c;
  });
}

}  // namespace
}  // namespace locksim::harness
