#include "sim/mysql/mysql_connection.h"

#include <memory>
#include <optional>
#include <string_view>
#include <utility>

#include "env/assert.h"
#include "sim/rpc.h"
#include "sim/thread_blocks.h"
#include "sim/waiter_slots.h"

namespace locksim::sim::mysql {

struct MysqlConnection::Pending final : MysqlRequest {
  Pending(std::string_view sql, std::vector<SqlValue> params, World& world, Network& net,
          uint64_t connection)
      : MysqlRequest(sql, std::move(params)),
        world(world),
        net(net),
        connection(connection),
        watch(WaiterSlots::open(&waiter)) {}
  ~Pending() override { WaiterSlots::close(watch); }  // pair of the constructor
  Pending(const Pending&) = delete;
  Pending& operator=(const Pending&) = delete;

  Waiter waiter;
  std::optional<SqlResult> result;                   // the server's answer
  ConnectionState failure = ConnectionState::kOpen;  // or how the connection failed

  World& world;
  Network& net;
  // The server names the connection by id: the client may have dropped its
  // handle before the answer is ready.
  const uint64_t connection;
  // The answer while it travels back (moved to `result` on arrival).
  SqlResult in_flight;
  // What the statement's timeout reads: the waiter while the statement
  // lives, so that one answered long before its timeout (nearly all) is
  // freed then, not kept until the timer fires (sim/waiter_slots.h).
  const WaiterSlots::Handle watch;

 protected:
  void on_answer(std::shared_ptr<MysqlRequest> self, SessionId, uint64_t, SqlResult&& r) override {
    in_flight = std::move(r);
    // A closed, reset or broken connection drops the answer.
    net.send_on(connection, false, [state = std::static_pointer_cast<Pending>(std::move(self))] {
      if (state->waiter.signaled) return;  // the client gave up
      state->result = std::move(state->in_flight);
      state->world.signal(state->waiter);
    });
  }
};

MysqlConnection::MysqlConnection(World& world, Network& net, Node& client, MysqlGroup& group,
                                 Duration timeout)
    : world_(world), net_(net), client_(client), group_(group), timeout_(timeout) {
  LOCKSIM_ASSERT(timeout_ > Duration::zero());
}

std::optional<SqlResult> MysqlConnection::open(MysqlNode& target) {
  LOCKSIM_ASSERT(conn_ == nullptr && session_ == 0);
  std::string error;
  conn_ = dial(world_, net_, client_, target.node(), timeout_, error);
  if (!conn_) {
    return SqlResult::error(sql_errno::kServerLost, "Can't connect to MySQL server on " +
                                                        target.name() + " (" + error + ")");
  }
  MysqlNode* server = &target;
  CallResult<std::pair<SessionId, uint64_t>> r;
  try {
    r = call<std::pair<SessionId, uint64_t>>(
        world_, *conn_, [server] { return server->open_session(); }, timeout_);
  } catch (...) {
    forget();  // the fiber cancelled by this client's crash: close() left it to us
    throw;
  }
  if (r.outcome != CallOutcome::kReply || !conn_->open()) {
    forget();
    return SqlResult::error(sql_errno::kServerLost,
                            "Lost connection to MySQL server at 'reading initial communication "
                            "packet' on " +
                                target.name());
  }
  server_ = server;
  session_ = r.reply->first;
  incarnation_ = r.reply->second;
  // Pair of forget(): a connection is open exactly while a session is.
  LOCKSIM_ASSERT(session_ != 0 && conn_->open());
  return std::nullopt;
}

SqlResult MysqlConnection::query(const std::string& sql, std::vector<SqlValue> params) {
  MysqlNode* target = &group_.published_primary();
  if (std::optional<SqlResult> failed = ensure_session(*target)) return std::move(*failed);
  LOCKSIM_ASSERT(session_ != 0 && server_ == target);
  const std::shared_ptr<Pending> pending = send(sql, std::move(params));
  // A crash of this client closes the connection under the waiting fiber
  // (MysqlDeployment::client_crashed) and then cancels it.
  try {
    world_.block(pending->waiter);
  } catch (...) {
    if (conn_) conn_->on_failure({});
    throw;
  }
  LOCKSIM_ASSERT_MSG(conn_ != nullptr, "a connection closed under a query that goes on");
  conn_->on_failure({});
  return outcome(*pending);
}

std::optional<SqlResult> MysqlConnection::ensure_session(MysqlNode& target) {
  if (conn_ && server_ != &target) {
    close();
    return SqlResult::error(sql_errno::kServerLost,
                            "Lost connection to MySQL server during query (the primary moved to " +
                                target.name() + ")");
  }
  if (conn_ && !conn_->open()) forget();  // reset while idle: the session died with it
  if (!conn_) return open(target);
  return std::nullopt;
}

std::shared_ptr<MysqlConnection::Pending> MysqlConnection::send(const std::string& sql,
                                                                std::vector<SqlValue> params) {
  LOCKSIM_ASSERT(conn_ != nullptr && server_ != nullptr && session_ != 0);
  // One block for the statement and its control block, from the thread's
  // free list: the timeout below holds only a handle to its waiter
  // (Pending::watch), so the block goes back as soon as the answer is taken.
  std::shared_ptr<Pending> state = std::allocate_shared<Pending>(
      ThreadBlockAllocator<Pending>(), sql, std::move(params), world_, net_, conn_->id());
  MysqlNode& server = *server_;
  const SessionId session = session_;
  const uint64_t incarnation = incarnation_;
  // The handler is cleared before query() returns (and with the connection),
  // so while it is set the fiber in query() keeps `state` alive: a raw
  // pointer.
  const auto failed = [](void* context, ConnectionState why) {
    auto* pending = static_cast<Pending*>(context);
    if (pending->waiter.signaled) return;
    pending->failure = why;
    pending->world.signal(pending->waiter);
  };
  conn_->on_failure(FailureHandler{failed, state.get()});
  conn_->to_server([&server, state, session, incarnation]() mutable {
    server.submit(session, incarnation, std::move(state));
  });
  if (timeout_ != kNoTimeout) {
    // A statement gone is one whose client stopped waiting, so there is
    // nothing to wake.
    world_.after_fixed(timeout_, [world = &world_, watch = state->watch] {
      Waiter* waiter = WaiterSlots::find(watch);
      if (waiter != nullptr && !waiter->signaled) world->signal(*waiter);
    });
  }
  return state;
}

SqlResult MysqlConnection::outcome(Pending& pending) {
  // Pair of query(), which wakes only once the waiter is signalled.
  LOCKSIM_ASSERT(pending.waiter.signaled);
  if (pending.failure != ConnectionState::kOpen) {
    forget();
    return SqlResult::error(
        sql_errno::kServerLost,
        std::string("Lost connection to MySQL server during query (") +
            (pending.failure == ConnectionState::kReset ? "connection reset by peer"
                                                        : "connection timed out") +
            ")");
  }
  if (!pending.result) {
    close();  // the client library drops a connection that timed out
    return SqlResult::error(sql_errno::kServerLost,
                            "Lost connection to MySQL server during query (timeout after " +
                                std::to_string(timeout_.to_ms()) + " ms)");
  }
  if (pending.result->error_number == sql_errno::kServerLost) forget();  // the server dropped it
  return std::move(*pending.result);
}

void MysqlConnection::forget() {
  if (conn_) conn_->close();
  conn_.reset();
  session_ = 0;
  server_ = nullptr;
}

void MysqlConnection::close() {
  if (!conn_) return;
  if (session_ == 0) {
    // Closed during open(), its handshake in flight (a client crash 1 ms
    // into the run): no session of ours to end, and open()'s call still
    // waits on the connection, so it is closed here and dropped by open().
    // A session the server opened meanwhile ran no statement: it holds no
    // row lock, transaction or lock row, and the simulation leaves it open
    // (a simplification: MySQL would end it when it reads the FIN).
    LOCKSIM_ASSERT(server_ == nullptr);
    conn_->close();
    return;
  }
  LOCKSIM_ASSERT(server_ != nullptr && session_ != 0);
  const SessionId session = session_;
  const uint64_t incarnation = incarnation_;
  MysqlNode& server = *server_;
  auto disconnect = [&server, session, incarnation] { server.disconnect(session, incarnation); };
  if (conn_->open()) {
    // The FIN travels like any byte, after everything sent before it: a
    // partition holds it, a crash of the server loses it.
    conn_->to_server(disconnect);
  } else if (conn_->state() == ConnectionState::kReset && !server.node().crashed()) {
    // This side's process crashed (that reset it): its kernel closes the
    // socket, and the server hears of it over the link.
    net_.send(client_, server.node(), disconnect);
  }
  forget();
}

}  // namespace locksim::sim::mysql
