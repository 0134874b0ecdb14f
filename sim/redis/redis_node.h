// A simulated redis-server process on a simulated node: the pure command
// executor (Server) joined to the world.
//
//   - Each request is executed on arrival with the node's own clock, frozen
//     for the command: server drift and jumps move expiry.
//   - Active expiry runs every 100 ms of true time on a running master.
//   - Replication is asynchronous (sim/replication.h): after a write, the
//     master ships its keyspace to each replica replication_lag later (if it
//     is still alive then), stamped with a sequence number; a replica applies
//     only newer ones; a shipment lost to a partition is made good by a full
//     resync once the link is back. Expiry values are absolute times on the master's clock (Redis
//     replicates SET PX as PXAT), so a promoted replica with a different
//     clock expires them at a different true time. Shipping whole keyspaces
//     is exact for the few lock keys a run holds and keeps each replica a
//     consistent prefix of its master's history, as Redis's stream does.
//   - A replica does not expire keys on its own clock: reads hide logically
//     expired keys but leave them for the master's next shipment to remove;
//     writes get READONLY.
//   - Persistence decides what a crash-restart keeps: nothing, the last
//     second (AOF everysec), everything acknowledged (AOF always), or the
//     last snapshot (RDB). Keys whose absolute expiry passed while the node
//     was down are gone after the restart, as in Redis.
//   - PUBLISH on a master is propagated to its replicas along the
//     replication stream (the same lag, the same peer link, after the
//     keyspace shipment of the same command), where it is published again to
//     the replica's own subscribers, as Redis propagates it.
//   - WAIT blocks here, not in the pure Server, because it needs replicas,
//     time and a reply that comes later (redis_node_wait.cpp). Each client
//     connection's write offset is the sequence number of the shipment its
//     last write caused (Redis's c->woff; shipments are Redis's replication
//     offset here). A replica acknowledges the shipment it has applied when
//     asked: a blocked WAIT sends GETACK along the replication stream, as
//     Redis does, and asks again every kAckPeriod while anyone waits (Redis
//     replicas ack every second on their own; here only while someone waits,
//     so that a run without WAIT sends not one message more). WAIT counts the
//     current replicas whose last acknowledgement reached the client's
//     offset, answers at once when enough did, and otherwise when enough do
//     or at its timeout; timeout 0 waits at most kWaitForeverMax.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "env/redis_connection.h"
#include "sim/callback.h"
#include "sim/connection.h"
#include "sim/network.h"
#include "sim/node.h"
#include "sim/redis/server.h"
#include "sim/redis/topology.h"
#include "sim/replication.h"
#include "sim/world.h"

namespace locksim::sim::redis {

// A Redis node is the primary ("master") or a replica of its group; the
// role changes and the keyspace shipments are sim/replication.h's.
class RedisNode : public ReplicatedNode<RedisNode, std::map<std::string, Server::Entry>> {
 public:
  RedisNode(World& world, Network& net, std::string name, uint64_t seed, const Topology& topology,
            Duration clock_offset = Duration::zero());

  Server& server() { return *server_; }
  uint64_t commands_executed() const { return commands_; }

  // Executes one client command now, at the node, for the client on
  // connection `client` (sim::Connection::id(); 0: a caller without one, as
  // the tests' direct calls). Runs on the main context. WAIT here never
  // blocks: it answers at once with the replicas that have acknowledged, as
  // Redis answers a client that may not block.
  Reply execute(const std::vector<std::string>& argv, uint64_t client = 0);

  // As execute(), for a command that may block (WAIT): the reply goes to
  // `respond` now or later, on this node's main context, at most once (never
  // if the node crashes first: the connection's reset tells the client).
  using Respond = std::function<void(Reply)>;
  void execute_blocking(const std::vector<std::string>& argv, uint64_t client, Respond respond);

  // Whether `name` (any case) is WAIT, the one command that may block.
  static bool is_blocking_command(const std::string& name);

  // Every message published on this node's server (by a client, a script,
  // or replayed from its master), with its receivers, before it is sent to
  // their connections: tests observe it. Set by the owner.
  std::function<void(const Server::Publication&)> on_publication;

  // --- Subscribed connections (redis_node_pubsub.cpp) ---
  // Where a subscribed connection's messages go: called at the client node
  // when one arrives, after travelling on that connection like a reply (late
  // behind a cut link, dropped once the connection is no longer open).
  using Inbox = std::function<void(const std::string& channel, const std::string& message)>;
  // SUBSCRIBE and UNSUBSCRIBE of one channel for connection `client`
  // (sim::Connection::id()), answered as Redis answers: ["subscribe" or
  // "unsubscribe", channel, how many channels the connection has now]. A
  // connection's subscriptions last while it is open: one closed, reset or
  // broken is forgotten before the next command or message is handled here
  // (Redis frees a client when its socket closes; here the server learns of
  // it at once, which only PUBLISH's count could tell), and a crash forgets
  // them all. Runs on the main context, as execute().
  Reply subscribe(uint64_t client, const std::string& channel, Inbox inbox);
  Reply unsubscribe(uint64_t client, const std::string& channel);

  // Master: the last acknowledged shipment of each replica that has acked
  // (by name), and the WAITs blocked now. For tests and reports.
  const std::map<std::string, uint64_t>& replica_acks() const { return replica_acks_; }
  size_t blocked_waits() const { return waiters_.size(); }

  // Redis's hz 10: the active expiry cycle runs every 100 ms.
  static constexpr Duration kActiveExpiryPeriod = Duration::millis(100);
  // appendfsync everysec: the background fsync runs once a second.
  static constexpr Duration kFsyncPeriod = Duration::seconds(1);
  // How often a master asks its replicas for acknowledgements while a WAIT
  // blocks: Redis replicas send REPLCONF ACK once a second.
  static constexpr Duration kAckPeriod = Duration::seconds(1);
  // WAIT with timeout 0 waits "forever"; here at most this long, so that
  // every blocked WAIT ends and its record goes (a run is far shorter).
  static constexpr Duration kWaitForeverMax = Duration::seconds(24 * 3600);
  // Blocked WAITs a master keeps, at most; past it a WAIT answers at once as
  // if it could not block (a client that blocks this many times over while
  // its earlier WAITs still wait is broken). Closed connections' WAITs are
  // dropped first, as Redis frees a disconnected client.
  static constexpr size_t kBlockedWaitsMax = 1024;
  // Client write offsets a master keeps before it forgets closed connections'.
  static constexpr size_t kClientOffsetsMax = 1024;

 private:
  using Keys = std::map<std::string, Server::Entry>;
  friend class ReplicatedNode<RedisNode, Keys>;

  void after_write();
  // disk_ := the keyspace (an fsync, a snapshot), unless it is unchanged
  // since disk_ last took it.
  void save_to_disk();
  void replicate_if_changed(bool force);
  void on_crash();
  void on_restart();
  void schedule_active_expiry();
  void schedule_periodic_save(Duration period);

  // --- pub/sub propagation ---
  // Master: sends each publication the last command made to every replica
  // along the replication stream; forgets them in any role.
  void propagate_publications();
  // Replica: publishes a master's message again here.
  void replay_publication(const RedisNode* from, const Server::Publication& publication);
  // Forgets the subscriptions of connections no longer open.
  void forget_closed_subscribers();
  // Sends one message to each of its receivers' connections.
  void deliver(const Server::Publication& publication);
  // Runs `message` at `replica` the way a shipment scheduled now reaches
  // it: it leaves this master's process replication_lag later (unless this
  // node crashed or was demoted in between) on the two nodes' peer link, so
  // it arrives after every shipment scheduled before it.
  void send_along_stream(RedisNode& replica, Callback message);

  // --- WAIT (redis_node_wait.cpp) ---
  struct Waiter {
    uint64_t client = 0;
    uint64_t offset = 0;  // the client's write offset when it blocked
    int64_t numreplicas = 0;
    Respond respond;
  };
  // WAIT's answer now (an error, or enough replicas acknowledged), or
  // nullopt when it would block.
  std::optional<Reply> wait_now(const std::vector<std::string>& argv, uint64_t client);
  void block_wait(const std::vector<std::string>& argv, uint64_t client, Respond respond);
  // The client's write offset; 0 for a client that has not written.
  uint64_t offset_of(uint64_t client) const;
  // Replicas (current ones) whose last acknowledgement reached `offset`.
  int64_t count_acks(uint64_t offset) const;
  void note_client_write(uint64_t client);
  void request_acks();
  void on_getack(const RedisNode* from, uint64_t from_incarnation);
  void on_ack(const RedisNode* replica, uint64_t applied, uint64_t incarnation);
  // Answers every blocked WAIT that now has enough acknowledgements.
  void unblock_acknowledged();
  void finish_wait(uint64_t id);
  // Drops blocked WAITs and offsets of connections that are no longer open.
  void forget_closed_clients();
  // The replica `name` is gone from this master (its process died, or it
  // follows another): its acknowledgement no longer counts.
  void forget_replica_ack(const std::string& name);
  // This node stops being a master: blocked WAITs get Redis's UNBLOCKED
  // error, and every client offset and replica acknowledgement is forgotten.
  void drop_master_state(bool unblock_waiters);

  // ReplicatedNode's hooks.
  uint64_t incarnation() const { return incarnation_; }
  const Keys& shipment() const { return server_->keys(); }
  void install_shipment(const Keys& snapshot, uint64_t seq);
  // A new master's replicas join with a full copy: only later changes ship.
  void on_promoted();
  void on_following(bool was_primary);

  World& world_;
  Network& net_;
  Topology topology_;
  std::unique_ptr<Server> server_;
  Keys last_shipped_;         // master: the keyspace as last shipped
  uint64_t incarnation_ = 0;  // bumped by each crash
  Keys disk_;                 // what persistence would reload
  // The server's keys_version() when last_shipped_ and disk_ last equalled
  // its keys (none: not yet). It counts every change, so while it stands
  // still they still do, and neither needs a copy or a comparison of every
  // key after each command.
  std::optional<uint64_t> shipped_version_;
  std::optional<uint64_t> disk_version_;
  uint64_t commands_ = 0;
  // What the command running now published (the server's sink fills it).
  std::vector<Server::Publication> publications_;
  // Subscribed connections by id (the server's SubscriberId), ordered: a
  // message reaches them in the same order in every run.
  std::map<uint64_t, Inbox> inboxes_;

  // WAIT's state, all on the master (redis_node_wait.cpp). Ordered maps:
  // blocked WAITs are answered in the order they blocked.
  std::map<uint64_t, uint64_t> client_offsets_;   // connection -> write offset
  std::map<std::string, uint64_t> replica_acks_;  // replica name -> applied shipment
  std::map<uint64_t, Waiter> waiters_;            // by blocking order
  uint64_t waiters_blocked_ = 0;                  // numbers the waiters
  std::optional<TimePoint> acks_requested_at_;    // one GETACK round per instant
  bool ack_timer_armed_ = false;
  uint64_t ack_timer_epoch_ = 0;  // bumped to disarm a pending ack timer
};

// A master with its replicas and, when failover is on, the Sentinel-like
// monitor (the "sentinel" node) that promotes a replica and demotes a
// returning old master: sim/replication.h's FailoverGroup.
class ReplicaGroup : public FailoverGroup<RedisNode> {
 public:
  // members[0] is the initial master. `sentinel` observes reachability.
  ReplicaGroup(World& world, Network& net, std::string name, std::vector<RedisNode*> members,
               Node* sentinel, const Topology& topology);
};

// One client's connection to a group (a master and its replicas): each
// command goes to whichever node the client currently believes is master,
// over one TCP connection (sim/connection.h), as redis-py, Jedis or hiredis
// keep one socket per server:
//   - opened on first use, and again after a failure: a connect to a cut-off
//     node retries its SYN (1 s, 2 s, 4 s, ...) until the connect timeout
//     (the client timeout, or TcpParams::connect_timeout_default with none);
//     a crashed node refuses at once;
//   - a command waits for its reply up to `timeout` (kNoTimeout: as long as
//     the connection lives), then the client closes the connection, as
//     redis-py does after a socket timeout; what it sent still reaches the
//     server and runs there;
//   - a reset (the server crashed) or a broken connection (retransmission
//     limit) fails the command at once, and the next one reconnects.
// All three failures are io_error replies: the outcome is unknown.
class GroupConnection : public RedisConnection {
 public:
  // `timeout` is positive or kNoTimeout.
  GroupConnection(World& world, Network& net, Node& client, ReplicaGroup& group, Duration timeout);

  Reply command(std::vector<std::string> argv) override;
  std::string server_name() const override { return group_.name(); }
  int replicas() const override { return group_.replicas_available(); }

 private:
  // How long a blocking command (WAIT) waits for its reply.
  Duration blocking_timeout(const std::vector<std::string>& argv) const;
  // Opens a connection to `target`; an io_error reply if that failed.
  std::optional<Reply> connect(RedisNode& target);
  void drop_connection();

  World& world_;
  Network& net_;
  Node& client_;
  ReplicaGroup& group_;
  Duration timeout_;
  std::unique_ptr<Connection> conn_;
  RedisNode* conn_target_ = nullptr;  // the node conn_ goes to
};

}  // namespace locksim::sim::redis
