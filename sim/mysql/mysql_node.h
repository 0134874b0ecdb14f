// A simulated mariadbd on a simulated node: the pure Engine joined to the
// world, and the client side of a connection to it.
//
//   - One server thread per connection, as MariaDB's default
//     thread-per-connection: a statement starts `service_time` after it
//     arrives (parse, optimise, touch the B-tree) and is then executed at
//     once; statements of different sessions overlap in that time, so
//     contention shows up where InnoDB puts it, in the lock waits.
//   - A statement that waits for a row lock is answered when the engine
//     finishes it (the holder commits or rolls back, or a deadlock victim is
//     chosen), or with 1205 innodb_lock_wait_timeout later (true time).
//   - A paused node queues statements and timers (they run on resume); a
//     crashed one drops every session (their transactions roll back, as crash
//     recovery rolls back what was not committed) and answers nothing.
//     Committed rows survive a crash-restart: innodb_flush_log_at_trx_commit=1
//     (the other settings are not modelled yet).
//   - The server's clock is not read: the algorithms compute deadlines on the
//     client's clock (the article's `new Date()`), and no statement of the
//     subset calls NOW().
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "env/sql_connection.h"
#include "sim/mysql/engine.h"
#include "sim/network.h"
#include "sim/node.h"
#include "sim/world.h"

namespace locksim::sim::mysql {

struct MysqlParams {
  Duration service_time = Duration::micros(200);       // per statement, on the server
  Duration lock_wait_timeout = Duration::seconds(50);  // innodb_lock_wait_timeout
  Duration client_timeout = Duration::seconds(60);     // the client library's read timeout
};

class MysqlNode {
 public:
  MysqlNode(World& world, Network& net, std::string name, const MysqlParams& params);

  Node& node() { return node_; }
  const std::string& name() const { return node_.name(); }
  Engine& engine() { return engine_; }
  // Bumped by each crash: sessions of an older incarnation are gone.
  uint64_t incarnation() const { return incarnation_; }

  // Server side of one statement, called on arrival at the node. `session`
  // 0 opens a new session (reported through `reply`'s first argument).
  // `reply` is called once, at the node, with the session, the server's
  // incarnation and the result — or never, when the node crashes first.
  using Reply = std::function<void(SessionId session, uint64_t incarnation, SqlResult result)>;
  void submit(SessionId session, uint64_t incarnation, std::string sql,
              std::vector<SqlValue> params, Reply reply);
  // The client closed its connection (or gave up on it).
  void disconnect(SessionId session, uint64_t incarnation);

 private:
  void run(SessionId session, const std::string& sql, const std::vector<SqlValue>& params,
           Reply reply);
  void deliver_finished();
  void on_crash();

  World& world_;
  Network& net_;
  Node node_;
  MysqlParams params_;
  Engine engine_;
  std::map<SessionId, Reply> waiting_;  // blocked statements' replies
  uint64_t incarnation_ = 0;
};

// One client's connection to a MysqlNode. Opens its session on the first
// query; after a timeout or a server crash the session is lost (2013) and the
// next query opens a fresh one.
class MysqlConnection : public SqlConnection {
 public:
  MysqlConnection(World& world, Network& net, Node& client, MysqlNode& server, Duration timeout);

  SqlResult query(const std::string& sql, const std::vector<SqlValue>& params) override;
  void close() override;
  std::string server_name() const override { return server_.name(); }

 private:
  World& world_;
  Network& net_;
  Node& client_;
  MysqlNode& server_;
  Duration timeout_;
  SessionId session_ = 0;  // 0: none open
  uint64_t incarnation_ = 0;
};

}  // namespace locksim::sim::mysql
