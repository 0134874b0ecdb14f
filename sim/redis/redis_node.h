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
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "env/redis_connection.h"
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

  // Executes one client command now, at the node. Runs on the main context.
  Reply execute(const std::vector<std::string>& argv);

  // Redis's hz 10: the active expiry cycle runs every 100 ms.
  static constexpr Duration kActiveExpiryPeriod = Duration::millis(100);
  // appendfsync everysec: the background fsync runs once a second.
  static constexpr Duration kFsyncPeriod = Duration::seconds(1);

 private:
  using Keys = std::map<std::string, Server::Entry>;
  friend class ReplicatedNode<RedisNode, Keys>;

  void after_write();
  void replicate_if_changed(bool force);
  void on_crash();
  void on_restart();
  void schedule_active_expiry();
  void schedule_periodic_save(Duration period);

  // ReplicatedNode's hooks.
  uint64_t incarnation() const { return incarnation_; }
  const Keys& shipment() const { return server_->keys(); }
  void install_shipment(const Keys& snapshot, uint64_t seq);
  // A new master's replicas join with a full copy: only later changes ship.
  void on_promoted() { last_shipped_ = server_->keys(); }
  void on_following(bool /*was_primary*/) {}

  World& world_;
  Topology topology_;
  std::unique_ptr<Server> server_;
  Keys last_shipped_;         // master: the keyspace as last shipped
  uint64_t incarnation_ = 0;  // bumped by each crash
  Keys disk_;                 // what persistence would reload
  uint64_t commands_ = 0;
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

 private:
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
