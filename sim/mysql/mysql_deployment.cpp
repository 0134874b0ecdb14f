#include "sim/mysql/mysql_deployment.h"

#include "env/assert.h"
#include "sim/clock.h"
#include "sim/mysql/lock_exposure.h"

namespace locksim::sim::mysql {

MysqlDeployment::MysqlDeployment(World& world, Network& net, const MysqlParams& params)
    : world_(world),
      net_(net),
      params_(params),
      primary_(std::make_unique<MysqlNode>(world, net, "mysql-1", params)) {}

void MysqlDeployment::name_nodes(std::map<std::string, Node*>& nodes) {
  nodes[primary_->name()] = &primary_->node();
}

ClientConnections MysqlDeployment::connect(Node& client) {
  ClientConnections out;
  out.sql =
      std::make_unique<MysqlConnection>(world_, net_, client, *primary_, params_.client_timeout);
  LOCKSIM_ASSERT(out.sql != nullptr);
  return out;
}

BackendCounters MysqlDeployment::counters() const {
  BackendCounters c;
  c.commands = primary_->engine().statements();
  c.deadlocks = primary_->engine().deadlocks();
  return c;
}

std::optional<bool> MysqlDeployment::lock_free_for_fresh_contender(const LockProbe& probe) {
  if (!primary_->node().running()) return false;
  return row_free_for_fresh_contender(primary_->engine(), probe.key,
                                      kLocalEpoch + (world_.now() - TimePoint{}));
}

}  // namespace locksim::sim::mysql
