#include "harness/run_config.h"

#include "env/parse.h"

namespace locksim::harness {

void validate(const RunConfig& c) {
  if (algorithms::find_algorithm(c.algorithm) == nullptr) {
    throw ConfigError("--algorithm: expected one of " + algorithms::algorithm_names() +
                      ", got '" + c.algorithm + "'");
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
  if (c.redis_servers < 1 || c.redis_servers > RunConfig::kMaxRedisServers) {
    throw ConfigError("--redis-servers: expected a whole number from 1 to " +
                      std::to_string(RunConfig::kMaxRedisServers));
  }
  if (c.redis_timeout <= Duration::zero()) {
    throw ConfigError("--redis-timeout: expected a positive duration");
  }
  if (c.link.loss < 0 || c.link.loss > 1) {
    throw ConfigError("--loss: expected a probability from 0 to 1");
  }
}

std::string replay_command(const RunConfig& c) {
  std::string cmd = "locksim run --algorithm " + c.algorithm + " --seed " +
                    std::to_string(c.seed) + " --clients " + std::to_string(c.workload.clients) +
                    " --duration " + format_duration(c.duration) + " --hold " +
                    format_duration(c.workload.hold_min) + ".." +
                    format_duration(c.workload.hold_max);
  for (const auto& [name, value] : c.algorithm_params) {
    cmd += (name == "ttl" ? " --ttl " : " --param " + name + "=") + value;
  }
  for (const auto& f : c.faults.events) cmd += " --fault '" + f.describe() + "'";
  return cmd;
}

}  // namespace locksim::harness
