// A simulated redis-server process on a simulated node: the pure command
// executor (Server) joined to the world.
//
//   - Each request is executed on arrival with the node's own clock, frozen
//     for the command: server drift and jumps move expiry.
//   - Active expiry runs every 100 ms of true time on a running master.
//   - Replication is asynchronous: after a write, the master ships its
//     keyspace to each replica replication_lag later (if it is still alive
//     then), stamped with a sequence number; a replica applies only newer
//     ones; a shipment lost to a partition is made good by a full resync
//     once the link is back. Expiry values are absolute times on the master's clock (Redis
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
#include "sim/world.h"

namespace locksim::sim::redis {

class RedisNode {
 public:
  enum class Role { kMaster, kReplica };

  RedisNode(World& world, Network& net, std::string name, uint64_t seed, const Topology& topology,
            Duration clock_offset = Duration::zero());

  Node& node() { return node_; }
  const std::string& name() const { return node_.name(); }
  Server& server() { return *server_; }
  Role role() const { return role_; }
  RedisNode* master() const { return master_; }
  uint64_t applied_seq() const { return applied_seq_; }
  uint64_t commands_executed() const { return commands_; }

  // Executes one client command now, at the node. Runs on the main context.
  Reply execute(const std::vector<std::string>& argv);

  // Role changes, made by the group's failover logic. become_replica_of
  // discards whatever this node has that `master` does not ("last failover
  // wins") by taking a full copy from it. Preconditions (asserted): only a
  // replica is promoted; a node follows a master other than itself.
  void become_master();
  void become_replica_of(RedisNode& master);

  // Master side of a reconnecting replica: if the last shipment to `replica`
  // should have arrived by now (lag + kResyncGrace) but the replica has not
  // applied it — a partition ate it — ship the whole keyspace again, as
  // Redis's resync after a reconnect does. Otherwise nothing.
  void resync_if_behind(RedisNode& replica);
  static constexpr Duration kResyncGrace = Duration::millis(200);

  // Redis's hz 10: the active expiry cycle runs every 100 ms.
  static constexpr Duration kActiveExpiryPeriod = Duration::millis(100);
  // appendfsync everysec: the background fsync runs once a second.
  static constexpr Duration kFsyncPeriod = Duration::seconds(1);

 private:
  using Keys = std::map<std::string, Server::Entry>;

  void after_write();
  void replicate_if_changed(bool force);
  void ship(RedisNode& replica, uint64_t seq, const Keys& snapshot);
  void apply_shipment(const RedisNode* from, uint64_t seq, const Keys& snapshot);
  void on_crash();
  void on_restart();
  void schedule_active_expiry();
  void schedule_periodic_save(Duration period);

  World& world_;
  Network& net_;
  Node node_;
  Topology topology_;
  std::unique_ptr<Server> server_;
  Role role_ = Role::kMaster;
  RedisNode* master_ = nullptr;       // when a replica
  std::vector<RedisNode*> replicas_;  // when a master
  uint64_t shipped_seq_ = 0;          // master: last shipment's number
  uint64_t applied_seq_ = 0;          // replica: last applied shipment
  Keys last_shipped_;
  // Master: the last shipment sent to each replica, by name (a deterministic
  // order, though it is only looked up).
  struct Sent {
    uint64_t seq = 0;
    TimePoint at;
  };
  std::map<std::string, Sent> sent_;
  uint64_t incarnation_ = 0;  // bumped by each crash
  Keys disk_;                 // what persistence would reload
  uint64_t commands_ = 0;
};

// A master with its replicas and, when failover is on, the Sentinel-like
// logic that promotes a replica and demotes a returning old master.
class ReplicaGroup {
 public:
  // members[0] is the initial master. `sentinel` observes reachability.
  ReplicaGroup(World& world, Network& net, std::string name, std::vector<RedisNode*> members,
               Node* sentinel, const Topology& topology);

  const std::string& name() const { return name_; }
  // What clients are told the master is (lags failovers by discovery_delay).
  RedisNode& published_master() { return *published_; }
  RedisNode& current_master() { return *current_; }
  int failovers() const { return failovers_; }

  // Sentinel's check period.
  static constexpr Duration kCheckPeriod = Duration::millis(100);

 private:
  bool reachable(RedisNode& n) const;
  void check();
  // Asserts the group's role invariants after check() (see there).
  void check_roles() const;

  World& world_;
  Network& net_;
  std::string name_;
  std::vector<RedisNode*> members_;
  Node* sentinel_;
  Topology topology_;
  RedisNode* current_;
  RedisNode* published_;
  std::optional<TimePoint> master_down_since_;
  int failovers_ = 0;
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

  Reply command(const std::vector<std::string>& argv) override;
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
