#include "live/live_run.h"

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "env/parse.h"
#include "harness/backends.h"
#include "checkers/checker_list.h"
#include "live/live_runner.h"
#include "live/mariadb_process.h"
#include "live/mysql_live_env.h"
#include "live/redis_process.h"
#include "live/zk_live_env.h"
#include "live/zk_process.h"
#include "harness/run.h"
#include "harness/settings.h"

namespace locksim::live {

namespace {

// Redis: one redis-server per master, each client a LiveEnv over them.
history::History run_live_redis(const harness::RunConfig& config,
                                algorithms::LockAlgorithm& algorithm,
                                std::vector<std::string>* errors) {
  if (config.redis.replicas != 0 || config.redis.failover) {
    throw ConfigError("live: replicas and failover are simulation-only for now");
  }
  const sim::redis::Topology topology = harness::resolved_topology(config);
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
  LiveOptions live_options;
  live_options.command_timeout = topology.timeout;
  live_options.errors = errors;
  return run_live(algorithm, config.workload, addresses, config.duration, config.seed,
                  live_options);
}

// ZooKeeper: its own ensemble of 1 or 3 JVMs on loopback (tickTime from
// zookeeper.tick), each client one session through the C client. The
// ensemble is owned here, so every JVM is stopped when this returns or
// throws (and by PDEATHSIG if the process dies, e.g. on SIGINT).
history::History run_live_zookeeper(const harness::RunConfig& config,
                                    algorithms::LockAlgorithm& algorithm,
                                    std::vector<std::string>* errors) {
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
  const auto ensemble = ZkEnsembleProcess::start(
      {.servers = zk.servers, .tick_ms = static_cast<int>(zk.tick.ns / Duration::millis(1).ns)});
  LiveOptions live_options;
  live_options.errors = errors;
  const std::string hosts = ensemble->hosts();
  const Duration session_timeout = zk.session_timeout;
  const uint64_t seed = config.seed;
  live_options.make_env = [hosts, session_timeout, seed](int client) -> std::unique_ptr<Env> {
    return std::make_unique<ZkLiveEnv>(client, hosts, session_timeout, seed);
  };
  return run_live(algorithm, config.workload, {}, config.duration, config.seed, live_options);
}

// innodb_lock_wait_timeout is whole seconds on a real server.
int lock_wait_timeout_s(const harness::RunConfig& config) {
  const Duration d = config.mysql.lock_wait_timeout;
  if (d.ns % Duration::seconds(1).ns != 0) {
    throw ConfigError(harness::field_name(config, "mysql.lock_wait_timeout") +
                      ": live mode needs whole seconds (innodb_lock_wait_timeout), got " +
                      format_duration(d));
  }
  return static_cast<int>(d.ns / Duration::seconds(1).ns);
}

// InnoDB's own count of deadlocks it broke (MariaDB's Innodb_deadlocks), or
// -1 when the server does not say.
int64_t innodb_deadlocks(int port) {
  MariadbConnection c({.host = "127.0.0.1", .port = port, .database = "", .user = "root"},
                      Duration::seconds(10), "status");
  const SqlResult r = c.query("SHOW GLOBAL STATUS LIKE 'Innodb_deadlocks'", {});
  if (!r.ok() || r.rows.size() != 1 || r.rows[0].size() != 2 || !r.rows[0][1]) return -1;
  return std::stoll(*r.rows[0][1]);
}

// MySQL: its own mariadbd on loopback (a fresh t_tag_lock), each client one
// session through libmariadb. The server is owned here: stopped when this
// returns or throws, and by the interrupt watcher (owned_processes.h) or
// PDEATHSIG if the process dies.
history::History run_live_mysql(const harness::RunConfig& config,
                                algorithms::LockAlgorithm& algorithm, harness::RunResult& r) {
  const auto server = MariadbProcess::start({.lock_wait_timeout_s = lock_wait_timeout_s(config)});
  const MariadbConnection::Address address{
      .host = "127.0.0.1", .port = server->port(), .database = "locksim", .user = "root"};
  LiveOptions live_options;
  live_options.errors = &r.errors;
  const Duration timeout = config.mysql.client_timeout;
  const uint64_t seed = config.seed;
  live_options.make_env = [address, timeout, seed](int client) -> std::unique_ptr<Env> {
    return std::make_unique<MysqlLiveEnv>(client, address, timeout, seed);
  };
  history::History history =
      run_live(algorithm, config.workload, {}, config.duration, config.seed, live_options);
  r.deadlocks = std::max<int64_t>(0, innodb_deadlocks(server->port()));
  r.backend_notes.emplace_back("mysql.server",
                               "mariadbd on 127.0.0.1:" + std::to_string(server->port()) +
                                   " (a fresh datadir, stopped after the run)");
  return history;
}

}  // namespace

harness::RunResult run_live_and_check(const harness::PreparedRun& run) {
  const harness::RunConfig& config = run.config();
  if (!config.faults.events.empty()) {
    throw ConfigError("live: --fault is simulation-only for now");
  }
  auto algorithm = algorithms::find_algorithm(config.algorithm)
                       ->make(config.algorithm_params, config.param_field_prefix());
  const std::string& backend = harness::backend_of(config).name;
  const bool zookeeper = backend == "zookeeper";

  harness::RunResult r;
  if (backend == "mysql") {
    r.history = run_live_mysql(config, *algorithm, r);
  } else {
    r.history = zookeeper ? run_live_zookeeper(config, *algorithm, &r.errors)
                          : run_live_redis(config, *algorithm, &r.errors);
  }
  if (zookeeper) {
    const sim::zookeeper::ZkParams& zk = config.zookeeper;
    r.backend_notes.emplace_back("zookeeper.negotiated_session_timeout",
                                 format_duration(zk.negotiate(zk.session_timeout)) + " (asked " +
                                     format_duration(zk.session_timeout) +
                                     "; the server clamps it to [2, 20] x tick)");
  }
  r.algorithm = config.algorithm;
  r.seed = config.seed;
  r.params = harness::config_to_json(config);
  r.params["mode"] = "live";
  // The same checker list as a simulated run, without what only the
  // simulation records (the guarded store's log, exposure samples).
  checkers::Recorded recorded;
  recorded.history = &r.history;
  recorded.stuck_after = config.stuck_after;
  recorded.errors = &r.errors;
  static_cast<checkers::Verdicts&>(r) = checkers::check_recorded(recorded);
  harness::fill_counts(r);
  r.replay_command = "(live runs depend on real timing and are not replayable byte for byte)";
  return r;
}

}  // namespace locksim::live
