#include "harness/margin/margin.h"

#include <map>
#include <stdexcept>

#include "env/assert.h"
#include "env/parse.h"
#include "harness/margin/kinds.h"
#include "harness/margin/lease_faults.h"
#include "harness/run.h"

namespace locksim::harness::margin {

namespace {

// Whether the store stopped protecting a holder: exposure or an overlap.
bool failed(const RunResult& r) {
  if (!r.errors.empty() || overall_verdict(r) == checkers::Validity::kUnknown) {
    throw std::runtime_error("a margin run could not be judged (" + r.replay_command + ")");
  }
  LOCKSIM_ASSERT_MSG(r.exposure.supported, "every TTL backend answers the exposure question");
  return r.exposure.intervals_exposed > 0 || r.mutex.kind == checkers::Verdict::Kind::kInvalid;
}

// The start of the lone client's first hold in the fault-free run.
TimePoint first_hold(const RunConfig& base) {
  const SimRunReport r = simulate_and_check(base);
  for (const history::HeldInterval& h : r.result.history.held) {
    if (h.client == 0) return h.start;
  }
  throw std::runtime_error("the lone client never held the lock in the fault-free run (" +
                           r.result.replay_command + ")");
}

// The margin runs' own settings on top of the user's.
RunConfig probe_base(const MarginRequest& request) {
  RunConfig c = request.base;
  c.workload.clients = 1;
  c.faults.events.clear();
  c.profile.clear();
  prepare_deployment(c, request.kind);
  const Duration lease = lease_of(request.base);
  if (unit_of(request.kind) == Unit::kPpm && holds_to_validity(c)) {
    // Redlock's holder works to the end of its validity: the position its
    // drift factor is there for (validity < ttl, so the hold is cut to it).
    c.workload.hold_min = lease;
    c.workload.hold_max = lease;
    c.workload.hold_within_validity = true;
  }
  // Room for two holds, the largest fault and one lease after it, so the
  // exposure a fault causes always falls inside the run (a drift lengthens
  // nothing: a lease covers it).
  const Duration fault = unit_of(request.kind) == Unit::kNanos ? Duration{request.range_hi} : lease;
  c.duration = c.workload.hold_min * 2 + fault + lease + Duration::seconds(10);
  return c;
}

}  // namespace

void set_default_range(MarginRequest& request) {
  request.range_lo = default_range_lo(request.kind);
  request.range_hi =
      unit_of(request.kind) == Unit::kNanos ? (lease_of(request.base) * 2).ns : kDriftPpmMax;
}

void validate(const MarginRequest& request) {
  const WorkloadParams& w = request.base.workload;
  if (w.hold_min != w.hold_max) {
    throw ConfigError("--hold: margin needs a fixed hold (e.g. 2s..2s), got " +
                      format_duration(w.hold_min) + ".." + format_duration(w.hold_max));
  }
  if (w.hold_min < kHoldMin) {
    throw ConfigError("--hold: expected at least " + format_duration(kHoldMin) + ", got " +
                      format_duration(w.hold_min));
  }
  if (request.range_lo < 0 || request.range_lo >= request.range_hi) {
    throw ConfigError("--range: expected LO..HI with 0 <= LO < HI, got " +
                      format_size(request.kind, request.range_lo) + ".." +
                      format_size(request.kind, request.range_hi));
  }
  if (request.range_lo % step_of(request.kind) != 0 ||
      request.range_hi % step_of(request.kind) != 0) {
    throw ConfigError("--range: expected whole milliseconds (the search's unit)");
  }
  if (unit_of(request.kind) == Unit::kPpm && request.range_hi > kDriftPpmMax) {
    throw ConfigError("--range: a drift is at most " + std::to_string(kDriftPpmMax) + "ppm");
  }
  const Duration length = probe_base(request).duration;
  if (length > RunConfig::kDurationMax) {
    throw ConfigError("--range: its runs would last " + format_duration(length) +
                      ", more than a run may (" + format_duration(RunConfig::kDurationMax) +
                      "); give a shorter --ttl or --range");
  }
}

int64_t difference(const MarginResult& result) {
  LOCKSIM_ASSERT(result.outcome == Bisection::Outcome::kFound && result.above.has_value());
  LOCKSIM_ASSERT(result.theory.has_value());
  return result.above->size - *result.theory;
}

namespace {

std::string position_text(const RunConfig& base, Kind kind) {
  switch (kind) {
    case Kind::kPause:
      return "the pause starts 1ms before the release (the worst case: the whole hold is spent)";
    case Kind::kClientClock:
      return "the holder's clock steps back between its first and second hold";
    case Kind::kPartition:
    case Kind::kServerClockStep:
    case Kind::kFailoverLag:
    case Kind::kCrashDowntime:
    case Kind::kDelaySpike:
      return lease_fault_position(kind);
    default:
      return holds_to_validity(base) ? "fast from the start; the holder works to the end of its "
                                       "validity (the worst case)"
                                     : "fast from the start; the holder holds for its whole hold";
  }
}

}  // namespace

MarginResult measure_margin(const MarginRequest& request, const ProgressFn& progress) {
  validate(request);
  const RunConfig base = probe_base(request);
  const TimePoint held_from = first_hold(base);
  MarginResult m;
  m.algorithm = base.algorithm;
  m.kind = request.kind;
  m.seed = base.seed;
  m.lease = lease_of(base);
  m.hold = base.workload.hold_min;
  m.range_lo = request.range_lo;
  m.range_hi = request.range_hi;
  std::map<int64_t, ConfirmingRun> seen;  // by step: the runs behind the answer
  std::optional<int64_t> last_heard;      // a session lock's, from a run that expired it
  const int64_t step = step_of(request.kind);
  int probe_number = 0;
  const Probe probe = [&](int64_t steps) {
    const int64_t size = steps * step;
    const RunConfig config = with_fault(base, request.kind, size, held_from);
    const SimRunReport r = simulate_and_check(config);
    const bool broke = failed(r.result);
    seen[steps] = ConfirmingRun{size, broke, r.result.replay_command, config};
    if (broke && !last_heard) last_heard = last_heard_ns(r.result.backend_notes);
    if (progress) progress(++probe_number, size, broke);
    return broke;
  };
  const Bisection b = bisect(probe, {request.range_lo / step, request.range_hi / step, 1, 1});
  m.outcome = b.outcome;
  m.probes = b.probes + 1;  // and the fault-free run that placed the fault
  LOCKSIM_ASSERT(m.probes <= kRunsPerMarginMax);
  if (b.below >= 0) m.below = seen.at(b.below);
  if (b.above >= 0) m.above = seen.at(b.above);
  LOCKSIM_ASSERT(!m.below || !m.below->failed);
  LOCKSIM_ASSERT(!m.above || m.above->failed);
  const Theory theory = theory_of(base, request.kind, held_from, last_heard);
  m.theory = theory.size;
  m.theory_formula = theory.formula;
  m.theory_any_size = theory.any_size;
  if (session_lock(base)) m.tick = base.zookeeper.tick;
  m.position = position_text(base, request.kind);
  return m;
}

}  // namespace locksim::harness::margin
