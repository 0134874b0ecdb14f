#include "harness/margin/margin.h"

#include <algorithm>
#include <map>
#include <stdexcept>

#include "env/assert.h"
#include "env/parse.h"
#include "harness/margin/kinds.h"
#include "harness/margin/lease_faults.h"
#include "harness/run.h"
#include "harness/settings.h"

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

// The settings, by path, that prepare_deployment() and probe_base() below
// set for `kind`, whatever the user gave.
std::vector<std::string> paths_it_sets(const RunConfig& config, Kind kind) {
  std::vector<std::string> paths;
  if (kind == Kind::kFailoverLag) {
    const std::string section = mysql_lock(config) ? "mysql." : "redis.";
    for (const char* key :
         {"replicas", "failover", "down_after", "discovery_delay", "replication_lag"}) {
      paths.push_back(section + key);
    }
  }
  if (unit_of(kind) == Unit::kPpm && holds_to_validity(config)) {
    paths.insert(paths.end(), {"workload.hold", "workload.hold_within_validity"});
  }
  return paths;
}

}  // namespace

void refuse_given_it_sets(const RunConfig& config, Kind kind) {
  RunConfig deployed = config;  // the replica and monitor failover-lag gives
  prepare_deployment(deployed, kind);
  for (const std::string& path : paths_it_sets(config, kind)) {
    if (config.given_paths.count(path) == 0) continue;
    // A monitor or replica given as margin deploys it changes nothing; the
    // lag is the size searched, and a hold is cut to the validity.
    const Setting& s = *find_setting_by_path(path);
    const bool searched = path.ends_with("replication_lag") || path.starts_with("workload.");
    if (!searched && s.format(deployed) == s.format(config)) continue;
    const std::string why = kind == Kind::kFailoverLag
                                ? "deploys its own replica and monitor, and searches the lag"
                                : "holds to the end of the lease's validity, as " +
                                      config.algorithm + "'s careful client does";
    throw ConfigError(field_name(config, path) + ": margin --fault " + to_string(kind) + " " + why +
                      "; leave " + short_field_name(config, path) + " out");
  }
}

namespace {

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

// When the q-th of the lease's servers first stored `token` as held, from
// the lock trace; none if fewer than q ever did.
std::optional<TimePoint> quorum_set_at(const RunConfig& base, const checkers::LockTrace& trace,
                                       const std::string& token) {
  const std::vector<std::string> servers = lease_servers(base);
  std::map<std::string, TimePoint> first;  // server -> when it first held the token
  for (const checkers::LockChange& c : trace.changes) {
    if (c.after.kind != checkers::ServerLock::Kind::kHeld || c.after.holder != token) continue;
    if (std::find(servers.begin(), servers.end(), c.after.server) == servers.end()) continue;
    first.emplace(c.after.server, c.at);
  }
  const size_t quorum = quorum_servers(base).size();
  if (first.size() < quorum) return std::nullopt;
  std::vector<TimePoint> at;
  for (const auto& [server, t] : first) at.push_back(t);
  std::sort(at.begin(), at.end());
  return at[quorum - 1];
}

// The invoke time of the acquire that completed at op `ok` (its client's
// last acquire :invoke before it).
std::optional<TimePoint> acquire_invoked(const history::History& h, int64_t ok) {
  const int client = h.ops.at(static_cast<size_t>(ok)).client;
  for (int64_t i = ok; i >= 0; --i) {
    const history::Op& op = h.ops[static_cast<size_t>(i)];
    if (op.client == client && history::is_client_op(op) && op.f == history::OpF::kAcquire &&
        op.type == history::OpType::kInvoke) {
      return TimePoint{op.time_ns};
    }
  }
  return std::nullopt;
}

// From the run above the edge, traced: the exposed hold's time from its
// acquire to its quorum's last SET (none if the run shows no such hold).
std::optional<Duration> exposed_quorum_delay(const RunConfig& config) {
  RunExtras extras;
  extras.trace_lock = true;
  const SimRunReport r = simulate_and_check(config, extras);
  const history::History& h = r.result.history;
  if (r.result.exposure.windows.empty() || !r.result.lock_trace.supported) return std::nullopt;
  const int64_t ok = r.result.exposure.windows.front().acquire_index;
  if (ok < 0) return std::nullopt;
  const std::string& token = h.ops.at(static_cast<size_t>(ok)).token;
  const std::optional<TimePoint> set = quorum_set_at(config, r.result.lock_trace, token);
  const std::optional<TimePoint> t1 = acquire_invoked(h, ok);
  if (!set || !t1 || *set < *t1) return std::nullopt;
  return *set - *t1;
}

}  // namespace

FaultFree observe_fault_free(const RunConfig& base) {
  RunExtras extras;
  extras.trace_lock = true;  // the lock trace leaves the run as it is (explain_test)
  const SimRunReport r = simulate_and_check(base, extras);
  const history::History& h = r.result.history;
  std::vector<const history::HeldInterval*> holds;
  for (const history::HeldInterval& held : h.held) {
    if (held.client == 0) holds.push_back(&held);
  }
  if (holds.empty()) {
    // A lock that never grants (a script whose every acquire errs) has no
    // margin: bad input, named, not an internal error.
    throw ConfigError("--algorithm " + base.algorithm +
                      ": expected a lock the lone client can hold; it never held it in the "
                      "fault-free run (" +
                      r.result.replay_command + ")");
  }
  FaultFree seen;
  seen.held_from = holds[0]->start;
  LOCKSIM_ASSERT(holds[0]->acquire_index >= 0);
  for (const history::HeldInterval* held : holds) {
    if (!r.result.lock_trace.supported || held->acquire_index < 0) break;
    const std::string& token = h.ops.at(static_cast<size_t>(held->acquire_index)).token;
    const std::optional<TimePoint> set = quorum_set_at(base, r.result.lock_trace, token);
    if (!set || held->end_reason != history::HeldInterval::EndReason::kRelease) continue;
    seen.quorum_life_max =
        std::max(seen.quorum_life_max.value_or(Duration::zero()), held->end - *set);
  }
  if (holds.size() >= 2 && holds[1]->acquire_index >= 0) {
    seen.second_acquire = acquire_invoked(h, holds[1]->acquire_index);
    seen.second_release = holds[1]->end;
    LOCKSIM_ASSERT(!seen.second_acquire || *seen.second_acquire <= seen.second_release);
  }
  LOCKSIM_ASSERT(seen.held_from <= holds[0]->end);
  return seen;
}

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
  // A range nobody gave is named as the default it is, not as a flag typed.
  const std::string range =
      request.range_given ? "--range" : "--range (not given: its default, from the lease)";
  if (request.range_lo < 0 || request.range_lo >= request.range_hi) {
    const char* example = unit_of(request.kind) == Unit::kPpm ? "0ppm..50000ppm" : "0s..4s";
    throw ConfigError(range + ": expected LO..HI with 0 <= LO < HI, such as " + example + ", got " +
                      format_size(request.kind, request.range_lo) + ".." +
                      format_size(request.kind, request.range_hi));
  }
  if (request.range_lo % step_of(request.kind) != 0 ||
      request.range_hi % step_of(request.kind) != 0) {
    throw ConfigError(range + ": expected whole milliseconds (the search's unit)");
  }
  if (unit_of(request.kind) == Unit::kPpm && request.range_hi > kDriftPpmMax) {
    throw ConfigError(range + ": a drift is at most " + std::to_string(kDriftPpmMax) + "ppm");
  }
  const Duration length = probe_base(request).duration;
  if (length > RunConfig::kDurationMax && !request.varied.empty()) {
    throw ConfigError("--vary: " + request.varied + ": its margin's runs would last " +
                      format_long_duration(length) + ", more than a run may (" +
                      format_duration(RunConfig::kDurationMax) + "); give a smaller upper end");
  }
  if (length > RunConfig::kDurationMax) {
    throw ConfigError(range + ": its runs would last " + format_long_duration(length) +
                      ", more than a run may (" + format_duration(RunConfig::kDurationMax) +
                      "); give a shorter --ttl or --range");
  }
}

int64_t difference(const MarginResult& result) {
  LOCKSIM_ASSERT(result.outcome == Bisection::Outcome::kFound && result.above.has_value());
  LOCKSIM_ASSERT(result.theory.has_value());
  return result.above->size - *result.theory;
}

bool within_resolution(const MarginResult& result) {
  LOCKSIM_ASSERT(result.resolution > 0);
  const int64_t d = difference(result);
  return d <= result.resolution && -d <= result.resolution;
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
    case Kind::kServerClockStepAll:
    case Kind::kServerClockStepOne:
    case Kind::kFailoverLag:
    case Kind::kCrashDowntime:
    case Kind::kDelaySpike:
      return lease_fault_position(kind);
    case Kind::kClientDrift:
      return "the holder's clock slow from the start; it works to the end of its validity by that "
             "clock (the worst case)";
    default:
      return holds_to_validity(base) ? "fast from the start; the holder works to the end of its "
                                       "validity (the worst case)"
                                     : "fast from the start; the holder holds for its whole hold";
  }
}

// The scan below a drift's bisected edge (DriftScan says why): ascending
// from 1 % below it, the first size that breaks becomes the margin and the
// size scanned before it (or, at the window's bottom, the largest the
// bisection saw hold below it) the size that held.
void scan_below(MarginResult& m, const Probe& probe, const std::map<int64_t, ConfirmingRun>& seen) {
  LOCKSIM_ASSERT(m.outcome == Bisection::Outcome::kFound && m.below && m.above);
  DriftScan scan;
  scan.bisected = m.above->size;
  const int64_t window = std::max<int64_t>(1, m.above->size * kDriftScanPercent / 100);
  scan.step = std::max<int64_t>(1, (window + kDriftScanRunsMax - 1) / kDriftScanRunsMax);
  scan.hi = m.below->size - 1;
  scan.lo = std::max(m.range_lo + 1, m.above->size - window);
  const ConfirmingRun* held = nullptr;  // the largest size seen to hold below the window
  for (const auto& [size, run] : seen) {
    if (size < scan.lo && !run.failed) held = &run;
  }
  for (int64_t size = scan.lo; size <= scan.hi; size += scan.step) {
    LOCKSIM_ASSERT_MSG(scan.runs < kDriftScanRunsMax, "a drift scan ran past its bound");
    ++scan.runs;
    if (probe(size)) {
      scan.found_lower = true;
      m.above = seen.at(size);
      if (held != nullptr) m.below = *held;
      break;
    }
    held = &seen.at(size);
  }
  LOCKSIM_ASSERT(m.below && !m.below->failed && m.below->size < m.above->size);
  m.resolution = m.above->size - m.below->size;
  m.probes += scan.runs;
  m.scan = scan;
}

}  // namespace

MarginResult measure_margin(const MarginRequest& request, const ProgressFn& progress) {
  validate(request);
  const RunConfig base = probe_base(request);
  FaultFree fault_free = observe_fault_free(base);
  const TimePoint held_from = fault_free.held_from;
  MarginResult m;
  m.algorithm = base.algorithm;
  m.kind = request.kind;
  m.seed = base.seed;
  m.lease = lease_of(base);
  m.lease_label = lease_name(base);
  m.hold = base.workload.hold_min;
  m.range_lo = request.range_lo;
  m.range_hi = request.range_hi;
  // Past a delay spike's window no grant is heard and the lock holds again:
  // the search stops below it (searched_size_max says why).
  const std::optional<int64_t> top = searched_size_max(base, request.kind);
  const bool cut = top.has_value() && (*top < m.range_hi) && (*top > m.range_lo);
  if (cut) m.range_hi = *top;
  std::map<int64_t, ConfirmingRun> seen;  // by step: the runs behind the answer
  std::optional<SessionHeard> heard;      // a session lock's, from a run that expired it
  const int64_t step = step_of(request.kind);
  int probe_number = 0;
  const Probe probe = [&](int64_t steps) {
    const int64_t size = steps * step;
    const RunConfig config = with_fault(base, request.kind, size, held_from);
    const SimRunReport r = simulate_and_check(config);
    const bool broke = failed(r.result);
    seen[steps] = ConfirmingRun{size, broke, r.result.replay_command, config};
    if (broke && !heard) heard = session_heard(r.result.backend_notes);
    if (progress) progress(++probe_number, size, broke);
    return broke;
  };
  // To one step, not to a share of the size: at 1 % an 8 s edge would be
  // known only to 80 ms, and "measured - theory" would be the search's width
  // rather than the simulation's disagreement. One step costs a handful of
  // halvings more (a 20 s range: 17 probes, not 11).
  const Bisection b = bisect(probe, {m.range_lo / step, m.range_hi / step, 1, 0});
  m.outcome = b.outcome;
  m.resolution = step;
  m.probes = b.probes + 1;  // and the fault-free run that placed the fault
  if (b.below >= 0) m.below = seen.at(b.below);
  if (b.above >= 0) m.above = seen.at(b.above);
  if (unit_of(request.kind) == Unit::kPpm && m.outcome == Bisection::Outcome::kFound) {
    scan_below(m, probe, seen);
  }
  LOCKSIM_ASSERT(m.probes <= kRunsPerMarginMax);
  LOCKSIM_ASSERT(!m.below || !m.below->failed);
  LOCKSIM_ASSERT(!m.above || m.above->failed);
  if (request.kind == Kind::kClientDrift && m.above) {
    fault_free.exposed_quorum_delay = exposed_quorum_delay(m.above->config);
  }
  const Theory theory = theory_of(base, request.kind, fault_free, heard);
  m.theory = theory.size;
  m.theory_formula = theory.formula;
  m.theory_any_size = theory.any_size;
  if (session_lock(base)) m.tick = base.zookeeper.tick;
  m.position = position_text(base, request.kind);
  if (cut) {
    m.position += "; no further: a longer delay's grant comes after the command timeout " +
                  format_duration(base.redis.timeout) + " and is given up";
  }
  return m;
}

}  // namespace locksim::harness::margin
