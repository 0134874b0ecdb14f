// The holder-pause boundary that boundary_test (verdicts) and exposure_test
// (exposure windows) both walk: with a 10 s TTL and 4-6 s holds, a pause of
// the holder at 5 s breaks the lock exactly when it outlasts TTL minus the
// time the holder had already held it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "harness/run.h"

namespace locksim::testing {

inline const Duration kPauseTtl = Duration::seconds(10);
inline const Duration kPauseAt = Duration::seconds(5);

struct PauseBoundary {
  harness::RunConfig config;  // fault-free; run_with_holder_pause adds the pause
  Duration boundary;          // kPauseTtl - time held at kPauseAt
};

// 3 clients, ttl 10 s, holds of 4-6 s within validity (Redlock: 5 masters,
// 50 ms command timeout) for 30 s of `seed`.
inline harness::RunConfig pause_config(const std::string& algorithm, uint64_t seed) {
  harness::RunConfig c;
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

// Seeds 1..20 of `algorithm` in which somebody holds the lock at kPauseAt,
// each with its boundary. The interval held at kPauseAt comes from a
// fault-free run of the same seed: the run is identical up to the fault, so
// this is the holder the pause will hit.
inline std::vector<PauseBoundary> pause_boundaries(const std::string& algorithm) {
  std::vector<PauseBoundary> out;
  const TimePoint at = TimePoint{} + kPauseAt;
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    const harness::RunConfig c = pause_config(algorithm, seed);
    const harness::SimRunReport r = harness::simulate_and_check(c);
    for (const history::HeldInterval& h : r.result.history.held) {
      if (h.start <= at && h.end > at) {
        out.push_back({c, kPauseTtl - (at - h.start)});
        break;
      }
    }
  }
  return out;
}

// `config` with its holder paused at kPauseAt for `pause`, run and checked.
inline harness::SimRunReport run_with_holder_pause(harness::RunConfig config, Duration pause) {
  faults::FaultEvent e;
  e.kind = faults::FaultKind::kPause;
  e.node = "@holder";
  e.at = kPauseAt;
  e.duration = pause;
  config.faults.events.push_back(e);
  return harness::simulate_and_check(config);
}

}  // namespace locksim::testing
