// The Redis backend's live side: one redis-server per master on loopback
// (its AOF policy from redis.persistence), each client a LiveEnv with one
// hiredis connection per master.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "env/parse.h"
#include "harness/backends.h"
#include "live/live_backend.h"
#include "live/live_runner.h"
#include "live/redis_process.h"

namespace locksim::live {

namespace {

// Replication and failover need a monitor live mode does not run
// (redis-sentinel); the simulation has both.
void refuse_unsupported(const harness::RunConfig& config) {
  if (config.redis.replicas != 0) {
    throw ConfigError(harness::field_name(config, "redis.replicas") +
                      ": live mode starts masters only, got " +
                      std::to_string(config.redis.replicas) + " replicas (simulation-only)");
  }
  if (config.redis.failover) {
    throw ConfigError(harness::field_name(config, "redis.failover") +
                      ": live mode has no failover (simulation-only)");
  }
}

// Owns every server it starts: each is stopped when this returns or throws.
history::History run(const harness::RunConfig& config, algorithms::LockAlgorithm& algorithm,
                     harness::RunResult& result) {
  const sim::redis::Topology topology = harness::resolved_topology(config);
  RedisProcess::Options options;
  if (topology.persistence == sim::redis::Persistence::kAofAlways) options.appendfsync = "always";
  if (topology.persistence == sim::redis::Persistence::kAofEverysec) {
    options.appendfsync = "everysec";
  }
  std::vector<std::unique_ptr<RedisProcess>> servers;
  std::vector<std::pair<std::string, int>> addresses;
  for (int i = 0; i < topology.masters; ++i) {
    servers.push_back(RedisProcess::start(options));
    addresses.emplace_back("127.0.0.1", servers.back()->port());
  }
  LiveOptions live_options;
  live_options.command_timeout = topology.timeout;
  live_options.errors = &result.errors;
  return run_live(algorithm, config.workload, addresses, config.duration, config.seed,
                  live_options);
}

}  // namespace

LiveBackend redis_live_backend() {
  return {.name = "redis", .refuse_unsupported = refuse_unsupported, .run = run};
}

}  // namespace locksim::live
