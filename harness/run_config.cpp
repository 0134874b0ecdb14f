#include "harness/run_config.h"

#include "env/parse.h"

namespace locksim::harness {

sim::redis::Topology resolved_topology(const RunConfig& c) {
  sim::redis::Topology t = c.redis;
  const algorithms::AlgorithmSpec* spec = algorithms::find_algorithm(c.algorithm);
  if (t.masters == 0) t.masters = spec != nullptr ? spec->default_masters : 1;
  return t;
}

void validate(const RunConfig& c) {
  if (algorithms::find_algorithm(c.algorithm) == nullptr) {
    throw ConfigError("--algorithm: expected one of " + algorithms::algorithm_names() + ", got '" +
                      c.algorithm + "'");
  }
  if (c.workload.clients < 1 || c.workload.clients > RunConfig::kMaxClients) {
    throw ConfigError("--clients: expected a whole number from 1 to " +
                      std::to_string(RunConfig::kMaxClients) + ", got '" +
                      std::to_string(c.workload.clients) + "'");
  }
  if (c.duration <= Duration::zero() || c.duration > RunConfig::kMaxDuration) {
    throw ConfigError("--duration: expected a positive duration up to 7 days, got '" +
                      format_duration(c.duration) + "'");
  }
  if (c.workload.hold_min < Duration::zero() || c.workload.hold_max < c.workload.hold_min) {
    throw ConfigError("--hold: expected a range LOW..HIGH with 0 <= LOW <= HIGH");
  }
  const sim::redis::Topology t = resolved_topology(c);
  if (t.masters < 1 || t.masters > RunConfig::kMaxRedisMasters) {
    throw ConfigError(c.topology_field_prefix + "masters: expected a whole number from 1 to " +
                      std::to_string(RunConfig::kMaxRedisMasters) + ", got '" +
                      std::to_string(t.masters) + "'");
  }
  if (t.replicas < 0 || t.replicas > RunConfig::kMaxReplicasPerMaster) {
    throw ConfigError(c.topology_field_prefix + "replicas: expected a whole number from 0 to " +
                      std::to_string(RunConfig::kMaxReplicasPerMaster) + ", got '" +
                      std::to_string(t.replicas) + "'");
  }
  if (t.timeout <= Duration::zero()) {
    throw ConfigError(c.topology_field_prefix + "timeout: expected a positive duration");
  }
  if (t.replication_lag < Duration::zero() || t.down_after <= Duration::zero() ||
      t.discovery_delay < Duration::zero() || t.rdb_interval <= Duration::zero()) {
    throw ConfigError(c.topology_field_prefix +
                      "replication_lag/down_after/discovery_delay/rdb_interval: expected "
                      "non-negative durations (down_after and rdb_interval positive)");
  }
  if (t.failover && t.replicas == 0) {
    throw ConfigError(c.topology_field_prefix + "failover: needs replicas >= 1");
  }
  if (c.stuck_after <= Duration::zero()) {
    throw ConfigError("stuck_after: expected a positive duration");
  }
  // Parameters that only make sense against the topology (Redlock's quorum).
  const auto algorithm =
      algorithms::find_algorithm(c.algorithm)->make(c.algorithm_params, c.param_field_prefix);
  const std::string problem = algorithm->check_servers(static_cast<size_t>(t.masters));
  if (!problem.empty()) throw ConfigError(c.param_field_prefix + problem);
  if (c.link.loss < 0 || c.link.loss > 1) {
    throw ConfigError("--loss: expected a probability from 0 to 1");
  }
}

std::string replay_command(const RunConfig& c) {
  const RunConfig defaults;
  const sim::redis::Topology& t = c.redis;
  const sim::redis::Topology& d = defaults.redis;
  std::string cmd = "locksim run --algorithm " + c.algorithm + " --seed " + std::to_string(c.seed) +
                    " --clients " + std::to_string(c.workload.clients) + " --duration " +
                    format_duration(c.duration) + " --hold " +
                    format_duration(c.workload.hold_min) + ".." +
                    format_duration(c.workload.hold_max);
  for (const auto& [name, value] : c.algorithm_params) {
    cmd += (name == "ttl" ? " --ttl " : " --param " + name + "=") + value;
  }
  // Only what differs from the defaults, so the line stays readable.
  if (c.workload.retry_pause != defaults.workload.retry_pause) {
    cmd += " --retry-pause " + format_duration(c.workload.retry_pause);
  }
  if (c.workload.hold_within_validity) cmd += " --hold-within-validity";
  if (t.masters != d.masters) cmd += " --masters " + std::to_string(t.masters);
  if (t.replicas != d.replicas) cmd += " --replicas " + std::to_string(t.replicas);
  if (t.replication_lag != d.replication_lag) {
    cmd += " --replication-lag " + format_duration(t.replication_lag);
  }
  if (t.persistence != d.persistence) {
    cmd += std::string(" --persistence ") + sim::redis::to_string(t.persistence);
  }
  if (t.rdb_interval != d.rdb_interval) cmd += " --rdb-interval " + format_duration(t.rdb_interval);
  if (t.failover) cmd += " --failover";
  if (t.down_after != d.down_after) cmd += " --down-after " + format_duration(t.down_after);
  if (t.discovery_delay != d.discovery_delay) {
    cmd += " --discovery-delay " + format_duration(t.discovery_delay);
  }
  if (t.timeout != d.timeout) cmd += " --timeout " + format_duration(t.timeout);
  if (c.stuck_after != defaults.stuck_after)
    cmd += " --stuck-after " + format_duration(c.stuck_after);
  for (const auto& f : c.faults.events) cmd += " --fault '" + f.describe() + "'";
  return cmd;
}

}  // namespace locksim::harness
