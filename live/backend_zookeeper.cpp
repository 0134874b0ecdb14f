// The ZooKeeper backend's live side: its own ensemble of 1 or 3 JVMs on
// loopback (tickTime from zookeeper.tick), each client one session through
// the ZooKeeper C client (ZkLiveEnv).
#include <memory>
#include <string>

#include "env/parse.h"
#include "harness/backends.h"
#include "live/live_backend.h"
#include "live/zk_live_env.h"
#include "live/zk_process.h"

namespace locksim::live {

namespace {

// A real ensemble's size is the one we can configure on loopback, and its
// tickTime is a whole number of milliseconds.
void refuse_unsupported(const harness::RunConfig& config) {
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
  history::History history =
      run_live_clients(config, algorithm, result,
                       [hosts, session_timeout, seed](int client) -> std::unique_ptr<Env> {
                         return std::make_unique<ZkLiveEnv>(client, hosts, session_timeout, seed);
                       });
  result.backend_notes.emplace_back("zookeeper.negotiated_session_timeout",
                                    format_duration(zk.negotiate(zk.session_timeout)) + " (asked " +
                                        format_duration(zk.session_timeout) +
                                        "; the server clamps it to [2, 20] x tick)");
  return history;
}

}  // namespace

LiveBackend zookeeper_live_backend() {
  return {.name = "zookeeper", .refuse_unsupported = refuse_unsupported, .run = run};
}

}  // namespace locksim::live
