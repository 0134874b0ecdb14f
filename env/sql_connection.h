// One client's session with a MySQL/MariaDB server: the seam beside
// RedisConnection.
//
// Takes real SQL text with `?` placeholders and the values bound to them (as
// a prepared statement would), and returns what the server answered: rows, the
// affected-row count and last insert id, or an error carrying MySQL's own
// error number and SQLSTATE. The simulated InnoDB (sim/mysql/) and, later,
// libmariadb (live/) both sit behind it, so the lock algorithms speak
// real SQL and the simulated server can be held to MariaDB statement by
// statement.
//
// A session is stateful as a MySQL connection is: it has autocommit on, and
// BEGIN/START TRANSACTION opens a transaction that lasts until COMMIT,
// ROLLBACK, an error that rolls it back (1213), or the connection breaking
// (2013: the server rolls back whatever was open).
//
// Threads: one client (fiber or thread) uses a connection; calls are never
// concurrent on one connection.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace locksim {

// The MySQL error numbers locksim's algorithms and tests tell apart, with the
// server's numbers so the live layer passes them through unchanged.
namespace sql_errno {
inline constexpr int kDupEntry = 1062;         // ER_DUP_ENTRY, SQLSTATE 23000
inline constexpr int kParseError = 1064;       // ER_PARSE_ERROR, SQLSTATE 42000
inline constexpr int kBadDatetime = 1292;      // ER_TRUNCATED_WRONG_VALUE, SQLSTATE 22007
inline constexpr int kLockWaitTimeout = 1205;  // ER_LOCK_WAIT_TIMEOUT, SQLSTATE HY000
inline constexpr int kDeadlock = 1213;         // ER_LOCK_DEADLOCK, SQLSTATE 40001
inline constexpr int kServerLost = 2013;       // CR_SERVER_LOST (client side), SQLSTATE HY000
}  // namespace sql_errno

// The SQLSTATE MySQL reports with each of the numbers above ("HY000" else).
const char* sqlstate_for(int error_number);

// One bound parameter or one column value. MySQL's text protocol returns
// every value as text; the few the lock table holds are integers, strings and
// DATETIMEs, which travel here as their text ("2026-11-23 14:00:05"). NULL is
// nullopt.
using SqlValue = std::optional<std::string>;
using SqlRow = std::vector<SqlValue>;

struct SqlResult {
  // 0 on success; else a MySQL error number (see sql_errno) with its SQLSTATE
  // and the server's message.
  int error_number = 0;
  std::string sqlstate = "00000";
  std::string message;

  std::vector<std::string> columns;  // a SELECT's column names, in order
  std::vector<SqlRow> rows;          // a SELECT's rows
  // INSERT/UPDATE/DELETE: rows changed. As MySQL reports it by default, an
  // UPDATE that matches a row but leaves it unchanged counts 0.
  uint64_t affected_rows = 0;
  uint64_t last_insert_id = 0;  // the AUTO_INCREMENT value an INSERT generated, else 0
  // Notes and warnings a successful statement raised (mysql_warning_count),
  // such as the note for a DATETIME fraction past six digits cut off. Counted
  // because "stored with a note" and "stored silently" are different answers
  // the differential test must tell apart; the texts are not kept.
  uint32_t warnings = 0;

  bool ok() const { return error_number == 0; }

  static SqlResult error(int error_number, std::string message);

  // A result's column names and rows go back to their thread's pool when it
  // dies or is overwritten (env/argv_pool.h), their strings keeping their
  // room, and the simulated server builds the next SELECT's result into them
  // (sim/mysql/engine_statements.cpp): a lock SELECT's row (a vector, a
  // DATETIME and a token past the 15 characters a string keeps inline) then
  // costs no allocation. Nothing can depend on which vectors a result gets:
  // the server overwrites every element it hands out.
  SqlResult() = default;
  SqlResult(const SqlResult&) = default;
  SqlResult(SqlResult&&) noexcept = default;
  SqlResult& operator=(const SqlResult&) = default;
  SqlResult& operator=(SqlResult&& other) noexcept;
  // Inline for the common case, a result moved from (or without rows),
  // which has nothing to give back.
  ~SqlResult() {
    if (!columns.empty() || !rows.empty()) give_back_vectors();
  }

 private:
  void give_back_vectors() noexcept;
};

class SqlConnection {
 public:
  virtual ~SqlConnection() = default;

  // Runs one statement, with params bound to its `?` placeholders in order,
  // and waits for the answer. Blocks the calling client (a fiber in the
  // simulation, a thread live) — also while the statement waits for a row
  // lock, up to the server's innodb_lock_wait_timeout. Never throws for
  // server or transport trouble: a timeout or broken link is error 2013, after
  // which the statement may or may not have run (the "unknown outcome"), and
  // the server has rolled back any open transaction. May throw sim::Cancelled
  // when the simulation tears the client down.
  // Precondition: the number of `?` equals params.size() (else error 1064).
  // `params` by value: a caller's braced list moves into the simulated
  // request, which keeps it, instead of being copied there.
  virtual SqlResult query(const std::string& sql, std::vector<SqlValue> params) = 0;

  // Closes the session: the server rolls back its open transaction and frees
  // its locks. Later queries reconnect with a fresh session. Never throws.
  virtual void close() = 0;

  // Human-readable name of the server ("mysql-1"), for messages.
  virtual std::string server_name() const = 0;
};

}  // namespace locksim
