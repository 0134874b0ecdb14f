// The simulated MySQL deployment behind the backend seam: the primary
// "mysql-1" holding t_tag_lock, its `replicas` replicas "mysql-1-r1", ...,
// and, with failover, the monitor node "mysql-monitor". Each client gets one
// SqlConnection to the group (to whichever node it was told is primary).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "sim/backend.h"
#include "sim/mysql/mysql_connection.h"
#include "sim/mysql/mysql_group.h"
#include "sim/mysql/mysql_node.h"
#include "sim/network.h"
#include "sim/world.h"

namespace locksim::sim::mysql {

class MysqlDeployment : public Deployment {
 public:
  // Preconditions (validated by the harness, asserted): 0 <= replicas <=
  // kReplicasMax; failover and semi_sync need a replica.
  MysqlDeployment(World& world, Network& net, const MysqlParams& params);

  void name_nodes(std::map<std::string, Node*>& nodes) override;
  ClientConnections connect(Node& client) override;
  // commands: statements executed; deadlocks: InnoDB deadlocks detected;
  // failovers: replicas promoted.
  BackendCounters counters() const override;
  // The published primary's committed row (sim/mysql/lock_exposure.h); a
  // crashed or frozen primary grants nothing.
  std::optional<LockExposure> lock_free_for_fresh_contender(const LockProbe& probe) override;
  std::optional<uint64_t> lock_state_stamp() const override;
  bool lock_state_stamp_is_world_count() const override { return true; }
  // Every server's committed row, primary first.
  std::vector<ServerLockState> lock_states(const LockProbe& probe) override;
  void fill_lock_states(const LockProbe& probe, std::vector<ServerLockState>& out) override;
  // Semi-synchronous fallbacks to asynchronous replication, when any.
  std::vector<BackendNote> notes() const override;
  // The crashed process's kernel resets its connection: the server rolls the
  // session back (a statement waiting for a row lock included), and the
  // restarted process opens a new session instead of reusing a blocked one.
  void client_crashed(Node& client) override;
  // Primary: whichever member the group has made primary; observer: the
  // failover monitor.
  Roles roles() const override;

  MysqlNode& primary() { return *servers_.front(); }
  // The server named `name` ("mysql-1", "mysql-1-r1", ...), or nullptr.
  MysqlNode* server(const std::string& name);
  MysqlGroup& group() { return *group_; }

 private:
  World& world_;
  Network& net_;
  MysqlParams params_;
  // Teardown runs in reverse: the group refers to the servers and the monitor.
  std::unique_ptr<Node> monitor_;
  std::vector<std::unique_ptr<MysqlNode>> servers_;
  std::unique_ptr<MysqlGroup> group_;
  // Each client's connection, by client node name; owned by the client's Env,
  // which outlives the run's events.
  std::map<std::string, MysqlConnection*> connections_;
};

}  // namespace locksim::sim::mysql
