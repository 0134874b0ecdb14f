// Request/response over the simulated network, with a timeout.
//
// The handler runs at the server node when the request arrives, on the main
// context and without yielding: a server command is atomic, and the server's
// clock is read once per request. The reply travels back over the network;
// whichever comes first, reply or timeout, wakes the caller. A reply that
// arrives after the timeout is ignored, but the server did the work: that is
// exactly the "unknown outcome" a lock client must live with.
#pragma once

#include <functional>
#include <memory>
#include <optional>

#include "env/assert.h"
#include "sim/network.h"
#include "sim/node.h"
#include "sim/world.h"

namespace locksim::sim {

template <class Response>
std::optional<Response> call(World& world, Network& net, Node& client, Node& server,
                             std::function<Response()> handler, Duration timeout) {
  LOCKSIM_ASSERT_MSG(timeout > Duration::zero(), "an RPC needs a positive timeout");
  struct State {
    Waiter waiter;
    std::optional<Response> response;
  };
  auto state = std::make_shared<State>();
  const TimePoint deadline = world.now() + timeout;
  net.send(
      client, server,
      [&world, &net, &client, &server, state, deadline, handler = std::move(handler)] {
        // Node::deliver runs a message only on a running node.
        LOCKSIM_ASSERT_MSG(server.running(), "a request handled by a node that is not running");
        Response r = handler();
        net.send(server, client, [&world, &client, state, deadline, r = std::move(r)]() mutable {
          LOCKSIM_ASSERT_MSG(client.running(), "a reply handled by a node that is not running");
          if (state->waiter.signaled) return;  // timed out already
          // Pair of the timeout event: had the deadline passed, it would have
          // signalled first.
          LOCKSIM_ASSERT_MSG(world.now() <= deadline, "a reply accepted after the timeout");
          state->response = std::move(r);
          world.signal(state->waiter);
        });
      });
  world.after(timeout, [&world, state, deadline] {
    LOCKSIM_ASSERT(world.now() == deadline);
    world.signal(state->waiter);
  });
  world.block(state->waiter);
  return std::move(state->response);
}

}  // namespace locksim::sim
