// The MySQL backend's entry: its settings (the scenario's "mysql" section:
// service time, timeouts, durability, replicas and failover), the checks
// across them, and its deployment (sim/mysql/mysql_deployment.h).
#include <algorithm>

#include "env/assert.h"
#include "harness/backends.h"
#include "harness/profile_deployment.h"
#include "harness/setting_rows.h"
#include "sim/mysql/mysql_deployment.h"

namespace locksim::harness {

namespace {

// Replicas, semi-sync and failover: the same shape as the Redis topology.
std::vector<Setting> topology_rows() {
  std::vector<Setting> rows;
  rows.push_back(int_row(
      "--mysql-replicas", "mysql.replicas", "asynchronous replicas of the primary mysql-1", false,
      0, sim::mysql::MysqlParams::kReplicasMax, [](auto& c) -> auto& { return c.mysql.replicas; }));
  rows.push_back(duration_row(
      "--mysql-replication-lag", "mysql.replication_lag",
      "how far behind the primary the replicas run (binlog shipping)", false,
      DurationRule::kNonNegative, [](auto& c) -> auto& { return c.mysql.replication_lag; }));
  rows.push_back(flag_row(
      "--semi-sync", "mysql.semi_sync",
      "semi-synchronous replication: a commit returns once a replica has it",
      [](auto& c) -> auto& { return c.mysql.semi_sync; }));
  rows.push_back(duration_row(
      "--semi-sync-timeout", "mysql.semi_sync_timeout",
      "rpl_semi_sync_master_timeout: then the primary falls back to asynchronous", false,
      DurationRule::kPositive, [](auto& c) -> auto& { return c.mysql.semi_sync_timeout; }));
  rows.push_back(flag_row(
      "--mysql-failover", "mysql.failover",
      "a monitor promotes the most up-to-date reachable replica",
      [](auto& c) -> auto& { return c.mysql.failover; }));
  rows.push_back(duration_row(
      "--mysql-down-after", "mysql.down_after", "failover: the primary unreachable this long",
      false, DurationRule::kPositive, [](auto& c) -> auto& { return c.mysql.down_after; }));
  rows.push_back(duration_row(
      "--mysql-discovery-delay", "mysql.discovery_delay",
      "failover: clients learn the new primary this much later", false, DurationRule::kNonNegative,
      [](auto& c) -> auto& { return c.mysql.discovery_delay; }));
  return rows;
}

std::vector<Setting> mysql_rows() {
  std::vector<Setting> rows;
  rows.push_back(duration_row(
      "--mysql-service-time", "mysql.service_time",
      "server time each SQL statement takes before it runs", false, DurationRule::kNonNegative,
      [](auto& c) -> auto& { return c.mysql.service_time; }));
  rows.push_back(duration_row(
      "--lock-wait-timeout", "mysql.lock_wait_timeout",
      "innodb_lock_wait_timeout: a row-lock wait ends in error 1205 after this", true,
      DurationRule::kPositive, [](auto& c) -> auto& { return c.mysql.lock_wait_timeout; }));
  rows.push_back(timeout_row(
      "--mysql-timeout", "mysql.timeout",
      "client read timeout of one SQL statement (then error 2013, connection dropped), or none",
      true, [](auto& c) -> auto& { return c.mysql.client_timeout; }));
  rows.push_back(int_row(
      "--flush-log-at-trx-commit", "mysql.flush_log_at_trx_commit",
      "innodb_flush_log_at_trx_commit: 1 every commit durable; 0 or 2 lose up "
      "to the last second of commits when the machine crashes",
      // Live too: mariadbd starts with --innodb-flush-log-at-trx-commit=N
      // (live/mariadb_process.cpp); a scenario gave it live, the flag did not.
      true, 0, 2, [](auto& c) -> auto& { return c.mysql.flush_log_at_trx_commit; }));
  rows.push_back(choice_row(
      "--isolation", "mysql.isolation",
      "transaction_isolation of every session: read-committed takes no gap locks, so v1's "
      "missing-row inserters wait and get 1062 instead of deadlocking",
      true, {"repeatable-read", "read-committed"},
      [](auto& c) -> auto& { return c.mysql.isolation; },
      [](const std::string& n) {
        return n == "read-committed" ? sim::mysql::Isolation::kReadCommitted
                                     : sim::mysql::Isolation::kRepeatableRead;
      },
      [](sim::mysql::Isolation i) {
        return i == sim::mysql::Isolation::kReadCommitted ? "read-committed" : "repeatable-read";
      }));
  for (Setting& s : topology_rows()) rows.push_back(std::move(s));
  return rows;
}

void validate_mysql(const RunConfig& c) {
  // Each value's range is checked when it is parsed; these span settings.
  const auto needs_replica = [&c](bool on, const char* path) {
    // A profile with failover adds the replica itself (give_failover).
    if (on && c.mysql.replicas == 0 && !profile_deploys_failover(c)) {
      throw ConfigError(field_name(c, path) + ": needs " + short_field_name(c, "mysql.replicas") +
                        " >= 1");
    }
  };
  needs_replica(c.mysql.failover, "mysql.failover");
  needs_replica(c.mysql.semi_sync, "mysql.semi_sync");
}

}  // namespace

BackendSpec mysql_backend() {
  BackendSpec b;
  b.name = "mysql";
  b.settings = mysql_rows;
  b.validate = validate_mysql;
  b.make = [](sim::World& world, sim::Network& net, const RunConfig& c) {
    // make() is handed validated configs only (harness::prepare_run validates first).
    LOCKSIM_ASSERT(!c.mysql.failover || c.mysql.replicas >= 1);
    return std::unique_ptr<sim::Deployment>(new sim::mysql::MysqlDeployment(world, net, c.mysql));
  };
  b.add_failover = [](RunConfig& c, Duration lag) { give_failover(c.mysql, lag); };
  b.set_client_timeout = [](RunConfig& c, Duration timeout) {
    LOCKSIM_ASSERT(timeout > Duration::zero());
    c.mysql.client_timeout = timeout;
  };
  return b;
}

}  // namespace locksim::harness
