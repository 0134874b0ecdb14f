// One client's pub/sub connection to a Redis group, in the simulation: the
// RedisSubscriber of env/redis_subscriber.h (its contract holds here) over
// one simulated TCP connection to the node the client believes is master.
//
//   - SUBSCRIBE waits for the server's confirmation up to the client timeout;
//     UNSUBSCRIBE is sent without waiting (Redisson does not wait either).
//   - Each message the server publishes to the connection travels on it like
//     a reply: late behind a cut link, lost when the connection breaks or is
//     closed before it arrives (sim/redis/redis_node.h, subscribe()).
//   - A keepalive, Redisson's PingConnectionHandler: from the connect on,
//     every kPingInterval the client checks that the PING it sent one
//     interval before was answered (else it closes the connection) and sends
//     the next. TCP alone never loses a byte on a live connection (a cut link
//     only delays it); this is how a link cut for long enough, with a ping
//     in flight, drops the connection and the messages on it. The pings are
//     events of the world, not of the client's fibers: a hang does not stop
//     them, a pause or crash of the client node holds or ends them with its
//     other traffic.
//   - The connection goes to the group's published master; a wait or a
//     subscribe that finds it pointing elsewhere (a failover) reconnects and
//     subscribes again there.
//
// Nothing happens on the network until the first subscribe(): a client that
// never waits sends nothing, and its run is the same as without this class.
#pragma once

#include <memory>
#include <optional>
#include <set>
#include <string>

#include "env/redis_subscriber.h"
#include "sim/connection.h"
#include "sim/network.h"
#include "sim/node.h"
#include "sim/redis/redis_node.h"
#include "sim/world.h"

namespace locksim::sim::redis {

class GroupSubscriber : public RedisSubscriber {
 public:
  // `timeout` (positive or kNoTimeout) bounds each connect and each SUBSCRIBE.
  GroupSubscriber(World& world, Network& net, Node& client, ReplicaGroup& group, Duration timeout);
  ~GroupSubscriber() override;
  GroupSubscriber(const GroupSubscriber&) = delete;
  GroupSubscriber& operator=(const GroupSubscriber&) = delete;

  bool subscribe(const std::string& channel) override;
  void unsubscribe(const std::string& channel) override;
  std::optional<std::string> wait_message(const std::string& channel, Duration timeout) override;
  std::string server_name() const override { return group_.name(); }

  // Redisson's pingConnectionInterval (30 s): the keepalive's period, and
  // how long a PING may go unanswered before the connection is closed.
  static constexpr Duration kPingInterval = Duration::seconds(30);
  // A wait whose reconnect failed tries again after this long (Redisson's
  // reconnection watchdog starts at a few milliseconds and doubles; one
  // fixed step is enough for the waits locksim's clients make).
  static constexpr Duration kReconnectPause = Duration::seconds(1);

 private:
  // What the events in flight (messages, pings, the wait's timer) share with
  // this object, which may be gone when they run.
  struct Shared;

  // Opens the connection if it is down or points at a former master, and
  // subscribes again to every channel held; `limit` bounds each step. False
  // when that failed (the connection is dropped again).
  bool ensure_connected(Duration limit);
  // SUBSCRIBE one channel on the open connection, waiting up to `limit`.
  bool confirm(const std::string& channel, Duration limit);
  void drop_connection();
  // Wakes a blocked wait when the connection is reset or broken. call()
  // replaces the handler while it runs, so it is set again after each.
  void watch_failures();
  // The keepalive of connection `id`, from one interval after it opened.
  static void schedule_ping(const std::shared_ptr<Shared>& shared, uint64_t id, uint64_t ping);
  // Blocks until a message on `channel` arrives, the link fails or `deadline`.
  void block_until(const std::string& channel, TimePoint deadline);

  World& world_;
  Network& net_;
  Node& client_;
  ReplicaGroup& group_;
  Duration timeout_;
  // Declared before conn_, so it outlives the connection: conn_'s failure
  // handler holds a raw pointer to it (watch_failures).
  std::shared_ptr<Shared> shared_;
  std::unique_ptr<Connection> conn_;
  RedisNode* conn_target_ = nullptr;
  std::set<std::string> channels_;   // subscribed by the caller (ordered: resubscribed in order)
  std::set<std::string> confirmed_;  // of those, confirmed on the open connection
};

}  // namespace locksim::sim::redis
