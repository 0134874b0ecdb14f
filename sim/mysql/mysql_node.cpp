#include "sim/mysql/mysql_node.h"

#include <memory>
#include <utility>

#include "env/assert.h"

namespace locksim::sim::mysql {

MysqlNode::MysqlNode(World& world, Network& net, std::string name, const MysqlParams& params)
    : world_(world), net_(net), node_(world, std::move(name)), params_(params) {
  LOCKSIM_ASSERT(params_.service_time >= Duration::zero());
  LOCKSIM_ASSERT(params_.lock_wait_timeout > Duration::zero());
  node_.on_crash = [this] { on_crash(); };
}

void MysqlNode::submit(SessionId session, uint64_t incarnation, std::string sql,
                       std::vector<SqlValue> params, Reply reply) {
  if (session != 0 && incarnation != incarnation_) {
    // The session died with an earlier incarnation of the server.
    reply(0, incarnation_,
          SqlResult::error(sql_errno::kServerLost, "Lost connection to MySQL server during query"));
    return;
  }
  const uint64_t inc = incarnation_;
  world_.after(params_.service_time, [this, session, inc, sql = std::move(sql),
                                      params = std::move(params), reply = std::move(reply)] {
    // The statement's thread runs on the node: a pause holds it, a crash ends it.
    node_.deliver([this, session, inc, sql, params, reply] {
      if (inc != incarnation_) return;
      run(session, sql, params, reply);
    });
  });
}

void MysqlNode::run(SessionId session, const std::string& sql, const std::vector<SqlValue>& params,
                    Reply reply) {
  if (session == 0) session = engine_.open();
  if (!engine_.is_open(session)) {  // closed meanwhile (the client gave up on it)
    reply(0, incarnation_,
          SqlResult::error(sql_errno::kServerLost, "Lost connection to MySQL server during query"));
    return;
  }
  StepResult r = engine_.execute(session, sql, params);
  if (!r.blocked) {
    reply(session, incarnation_, std::move(r.result));
  } else {
    waiting_[session] = std::move(reply);
    LOCKSIM_ASSERT_MSG(engine_.waiting(session).has_value(), "blocked means waiting");
    const uint64_t wait = *engine_.waiting(session);
    const uint64_t inc = incarnation_;
    world_.after(params_.lock_wait_timeout, [this, session, wait, inc] {
      node_.deliver([this, session, wait, inc] {
        if (inc != incarnation_) return;
        engine_.lock_wait_timeout(session, wait);
        deliver_finished();
      });
    });
  }
  deliver_finished();
}

void MysqlNode::deliver_finished() {
  for (FinishedStatement& f : engine_.take_finished()) {
    auto it = waiting_.find(f.session);
    LOCKSIM_ASSERT_MSG(it != waiting_.end(), "a statement finished that was not waiting");
    Reply reply = std::move(it->second);
    waiting_.erase(it);
    reply(f.session, incarnation_, std::move(f.result));
  }
}

void MysqlNode::disconnect(SessionId session, uint64_t incarnation) {
  if (session == 0 || incarnation != incarnation_) return;
  waiting_.erase(session);  // nobody reads that answer any more
  engine_.close(session);
  deliver_finished();
}

void MysqlNode::on_crash() {
  ++incarnation_;
  waiting_.clear();
  engine_.drop_all_sessions();
}

MysqlConnection::MysqlConnection(World& world, Network& net, Node& client, MysqlNode& server,
                                 Duration timeout)
    : world_(world), net_(net), client_(client), server_(server), timeout_(timeout) {
  LOCKSIM_ASSERT(timeout_ > Duration::zero());
}

SqlResult MysqlConnection::query(const std::string& sql, const std::vector<SqlValue>& params) {
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
  MysqlNode& server = server_;
  net_.send(
      client_, server_.node(),
      [&world, &net, &client, &server, state, session, incarnation, sql, params] {
        server.submit(
            session, incarnation, sql, params,
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
  if (!state->result) {
    close();  // the client library drops a connection that timed out
    return SqlResult::error(sql_errno::kServerLost,
                            "Lost connection to MySQL server during query (timeout after " +
                                std::to_string(timeout_.to_ms()) + " ms)");
  }
  session_ = state->session;
  incarnation_ = state->incarnation;
  return std::move(*state->result);
}

void MysqlConnection::close() {
  if (session_ == 0) return;
  const SessionId session = session_;
  const uint64_t incarnation = incarnation_;
  session_ = 0;
  MysqlNode& server = server_;
  // The FIN travels like any byte: a partition holds it, a crash loses it.
  net_.send(client_, server_.node(),
            [&server, session, incarnation] { server.disconnect(session, incarnation); });
}

}  // namespace locksim::sim::mysql
