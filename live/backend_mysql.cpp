// The MySQL backend's live side: its own mariadbd on loopback (a fresh
// datadir and t_tag_lock), each client one session through libmariadb
// (MysqlLiveEnv). With faults, a nemesis thread applies them to mariadbd
// and the clients (live/live_nemesis.h); with link faults, each client
// reaches the server through a TCP relay of its own.
#include <algorithm>
#include <memory>
#include <string>

#include "env/assert.h"
#include "env/parse.h"
#include "harness/backends.h"
#include "history/history.h"
#include "live/client_controls.h"
#include "live/client_freeze.h"
#include "live/client_life.h"
#include "live/live_backend.h"
#include "live/live_nemesis.h"
#include "live/live_runner.h"
#include "live/mariadb_connection.h"
#include "live/mariadb_process.h"
#include "live/mysql_live_env.h"
#include "live/tcp_relay.h"

namespace locksim::live {

namespace {

constexpr const char* kServerName = "mysql-1";

std::vector<std::string> client_names(const harness::RunConfig& config) {
  return live_client_names(config.workload.clients);
}

// innodb_lock_wait_timeout is whole seconds on a real server; replication
// needs a second mariadbd and a monitor live mode does not run.
void refuse_unsupported(const harness::RunConfig& config) {
  if (config.mysql.replicas != 0) {
    throw ConfigError(harness::field_name(config, "mysql.replicas") +
                      ": live mode starts one mariadbd, got " +
                      std::to_string(config.mysql.replicas) + " replicas (simulation-only)");
  }
  check_live_faults(config.faults, client_names(config), {kServerName},
                    config.fault_field_prefix());
  refuse_link_latency(config, "MySQL");
  // MariaDB's NOW() is the only clock the lock tables read on the server,
  // and the v1-v3 locks write client times: no clock shim for mariadbd yet.
  for (size_t i = 0; i < config.faults.events.size(); ++i) {
    const faults::FaultSchedule one{.events = {config.faults.events[i]}};
    if (!needs_clock_shim(one, {kServerName})) continue;
    // The form every live refusal of a fault has (check_live_faults).
    throw ConfigError(config.fault_field_prefix() + "[" + std::to_string(i) + "]: '" +
                      config.faults.events[i].describe() +
                      "' cannot run live: a clock fault on mysql-1 is simulation-only for now (no "
                      "clock shim for mariadbd)");
  }
  const Duration d = config.mysql.lock_wait_timeout;
  if (d.ns % Duration::seconds(1).ns != 0) {
    throw ConfigError(harness::field_name(config, "mysql.lock_wait_timeout") +
                      ": live mode needs whole seconds (innodb_lock_wait_timeout), got " +
                      format_duration(d));
  }
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

// Faults: mariadbd's crash, restart, pause; each client's freeze, crash and
// clock; with link
// faults a relay per client (client c's Env connects to its relay's port).
history::History run_with_faults(const harness::RunConfig& config,
                                 algorithms::LockAlgorithm& algorithm, harness::RunResult& result,
                                 MariadbProcess& server,
                                 const MariadbConnection::Address& address) {
  LiveTargets targets;
  LiveTargets::Server& s = targets.servers[kServerName];
  s.crash = [&server] { server.crash(); };
  s.restart = [&server] { server.restart(); };
  s.pause = [&server] { server.pause(); };
  s.resume = [&server] { server.resume(); };
  targets.clients = client_names(config);
  std::vector<std::shared_ptr<ClientFreeze>> freezes;
  std::vector<std::shared_ptr<ClientClock>> clocks;
  std::vector<std::shared_ptr<ClientLife>> lives;
  std::vector<std::shared_ptr<ClientFreeze>> hangs;
  std::vector<std::unique_ptr<TcpRelay>> relays;
  for (const std::string& name : targets.clients) {
    freezes.push_back(std::make_shared<ClientFreeze>());
    clocks.push_back(std::make_shared<ClientClock>());
    lives.push_back(std::make_shared<ClientLife>());
    hangs.push_back(std::make_shared<ClientFreeze>());
    wire_client_controls(targets.client_controls[name], *freezes.back(), *hangs.back(),
                         *lives.back(), *clocks.back());
    if (needs_relays(config.faults)) {
      relays.push_back(std::make_unique<TcpRelay>(address.port));
      targets.links[{name, kServerName}] = relays.back().get();
    }
  }
  LOCKSIM_ASSERT(relays.empty() || relays.size() == freezes.size());
  LiveOptions live_options;
  live_options.errors = &result.errors;
  live_options.make_env = [&](int client) -> std::unique_ptr<Env> {
    const auto i = static_cast<size_t>(client);
    MariadbConnection::Address a = address;
    if (!relays.empty()) a.port = relays.at(i)->port();
    auto env = std::make_unique<MysqlLiveEnv>(client, a, config.mysql.client_timeout, config.seed);
    env->set_freeze(freezes.at(i));
    env->set_clock(clocks.at(i));
    env->set_life(lives.at(i));
    env->set_hang(hangs.at(i));
    return env;
  };
  live_options.lives = lives;
  live_options.nemesis = [&](LiveRunView& view, const std::atomic<bool>& done) {
    run_live_nemesis(config.faults, targets, view, done);
  };
  return run_live(algorithm, config.workload, {}, config.duration, config.seed, live_options);
}

// The server is owned here: stopped when this returns or throws, and by the
// interrupt watcher (owned_processes.h) or PDEATHSIG if the process dies.
history::History run(const harness::RunConfig& config, algorithms::LockAlgorithm& algorithm,
                     harness::RunResult& result) {
  const int lock_wait_timeout_s =
      static_cast<int>(config.mysql.lock_wait_timeout.ns / Duration::seconds(1).ns);
  const bool read_committed = config.mysql.isolation == sim::mysql::Isolation::kReadCommitted;
  const auto server = MariadbProcess::start(
      {.lock_wait_timeout_s = lock_wait_timeout_s,
       .flush_log_at_trx_commit = config.mysql.flush_log_at_trx_commit,
       .transaction_isolation = read_committed ? "READ-COMMITTED" : "REPEATABLE-READ"});
  const MariadbConnection::Address address{
      .host = "127.0.0.1", .port = server->port(), .database = "locksim", .user = "root"};
  const Duration timeout = config.mysql.client_timeout;
  const uint64_t seed = config.seed;
  history::History history =
      !config.faults.events.empty()
          ? run_with_faults(config, algorithm, result, *server, address)
          : run_live_clients(config, algorithm, result,
                             [address, timeout, seed](int client) -> std::unique_ptr<Env> {
                               return std::make_unique<MysqlLiveEnv>(client, address, timeout,
                                                                     seed);
                             });
  result.deadlocks = std::max<int64_t>(0, innodb_deadlocks(server->port()));
  result.backend_notes.emplace_back("mysql.server",
                                    "mariadbd on 127.0.0.1:" + std::to_string(server->port()) +
                                        " (a fresh datadir, stopped after the run)");
  return history;
}

}  // namespace

LiveBackend mysql_live_backend() {
  return {.name = "mysql",
          .refuse_unsupported = refuse_unsupported,
          .run = run,
          .applies_faults = true};
}

}  // namespace locksim::live
