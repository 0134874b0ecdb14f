// The MySQL backend's live side: its own mariadbd on loopback (a fresh
// datadir and t_tag_lock), each client one session through libmariadb
// (MysqlLiveEnv).
#include <algorithm>
#include <memory>
#include <string>

#include "env/parse.h"
#include "harness/backends.h"
#include "live/live_backend.h"
#include "live/mariadb_connection.h"
#include "live/mariadb_process.h"
#include "live/mysql_live_env.h"

namespace locksim::live {

namespace {

// innodb_lock_wait_timeout is whole seconds on a real server.
void refuse_unsupported(const harness::RunConfig& config) {
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

// The server is owned here: stopped when this returns or throws, and by the
// interrupt watcher (owned_processes.h) or PDEATHSIG if the process dies.
history::History run(const harness::RunConfig& config, algorithms::LockAlgorithm& algorithm,
                     harness::RunResult& result) {
  const int lock_wait_timeout_s =
      static_cast<int>(config.mysql.lock_wait_timeout.ns / Duration::seconds(1).ns);
  const bool read_committed = config.mysql.isolation == sim::mysql::Isolation::kReadCommitted;
  const auto server = MariadbProcess::start(
      {.lock_wait_timeout_s = lock_wait_timeout_s,
       .transaction_isolation = read_committed ? "READ-COMMITTED" : "REPEATABLE-READ"});
  const MariadbConnection::Address address{
      .host = "127.0.0.1", .port = server->port(), .database = "locksim", .user = "root"};
  const Duration timeout = config.mysql.client_timeout;
  const uint64_t seed = config.seed;
  history::History history = run_live_clients(
      config, algorithm, result, [address, timeout, seed](int client) -> std::unique_ptr<Env> {
        return std::make_unique<MysqlLiveEnv>(client, address, timeout, seed);
      });
  result.deadlocks = std::max<int64_t>(0, innodb_deadlocks(server->port()));
  result.backend_notes.emplace_back("mysql.server",
                                    "mariadbd on 127.0.0.1:" + std::to_string(server->port()) +
                                        " (a fresh datadir, stopped after the run)");
  return history;
}

}  // namespace

LiveBackend mysql_live_backend() {
  return {.name = "mysql", .refuse_unsupported = refuse_unsupported, .run = run};
}

}  // namespace locksim::live
