// The ZooKeeper backend's live side: its own ensemble of 1 or 3 JVMs on
// loopback (tickTime from zookeeper.tick), each client one session through
// the ZooKeeper C client (ZkLiveEnv). Faults live: a crash, restart or
// pause of a server; nothing on clients or links yet (see refuse_faults).
#include <algorithm>
#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "env/parse.h"
#include "harness/backends.h"
#include "live/live_backend.h"
#include "live/live_nemesis.h"
#include "live/live_runner.h"
#include "live/zk_live_env.h"
#include "live/zk_process.h"

namespace locksim::live {

namespace {

std::vector<std::string> server_names(int servers) {
  std::vector<std::string> out;
  for (int i = 0; i < servers; ++i) out.push_back("zk-" + std::to_string(i + 1));
  return out;
}

// Live ZooKeeper faults are a server's crash and pause. A fault on a client
// needs the client in a process of its own: the C client's I/O thread keeps
// its session alive through a freeze of the client's work, where a paused
// Java client's would not. Links need relays in front of the ensemble, and
// a server's clock a shim the JVM honours: neither is there yet.
void refuse_faults(const harness::RunConfig& config) {
  const std::vector<std::string> servers = server_names(config.zookeeper.servers);
  check_live_faults(config.faults, live_client_names(config.workload.clients), servers,
                    config.fault_field_prefix());
  for (size_t i = 0; i < config.faults.events.size(); ++i) {
    const faults::FaultEvent& e = config.faults.events[i];
    const bool on_server = std::find(servers.begin(), servers.end(), e.node) != servers.end();
    const bool allowed =
        (e.kind == faults::FaultKind::kCrash || e.kind == faults::FaultKind::kPause) && on_server;
    if (!allowed) {
      throw ConfigError(config.fault_field_prefix() + "[" + std::to_string(i) + "]: '" +
                        e.describe() +
                        "' cannot run live: on ZooKeeper only a crash or pause of a server "
                        "(zk-N) is live for now; faults on clients, links and clocks are "
                        "simulation-only");
    }
  }
}

// A real ensemble's size is the one we can configure on loopback, and its
// tickTime is a whole number of milliseconds.
void refuse_unsupported(const harness::RunConfig& config) {
  refuse_faults(config);
  refuse_link_latency(config, "ZooKeeper");
  const sim::zookeeper::ZkParams& zk = config.zookeeper;
  if (zk.servers != 1 && zk.servers != 3) {
    throw ConfigError(harness::field_name(config, "zookeeper.servers") +
                      ": live mode starts 1 or 3 servers, got " + std::to_string(zk.servers));
  }
  if (zk.tick.ns % Duration::millis(1).ns != 0) {
    throw ConfigError(harness::field_name(config, "zookeeper.tick") +
                      ": live mode needs whole milliseconds (tickTime), got " +
                      format_duration(zk.tick));
  }
}

// The servers' crash, restart and pause, applied by a nemesis thread.
history::History run_with_faults(const harness::RunConfig& config,
                                 algorithms::LockAlgorithm& algorithm, harness::RunResult& result,
                                 ZkEnsembleProcess& ensemble,
                                 std::function<std::unique_ptr<Env>(int client)> make_env) {
  LiveTargets targets;
  targets.clients = live_client_names(config.workload.clients);
  const std::vector<std::string> names = server_names(config.zookeeper.servers);
  for (size_t i = 0; i < names.size(); ++i) {
    LiveTargets::Server& t = targets.servers[names[i]];
    t.crash = [&ensemble, i] { ensemble.crash(i); };
    t.restart = [&ensemble, i] { ensemble.restart(i); };
    t.pause = [&ensemble, i] { ensemble.pause(i); };
    t.resume = [&ensemble, i] { ensemble.resume(i); };
  }
  LiveOptions options;
  options.errors = &result.errors;
  options.make_env = std::move(make_env);
  options.nemesis = [&](LiveRunView& view, const std::atomic<bool>& done) {
    run_live_nemesis(config.faults, targets, view, done);
  };
  return run_live(algorithm, config.workload, {}, config.duration, config.seed, options);
}

// The ensemble is owned here, so every JVM is stopped when this returns or
// throws (and by PDEATHSIG if the process dies, e.g. on SIGINT).
history::History run(const harness::RunConfig& config, algorithms::LockAlgorithm& algorithm,
                     harness::RunResult& result) {
  const sim::zookeeper::ZkParams& zk = config.zookeeper;
  const auto ensemble = ZkEnsembleProcess::start(
      {.servers = zk.servers, .tick_ms = static_cast<int>(zk.tick.ns / Duration::millis(1).ns)});
  const std::string hosts = ensemble->hosts();
  const Duration session_timeout = zk.session_timeout;
  const uint64_t seed = config.seed;
  auto make_env = [hosts, session_timeout, seed](int client) -> std::unique_ptr<Env> {
    return std::make_unique<ZkLiveEnv>(client, hosts, session_timeout, seed);
  };
  history::History history = config.faults.events.empty()
                                 ? run_live_clients(config, algorithm, result, make_env)
                                 : run_with_faults(config, algorithm, result, *ensemble, make_env);
  result.backend_notes.emplace_back("zookeeper.negotiated_session_timeout",
                                    format_duration(zk.negotiate(zk.session_timeout)) + " (asked " +
                                        format_duration(zk.session_timeout) +
                                        "; the server clamps it to [2, 20] x tick)");
  return history;
}

}  // namespace

LiveBackend zookeeper_live_backend() {
  return {.name = "zookeeper",
          .refuse_unsupported = refuse_unsupported,
          .run = run,
          .applies_faults = true};
}

}  // namespace locksim::live
