#include "harness/margin/lease_faults.h"

#include <algorithm>

#include "algorithms/registry.h"
#include "env/assert.h"
#include "env/parse.h"
#include "faults/nemesis.h"
#include "harness/setting_rows.h"

namespace locksim::harness::margin {

namespace {

Duration micros_floor(Duration d) {
  return Duration::micros(d.ns / 1000);
}

// Mid first hold, in whole microseconds: inside the hold whatever its length.
Duration mid_hold(const RunConfig& base, TimePoint held_from) {
  return micros_floor((held_from - TimePoint{}) + base.workload.hold_min / 2);
}

// The crash of crash-downtime: the lease's servers if one holds it, else
// just enough masters that the others are no quorum (N - quorum + 1).
std::vector<std::string> crash_targets(const RunConfig& config) {
  const std::vector<std::string> all = lease_servers(config);
  const size_t quorum = quorum_servers(config).size();
  LOCKSIM_ASSERT(quorum >= 1 && quorum <= all.size());
  const size_t count = all.size() - quorum + 1;
  return {all.begin(), all.begin() + static_cast<std::ptrdiff_t>(count)};
}

Theory ttl_minus_hold(const RunConfig& base, const std::string& why) {
  const Duration lease = lease_of(base);
  const Duration hold = base.workload.hold_min;
  return {(lease - hold).ns,
          "ttl - hold = " + format_duration(lease) + " - " + format_duration(hold) + why, false};
}

// A lock that believes a grant only once a replica acknowledged it (its
// WAIT) is never told it holds a lock the promoted replica lacks: with a lag
// past the crash the WAIT gets no reply and the acquire ends unknown, so
// there is no holder to expose. Theory says never, not crash - grant.
Theory failover_lag_theory(const RunConfig& base) {
  const algorithms::AlgorithmSpec* spec = algorithms::find_algorithm(base.algorithm);
  if (spec != nullptr && spec->waits_for_replicas) {
    return {std::nullopt,
            "never: the grant stands only once the replica acknowledged it (WAIT); with a lag "
            "past the crash " +
                format_duration(kFailoverCrashAfter) +
                " after the write the WAIT gets no reply and the acquire ends unknown, so no "
                "client holds what the promoted replica lacks",
            false};
  }
  return {kFailoverCrashAfter.ns,
          "the grant's write reaches the replica only with a lag shorter than crash - grant = " +
              format_duration(kFailoverCrashAfter),
          false};
}

}  // namespace

bool is_lease_fault(Kind kind) {
  return kind == Kind::kPartition || kind == Kind::kServerClockStep ||
         kind == Kind::kServerClockStepAll || kind == Kind::kServerClockStepOne ||
         kind == Kind::kFailoverLag || kind == Kind::kCrashDowntime || kind == Kind::kDelaySpike;
}

void prepare_deployment(RunConfig& config, Kind kind) {
  if (kind != Kind::kFailoverLag) return;
  if (mysql_lock(config)) {
    // The monitor promotes the replica as Sentinel does for Redis: after the
    // same down-after, the clients follow the same discovery delay later.
    config.mysql.replicas = 1;
    config.mysql.failover = true;
    config.mysql.down_after = kFailoverDownAfter;
    config.mysql.discovery_delay = kFailoverDiscovery;
    return;
  }
  config.redis.replicas = 1;
  config.redis.failover = true;
  config.redis.down_after = kFailoverDownAfter;
  config.redis.discovery_delay = kFailoverDiscovery;
}

void add_lease_fault(RunConfig& config, Kind kind, int64_t size, TimePoint held_from) {
  LOCKSIM_ASSERT(is_lease_fault(kind) && size > 0);
  faults::FaultEvent e;
  e.node = faults::Nemesis::kHolder;
  switch (kind) {
    case Kind::kPartition:
      // The pause's position: 1 ms before the release, the whole hold spent.
      e.kind = faults::FaultKind::kPartition;
      e.at = pause_start(config, held_from);
      e.duration = Duration{size};
      e.side_a = {faults::Nemesis::kHolder};
      e.side_b = lease_servers(config);
      config.faults.events.push_back(e);
      return;
    case Kind::kServerClockStep:
    case Kind::kServerClockStepAll:
    case Kind::kServerClockStepOne:
      e.kind = faults::FaultKind::kJumpClock;
      e.at = mid_hold(config, held_from);
      e.jump = Duration{size};
      for (const std::string& server : clock_targets(config, kind)) {
        e.node = server;
        config.faults.events.push_back(e);
      }
      return;
    case Kind::kFailoverLag:
      // The size is the deployment's lag; the fault is the primary's crash.
      e.kind = faults::FaultKind::kCrash;
      if (mysql_lock(config)) {
        config.mysql.replication_lag = Duration{size};
        e.node = "mysql-1";
      } else {
        config.redis.replication_lag = Duration{size};
        e.node = "redis-1";
      }
      e.at = micros_floor((held_from - TimePoint{}) + kFailoverCrashAfter);
      config.faults.events.push_back(e);
      return;
    case Kind::kCrashDowntime:
      e.kind = faults::FaultKind::kCrash;
      e.at = mid_hold(config, held_from);
      e.duration = Duration{size};
      for (const std::string& server : crash_targets(config)) {
        e.node = server;
        config.faults.events.push_back(e);
      }
      return;
    case Kind::kDelaySpike:
      // From the start (the lone client's first acquire) until the grant's
      // reply, which is sent a delay later: request and reply both wait.
      e.kind = faults::FaultKind::kDelay;
      e.at = Duration::zero();
      e.duration = micros_floor((held_from - TimePoint{}) + Duration{size});
      e.delay = Duration{size};
      e.side_a = {"c1"};
      e.side_b = lease_servers(config);
      config.faults.events.push_back(e);
      return;
    default:
      LOCKSIM_ASSERT_MSG(false, "not a lease fault");
  }
}

Theory lease_fault_theory(const RunConfig& base, Kind kind) {
  switch (kind) {
    case Kind::kPartition:
      return {std::nullopt,
              "never: the release the cut holds up times out (the client's command timeout) "
              "and ends the hold, while the lease still has " +
                  format_duration(lease_of(base) - base.workload.hold_min) + " to run",
              false};
    case Kind::kServerClockStep:
    case Kind::kServerClockStepAll:
      return ttl_minus_hold(base, " (the step brings the key's deadline that much sooner)");
    case Kind::kServerClockStepOne:
      if (lease_servers(base).size() > 1) {
        return {std::nullopt,
                "never: the other " + std::to_string(lease_servers(base).size() - 1) +
                    " masters keep a quorum of keys however far one clock steps",
                false};
      }
      return ttl_minus_hold(base, " (the step brings the key's deadline that much sooner)");
    case Kind::kFailoverLag:
      return failover_lag_theory(base);
    case Kind::kCrashDowntime:
      return {std::nullopt,
              "any size: without fsync a restarted server comes back empty, and " +
                  std::to_string(crash_targets(base).size()) + " of " +
                  std::to_string(lease_servers(base).size()) +
                  (crash_targets(base).size() == 1 ? " down leaves" : " down leave") +
                  " no quorum of keys for the holder",
              true};
    case Kind::kDelaySpike: {
      // The key is written one delay after the ask and lives ttl from then;
      // the holder hears of it a delay later and holds on: it outlives the
      // key when delay > ttl - hold. It hears of it at all only while two
      // delays stay inside its command timeout (searched_size_max).
      const Duration gap = lease_of(base) - base.workload.hold_min;
      const Duration timeout = base.redis.timeout;
      if (gap * 2 < timeout) {
        return ttl_minus_hold(base,
                              " (a grant heard two delays after the ask; up to half the "
                              "command timeout " +
                                  timeout_text(timeout) + ", past it one is given up)");
      }
      return {std::nullopt,
              "never: a grant is heard two delays after the ask, and past the command timeout " +
                  timeout_text(timeout) +
                  " it is given up (the acquire fails); a delay over ttl - hold = " +
                  format_duration(gap) + " would need a timeout over " + format_duration(gap * 2),
              false};
    }
    default:
      break;
  }
  LOCKSIM_ASSERT_MSG(false, "not a lease fault");
  return {};
}

std::string lease_fault_position(Kind kind) {
  switch (kind) {
    case Kind::kPartition:
      return "the cut starts 1ms before the release (the worst case: the whole hold is spent)";
    case Kind::kServerClockStep:
    case Kind::kServerClockStepAll:
    case Kind::kServerClockStepOne:
      return "the servers' clocks step forward mid-hold (any point before the release gives the "
             "same edge)";
    case Kind::kFailoverLag:
      return "the primary crashes " + format_duration(kFailoverCrashAfter) +
             " after the grant; its replica is promoted " +
             format_duration(kFailoverDownAfter + kFailoverDiscovery) + " later";
    case Kind::kCrashDowntime:
      return "the crash comes mid-hold";
    case Kind::kDelaySpike:
      return "from the first acquire to the grant's reply (both ways)";
    default:
      break;
  }
  return "";
}

std::optional<int64_t> searched_size_max(const RunConfig& base, Kind kind) {
  if (kind != Kind::kDelaySpike) return std::nullopt;
  const Duration top = base.redis.timeout / 2 - kReplySlack;
  return std::max<int64_t>(0, top.ns - top.ns % Duration::millis(1).ns);
}

int64_t default_range_lo(Kind kind) {
  return kind == Kind::kCrashDowntime ? Duration::millis(1).ns : 0;
}

}  // namespace locksim::harness::margin
