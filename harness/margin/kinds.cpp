#include "harness/margin/kinds.h"

#include <cmath>
#include <string_view>

#include "algorithms/param_lookup.h"
#include "algorithms/registry.h"
#include "env/assert.h"
#include "env/parse.h"
#include "faults/nemesis.h"
#include "harness/margin/lease_faults.h"
#include "harness/profile_deployment.h"

namespace locksim::harness::margin {

namespace {

const algorithms::AlgorithmSpec* spec_of(const std::string& algorithm) {
  return algorithms::find_algorithm(algorithm);
}

using algorithms::has_param;

// The parameter as given, or its default ("" for an unknown one).
std::string param_text(const RunConfig& config, const std::string& name) {
  const auto it = config.algorithm_params.find(name);
  if (it != config.algorithm_params.end()) return it->second;
  if (const algorithms::AlgorithmSpec* spec = spec_of(config.algorithm)) {
    for (const algorithms::ParamInfo& p : spec->params) {
      if (p.name == name) return p.default_value;
    }
  }
  return "";
}

// Expiry judged by a client's clock: the stored deadline is the writer's.
bool client_clock_lock(const std::string& algorithm) {
  return algorithm == "getset-timestamp" || algorithm.rfind("mysql-", 0) == 0;
}

// Expiry judged by the Redis server's clock: a ttl the server counts down.
bool server_expiry_lock(const std::string& algorithm) {
  const algorithms::AlgorithmSpec* spec = spec_of(algorithm);
  return spec != nullptr && spec->backend == "redis" && has_param(algorithm, "ttl") &&
         !client_clock_lock(algorithm);
}

// A lease its client's process renews (Redisson's watchdog): a pause stops
// the renewals with the process.
bool renewed_lease_algorithm(const std::string& algorithm) {
  const algorithms::AlgorithmSpec* spec = spec_of(algorithm);
  return spec != nullptr && !spec->renewed_lease_param.empty();
}

bool session_algorithm(const std::string& algorithm) {
  const algorithms::AlgorithmSpec* spec = spec_of(algorithm);
  return spec != nullptr && spec->backend == "zookeeper";
}

std::string kinds_text(const std::vector<Kind>& kinds) {
  std::string out;
  for (const Kind k : kinds) out += (out.empty() ? "" : ", ") + std::string(to_string(k));
  return out.empty() ? "none" : out;
}

}  // namespace

std::vector<std::string> clock_targets(const RunConfig& config, Kind kind) {
  const int masters = resolved_topology(config).masters;
  int count = masters;
  if (kind == Kind::kServerDriftOne || kind == Kind::kServerClockStepOne) count = 1;
  if (kind == Kind::kServerDrift || kind == Kind::kServerClockStep) {
    const std::string quorum = param_text(config, "quorum");
    count = quorum.empty() || quorum == "auto"
                ? masters / 2 + 1
                : static_cast<int>(parse_integer(quorum, "--quorum", 1, masters));
  }
  LOCKSIM_ASSERT(count >= 1 && count <= masters);
  std::vector<std::string> out;
  for (int i = 1; i <= count; ++i) out.push_back("redis-" + std::to_string(i));
  return out;
}

bool mysql_lock(const RunConfig& config) {
  return config.algorithm.rfind("mysql-", 0) == 0;
}

namespace {

// Ceil of a / b - 1 in ppm, for 0 < b; negative when b > a (a hold longer
// than the ttl, which breaks with no drift at all).
int64_t ppm_over(Duration a, Duration b) {
  LOCKSIM_ASSERT(a > Duration::zero() && b > Duration::zero());
  const double ppm = (static_cast<double>(a.ns) / static_cast<double>(b.ns) - 1.0) * 1e6;
  return static_cast<int64_t>(std::ceil(ppm));
}

// The reserve Redlock keeps back from its validity: ttl x drift-factor + 2 ms.
Duration validity_reserve(const RunConfig& base) {
  const double factor = std::stod(param_text(base, "drift-factor"));
  return Duration{
             static_cast<int64_t>(std::llround(static_cast<double>(lease_of(base).ns) * factor))} +
         Duration::millis(2);
}

Theory client_drift_theory(const RunConfig& base, const FaultFree& seen);

Theory drift_theory(const RunConfig& base, Kind kind, const FaultFree& seen) {
  if (kind == Kind::kClientDrift) return client_drift_theory(base, seen);
  const Duration ttl = lease_of(base);
  if (kind == Kind::kServerDriftOne && quorum_servers(base).size() > 1) {
    return {std::nullopt, "never: the other " +
                              std::to_string(resolved_topology(base).masters - 1) +
                              " masters keep a quorum of keys whatever one clock does"};
  }
  if (!holds_to_validity(base)) {
    const Duration hold = base.workload.hold_min;
    return {ppm_over(ttl, hold), "(ttl / hold - 1) x 1e6 = (" + format_duration(ttl) + " / " +
                                     format_duration(hold) + " - 1) x 1e6, rounded up"};
  }
  // The holder works to the end of its validity, t1 + ttl - (ttl x
  // drift-factor + 2 ms) by its clock, and the quorum's last key lives from
  // its own SET, a few hops after t1: what it must outlive is the time from
  // that SET to the release, both read from the fault-free run.
  LOCKSIM_ASSERT_MSG(seen.quorum_life_max.has_value(), "the fault-free run set a quorum of keys");
  const Duration life = *seen.quorum_life_max;
  const Duration reserve = validity_reserve(base);
  LOCKSIM_ASSERT(life > Duration::zero() && life <= ttl - reserve);
  // The arithmetic last, so the " = value" a report appends follows it.
  return {ppm_over(ttl, life),
          "the validity ttl - (ttl x drift-factor + 2ms) = " +
              format_exact_seconds((ttl - reserve).ns) + " from t1, less the " +
              format_exact_seconds((ttl - reserve - life).ns) +
              " from t1 to the quorum's last SET, is the key life the holder needs, at most "
              "(over the holds): (ttl / that - 1) x 1e6 = (" +
              format_duration(ttl) + " / " + format_exact_seconds(life.ns) +
              " - 1) x 1e6, rounded up"};
}

// A careful holder whose clock runs slow by r works (ttl - reserve) / (1 - r)
// of true time from t1; the quorum's last key, set delta after t1, lives ttl.
// It breaks once the first outlasts the second: r = 1 - (ttl - reserve) /
// (ttl + delta), delta read from the run above the edge (the exposed hold's:
// a slow clock moves when each later hold starts, and with it the jitter of
// its SETs' hops, so no fault-free hold can stand in for it).
Theory client_drift_theory(const RunConfig& base, const FaultFree& seen) {
  const Duration ttl = lease_of(base);
  const Duration reserve = validity_reserve(base);
  if (!seen.exposed_quorum_delay) {
    return {std::nullopt,
            "(1 - (ttl - (ttl x drift-factor + 2ms)) / (ttl + delta)) x 1e6, delta "
            "the time from t1 to the quorum's last SET (no run broke to read it)"};
  }
  const Duration delta = *seen.exposed_quorum_delay;
  LOCKSIM_ASSERT(delta >= Duration::zero() && delta < ttl);
  const double kept =
      static_cast<double>((ttl - reserve).ns) / static_cast<double>((ttl + delta).ns);
  const int64_t ppm = static_cast<int64_t>(std::ceil((1.0 - kept) * 1e6));
  // The arithmetic last, to the nanosecond: it evaluates to the value a
  // report appends (a millisecond-truncated ttl + delta did not).
  return {ppm, "delta " + format_exact_seconds(delta.ns) +
                   " from t1 to the quorum's last SET: (1 - (ttl - (ttl x drift-factor + 2ms)) / "
                   "(ttl + delta)) x 1e6 = (1 - " +
                   format_exact_seconds((ttl - reserve).ns) + " / " +
                   format_exact_seconds((ttl + delta).ns) + ") x 1e6, rounded up"};
}

// A client-clock step of S: the second acquire writes a deadline S early,
// which must still lie past its release. A MySQL DATETIME keeps whole
// seconds (the fraction is truncated), so the stored deadline is
// floor(t + ttl - S), t the acquire's clock reading: it falls to or below the
// release R once S > t + ttl - ceil(R), up to a second below ttl - hold.
Theory client_clock_theory(const RunConfig& base, const FaultFree& seen) {
  const Duration lease = lease_of(base);
  const Duration hold = base.workload.hold_min;
  const bool whole_seconds = mysql_lock(base);  // a DATETIME deadline
  if (!whole_seconds || !seen.second_acquire || !seen.second_release) {
    return {(lease - hold).ns,
            "ttl - hold = " + format_duration(lease) + " - " + format_duration(hold)};
  }
  const int64_t second = Duration::seconds(1).ns;
  const int64_t release_ceil = (seen.second_release->ns + second - 1) / second * second;
  const int64_t size = seen.second_acquire->ns + lease.ns - release_ceil;
  return {size, "the DATETIME deadline keeps whole seconds (ttl - hold = " +
                    format_duration(lease - hold) +
                    " less the acquire's fraction of a second): acquire + ttl - ceil(release) = " +
                    format_exact_seconds(seen.second_acquire->ns) + " + " + format_duration(lease) +
                    " - " + format_exact_seconds(release_ceil)};
}

// The watchdog renews every period from the grant (Redisson's lease / 3, a
// script's renew-period); the pause starts 1 ms before the release, so the
// last renewal before it was (hold - 1 ms) mod period ago, and the lease it
// set runs out lease - that after it.
Theory renewed_pause_theory(const RunConfig& base, Duration lease, Duration hold) {
  const std::string& period_param = spec_of(base.algorithm)->renew_period_param;
  const Duration period = period_param.empty()
                              ? lease / 3
                              : parse_duration(param_text(base, period_param), period_param);
  const std::string period_name = period_param.empty() ? "(lease / 3)" : period_param;
  LOCKSIM_ASSERT(period > Duration::zero() && hold > Duration::millis(1));
  const Duration since = Duration{(hold - Duration::millis(1)).ns % period.ns};
  return {(lease - since).ns,
          "the lease less the time since the watchdog's last renewal before the pause: lease - "
          "((hold - 1ms) mod " +
              period_name + ") = " + format_duration(lease) + " - " +
              format_exact_seconds(since.ns)};
}

}  // namespace

Theory session_theory(const RunConfig& base, TimePoint held_from,
                      std::optional<SessionHeard> heard) {
  const Duration timeout = base.zookeeper.negotiate(base.zookeeper.session_timeout);
  const Duration tick = base.zookeeper.tick;
  const Duration start = pause_start(base, held_from);
  if (!heard) {
    return {std::nullopt, "session timeout " + format_duration(timeout) +
                              " from the last packet heard, rounded up to the tick " +
                              format_duration(tick) + " (no run expired the session)"};
  }
  // On the leader's clock, then back to true time by its offset.
  const int64_t deadline = ((heard->last_ns + timeout.ns) / tick.ns + 1) * tick.ns;
  return {deadline - heard->clock_offset_ns - start.ns,
          "(floor((last heard " + format_exact_seconds(heard->last_ns) + " + T " +
              format_duration(timeout) + ") / tick " + format_duration(tick) +
              ") + 1) x tick - the leader's clock offset " +
              format_exact_seconds(heard->clock_offset_ns) + " - fault start " +
              format_exact_seconds(start.ns)};
}

std::vector<std::string> quorum_servers(const RunConfig& config) {
  return clock_targets(config, Kind::kServerDrift);
}

std::vector<std::string> lease_servers(const RunConfig& config) {
  std::vector<std::string> out;
  if (session_algorithm(config.algorithm)) {
    for (int i = 1; i <= config.zookeeper.servers; ++i) out.push_back("zk-" + std::to_string(i));
  } else if (mysql_lock(config)) {
    out.push_back("mysql-1");
  } else {
    for (int i = 1; i <= resolved_topology(config).masters; ++i) {
      out.push_back("redis-" + std::to_string(i));
    }
  }
  return out;
}

bool session_lock(const RunConfig& config) {
  return session_algorithm(config.algorithm);
}

bool holds_to_validity(const RunConfig& config) {
  return has_param(config.algorithm, "drift-factor");
}

const char* to_string(Kind kind) {
  switch (kind) {
    case Kind::kPause:
      return "pause";
    case Kind::kClientClock:
      return "client-clock";
    case Kind::kServerDrift:
      return "server-drift";
    case Kind::kServerDriftAll:
      return "server-drift-all";
    case Kind::kServerDriftOne:
      return "server-drift-one";
    case Kind::kClientDrift:
      return "client-drift";
    case Kind::kPartition:
      return "partition";
    case Kind::kServerClockStep:
      return "server-clock-step";
    case Kind::kServerClockStepAll:
      return "server-clock-step-all";
    case Kind::kServerClockStepOne:
      return "server-clock-step-one";
    case Kind::kFailoverLag:
      return "failover-lag";
    case Kind::kCrashDowntime:
      return "crash-downtime";
    case Kind::kDelaySpike:
      return "delay-spike";
  }
  return "?";
}

const std::vector<Kind>& all_kinds() {
  static const std::vector<Kind> kinds = {Kind::kPause,
                                          Kind::kClientClock,
                                          Kind::kServerDrift,
                                          Kind::kServerDriftAll,
                                          Kind::kServerDriftOne,
                                          Kind::kClientDrift,
                                          Kind::kPartition,
                                          Kind::kServerClockStep,
                                          Kind::kServerClockStepAll,
                                          Kind::kServerClockStepOne,
                                          Kind::kFailoverLag,
                                          Kind::kCrashDowntime,
                                          Kind::kDelaySpike};
  return kinds;
}

Unit unit_of(Kind kind) {
  const bool drift = kind == Kind::kServerDrift || kind == Kind::kServerDriftAll ||
                     kind == Kind::kServerDriftOne || kind == Kind::kClientDrift;
  return drift ? Unit::kPpm : Unit::kNanos;
}

const char* unit_name(Unit unit) {
  return unit == Unit::kNanos ? "ns" : "ppm";
}

int64_t step_of(Kind kind) {
  return unit_of(kind) == Unit::kNanos ? Duration::millis(1).ns : 1;
}

std::string format_exact_seconds(int64_t ns) {
  const bool negative = ns < 0;
  const uint64_t mag = negative ? 0 - static_cast<uint64_t>(ns) : static_cast<uint64_t>(ns);
  std::string frac = std::to_string(mag % 1'000'000'000u);
  frac.insert(0, 9 - frac.size(), '0');
  while (frac.size() > 3 && frac.back() == '0') frac.pop_back();
  std::string out = negative ? "-" : "";
  out += std::to_string(mag / 1'000'000'000u);
  out += '.';
  out += frac;
  out += 's';
  return out;
}

std::string format_size(Kind kind, int64_t size) {
  if (unit_of(kind) == Unit::kNanos) return format_exact_seconds(size);
  // client-drift's size is how slow the holder's clock runs: a "+" would
  // read as fast, the opposite of the `-SIZEppm` its fault applies.
  if (kind == Kind::kClientDrift) return std::to_string(size) + "ppm slow";
  return (size >= 0 ? "+" : "") + std::to_string(size) + "ppm";
}

std::string lease_name(const RunConfig& config) {
  if (ttl_param(config)) return "ttl";
  if (renewed_lease_algorithm(config.algorithm)) return "watchdog timeout";
  if (session_algorithm(config.algorithm)) return "session timeout";
  return "lease";
}

std::vector<Kind> kinds_for(const std::string& algorithm) {
  // A renewed lease: only a pause has a theory that counts the renewals (a
  // stopped process renews nothing). The others' theories read the lease
  // from the grant, which renewals move; they are not offered.
  if (renewed_lease_algorithm(algorithm)) return {Kind::kPause};
  std::vector<Kind> out;
  if (has_param(algorithm, "ttl") || session_algorithm(algorithm)) out.push_back(Kind::kPause);
  if (client_clock_lock(algorithm)) out.push_back(Kind::kClientClock);
  if (server_expiry_lock(algorithm)) out.push_back(Kind::kServerDrift);
  if (server_expiry_lock(algorithm) && has_param(algorithm, "quorum")) {
    out.push_back(Kind::kServerDriftAll);
    out.push_back(Kind::kServerDriftOne);
  }
  // A careful client that holds to the end of its validity by its own clock.
  if (has_param(algorithm, "drift-factor")) out.push_back(Kind::kClientDrift);
  if (has_param(algorithm, "ttl") || session_algorithm(algorithm)) out.push_back(Kind::kPartition);
  if (server_expiry_lock(algorithm)) out.push_back(Kind::kServerClockStep);
  if (server_expiry_lock(algorithm) && has_param(algorithm, "quorum")) {
    out.push_back(Kind::kServerClockStepAll);
    out.push_back(Kind::kServerClockStepOne);
  }
  // A replica to fail over to: a single-master Redis lock (Redlock's masters
  // have none by design) or the MySQL table's primary.
  const algorithms::AlgorithmSpec* spec = spec_of(algorithm);
  const bool redis_lease =
      spec != nullptr && spec->backend == "redis" && has_param(algorithm, "ttl");
  const bool mysql_lease = spec != nullptr && spec->backend == "mysql";
  if ((redis_lease && !has_param(algorithm, "quorum")) || mysql_lease) {
    out.push_back(Kind::kFailoverLag);
  }
  if (redis_lease) out.push_back(Kind::kCrashDowntime);
  if (server_expiry_lock(algorithm)) out.push_back(Kind::kDelaySpike);
  return out;
}

Kind parse_kind(std::string_view text, const std::string& algorithm) {
  const std::vector<Kind> applies = kinds_for(algorithm);
  for (const Kind k : all_kinds()) {
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

std::pair<int64_t, int64_t> parse_range(std::string_view text, Kind kind) {
  if (unit_of(kind) == Unit::kNanos) {
    const auto [lo, hi] = parse_duration_ends(text, "--range");  // validate() wants LO < HI
    return {lo.ns, hi.ns};
  }
  const size_t dots = text.find("..");
  auto ppm = [&](std::string_view part) {
    if (part.size() < 4 || part.substr(part.size() - 3) != "ppm") {
      throw ConfigError("--range: expected LOppm..HIppm for " + std::string(to_string(kind)) +
                        " (e.g. 0ppm..50000ppm), got '" + std::string(text) + "'");
    }
    return parse_integer(part.substr(0, part.size() - 3), "--range", 0, 999'999);
  };
  if (dots == std::string_view::npos) {
    throw ConfigError("--range: expected LOppm..HIppm, got '" + std::string(text) + "'");
  }
  return {ppm(text.substr(0, dots)), ppm(text.substr(dots + 2))};
}

Duration lease_of(const RunConfig& config) {
  if (const std::optional<Duration> ttl = ttl_param(config)) return *ttl;
  if (renewed_lease_algorithm(config.algorithm)) return profile_lease(config);
  if (session_algorithm(config.algorithm)) {
    return config.zookeeper.negotiate(config.zookeeper.session_timeout);
  }
  throw ConfigError("--algorithm: " + config.algorithm +
                    " has no lease to measure a margin against");
}

Duration pause_start(const RunConfig& base, TimePoint held_from) {
  const Duration at = (held_from - TimePoint{}) + base.workload.hold_min - Duration::millis(1);
  return Duration::micros(at.ns / 1000);
}

RunConfig with_fault(const RunConfig& base, Kind kind, int64_t size, TimePoint held_from) {
  RunConfig c = base;
  if (size == 0) return c;
  if (is_lease_fault(kind)) {
    add_lease_fault(c, kind, size, held_from);
    return c;
  }
  faults::FaultEvent e;
  e.node = faults::Nemesis::kHolder;
  if (kind == Kind::kPause) {
    // 1 ms before the release: the worst case, the whole hold is spent.
    e.kind = faults::FaultKind::kPause;
    e.at = pause_start(base, held_from);
    e.duration = Duration{size};
    c.faults.events.push_back(e);
  } else if (kind == Kind::kClientClock) {
    // Mid first hold: it moves the deadline of the next acquire only (the
    // first one's is stored already, and holds are timed on true time).
    e.kind = faults::FaultKind::kJumpClock;
    const Duration at = (held_from - TimePoint{}) + base.workload.hold_min / 2;
    e.at = Duration::micros(at.ns / 1000);
    e.jump = -Duration{size};
    c.faults.events.push_back(e);
  } else if (kind == Kind::kClientDrift) {
    // From the start, on the lone client (nobody holds at 0 s, so not
    // @holder): every validity it counts runs long in true time.
    e.kind = faults::FaultKind::kSetDrift;
    e.at = Duration::zero();
    e.node = "c1";
    e.drift_ppm = -size;
    c.faults.events.push_back(e);
  } else {
    // From the start: every key the run sets lives by the fast clocks.
    e.kind = faults::FaultKind::kSetDrift;
    e.at = Duration::zero();
    e.drift_ppm = size;
    for (const std::string& server : clock_targets(base, kind)) {
      e.node = server;
      c.faults.events.push_back(e);
    }
  }
  return c;
}

Theory theory_of(const RunConfig& base, Kind kind, const FaultFree& seen,
                 std::optional<SessionHeard> heard) {
  if (unit_of(kind) == Unit::kPpm) return drift_theory(base, kind, seen);
  if (is_lease_fault(kind)) return lease_fault_theory(base, kind);
  if (session_lock(base)) return session_theory(base, seen.held_from, heard);
  if (kind == Kind::kClientClock) return client_clock_theory(base, seen);
  const Duration lease = lease_of(base);
  const Duration hold = base.workload.hold_min;
  if (renewed_lease_algorithm(base.algorithm)) return renewed_pause_theory(base, lease, hold);
  return {(lease - hold).ns,
          "ttl - hold = " + format_duration(lease) + " - " + format_duration(hold)};
}

namespace {

// The "3.210s" after `marker` in `text`, in ns: whole milliseconds (the
// note's precision); none if the marker is missing.
std::optional<int64_t> seconds_after(const std::string& text, const std::string& marker) {
  const size_t at = text.find(marker);
  if (at == std::string::npos) return std::nullopt;
  const size_t from = at + marker.size();
  const size_t end = text.find('s', from);
  const double seconds = std::stod(text.substr(from, end - from));
  return static_cast<int64_t>(std::llround(seconds * 1000.0)) * 1'000'000;
}

}  // namespace

std::optional<SessionHeard> session_heard(
    const std::vector<std::pair<std::string, std::string>>& backend_notes) {
  for (const auto& [key, text] : backend_notes) {
    if (key != "zookeeper.session_expired[0]") continue;
    const auto last = seconds_after(text, "last heartbeat heard ");
    const auto deadline = seconds_after(text, ", deadline ");
    const auto expired_at = seconds_after(text, "expired at ");
    if (!last || !deadline || !expired_at) return std::nullopt;
    return SessionHeard{*last, *deadline - *expired_at};
  }
  return std::nullopt;
}

}  // namespace locksim::harness::margin
