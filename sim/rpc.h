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

#include "sim/network.h"
#include "sim/node.h"
#include "sim/world.h"

namespace locksim::sim {

template <class Response>
std::optional<Response> call(World& world, Network& net, Node& client, Node& server,
                             std::function<Response()> handler, Duration timeout) {
  struct State {
    Waiter waiter;
    std::optional<Response> response;
  };
  auto state = std::make_shared<State>();
  net.send(client, server, [&world, &net, &client, &server, state, handler = std::move(handler)] {
    Response r = handler();
    net.send(server, client, [&world, state, r = std::move(r)]() mutable {
      if (state->waiter.signaled) return;  // timed out already
      state->response = std::move(r);
      world.signal(state->waiter);
    });
  });
  world.after(timeout, [&world, state] { world.signal(state->waiter); });
  world.block(state->waiter);
  return std::move(state->response);
}

}  // namespace locksim::sim
