// The simulated MySQL deployment behind the backend seam: one primary
// "mysql-1" holding t_tag_lock; each client gets one SqlConnection to it.
// (Replicas "mysql-1-r1", ... and failover are not modelled yet.)
#pragma once

#include <map>
#include <memory>
#include <string>

#include "sim/backend.h"
#include "sim/mysql/mysql_node.h"
#include "sim/network.h"
#include "sim/world.h"

namespace locksim::sim::mysql {

class MysqlDeployment : public Deployment {
 public:
  MysqlDeployment(World& world, Network& net, const MysqlParams& params);

  void name_nodes(std::map<std::string, Node*>& nodes) override;
  ClientConnections connect(Node& client) override;
  // commands: statements executed; deadlocks: InnoDB deadlocks detected.
  BackendCounters counters() const override;
  // The primary's committed row (sim/mysql/lock_exposure.h); a crashed or
  // frozen primary grants nothing.
  std::optional<bool> lock_free_for_fresh_contender(const LockProbe& probe) override;

  MysqlNode& primary() { return *primary_; }

 private:
  World& world_;
  Network& net_;
  MysqlParams params_;
  std::unique_ptr<MysqlNode> primary_;
};

}  // namespace locksim::sim::mysql
