// Where a verdict depends on parameters, locksim shows the boundary: just
// below it safe, just above it a violation.
#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "harness/run_sim.h"

namespace locksim::harness {
namespace {

const Duration kTtl = Duration::seconds(10);
const Duration kPauseAt = Duration::seconds(5);

RunConfig pause_config(const std::string& algorithm, uint64_t seed) {
  RunConfig c;
  c.algorithm = algorithm;
  c.algorithm_params["ttl"] = "10s";
  c.seed = seed;
  c.duration = Duration::seconds(30);
  c.workload.clients = 3;
  c.workload.hold_min = Duration::seconds(4);
  c.workload.hold_max = Duration::seconds(6);
  c.workload.hold_within_validity = true;
  if (algorithm == "redlock") {
    c.redis.masters = 5;
    c.redis.timeout = Duration::millis(50);
  }
  return c;
}

// The interval held at `at` in a fault-free run of the same seed: the run is
// identical up to the fault, so this is the holder the pause will hit.
std::optional<HeldInterval> holder_at(const RunConfig& c, Duration at) {
  const SimRunReport r = simulate_and_check(c);
  for (const HeldInterval& h : r.result.history.held) {
    if (h.start <= TimePoint{} + at && h.end > TimePoint{} + at) return h;
  }
  return std::nullopt;
}

Verdict::Kind with_pause(RunConfig c, Duration pause) {
  faults::FaultEvent e;
  e.kind = faults::FaultKind::kPause;
  e.node = "@holder";
  e.at = kPauseAt;
  e.duration = pause;
  c.faults.events.push_back(e);
  return simulate_and_check(c).result.mutex.kind;
}

void pause_boundary(const std::string& algorithm) {
  int checked = 0;
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    const RunConfig c = pause_config(algorithm, seed);
    const auto held = holder_at(c, kPauseAt);
    if (!held) continue;  // nobody held the lock at 5 s in this seed
    ++checked;
    const Duration already_held = (TimePoint{} + kPauseAt) - held->start;
    const Duration boundary = kTtl - already_held;
    EXPECT_EQ(with_pause(c, boundary - Duration::millis(100)), Verdict::Kind::kValid)
        << algorithm << " seed " << seed << ": a pause 100 ms under TTL - time held must be safe";
    EXPECT_EQ(with_pause(c, boundary + Duration::millis(400)), Verdict::Kind::kInvalid)
        << algorithm << " seed " << seed << ": a pause 400 ms over TTL - time held must violate";
  }
  EXPECT_GE(checked, 10) << "too few seeds had a holder at the pause";
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
    EXPECT_EQ(r.result.mutex.kind, Verdict::Kind::kValid)
        << "seed " << seed << ": " << r.result.mutex.explanation;
    EXPECT_GE(r.result.acquisitions, 4) << "seed " << seed;
  }
}

TEST(Boundary, RedlockServerDriftWellOverTheDriftFactorViolates) {
  for (uint64_t seed = 1; seed <= 50; ++seed) {
    const SimRunReport r = simulate_and_check(drift_config(seed, 50'000));
    EXPECT_EQ(r.result.mutex.kind, Verdict::Kind::kInvalid) << "seed " << seed;
  }
}

}  // namespace
}  // namespace locksim::harness
