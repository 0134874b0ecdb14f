// The Redis backend's live side: one redis-server per master on loopback
// (its AOF policy from redis.persistence), each client a LiveEnv with one
// hiredis connection per master. With faults, a nemesis thread applies them
// to the servers (live/live_nemesis.h); with link faults, every client
// reaches every server through a relay of its own (live/tcp_relay.h), so a
// partition can cut one client off one server.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "env/assert.h"
#include "env/parse.h"
#include "harness/backends.h"
#include "history/history.h"
#include "live/live_backend.h"
#include "live/live_env.h"
#include "live/live_nemesis.h"
#include "live/live_runner.h"
#include "live/redis_process.h"
#include "live/tcp_relay.h"

namespace locksim::live {

namespace {

std::vector<std::string> client_names(const harness::RunConfig& config) {
  return live_client_names(config.workload.clients);
}

std::vector<std::string> server_names(int masters) {
  std::vector<std::string> out;
  for (int i = 0; i < masters; ++i) out.push_back("redis-" + std::to_string(i + 1));
  return out;
}

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
  check_live_faults(config.faults, client_names(config),
                    server_names(harness::resolved_topology(config).masters),
                    config.fault_field_prefix());
}

// What the nemesis may do to each server and each client.
LiveTargets targets_of(const harness::RunConfig& config,
                       const std::vector<std::unique_ptr<RedisProcess>>& servers,
                       const std::vector<std::shared_ptr<ClientFreeze>>& freezes,
                       const std::vector<std::shared_ptr<ClientClock>>& clocks) {
  LiveTargets targets;
  const std::vector<std::string> names = server_names(static_cast<int>(servers.size()));
  for (size_t s = 0; s < servers.size(); ++s) {
    RedisProcess* p = servers[s].get();
    LiveTargets::Server& t = targets.servers[names[s]];
    t.crash = [p] { p->crash(); };
    t.restart = [p] { p->restart(); };
    t.pause = [p] { p->pause(); };
    t.resume = [p] { p->resume(); };
    // Set only under the shim; check_live_faults and needs_clock_shim agree.
    t.jump = [p](Duration by) { p->clock()->jump(by); };
    t.set_drift = [p](int64_t ppm) { p->clock()->set_drift(ppm); };
  }
  targets.clients = client_names(config);
  LOCKSIM_ASSERT(freezes.size() == targets.clients.size());
  for (size_t c = 0; c < freezes.size(); ++c) {
    ClientFreeze* f = freezes[c].get();
    ClientClock* k = clocks[c].get();
    LiveTargets::Server& t = targets.client_controls[targets.clients[c]];
    t.pause = [f] { f->pause(); };
    t.resume = [f] { f->resume(); };
    t.jump = [k](Duration by) { k->jump(by); };
    t.set_drift = [k](int64_t ppm) { k->set_drift(ppm); };
  }
  return targets;
}

// A run with faults: a nemesis thread, a freeze per client, and with link
// faults a relay per client-server link (client c reaches server s at its
// relay's port).
history::History run_with_faults(const harness::RunConfig& config,
                                 algorithms::LockAlgorithm& algorithm, harness::RunResult& result,
                                 const std::vector<std::unique_ptr<RedisProcess>>& servers,
                                 LiveOptions live_options) {
  std::vector<ServerAddress> addresses;
  for (const auto& s : servers) addresses.emplace_back("127.0.0.1", s->port());
  std::vector<std::shared_ptr<ClientFreeze>> freezes;
  std::vector<std::shared_ptr<ClientClock>> clocks;
  for (int c = 0; c < config.workload.clients; ++c) {
    freezes.push_back(std::make_shared<ClientFreeze>());
    clocks.push_back(std::make_shared<ClientClock>());
  }
  // Declared before the run, so they outlive the nemesis and the clients.
  LiveTargets targets = targets_of(config, servers, freezes, clocks);
  std::vector<std::unique_ptr<TcpRelay>> relays;
  std::vector<std::vector<ServerAddress>> client_addresses(freezes.size(), addresses);
  if (needs_relays(config.faults)) {
    for (size_t c = 0; c < freezes.size(); ++c) {
      for (size_t s = 0; s < servers.size(); ++s) {
        relays.push_back(std::make_unique<TcpRelay>(servers[s]->port()));
        targets.links[{targets.clients[c], "redis-" + std::to_string(s + 1)}] = relays.back().get();
        client_addresses[c][s].second = relays.back()->port();
      }
    }
    result.backend_notes.emplace_back("redis.relays",
                                      "every client reached every server through a TCP relay "
                                      "of its own (live/tcp_relay.h)");
  }
  const Duration timeout = live_options.command_timeout;
  live_options.make_env = [&](int client) -> std::unique_ptr<Env> {
    const auto i = static_cast<size_t>(client);
    auto env = std::make_unique<LiveEnv>(client, client_addresses.at(i), timeout, config.seed);
    env->set_freeze(freezes.at(i));
    env->set_clock(clocks.at(i));
    return env;
  };
  live_options.nemesis = [&](LiveRunView& view, const std::atomic<bool>& done) {
    run_live_nemesis(config.faults, targets, view, done);
  };
  return run_live(algorithm, config.workload, addresses, config.duration, config.seed,
                  live_options);
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
  if (needs_clock_shim(config.faults, server_names(topology.masters))) options.clock = "shim";
  std::vector<std::unique_ptr<RedisProcess>> servers;
  std::vector<std::pair<std::string, int>> addresses;
  for (int i = 0; i < topology.masters; ++i) {
    servers.push_back(RedisProcess::start(options));
    addresses.emplace_back("127.0.0.1", servers.back()->port());
  }
  LiveOptions live_options;
  live_options.command_timeout = topology.timeout;
  live_options.errors = &result.errors;
  if (!config.faults.events.empty()) {
    return run_with_faults(config, algorithm, result, servers, live_options);
  }
  return run_live(algorithm, config.workload, addresses, config.duration, config.seed,
                  live_options);
}

}  // namespace

LiveBackend redis_live_backend() {
  return {.name = "redis",
          .refuse_unsupported = refuse_unsupported,
          .run = run,
          .applies_faults = true};
}

}  // namespace locksim::live
