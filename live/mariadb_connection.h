// SqlConnection over libmariadb (MariaDB Connector/C): one blocking session
// with a real mariadbd.
//
// The live twin of sim/mysql's MysqlConnection, so the same MySQL lock code
// talks to a real InnoDB. What passes through unchanged: the server's error
// numbers and SQLSTATEs (1062, 1064, 1205, 1213, ...), its result rows (as
// text, the seam's form), affected rows (changed rows, MySQL's default) and
// the last insert id.
//
// Parameters are bound, not spliced into the text: a statement with `?`
// goes through the binary protocol as a server-side prepared statement, each
// value bound as a string (NULL as NULL), and the server converts it to the
// column's type exactly as it converts a quoted literal — which is what the
// DATETIME fraction test relies on. Prepared statements are cached per SQL
// text for the session's life (the lock code uses a handful of texts), so a
// statement costs one round trip as in the simulation. A statement without
// `?` goes through the text protocol (BEGIN, COMMIT, ROLLBACK).
//
// Transport trouble never throws: a refused connect, a read timeout or a
// dropped connection is error 2013 (CR_SERVER_LOST; the client's own number,
// 2002/2003/2006/2013, is kept in the message), the session is dropped — the
// server rolls back its transaction — and the next query connects afresh.
//
// Not thread-safe: one connection belongs to one client thread.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "env/sql_connection.h"
#include "env/time.h"

struct st_mysql;
struct st_mysql_stmt;

namespace locksim::live {

class MariadbConnection : public SqlConnection {
 public:
  struct Address {
    std::string host = "127.0.0.1";
    int port = 3306;
    std::string database = "locksim";  // "" for none
    std::string user = "root";
  };

  // Does not connect yet: the first query does. `timeout` bounds the connect
  // and each read and write; libmariadb counts whole seconds, so it is
  // rounded up to at least 1 s.
  MariadbConnection(Address address, Duration timeout, std::string name = "mysql-1");
  ~MariadbConnection() override;

  MariadbConnection(const MariadbConnection&) = delete;
  MariadbConnection& operator=(const MariadbConnection&) = delete;

  SqlResult query(const std::string& sql, std::vector<SqlValue> params) override;
  void close() override;
  std::string server_name() const override { return name_; }

  // Whether a session is open (for tests of the reconnect logic).
  bool connected() const { return mysql_ != nullptr; }
  // The server's id of the open session (CONNECTION_ID()), or 0: lets a test
  // KILL it from another session, as a server-side disconnect.
  unsigned long thread_id() const;

 private:
  // Connects if needed: "" on success, else why not.
  std::string ensure_connected();
  SqlResult run_text(const std::string& sql);
  SqlResult run_prepared(const std::string& sql, const std::vector<SqlValue>& params);
  // The cached prepared statement for `sql`, preparing it on first use;
  // nullptr with *error set when the server refused it.
  st_mysql_stmt* prepared(const std::string& sql, SqlResult* error);
  // Turns the session's (or a statement's) current error into a result; a
  // connection-level error drops the session.
  SqlResult fail(unsigned int number, const char* sqlstate, const char* message);

  Address address_;
  unsigned int timeout_s_;
  std::string name_;
  st_mysql* mysql_ = nullptr;                         // owned; nullptr when no session
  std::map<std::string, st_mysql_stmt*> statements_;  // owned; belong to mysql_
};

}  // namespace locksim::live
