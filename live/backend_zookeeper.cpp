// The ZooKeeper backend's live side: its own ensemble of 1 or 3 JVMs on
// loopback (tickTime from zookeeper.tick), each client one session through
// the ZooKeeper C client (ZkLiveEnv). Faults live: a server's crash, restart,
// pause and wall-clock jump (the JVM under the clock shim), and the links
// between clients and servers: with link faults, or a link latency above
// loopback's (link_latency), every client reaches every server through a
// relay of its own (live/tcp_relay.h), listed in the client's own host
// string, so a partition can cut one client off the ensemble while the
// others go on. Faults on a client, a server's drift and the quorum's own
// links stay simulation-only (refuse_faults says why).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "env/parse.h"
#include "faults/nemesis.h"
#include "harness/backends.h"
#include "live/live_backend.h"
#include "live/live_nemesis.h"
#include "live/live_runner.h"
#include "live/tcp_relay.h"
#include "live/zk_live_env.h"
#include "live/zk_process.h"

namespace locksim::live {

namespace {

std::vector<std::string> server_names(int servers) {
  std::vector<std::string> out;
  for (int i = 0; i < servers; ++i) out.push_back("zk-" + std::to_string(i + 1));
  return out;
}

bool is_one_of(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

// Why fault `e` cannot run live on ZooKeeper although check_live_faults
// accepts it in general, or "". A fault on a client needs the client in a
// process of its own: the C client's I/O thread keeps its session alive
// through a freeze of the client's work (a paused Java client's would not),
// and its timers run on the real clock whatever the client's Env clock says.
// A server's drift is the oscillator in the simulation, which moves session
// expiry (the monotonic clock); the shim moves only the wall clock. The
// quorum's links between servers have no relay.
std::string zookeeper_refusal(const faults::FaultEvent& e, const std::vector<std::string>& clients,
                              const std::vector<std::string>& servers) {
  using faults::FaultKind;
  const bool link = e.kind == FaultKind::kPartition || e.kind == FaultKind::kDelay;
  const bool on_client = e.node == faults::Nemesis::kHolder || is_one_of(clients, e.node);
  if (!link && e.kind != FaultKind::kHeal && on_client) {
    return "a fault on a ZooKeeper client is simulation-only (the C client's I/O thread keeps "
           "its session alive through a freeze; a client needs a process of its own)";
  }
  if (e.kind == FaultKind::kSetDrift && !on_client) {
    return "a ZooKeeper server's drift is simulation-only (the simulation drifts its monotonic "
           "clock, which times sessions; the clock shim moves only the wall clock)";
  }
  if (!link) return "";
  for (const std::string& a : e.side_a) {
    for (const std::string& b : e.side_b) {
      if (is_one_of(servers, a) && is_one_of(servers, b)) {
        return "the links between ZooKeeper servers have no relay live (only a client's "
               "links to the servers do)";
      }
    }
  }
  return "";
}

// Live on ZooKeeper: a server's crash, pause and jump; partitions and delays
// between clients and servers.
void refuse_faults(const harness::RunConfig& config) {
  const std::vector<std::string> servers = server_names(config.zookeeper.servers);
  const std::vector<std::string> clients = live_client_names(config.workload.clients);
  for (size_t i = 0; i < config.faults.events.size(); ++i) {
    const faults::FaultEvent& e = config.faults.events[i];
    if (const std::string why = zookeeper_refusal(e, clients, servers); !why.empty()) {
      throw ConfigError(config.fault_field_prefix() + "[" + std::to_string(i) + "]: '" +
                        e.describe() + "' cannot run live: " + why);
    }
  }
  check_live_faults(config.faults, clients, servers, config.fault_field_prefix());
}

// A real ensemble's size is the one we can configure on loopback, and its
// tickTime is a whole number of milliseconds.
// The shortest tick live accepts. Measured on a 2-core machine under load:
// a 3-server ensemble (initLimit 50, syncLimit 5 ticks) reached quorum at
// 10 ms and 30 ms and never at 1 ms (60 s, then "no quorum"); 20 ms keeps
// twice the shortest that worked, and is what a shipped scenario's 2 s tick
// becomes at --time-scale 0.01. docs/how-to/live-mode.md says so.
constexpr Duration kLiveTickMin = Duration::millis(20);

void refuse_unsupported(const harness::RunConfig& config) {
  refuse_faults(config);
  const sim::zookeeper::ZkParams& zk = config.zookeeper;
  if (zk.servers != 1 && zk.servers != 3) {
    throw ConfigError(harness::field_name(config, "zookeeper.servers") +
                      ": live mode starts 1 or 3 servers, got " + std::to_string(zk.servers));
  }
  if (zk.tick < kLiveTickMin) {
    throw ConfigError(harness::field_name(config, "zookeeper.tick") +
                      ": live ZooKeeper needs a tick of at least " + format_duration(kLiveTickMin) +
                      " (a real ensemble's followers must sync within a few ticks), got " +
                      format_duration(zk.tick));
  }
  if (zk.tick.ns % Duration::millis(1).ns != 0) {
    throw ConfigError(harness::field_name(config, "zookeeper.tick") +
                      ": live mode needs whole milliseconds (tickTime), got " +
                      format_duration(zk.tick));
  }
}

// The servers' crash, restart, pause and (under the shim) jump, for the
// nemesis.
void add_server_targets(const harness::RunConfig& config, ZkEnsembleProcess& ensemble,
                        LiveTargets& targets) {
  const std::vector<std::string> names = server_names(config.zookeeper.servers);
  // An ensemble has no primary to name: "@primary" is a skipped step, as in
  // the simulation (it crashed zk-1 live, so `agree` compared two runs).
  targets.primary = [] { return std::string(); };
  for (size_t i = 0; i < names.size(); ++i) {
    LiveTargets::Server& t = targets.servers[names[i]];
    t.crash = [&ensemble, i] { ensemble.crash(i); };
    t.restart = [&ensemble, i] { ensemble.restart(i); };
    t.pause = [&ensemble, i] { ensemble.pause(i); };
    t.resume = [&ensemble, i] { ensemble.resume(i); };
    // Set only under the shim; refuse_faults and needs_clock_shim agree.
    if (ClockControl* clock = ensemble.clock(i)) {
      t.jump = [clock](Duration by) { clock->jump(by); };
    }
  }
}

// Each client's host string for zookeeper_init: the servers' own ports, or
// with link faults or a link latency a relay of the client's in front of
// each server (made here, kept in `relays`, registered as the client's link
// to that server in `targets`), carrying that latency. The C client moves
// to the next host of its own string when a connection goes silent, so a
// partition of all of a client's relays cuts it off the whole ensemble.
std::vector<std::string> client_hosts(const harness::RunConfig& config,
                                      const ZkEnsembleProcess& ensemble, LiveTargets& targets,
                                      std::vector<std::unique_ptr<TcpRelay>>& relays) {
  const std::vector<std::string> names = server_names(config.zookeeper.servers);
  std::vector<std::string> out;
  for (const std::string& client : targets.clients) {
    std::string hosts;
    for (size_t i = 0; i < names.size(); ++i) {
      const int port = client_link_port(config, client, names[i], ensemble.client_ports().at(i),
                                        targets, relays);
      hosts += (hosts.empty() ? "" : ",") + std::string("127.0.0.1:") + std::to_string(port);
    }
    out.push_back(std::move(hosts));
  }
  return out;
}

void note_relays(const harness::RunConfig& config, harness::RunResult& result) {
  const std::chrono::milliseconds latency = link_latency(config);
  result.backend_notes.emplace_back(
      "zookeeper.relays",
      "every client reached every server through a TCP relay of its own, listed in its own "
      "host string (live/tcp_relay.h)" +
          (latency.count() > 0
               ? ", " + std::to_string(latency.count()) + " ms each way (network.latency_base)"
               : std::string()));
}

// The clients (and with faults the nemesis) over an ensemble already started.
history::History run_clients(const harness::RunConfig& config, algorithms::LockAlgorithm& algorithm,
                             harness::RunResult& result, ZkEnsembleProcess& ensemble) {
  LiveTargets targets;
  targets.clients = live_client_names(config.workload.clients);
  add_server_targets(config, ensemble, targets);
  // Declared before the run, so they outlive the nemesis and the clients.
  std::vector<std::unique_ptr<TcpRelay>> relays;
  const std::vector<std::string> hosts = client_hosts(config, ensemble, targets, relays);
  if (!relays.empty()) note_relays(config, result);
  const Duration session_timeout = config.zookeeper.session_timeout;
  const uint64_t seed = config.seed;
  LiveOptions options;
  options.errors = &result.errors;
  options.make_env = [&hosts, session_timeout, seed](int client) -> std::unique_ptr<Env> {
    return std::make_unique<ZkLiveEnv>(client, hosts.at(static_cast<size_t>(client)),
                                       session_timeout, seed);
  };
  if (!config.faults.events.empty()) {
    options.nemesis = [&](LiveRunView& view, const std::atomic<bool>& done) {
      run_live_nemesis(config.faults, targets, view, done);
    };
  }
  return run_live(algorithm, config.workload, {}, config.duration, config.seed, options);
}

// The ensemble is owned here, so every JVM is stopped when this returns or
// throws (and by PDEATHSIG if the process dies, e.g. on SIGINT).
history::History run(const harness::RunConfig& config, algorithms::LockAlgorithm& algorithm,
                     harness::RunResult& result) {
  const sim::zookeeper::ZkParams& zk = config.zookeeper;
  const auto ensemble = ZkEnsembleProcess::start(
      {.servers = zk.servers,
       .tick_ms = static_cast<int>(zk.tick.ns / Duration::millis(1).ns),
       .clock_shim = needs_clock_shim(config.faults, server_names(zk.servers))});
  history::History history = run_clients(config, algorithm, result, *ensemble);
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
