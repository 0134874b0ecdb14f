// The Redis backend's entry: its settings (the scenario's "redis" section,
// flags --masters ... --timeout), the checks across them, and its deployment.
#include <algorithm>

#include "algorithms/param_reader.h"
#include "algorithms/registry.h"
#include "env/assert.h"
#include "harness/backends.h"
#include "harness/profile_deployment.h"
#include "harness/setting_rows.h"
#include "sim/redis/redis_deployment.h"

namespace locksim::harness {

namespace {

// "auto" (the algorithm's default: 1, or 5 for Redlock) or 1..64.
Setting masters_row() {
  Setting s{"--masters",
            "redis.masters",
            Setting::Kind::kInteger,
            "auto|1.." + std::to_string(RunConfig::kRedisMastersMax),
            "independent Redis masters (Redlock's N); auto: the algorithm's default",
            true};
  s.parse = [](RunConfig& c, const std::string& text, const std::string& field) {
    c.redis.masters =
        text == "auto"
            ? 0
            : static_cast<int>(parse_integer(text, field, 1, RunConfig::kRedisMastersMax));
  };
  s.format = [](const RunConfig& c) {
    return c.redis.masters == 0 ? std::string("auto") : std::to_string(c.redis.masters);
  };
  return s;
}

std::vector<Setting> redis_rows() {
  using sim::redis::Persistence;
  std::vector<Setting> rows;
  rows.push_back(masters_row());
  rows.push_back(int_row(
      "--replicas", "redis.replicas", "asynchronous replicas per master", true, 0,
      RunConfig::kReplicasPerMasterMax, [](auto& c) -> auto& { return c.redis.replicas; }));
  rows.push_back(duration_row(
      "--replication-lag", "redis.replication_lag", "how far replicas run behind their master",
      true, DurationRule::kNonNegative, [](auto& c) -> auto& { return c.redis.replication_lag; }));
  rows.back().live_help = "a standing delay of the relay on each replica's link to its master";
  rows.push_back(choice_row(
      "--persistence", "redis.persistence", "what a crash-restart keeps (live: not rdb)", true,
      {"none", "aof-everysec", "aof-always", "rdb"},
      [](auto& c) -> auto& { return c.redis.persistence; },
      [](const std::string& n) { return *sim::redis::persistence_from(n); },
      [](Persistence p) { return sim::redis::to_string(p); }));
  rows.push_back(duration_row(
      "--rdb-interval", "redis.rdb_interval", "RDB snapshot period (persistence rdb)", false,
      DurationRule::kPositive, [](auto& c) -> auto& { return c.redis.rdb_interval; }));
  Setting failover = flag_row(
      "--failover", "redis.failover", "Sentinel-like failover to the most up-to-date replica",
      [](auto& c) -> auto& { return c.redis.failover; });
  failover.live = true;
  failover.live_help = "a real redis-sentinel (quorum 1) promotes a replica";
  rows.push_back(std::move(failover));
  rows.push_back(duration_row(
      "--down-after", "redis.down_after", "failover: the master unreachable this long", true,
      DurationRule::kPositive, [](auto& c) -> auto& { return c.redis.down_after; }));
  rows.push_back(duration_row(
      "--discovery-delay", "redis.discovery_delay",
      "failover: clients learn the new master this much later", true, DurationRule::kNonNegative,
      [](auto& c) -> auto& { return c.redis.discovery_delay; }));
  rows.push_back(timeout_row(
      "--timeout", "redis.timeout",
      "client timeout of one Redis command, or none (redis-py/hiredis default); then the client "
      "closes the connection",
      true, [](auto& c) -> auto& { return c.redis.timeout; }));
  return rows;
}

void validate_redis(const RunConfig& c) {
  const sim::redis::Topology t = resolved_topology(c);
  // A profile with failover adds the replica itself (give_failover).
  if (t.failover && t.replicas == 0 && !profile_deploys_failover(c)) {
    throw ConfigError(field_name(c, "redis.failover") + ": needs " +
                      short_field_name(c, "redis.replicas") + " >= 1");
  }
  // A lock on one master (every one but Redlock and a multi-master script)
  // talks to the first group only; more groups would only sit beside it,
  // free, and the exposure monitor would count them as a quorum of free
  // servers: a false finding, so they are refused.
  const algorithms::AlgorithmSpec* spec = algorithms::find_algorithm(c.algorithm);
  if (spec->default_masters == 1 && t.masters > 1) {
    throw ConfigError(field_name(c, "redis.masters") + ": " + c.algorithm +
                      " locks on one Redis master; expected 1 or auto, got " +
                      std::to_string(t.masters) + " (more masters are for redlock)");
  }
  // Parameters that only make sense against the topology (Redlock's quorum).
  const auto algorithm = spec->make(c.algorithm_params, c.param_field_prefix());
  // Redis expires keys in whole milliseconds (PX): a shorter TTL makes every
  // SET fail with "invalid expire time", and the run an empty "OK".
  if (const std::optional<Duration> ttl = ttl_param(c); ttl && *ttl < Duration::millis(1)) {
    throw ConfigError(algorithms::param_field(c.param_field_prefix(), "ttl") +
                      ": expected at least 1ms (Redis expires keys in whole milliseconds), got '" +
                      format_duration(*ttl) + "'");
  }
  const std::string problem = algorithm->check_servers(static_cast<size_t>(t.masters));
  if (!problem.empty()) throw ConfigError(c.param_field_prefix() + problem);
}

}  // namespace

BackendSpec redis_backend() {
  BackendSpec b;
  b.name = "redis";
  b.settings = redis_rows;
  b.validate = validate_redis;
  b.make = [](sim::World& world, sim::Network& net, const RunConfig& c) {
    const sim::redis::Topology t = resolved_topology(c);
    // make() is handed validated configs only (harness::prepare_run validates first).
    LOCKSIM_ASSERT(t.masters >= 1 && t.masters <= RunConfig::kRedisMastersMax);
    LOCKSIM_ASSERT(!t.failover || t.replicas >= 1);
    return std::unique_ptr<sim::Deployment>(new sim::redis::RedisDeployment(world, net, t));
  };
  b.add_failover = [](RunConfig& c, Duration lag) { give_failover(c.redis, lag); };
  b.set_client_timeout = [](RunConfig& c, Duration timeout) {
    LOCKSIM_ASSERT(timeout > Duration::zero());
    c.redis.timeout = timeout;
  };
  return b;
}

}  // namespace locksim::harness
