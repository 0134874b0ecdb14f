#include "harness/workload_draw.h"

#include <algorithm>
#include <array>
#include <string>
#include <vector>

#include "algorithms/param_lookup.h"
#include "env/assert.h"
#include "env/parse.h"
#include "faults/profile.h"
#include "harness/profile_deployment.h"
#include "sim/rng.h"

namespace locksim::harness {

namespace {

enum class Shape { kContended, kQuiet, kLong, kEdge };

// Weights of the four shapes, in Shape order, out of 10. Four in ten seeds
// keep today's contended workload (three under a partition), so each cell's
// fault coverage (faults that meet a holder) stays near what it was; the
// rest lean to the shape that meets the profile's fault where it bites: a
// quiet lock for a failover (a grant after a free period longer than the
// replication lag), long holds for a partition (outlasting the lease or the
// session: every zk-recipe violation under a partition comes from a long
// hold, 29 in 491 such seeds of 1,000 measured with three in ten long),
// holds to the validity's end for a client clock.
using ShapeWeights = std::array<int64_t, 4>;

ShapeWeights weights_for(const std::vector<std::string>& parts) {
  for (const std::string& part : parts) {
    if (part == "failover") return {4, 4, 1, 1};
    if (part == "partition") return {3, 1, 4, 2};
    if (part == "client-clock") return {4, 1, 1, 4};
  }
  return {4, 2, 2, 2};
}

// What bounds a seed's draw: the lock and the profile, never the seed.
struct DrawBounds {
  Duration lease;               // the TTL or the session (profile_lease)
  bool session = false;         // a session lease, kept alive by heartbeats (no ttl)
  bool careful = false;         // the lock reports a validity (a drift factor)
  bool lease_drawn = false;     // the profile draws the lease (pause, partition)
  bool lease_past_run = false;  // a lease no hold can reach (a one-year deadline)
  Duration replication_lag;     // of a failover deployment; zero without one
  Duration run;
  ShapeWeights weights;
};

DrawBounds bounds_of(const RunConfig& config) {
  const auto parts = faults::parse_profile(config.profile, "--profile");
  DrawBounds b;
  b.lease = profile_lease(config);
  b.session = !ttl_param(config).has_value();
  b.careful = algorithms::has_param(config.algorithm, "drift-factor");
  b.lease_past_run = b.lease > config.duration;
  b.lease_drawn = b.lease_past_run && !b.session && faults::must_outlast_lease(parts) &&
                  config.algorithm_params.count("ttl") == 0;
  b.replication_lag =
      faults::wants_failover(parts) ? faults::profile_replication_lag(config.seed) : Duration{};
  // The run as the sweep will give it: a profile may ask for a longer one.
  b.weights = weights_for(parts);
  b.run = std::max(config.duration, faults::profile_min_run(parts, b.lease));
  LOCKSIM_ASSERT(b.lease > Duration::zero() && b.run > Duration::zero());
  return b;
}

// Whole milliseconds, as every duration a replay command prints.
Duration whole_ms(Duration d) {
  return Duration::millis(d.ns / 1'000'000);
}
Duration share(Duration d, int64_t permille) {
  return whole_ms(Duration{d.ns / 1000 * permille});
}

Shape draw_shape(sim::Rng& rng, const ShapeWeights& weights) {
  LOCKSIM_ASSERT(weights[0] + weights[1] + weights[2] + weights[3] == 10);
  int64_t roll = static_cast<int64_t>(rng.below(10));
  for (size_t i = 0; i < weights.size(); ++i) {
    if (roll < weights[i]) return static_cast<Shape>(i);
    roll -= weights[i];
  }
  LOCKSIM_ASSERT_MSG(false, "the weights add up to 10");
  return Shape::kContended;
}

// The drawn values, with `ttl` set only where this draw owns the lease.
struct Drawn {
  WorkloadParams workload;
  std::optional<Duration> ttl;
  // Long or edge holds: the run is made long enough for every client to
  // hold twice (a clock fault on a client that never holds after it meets
  // nobody).
  bool long_holds = false;
};

// Room for each client's turn twice at the longest hold (and its idle gap),
// at most kLongRunMax: the virtual time a long hold costs is cheap (a held
// lock sends little), the wall time of a 60 s run is still a few ms.
constexpr Duration kLongRunMax = Duration::seconds(60);
Duration turns_run(const WorkloadParams& w) {
  const Duration turn = w.hold_max + w.idle_max;
  return std::min(kLongRunMax, turn * (2 * static_cast<int64_t>(w.clients)));
}

// Holds as a share of a lease the draw may own (a drawn lease), else of the
// lock's own lease, capped so that a run sees several holds.
void draw_long_hold(sim::Rng& rng, const DrawBounds& b, int64_t lo_permille, int64_t hi_permille,
                    Drawn& d) {
  const Duration cap = share(b.run, 500);
  if (b.session) {  // heartbeats keep a session alive: hold past it
    d.workload.hold_min = std::min(share(b.lease, 1200), cap);
    d.workload.hold_max = std::min(share(b.lease, 2500), cap);
    return;
  }
  if (b.lease_drawn) {  // the lease follows the hold: a whole-second DATETIME deadline
    d.workload.hold_min = Duration::seconds(rng.between(2, 6));
    d.workload.hold_max = d.workload.hold_min + Duration::seconds(rng.between(0, 4));
    const int64_t permille = rng.between(lo_permille, hi_permille);
    const int64_t hold_max_ms = d.workload.hold_max.ns / 1'000'000;
    // At least 2 s past the longest hold: a deadline kept in whole seconds
    // loses up to one, and a hold that outran its lease without a fault
    // would be the client's bug, not the fault's finding.
    d.ttl = Duration::seconds(
        std::max((hold_max_ms * 1000 / permille + 999) / 1000, hold_max_ms / 1000 + 2));
    return;
  }
  const Duration base = b.lease_past_run ? cap : b.lease;
  d.workload.hold_min = std::min(share(base, lo_permille), cap);
  d.workload.hold_max = std::min(share(base, hi_permille), cap);
}

Drawn draw(sim::Rng& rng, const DrawBounds& b) {
  Drawn d;
  const Shape shape = draw_shape(rng, b.weights);
  if (shape == Shape::kContended) {
    d.workload.hold_within_validity = b.careful;
    return d;
  }
  d.workload.retry_pause = Duration::millis(rng.between(50, 500));
  if (shape == Shape::kQuiet) {
    d.workload.clients = static_cast<int>(rng.between(2, 3));
    const Duration gap = std::max(b.replication_lag, Duration::seconds(1));
    d.workload.idle_min = share(gap, 1500);
    d.workload.idle_max = share(gap, 4000);
  } else if (shape == Shape::kLong) {
    d.workload.clients = static_cast<int>(rng.between(2, 4));
    draw_long_hold(rng, b, 400, 750, d);
    d.workload.idle_max = Duration::millis(rng.between(0, 1000));
  } else if (b.careful) {  // edge: hold to the validity's end, cut by it
    d.workload.clients = static_cast<int>(rng.between(2, 5));
    d.workload.hold_min = b.lease;
    d.workload.hold_max = share(b.lease, 2000);
  } else {
    d.workload.clients = static_cast<int>(rng.between(2, 5));
    draw_long_hold(rng, b, 600, 850, d);
  }
  d.workload.hold_within_validity = b.careful;
  d.long_holds = shape == Shape::kLong || shape == Shape::kEdge;
  LOCKSIM_ASSERT(d.workload.hold_min <= d.workload.hold_max);
  LOCKSIM_ASSERT(d.workload.idle_min <= d.workload.idle_max);
  return d;
}

}  // namespace

RunConfig with_drawn_workload(const RunConfig& config) {
  if (!config.workload.draw) return config;
  sim::Rng rng = sim::Rng(config.seed).split("workload/draw");
  const Drawn d = draw(rng, bounds_of(config));
  const WorkloadParams defaults;
  RunConfig out = config;
  WorkloadParams& w = out.workload;
  w.draw = false;
  // A setting the user gave is kept; only defaults are drawn.
  if (w.clients == defaults.clients) w.clients = d.workload.clients;
  if (w.hold_min == defaults.hold_min && w.hold_max == defaults.hold_max) {
    w.hold_min = d.workload.hold_min;
    w.hold_max = d.workload.hold_max;
  }
  if (w.idle_min == defaults.idle_min && w.idle_max == defaults.idle_max) {
    w.idle_min = d.workload.idle_min;
    w.idle_max = d.workload.idle_max;
  }
  if (w.retry_pause == defaults.retry_pause) w.retry_pause = d.workload.retry_pause;
  if (!w.hold_within_validity) w.hold_within_validity = d.workload.hold_within_validity;
  // Only ever longer: a profile's own minimum (profile_min_run) still holds.
  if (d.long_holds) out.duration = std::max(out.duration, whole_ms(turns_run(w)));
  if (d.ttl && out.algorithm_params.count("ttl") == 0) {
    out.algorithm_params["ttl"] = format_duration(*d.ttl);
  }
  LOCKSIM_ASSERT(!out.workload.draw && out.seed == config.seed);
  LOCKSIM_ASSERT(out.workload.clients >= 1 && out.workload.hold_min <= out.workload.hold_max);
  return out;
}

}  // namespace locksim::harness
