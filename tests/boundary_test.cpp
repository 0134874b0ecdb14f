// Where a verdict depends on parameters, locksim shows the boundary: just
// below it safe, just above it a violation.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "harness/run.h"
#include "pause_boundary.h"

namespace locksim::harness {
namespace {

using testing::run_with_holder_pause;

void pause_boundary(const std::string& algorithm) {
  const std::vector<testing::PauseBoundary> cases = testing::pause_boundaries(algorithm);
  for (const testing::PauseBoundary& b : cases) {
    const uint64_t seed = b.config.seed;
    EXPECT_EQ(run_with_holder_pause(b.config, b.boundary - Duration::millis(100)).result.mutex.kind,
              checkers::Verdict::Kind::kValid)
        << algorithm << " seed " << seed << ": a pause 100 ms under TTL - time held must be safe";
    EXPECT_EQ(run_with_holder_pause(b.config, b.boundary + Duration::millis(400)).result.mutex.kind,
              checkers::Verdict::Kind::kInvalid)
        << algorithm << " seed " << seed << ": a pause 400 ms over TTL - time held must violate";
  }
  EXPECT_GE(cases.size(), 10u) << "too few seeds had a holder at the pause";
}

TEST(Boundary, HolderPauseAroundTtlMinusTimeHeld_SetNxLua) {
  pause_boundary("set-nx-lua");
}
TEST(Boundary, HolderPauseAroundTtlMinusTimeHeld_Redlock) {
  pause_boundary("redlock");
}

RunConfig drift_config(uint64_t seed, int64_t drift_ppm) {
  RunConfig c;
  c.algorithm = "redlock";
  c.algorithm_params["ttl"] = "10s";  // drift factor 0.01: 10000 ppm
  c.seed = seed;
  c.duration = Duration::seconds(60);
  c.workload.clients = 3;
  // Every hold runs to the end of the lease's validity.
  c.workload.hold_min = Duration::seconds(20);
  c.workload.hold_max = Duration::seconds(20);
  c.workload.hold_within_validity = true;
  c.redis.masters = 5;
  c.redis.timeout = Duration::millis(50);
  for (int i = 1; i <= 5; ++i) {
    c.faults.events.push_back(faults::parse_fault(
        "drift redis-" + std::to_string(i) + " at 0s +" + std::to_string(drift_ppm) + "ppm", "f"));
  }
  return c;
}

TEST(Boundary, RedlockServerDriftJustUnderTheDriftFactorIsSafe) {
  for (uint64_t seed = 1; seed <= 50; ++seed) {
    const SimRunReport r = simulate_and_check(drift_config(seed, 9'500));
    EXPECT_EQ(r.result.mutex.kind, checkers::Verdict::Kind::kValid)
        << "seed " << seed << ": " << r.result.mutex.explanation;
    EXPECT_GE(r.result.acquisitions, 4) << "seed " << seed;
  }
}

TEST(Boundary, RedlockServerDriftWellOverTheDriftFactorViolates) {
  for (uint64_t seed = 1; seed <= 50; ++seed) {
    const SimRunReport r = simulate_and_check(drift_config(seed, 50'000));
    EXPECT_EQ(r.result.mutex.kind, checkers::Verdict::Kind::kInvalid) << "seed " << seed;
  }
}

// The same boundary from the client's side (REFERENCE-VERDICTS.md: Redlock
// under client clock drift, "S while drift <= drift factor, else V"): a
// careful client holds until its own clock reads the end of the validity, so
// a clock running slow keeps it holding past the keys' TTL in true time.
RunConfig client_drift_config(uint64_t seed, int64_t drift_ppm) {
  RunConfig c = drift_config(seed, 0);
  c.faults.events.clear();
  for (int i = 1; i <= 3; ++i) {
    c.faults.events.push_back(faults::parse_fault(
        "drift c" + std::to_string(i) + " at 0s " + std::to_string(drift_ppm) + "ppm", "f"));
  }
  return c;
}

TEST(Boundary, RedlockClientClockSlowJustUnderTheDriftFactorIsSafe) {
  for (uint64_t seed = 1; seed <= 30; ++seed) {
    const SimRunReport r = simulate_and_check(client_drift_config(seed, -9'500));
    EXPECT_EQ(r.result.mutex.kind, checkers::Verdict::Kind::kValid)
        << "seed " << seed << ": " << r.result.mutex.explanation;
    EXPECT_GE(r.result.acquisitions, 4) << "seed " << seed;
  }
}

TEST(Boundary, RedlockClientClockSlowWellOverTheDriftFactorViolates) {
  for (uint64_t seed = 1; seed <= 30; ++seed) {
    const SimRunReport r = simulate_and_check(client_drift_config(seed, -50'000));
    EXPECT_EQ(r.result.mutex.kind, checkers::Verdict::Kind::kInvalid) << "seed " << seed;
  }
}

}  // namespace
}  // namespace locksim::harness
