#include "harness/live/live_check.h"

#include <memory>
#include <vector>

#include "env/parse.h"
#include "harness/check/liveness_checker.h"
#include "harness/check/mutex_checker.h"
#include "harness/live/live_runner.h"
#include "harness/live/redis_process.h"
#include "harness/run_sim.h"

namespace locksim::live {

harness::RunResult run_live_and_check(const harness::RunConfig& config) {
  harness::validate(config);
  if (config.redis.replicas != 0 || config.redis.failover || !config.faults.events.empty()) {
    throw ConfigError("live: replicas, failover and --fault are simulation-only for now");
  }
  const sim::redis::Topology topology = harness::resolved_topology(config);
  auto algorithm = algorithms::find_algorithm(config.algorithm)
                       ->make(config.algorithm_params, config.param_field_prefix());

  RedisProcess::Options options;
  if (topology.persistence == sim::redis::Persistence::kAofAlways) options.appendfsync = "always";
  if (topology.persistence == sim::redis::Persistence::kAofEverysec) {
    options.appendfsync = "everysec";
  }
  // Owned here: every server is stopped when this function returns or throws.
  std::vector<std::unique_ptr<RedisProcess>> servers;
  std::vector<std::pair<std::string, int>> addresses;
  for (int i = 0; i < topology.masters; ++i) {
    servers.push_back(RedisProcess::start(options));
    addresses.emplace_back("127.0.0.1", servers.back()->port());
  }

  harness::RunResult r;
  LiveOptions live_options;
  live_options.command_timeout = topology.timeout;
  live_options.errors = &r.errors;
  r.history =
      run_live(*algorithm, config.workload, addresses, config.duration, config.seed, live_options);
  r.algorithm = config.algorithm;
  r.seed = config.seed;
  r.params = harness::config_to_json(config);
  r.params["mode"] = "live";
  r.mutex = harness::check_mutex(r.history);
  r.liveness = harness::check_liveness(r.history, config.stuck_after);
  harness::fill_counts(r);
  r.replay_command = "(live runs depend on real timing and are not replayable byte for byte)";
  return r;
}

}  // namespace locksim::live
