#include "sim/mysql/mysql_connection.h"

#include <memory>
#include <optional>
#include <utility>

#include "env/assert.h"

namespace locksim::sim::mysql {

MysqlConnection::MysqlConnection(World& world, Network& net, Node& client, MysqlGroup& group,
                                 Duration timeout)
    : world_(world), net_(net), client_(client), group_(group), timeout_(timeout) {
  LOCKSIM_ASSERT(timeout_ > Duration::zero());
}

SqlResult MysqlConnection::query(const std::string& sql, const std::vector<SqlValue>& params) {
  MysqlNode* target = &group_.published_primary();
  if (session_ != 0 && server_ != target) {
    close();
    return SqlResult::error(sql_errno::kServerLost,
                            "Lost connection to MySQL server during query (the primary moved to " +
                                target->name() + ")");
  }
  struct State {
    Waiter waiter;
    std::optional<SqlResult> result;
    SessionId session = 0;
    uint64_t incarnation = 0;
  };
  auto state = std::make_shared<State>();
  const SessionId session = session_;
  const uint64_t incarnation = incarnation_;
  Node& client = client_;
  World& world = world_;
  Network& net = net_;
  MysqlNode& server = *target;
  net_.send(
      client_, server.node(),
      [&world, &net, &client, &server, state, session, incarnation, sql, params]() mutable {
        server.submit(
            session, incarnation, std::move(sql), std::move(params),
            [&world, &net, &client, &server, state](SessionId s, uint64_t inc, SqlResult r) {
              net.send(server.node(), client,
                       [&world, &net, &client, &server, state, s, inc, r = std::move(r)]() mutable {
                         if (state->waiter.signaled) {
                           // The client gave up and closed the socket: the server
                           // learns it and rolls back whatever this session holds.
                           net.send(client, server.node(),
                                    [&server, s, inc] { server.disconnect(s, inc); });
                           return;
                         }
                         state->session = s;
                         state->incarnation = inc;
                         state->result = std::move(r);
                         world.signal(state->waiter);
                       });
            });
      });
  world_.after(timeout_, [&world, state] {
    if (!state->waiter.signaled) world.signal(state->waiter);
  });
  world_.block(state->waiter);
  server_ = target;
  if (!state->result) {
    close();  // the client library drops a connection that timed out
    return SqlResult::error(sql_errno::kServerLost,
                            "Lost connection to MySQL server during query (timeout after " +
                                std::to_string(timeout_.to_ms()) + " ms)");
  }
  session_ = state->session;
  incarnation_ = state->incarnation;
  LOCKSIM_ASSERT_MSG(session_ != 0 || !state->result->ok(),
                     "a successful answer names its session");
  return std::move(*state->result);
}

void MysqlConnection::close() {
  if (session_ == 0) return;
  LOCKSIM_ASSERT(server_ != nullptr);
  const SessionId session = session_;
  const uint64_t incarnation = incarnation_;
  session_ = 0;
  MysqlNode& server = *server_;
  // The FIN travels like any byte: a partition holds it, a crash loses it.
  net_.send(client_, server.node(),
            [&server, session, incarnation] { server.disconnect(session, incarnation); });
}

}  // namespace locksim::sim::mysql
