// One client's connection to a MySQL replication group: each statement goes
// to the primary the client was last told of (MysqlGroup::published_primary).
//
// Opens a TCP connection (sim/connection.h) on the first query, and its
// session by a handshake over it (the server's greeting: a connection id).
// After a timeout the client closes the connection (the server reads the
// FIN after everything sent before it, and ends the session); a server
// whose process crashed resets it at once, a frozen or cut-off one is silent
// until the timeout. Either way the session is lost (2013) and the next
// query opens a fresh connection and session. When the
// published primary changes under an open session, that session is closed
// and the query fails with 2013, as a proxy or VIP move breaks the
// connection: a transaction begun on the old primary must never continue,
// statement by statement, on the new one.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "env/sql_connection.h"
#include "sim/connection.h"
#include "sim/mysql/mysql_group.h"
#include "sim/mysql/mysql_node.h"
#include "sim/network.h"
#include "sim/node.h"
#include "sim/world.h"

namespace locksim::sim::mysql {

class MysqlConnection : public SqlConnection {
 public:
  MysqlConnection(World& world, Network& net, Node& client, MysqlGroup& group, Duration timeout);

  SqlResult query(const std::string& sql, std::vector<SqlValue> params) override;
  void close() override;
  std::string server_name() const override { return group_.name(); }

 private:
  World& world_;
  Network& net_;
  Node& client_;
  MysqlGroup& group_;
  Duration timeout_;
  // Opens conn_ and its session on `target`; an error result if that failed.
  std::optional<SqlResult> open(MysqlNode& target);
  // Drops the connection without a word to the server (it is gone already).
  void forget();

  // One statement on its way: the request the server answers and what the
  // waiting client fiber learns, shared with the events that may answer it
  // after the client gave up.
  struct Pending;
  // A session on `target`: closes one on a primary that moved (an error
  // result, as a proxy breaks it), drops a reset one, opens a new one.
  std::optional<SqlResult> ensure_session(MysqlNode& target);
  // Sends the statement on the open session and arms the client's timeout.
  std::shared_ptr<Pending> send(const std::string& sql, std::vector<SqlValue> params);
  // What the client makes of a finished wait: the answer, or 2013 for a
  // broken connection or a timeout (the connection is then dropped).
  SqlResult outcome(Pending& pending);

  std::unique_ptr<Connection> conn_;  // open exactly while a session is
  MysqlNode* server_ = nullptr;       // where the open session lives
  SessionId session_ = 0;             // 0: none open
  uint64_t incarnation_ = 0;
};

}  // namespace locksim::sim::mysql
