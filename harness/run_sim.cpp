#include "harness/run_sim.h"

#include "env/parse.h"
#include "harness/check/liveness_checker.h"
#include "harness/check/mutex_checker.h"

namespace locksim::harness {

nlohmann::json config_to_json(const RunConfig& c) {
  nlohmann::json j;
  j["clients"] = c.workload.clients;
  j["duration"] = format_duration(c.duration);
  j["hold"] = format_duration(c.workload.hold_min) + ".." + format_duration(c.workload.hold_max);
  nlohmann::json params = nlohmann::json::object();
  for (const auto& [k, v] : c.algorithm_params) params[k] = v;
  j["algorithm_params"] = params;
  nlohmann::json redis;
  const sim::redis::Topology t = resolved_topology(c);
  redis["masters"] = t.masters;
  redis["replicas"] = c.redis.replicas;
  redis["replication_lag"] = format_duration(c.redis.replication_lag);
  redis["persistence"] = sim::redis::to_string(c.redis.persistence);
  if (c.redis.persistence == sim::redis::Persistence::kRdb) {
    redis["rdb_interval"] = format_duration(c.redis.rdb_interval);
  }
  redis["failover"] = c.redis.failover;
  if (c.redis.failover) {
    redis["down_after"] = format_duration(c.redis.down_after);
    redis["discovery_delay"] = format_duration(c.redis.discovery_delay);
  }
  redis["timeout"] = format_duration(c.redis.timeout);
  j["redis"] = redis;
  j["stuck_after"] = format_duration(c.stuck_after);
  nlohmann::json faults = nlohmann::json::array();
  for (const auto& f : c.faults.events) faults.push_back(f.describe());
  j["faults"] = faults;
  j["schedule"] = c.policy == sim::SchedulePolicy::kSeeded ? "seeded" : "fifo";
  return j;
}

SimRunReport simulate_and_check(const RunConfig& config) {
  SimRunReport report;
  report.output = run_simulation(config);
  RunResult& r = report.result;
  r.algorithm = config.algorithm;
  r.seed = config.seed;
  r.params = config_to_json(config);
  r.history = std::move(report.output.history);
  report.output.history = History{};
  r.mutex = check_mutex(r.history);
  r.liveness = check_liveness(r.history, config.stuck_after);
  fill_counts(r);
  r.events = static_cast<int64_t>(report.output.events);
  r.errors = report.output.errors;
  r.replay_command = replay_command(config);
  return report;
}

}  // namespace locksim::harness
