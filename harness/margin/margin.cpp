#include "harness/margin/margin.h"

#include <map>
#include <stdexcept>

#include "algorithms/registry.h"
#include "env/assert.h"
#include "env/parse.h"
#include "faults/nemesis.h"
#include "harness/profile_deployment.h"
#include "harness/run.h"

namespace locksim::harness::margin {

namespace {

// A holder pause outlasts a lock whose lease is a TTL: every algorithm with a
// "ttl" parameter (ZooKeeper's recipes lease by session, not measured yet).
bool ttl_lock(const std::string& algorithm) {
  const algorithms::AlgorithmSpec* spec = algorithms::find_algorithm(algorithm);
  if (spec == nullptr) return false;
  for (const algorithms::ParamInfo& p : spec->params) {
    if (p.name == "ttl") return true;
  }
  return false;
}

// Expiry judged by a client's clock: the stored deadline is the writer's.
bool client_clock_lock(const std::string& algorithm) {
  return algorithm == "getset-timestamp" || algorithm.rfind("mysql-", 0) == 0;
}

std::string kinds_text(const std::vector<Kind>& kinds) {
  std::string out;
  for (const Kind k : kinds) out += (out.empty() ? "" : ", ") + std::string(to_string(k));
  return out.empty() ? "none yet" : out;
}

// A run of `base` with one fault of `size` (zero: none) placed for `kind`,
// given the first hold of the fault-free run began at `held_from`.
RunConfig with_fault(const RunConfig& base, Kind kind, Duration size, TimePoint held_from) {
  RunConfig c = base;
  if (size == Duration::zero()) return c;
  const Duration hold = base.workload.hold_min;
  faults::FaultEvent e;
  e.node = faults::Nemesis::kHolder;
  if (kind == Kind::kPause) {
    // 1 ms before the release: the worst case, the whole hold is spent.
    e.kind = faults::FaultKind::kPause;
    // In whole microseconds, rounded down (still inside the hold), so the
    // replay command reads "at 2000522us", not a nanosecond count.
    const Duration at = (held_from - TimePoint{}) + hold - Duration::millis(1);
    e.at = Duration::micros(at.ns / 1000);
    e.duration = size;
  } else {
    // Mid first hold: it moves the deadline of the next acquire only (the
    // first one's is stored already, and holds are timed on true time).
    e.kind = faults::FaultKind::kJumpClock;
    const Duration at = (held_from - TimePoint{}) + hold / 2;
    e.at = Duration::micros(at.ns / 1000);
    e.jump = -size;
  }
  c.faults.events.push_back(e);
  return c;
}

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
  // Room for two holds, the largest fault and one lease after it, so the
  // exposure a fault causes always falls inside the run.
  c.duration = request.base.workload.hold_min * 2 + request.range_hi + lease_of(request.base) +
               Duration::seconds(10);
  return c;
}

}  // namespace

const char* to_string(Kind kind) {
  switch (kind) {
    case Kind::kPause:
      return "pause";
    case Kind::kClientClock:
      return "client-clock";
  }
  return "?";
}

std::vector<Kind> kinds_for(const std::string& algorithm) {
  std::vector<Kind> out;
  if (ttl_lock(algorithm)) out.push_back(Kind::kPause);
  if (client_clock_lock(algorithm)) out.push_back(Kind::kClientClock);
  return out;
}

Kind parse_kind(std::string_view text, const std::string& algorithm) {
  const std::vector<Kind> applies = kinds_for(algorithm);
  for (const Kind k : {Kind::kPause, Kind::kClientClock}) {
    if (text != to_string(k)) continue;
    for (const Kind a : applies) {
      if (a == k) return k;
    }
    throw ConfigError("--fault: '" + std::string(text) + "' does not apply to " + algorithm +
                      " (kinds that apply: " + kinds_text(applies) + ")");
  }
  throw ConfigError("--fault: unknown kind '" + std::string(text) + "' (kinds that apply to " +
                    algorithm + ": " + kinds_text(applies) + ")");
}

Duration lease_of(const RunConfig& config) {
  if (const std::optional<Duration> ttl = ttl_param(config)) return *ttl;
  throw ConfigError("--algorithm: " + config.algorithm + " has no ttl to measure a margin against");
}

void set_default_range(MarginRequest& request) {
  request.range_lo = Duration::zero();
  request.range_hi = lease_of(request.base) * 2;
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
  const Duration ms = Duration::millis(1);
  if (request.range_lo < Duration::zero() || request.range_lo >= request.range_hi) {
    throw ConfigError("--range: expected LO..HI with 0 <= LO < HI, got " +
                      format_duration(request.range_lo) + ".." + format_duration(request.range_hi));
  }
  if (request.range_lo.ns % ms.ns != 0 || request.range_hi.ns % ms.ns != 0) {
    throw ConfigError("--range: expected whole milliseconds (the search's unit)");
  }
  const Duration length = probe_base(request).duration;
  if (length > RunConfig::kDurationMax) {
    throw ConfigError("--range: its runs would last " + format_duration(length) +
                      ", more than a run may (" + format_duration(RunConfig::kDurationMax) +
                      "); give a shorter --ttl or --range");
  }
}

Duration difference(const MarginResult& result) {
  LOCKSIM_ASSERT(result.outcome == Bisection::Outcome::kFound && result.above.has_value());
  return result.above->size - result.theory;
}

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
  std::map<int64_t, ConfirmingRun> seen;  // by size in ms: the runs behind the answer
  int probe_number = 0;
  const Probe probe = [&](int64_t size_ms) {
    const Duration size = Duration::millis(size_ms);
    const SimRunReport r = simulate_and_check(with_fault(base, request.kind, size, held_from));
    const bool broke = failed(r.result);
    seen[size_ms] = ConfirmingRun{size, broke, r.result.replay_command};
    if (progress) progress(++probe_number, size, broke);
    return broke;
  };
  const Bisection b = bisect(probe, {request.range_lo.to_ms(), request.range_hi.to_ms(), 1, 1});
  m.outcome = b.outcome;
  m.probes = b.probes + 1;  // and the fault-free run that placed the fault
  if (b.below >= 0) m.below = seen.at(b.below);
  if (b.above >= 0) m.above = seen.at(b.above);
  LOCKSIM_ASSERT(!m.below || !m.below->failed);
  LOCKSIM_ASSERT(!m.above || m.above->failed);
  m.theory = m.lease - m.hold;
  m.theory_formula = "ttl - hold = " + format_duration(m.lease) + " - " + format_duration(m.hold);
  m.position = request.kind == Kind::kPause
                   ? "the pause starts 1ms before the release (the worst case: the whole hold "
                     "is spent)"
                   : "the holder's clock steps back between its first and second hold";
  return m;
}

}  // namespace locksim::harness::margin
