// The MySQL backend's entry: its settings (the scenario's "mysql" section,
// flags --mysql-service-time, --lock-wait-timeout, --mysql-timeout) and its
// deployment (sim/mysql/mysql_deployment.h).
#include "harness/backends.h"
#include "harness/setting_rows.h"
#include "sim/mysql/mysql_deployment.h"

namespace locksim::harness {

namespace {

std::vector<Setting> mysql_rows() {
  std::vector<Setting> rows;
  rows.push_back(duration_row(
      "--mysql-service-time", "mysql.service_time",
      "server time each SQL statement takes before it runs", false, DurationRule::kNonNegative,
      [](auto& c) -> auto& { return c.mysql.service_time; }));
  rows.push_back(duration_row(
      "--lock-wait-timeout", "mysql.lock_wait_timeout",
      "innodb_lock_wait_timeout: a row-lock wait ends in error 1205 after this", false,
      DurationRule::kPositive, [](auto& c) -> auto& { return c.mysql.lock_wait_timeout; }));
  rows.push_back(timeout_row(
      "--mysql-timeout", "mysql.timeout",
      "client read timeout of one SQL statement (then error 2013, connection dropped), or none",
      false, [](auto& c) -> auto& { return c.mysql.client_timeout; }));
  return rows;
}

void validate_mysql(const RunConfig&) {
  // Each value's range is checked when it is parsed; nothing spans settings yet.
}

}  // namespace

BackendSpec mysql_backend() {
  BackendSpec b;
  b.name = "mysql";
  b.settings = mysql_rows;
  b.validate = validate_mysql;
  b.make = [](sim::World& world, sim::Network& net, const RunConfig& c) {
    return std::unique_ptr<sim::Deployment>(new sim::mysql::MysqlDeployment(world, net, c.mysql));
  };
  return b;
}

}  // namespace locksim::harness
