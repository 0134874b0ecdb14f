// One client's connection to a MySQL replication group: each statement goes
// to the primary the client was last told of (MysqlGroup::published_primary).
//
// Opens its session on the first query. After a timeout or a server crash
// the session is lost (2013) and the next query opens a fresh one. When the
// published primary changes under an open session, that session is closed
// and the query fails with 2013, as a proxy or VIP move breaks the
// connection: a transaction begun on the old primary must never continue,
// statement by statement, on the new one.
#pragma once

#include <string>
#include <vector>

#include "env/sql_connection.h"
#include "sim/mysql/mysql_group.h"
#include "sim/mysql/mysql_node.h"
#include "sim/network.h"
#include "sim/node.h"
#include "sim/world.h"

namespace locksim::sim::mysql {

class MysqlConnection : public SqlConnection {
 public:
  MysqlConnection(World& world, Network& net, Node& client, MysqlGroup& group, Duration timeout);

  SqlResult query(const std::string& sql, const std::vector<SqlValue>& params) override;
  void close() override;
  std::string server_name() const override { return group_.name(); }

 private:
  World& world_;
  Network& net_;
  Node& client_;
  MysqlGroup& group_;
  Duration timeout_;
  MysqlNode* server_ = nullptr;  // where the open session lives
  SessionId session_ = 0;        // 0: none open
  uint64_t incarnation_ = 0;
};

}  // namespace locksim::sim::mysql
