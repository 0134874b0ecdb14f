// One client's pub/sub connection to one Redis server: what a lock waiter
// needs to be told that the lock it waits for was released.
//
// Why a connection of its own: a connection in subscribe mode takes no other
// command (Redis refuses them), so a client library keeps one beside its
// command connections, per server (Redisson's pub/sub connection; redis-py's
// PubSub). The simulated subscriber (sim/redis/subscriber_connection.h) and
// the hiredis one (live/hiredis_subscriber.h) both sit behind it.
//
// What a broken link costs, as with a real Redis: the server keeps no message
// for a subscriber. A connection that breaks (the server crashed, the
// retransmission limit, or the client closed it because its keepalive PING
// got no answer) loses its subscriptions on the server and every message that
// had not arrived yet; whatever is published until the subscriber is back is
// never received. The subscriber reconnects and subscribes again to every
// channel it holds: at once within a wait_message (and again until the wait
// ends), or at the next subscribe(). A reconnect wakes nobody: a waiter learns
// nothing of what it missed and waits out its timeout.
//
// Not thread-safe: one subscriber belongs to one client (a fiber in the
// simulation, a thread live).
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "env/time.h"

namespace locksim {

class RedisSubscriber {
 public:
  virtual ~RedisSubscriber() = default;

  // Subscribes to `channel` (SUBSCRIBE), connecting first if needed; does
  // nothing when already subscribed on the open connection. True once the
  // server confirmed it (from then on, its messages are received); false when
  // the link failed: not subscribed now, and the next call tries again.
  // Blocks the caller for up to the client's command timeout (per connect
  // attempt and per confirmation). May throw sim::Cancelled in the simulation.
  virtual bool subscribe(const std::string& channel) = 0;

  // Unsubscribes from `channel` (UNSUBSCRIBE, not waiting for the answer)
  // and forgets its messages not taken yet. Nothing is sent when it was not
  // subscribed or the connection is down.
  virtual void unsubscribe(const std::string& channel) = 0;

  // The oldest message received on `channel` and not taken yet, waiting up to
  // `timeout` (>= 0) of true time for one to arrive; nullopt when none came.
  // Messages received while nobody waited are kept (at most kKeptMax per
  // channel, the oldest dropped first), as Redisson's latch keeps a permit
  // for each unlock message, so a release between two waits is not missed.
  // Precondition: `channel` was subscribed by subscribe() (a failed
  // subscribe counts: the wait resubscribes).
  virtual std::optional<std::string> wait_message(const std::string& channel, Duration timeout) = 0;

  // Human-readable name of the server ("redis-1"), for messages.
  virtual std::string server_name() const = 0;

  // Messages kept per channel while nobody takes them: a bound on a
  // subscriber nobody reads (a lock waiter takes one per attempt).
  static constexpr size_t kKeptMax = 1024;
};

}  // namespace locksim
