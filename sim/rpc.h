// Request/response over one simulated TCP connection, with a client timeout.
//
// The handler runs at the server node when the request arrives, on the main
// context and without yielding: a server command is atomic, and the server's
// clock is read once per request. The reply travels back on the same
// connection. Whichever comes first wakes the caller: the reply, the client
// timeout (none: kNoTimeout), or the connection failing (reset by a crashed
// server, broken by the retransmission limit). A reply that arrives after the
// caller gave up is ignored, but the server did the work: that is exactly
// the "unknown outcome" a lock client must live with.
//
// call_deferred is the same exchange for a request the server answers later
// (a blocking command, Redis's WAIT): its handler gets a way to reply instead
// of returning the reply.
#pragma once

#include <algorithm>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "env/assert.h"
#include "sim/connection.h"
#include "sim/local_shared.h"
#include "sim/network.h"
#include "sim/node.h"
#include "sim/world.h"

namespace locksim::sim {

// Opens a TCP connection from `client` to `server` as connect(2) does: SYNs
// leave at 0, 1, 3, 7, ... s (tcp_syn_retries' doubling) until `timeout`
// (kNoTimeout: TcpParams::connect_timeout_default), so a link that heals in
// between lets the next one through; a crashed server refuses at once.
// Returns the open connection, or nullptr with `error` saying why.
// Must be called from a fiber on `client`.
inline std::unique_ptr<Connection> dial(World& world, Network& net, Node& client, Node& server,
                                        Duration timeout, std::string& error) {
  LOCKSIM_ASSERT(timeout > Duration::zero());
  const Duration limit = timeout == kNoTimeout ? net.tcp().connect_timeout_default : timeout;
  Duration waited = Duration::zero();
  Duration gap = Duration::seconds(1);
  while (!net.connected(client, server)) {
    const Duration step = std::min(gap, limit - waited);
    if (step <= Duration::zero()) {
      error = "connect: timeout after " + std::to_string(limit.to_ms()) + " ms";
      return nullptr;
    }
    world.sleep(step);
    waited += step;
    gap = gap * 2;
  }
  world.sleep(net.round_trip_base(client, server));  // SYN, SYN-ACK
  if (server.crashed()) {
    error = "connect: connection refused";
    return nullptr;
  }
  auto conn = std::make_unique<Connection>(net, client, server);
  LOCKSIM_ASSERT(conn->open());
  return conn;
}

enum class CallOutcome { kReply, kTimeout, kReset, kBroken };

template <class Response>
struct CallResult {
  CallOutcome outcome = CallOutcome::kTimeout;
  std::optional<Response> reply;  // set exactly when outcome is kReply
};

// A reset or break of the connection under an RPC still waiting (call's and
// call_deferred's failure handler): its outcome is set once and its caller
// woken; a caller already woken (reply or timeout) keeps its outcome.
inline void fail_waiting_call(World& world, Waiter& waiter, CallOutcome& outcome,
                              ConnectionState why) {
  if (waiter.signaled) return;
  outcome = why == ConnectionState::kBroken ? CallOutcome::kBroken : CallOutcome::kReset;
  world.signal(waiter);
}

// Precondition (asserted): `conn` is open; timeout positive or kNoTimeout.
// Must be called from a fiber on conn.client().
// `handler` is any callable returning Response (a lambda stays a lambda: no
// std::function, so no allocation for it).
template <class Response, class Handler>
CallResult<Response> call(World& world, Connection& conn, Handler handler, Duration timeout) {
  LOCKSIM_ASSERT_MSG(timeout > Duration::zero(), "an RPC needs a positive timeout (or none)");
  LOCKSIM_ASSERT_MSG(conn.open(), "an RPC on a connection that is not open");
  // Shared with the events in flight, which may outlive this call. The
  // handler and the reply wait in it, so each event captures only a few
  // words (sim/callback.h keeps those inline: no allocation per message).
  struct State {
    State(Handler h, World& w) : handler(std::move(h)), world(&w) {}
    Handler handler;
    World* world;  // for the failure handler, which gets only the state
    Waiter waiter;
    CallOutcome outcome = CallOutcome::kTimeout;
    // The reply, from the server's handling on. The caller takes it only when
    // it arrived first (outcome kReply), moving it once: a Redis reply moved
    // twice on its way cost ~40 instructions more an RPC.
    std::optional<Response> reply;
  };
  // Counted without locked instructions (sim/local_shared.h).
  auto state = LocalShared<State>::make(std::move(handler), world);
  const TimePoint deadline =
      timeout == kNoTimeout ? TimePoint{} + kNoTimeout : world.now() + timeout;
  Node& server = conn.server();
  // The server side names the connection by id, never by the handle: the
  // client may have given up and destroyed it before the request arrives.
  Network& net = conn.network();
  const uint64_t id = conn.id();
  // A raw pointer: the handler is cleared below before this call returns, so
  // it never runs once `state` may be gone.
  const auto failed = [](void* context, ConnectionState why) {
    auto* s = static_cast<State*>(context);
    fail_waiting_call(*s->world, s->waiter, s->outcome, why);
  };
  conn.on_failure(FailureHandler{failed, state.get()});
  conn.to_server([&world, &server, &net, id, state, deadline] {
    // Node::deliver runs a message only on a running node.
    LOCKSIM_ASSERT_MSG(server.running(), "a request handled by a node that is not running");
    // One request, one handling (the network never duplicates): one reply.
    LOCKSIM_ASSERT_MSG(!state->reply.has_value(), "a request handled twice");
    state->reply.emplace(state->handler());
    // A closed, reset or broken connection drops the reply in the network.
    net.send_on(id, false, [&world, state, deadline] {
      if (state->waiter.signaled) return;  // timed out already
      // Pair of the timeout event: had the deadline passed, it would have
      // signalled first.
      LOCKSIM_ASSERT_MSG(world.now() <= deadline, "a reply accepted after the timeout");
      LOCKSIM_ASSERT(state->reply.has_value());
      state->outcome = CallOutcome::kReply;
      world.signal(state->waiter);
    });
  });
  if (timeout != kNoTimeout) {
    world.after_fixed(timeout, [&world, state, deadline] {
      LOCKSIM_ASSERT(world.now() == deadline);
      if (!state->waiter.signaled) world.signal(state->waiter);
    });
  }
  try {
    world.block(state->waiter);
  } catch (...) {
    conn.on_failure({});
    throw;
  }
  conn.on_failure({});
  CallResult<Response> r;
  r.outcome = state->outcome;
  // A reply that came after the timeout or a failure stays in the state.
  if (r.outcome == CallOutcome::kReply) r.reply = std::move(state->reply);
  LOCKSIM_ASSERT((r.outcome == CallOutcome::kReply) == r.reply.has_value());
  return r;
}

// The server's side of a deferred call: hands over the reply, once.
template <class Response>
using Respond = std::function<void(Response)>;

// As call(), for a request the server may answer later: a blocking command
// (Redis's WAIT). `handler(respond)` runs at the server node when the request
// arrives, and someone must call `respond(reply)` at most once, on the
// server node's main context (the handler itself, or a later event there).
// The reply then travels back on the connection as call()'s does; if the
// connection is no longer open by then, it is dropped, and a respond that
// never comes leaves the caller to its timeout or the connection's failure.
// Same preconditions as call().
template <class Response, class Handler>
CallResult<Response> call_deferred(World& world, Connection& conn, Handler handler,
                                   Duration timeout) {
  LOCKSIM_ASSERT_MSG(timeout > Duration::zero(), "an RPC needs a positive timeout (or none)");
  LOCKSIM_ASSERT_MSG(conn.open(), "an RPC on a connection that is not open");
  struct State {
    explicit State(World& w) : world(&w) {}
    World* world;  // for the failure handler, which gets only the state
    Waiter waiter;
    CallResult<Response> result;
    bool responded = false;
  };
  auto state = LocalShared<State>::make(world);
  const TimePoint deadline =
      timeout == kNoTimeout ? TimePoint{} + kNoTimeout : world.now() + timeout;
  Network& net = conn.network();
  const uint64_t id = conn.id();
  // A raw pointer: the handler is cleared before this call returns.
  const auto failed = [](void* context, ConnectionState why) {
    auto* s = static_cast<State*>(context);
    fail_waiting_call(*s->world, s->waiter, s->result.outcome, why);
  };
  conn.on_failure(FailureHandler{failed, state.get()});
  Respond<Response> respond = [&world, &net, id, state, deadline](Response reply) {
    LOCKSIM_ASSERT_MSG(!state->responded, "a deferred request answered twice");
    state->responded = true;
    auto staged = std::make_shared<Response>(std::move(reply));
    net.send_on(id, false, [&world, state, staged, deadline] {
      if (state->waiter.signaled) return;  // timed out or failed already
      LOCKSIM_ASSERT_MSG(world.now() <= deadline, "a reply accepted after the timeout");
      state->result.outcome = CallOutcome::kReply;
      state->result.reply = std::move(*staged);
      world.signal(state->waiter);
    });
  };
  conn.to_server([handler = std::move(handler), respond = std::move(respond)]() mutable {
    handler(std::move(respond));
  });
  if (timeout != kNoTimeout) {
    world.after_fixed(timeout, [&world, state, deadline] {
      LOCKSIM_ASSERT(world.now() == deadline);
      if (!state->waiter.signaled) world.signal(state->waiter);
    });
  }
  try {
    world.block(state->waiter);
  } catch (...) {
    conn.on_failure({});
    throw;
  }
  conn.on_failure({});
  LOCKSIM_ASSERT((state->result.outcome == CallOutcome::kReply) == state->result.reply.has_value());
  return std::move(state->result);
}

}  // namespace locksim::sim
