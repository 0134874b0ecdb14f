// The Redis backend's live side: one redis-server per master on loopback
// (its AOF policy from redis.persistence), with its replicas and, with
// failover, a real redis-sentinel (live/redis_servers.h); each client a
// LiveEnv with one hiredis connection per master, or per group following
// the master Sentinel names (live/group_connection.h). With faults, a
// nemesis thread applies them to the servers and clients
// (live/live_nemesis.h); with link faults, or a link latency above
// loopback's (link_latency), every client reaches every server through a
// relay of its own (live/tcp_relay.h), so a partition can cut one client off
// one server and each link carries the scenario's latency.
#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "env/assert.h"
#include "env/parse.h"
#include "harness/backends.h"
#include "history/history.h"
#include "live/client_controls.h"
#include "live/client_life.h"
#include "live/live_backend.h"
#include "live/live_env.h"
#include "live/live_nemesis.h"
#include "live/live_runner.h"
#include "live/redis_process.h"
#include "live/redis_servers.h"
#include "live/tcp_relay.h"

namespace locksim::live {

namespace {

constexpr const char* kSentinel = "sentinel";

std::vector<std::string> client_names(const harness::RunConfig& config) {
  return live_client_names(config.workload.clients);
}

// More replicas than the machine holds are refused; everything else about
// replication and failover runs on real servers.
void refuse_unsupported(const harness::RunConfig& config) {
  const sim::redis::Topology topology = harness::resolved_topology(config);
  if (topology.replicas > RedisServers::kReplicasMax) {
    throw ConfigError(harness::field_name(config, "redis.replicas") +
                      ": live mode starts at most " + std::to_string(RedisServers::kReplicasMax) +
                      " replicas per master, got " + std::to_string(topology.replicas));
  }
  // Live redis-server runs with AOF (its appendfsync policy) or nothing:
  // rdb ran as none, and `agree` then reported a disagreement that was the
  // persistence, not the lock.
  if (topology.persistence == sim::redis::Persistence::kRdb) {
    throw ConfigError(harness::field_name(config, "redis.persistence") +
                      ": rdb is simulation-only; live runs none, aof-everysec or aof-always");
  }
  check_live_faults(config.faults, client_names(config), RedisServers::names(topology),
                    config.fault_field_prefix(), RedisServers::links(topology));
}

// Each client's pause, crash and clock.
struct ClientControls {
  std::vector<std::shared_ptr<ClientFreeze>> freezes;
  std::vector<std::shared_ptr<ClientFreeze>> hangs;  // the client's work only
  std::vector<std::shared_ptr<ClientClock>> clocks;
  std::vector<std::shared_ptr<ClientLife>> lives;

  explicit ClientControls(int clients) {
    for (int c = 0; c < clients; ++c) {
      freezes.push_back(std::make_shared<ClientFreeze>());
      hangs.push_back(std::make_shared<ClientFreeze>());
      clocks.push_back(std::make_shared<ClientClock>());
      lives.push_back(std::make_shared<ClientLife>());
    }
  }
  void add_targets(LiveTargets& targets) const {
    LOCKSIM_ASSERT(freezes.size() == targets.clients.size());
    for (size_t c = 0; c < freezes.size(); ++c) {
      wire_client_controls(targets.client_controls[targets.clients[c]], *freezes[c], *hangs[c],
                           *lives[c], *clocks[c]);
    }
  }
};

// The port client c reaches each server at: the server's own, or with link
// faults or a link latency a relay of the client's (made here, kept in
// `relays`), carrying that latency.
std::vector<std::map<std::string, int>> client_ports(
    const harness::RunConfig& config, const RedisServers& servers, LiveTargets& targets,
    std::vector<std::unique_ptr<TcpRelay>>& relays) {
  std::vector<std::map<std::string, int>> out(static_cast<size_t>(config.workload.clients));
  for (size_t c = 0; c < out.size(); ++c) {
    for (const std::string& name : servers.server_names()) {
      if (name == kSentinel) continue;
      out[c][name] =
          client_link_port(config, targets.clients[c], name, servers.port(name), targets, relays);
    }
  }
  return out;
}

// Client c's Env: one connection per master, or with replicas one per group.
std::unique_ptr<LiveEnv> make_env(int client, const RedisServers& servers,
                                  const std::map<std::string, int>& ports, Duration timeout,
                                  uint64_t seed) {
  const std::shared_ptr<const SentinelView> view = servers.view();
  if (servers.server_names().size() == view->groups()) {  // masters alone
    std::vector<ServerAddress> addresses;
    for (size_t g = 0; g < view->groups(); ++g) {
      addresses.emplace_back("127.0.0.1", ports.at(view->group(g).name));
    }
    return std::make_unique<LiveEnv>(client, addresses, timeout, seed);
  }
  GroupRoutes routes{.view = view, .ports = {}};
  for (size_t g = 0; g < view->groups(); ++g) {
    MemberPorts members;
    for (const std::string& m : view->group(g).members) members[m] = ports.at(m);
    routes.ports.push_back(std::move(members));
  }
  return std::make_unique<LiveEnv>(client, std::move(routes), timeout, seed);
}

// The clients (and with faults the nemesis) over servers already started.
history::History run_clients(const harness::RunConfig& config, algorithms::LockAlgorithm& algorithm,
                             harness::RunResult& result, const RedisServers& servers) {
  LiveTargets targets;
  targets.clients = client_names(config);
  const ClientControls controls(config.workload.clients);
  const bool faults = !config.faults.events.empty();
  if (faults) {
    servers.add_targets(targets);
    controls.add_targets(targets);
  }
  // Declared before the run, so they outlive the nemesis and the clients.
  std::vector<std::unique_ptr<TcpRelay>> relays;
  const auto ports = client_ports(config, servers, targets, relays);
  if (!relays.empty()) {
    const std::chrono::milliseconds latency = link_latency(config);
    result.backend_notes.emplace_back(
        "redis.relays",
        "every client reached every server through a TCP relay of its own "
        "(live/tcp_relay.h)" +
            (latency.count() > 0
                 ? ", " + std::to_string(latency.count()) + " ms each way (network.latency_base)"
                 : std::string()));
  }
  LiveOptions live_options;
  live_options.command_timeout = harness::resolved_topology(config).timeout;
  live_options.errors = &result.errors;
  const Duration timeout = live_options.command_timeout;
  live_options.make_env = [&](int client) -> std::unique_ptr<Env> {
    const auto i = static_cast<size_t>(client);
    std::unique_ptr<LiveEnv> env = make_env(client, servers, ports.at(i), timeout, config.seed);
    if (faults) {
      env->set_freeze(controls.freezes.at(i));
      env->set_hang(controls.hangs.at(i));
      env->set_clock(controls.clocks.at(i));
      env->set_life(controls.lives.at(i));
    }
    return env;
  };
  if (faults) {
    live_options.lives = controls.lives;
    live_options.nemesis = [&](LiveRunView& view, const std::atomic<bool>& done) {
      run_live_nemesis(config.faults, targets, view, done);
    };
  }
  return run_live(algorithm, config.workload, {}, config.duration, config.seed, live_options);
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
  if (needs_clock_shim(config.faults, RedisServers::names(topology))) options.clock = "shim";
  const std::unique_ptr<RedisServers> servers =
      RedisServers::start(topology, options, config.duration);
  if (servers->has_sentinel()) {
    result.backend_notes.emplace_back(
        "redis.sentinel",
        "redis-sentinel on 127.0.0.1:" + std::to_string(servers->port(kSentinel)) +
            " (quorum 1, down-after " + format_duration(topology.down_after) + ")");
  }
  history::History history = run_clients(config, algorithm, result, *servers);
  if (servers->has_sentinel()) {
    result.backend_notes.emplace_back("redis.failovers",
                                      std::to_string(servers->view()->failovers()) +
                                          " new master(s) published to the clients (SENTINEL "
                                          "get-master-addr-by-name)");
  }
  return history;
}

}  // namespace

LiveBackend redis_live_backend() {
  return {.name = "redis",
          .refuse_unsupported = refuse_unsupported,
          .run = run,
          .applies_faults = true};
}

}  // namespace locksim::live
