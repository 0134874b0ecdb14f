// A MySQL primary with its replicas and, when failover is on, the monitor
// (MHA/orchestrator-like) that promotes a replica and demotes a returning old
// primary — the same shape as the Redis ReplicaGroup (sim/redis/redis_node.h).
//
// Every kCheckPeriod the monitor node "mysql-monitor" looks at the members it
// can reach. After the primary has been unreachable for down_after, the
// reachable replica that has applied the most is promoted; clients are told
// discovery_delay later (DNS, a proxy or a VIP moving). Any reachable member
// not following the current primary is made to (a returning old primary loses
// the commits the new one never saw); a replica back from a partition resyncs.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sim/mysql/mysql_node.h"
#include "sim/network.h"
#include "sim/node.h"
#include "sim/world.h"

namespace locksim::sim::mysql {

class MysqlGroup {
 public:
  // members[0] is the initial primary. `monitor` observes reachability
  // (nullptr: no failover, members are always "reachable" if running).
  MysqlGroup(World& world, Network& net, std::string name, std::vector<MysqlNode*> members,
             Node* monitor, const MysqlParams& params);

  const std::string& name() const { return name_; }
  // What clients are told the primary is (lags failovers by discovery_delay).
  MysqlNode& published_primary() { return *published_; }
  MysqlNode& current_primary() { return *current_; }
  int failovers() const { return failovers_; }

  static constexpr Duration kCheckPeriod = Duration::millis(100);

 private:
  bool reachable(MysqlNode& n) const;
  void check();
  void promote_best();
  // One primary among the members reachable with it (asserted after check()).
  void check_roles() const;

  World& world_;
  Network& net_;
  std::string name_;
  std::vector<MysqlNode*> members_;
  Node* monitor_;
  MysqlParams params_;
  MysqlNode* current_;
  MysqlNode* published_;
  std::optional<TimePoint> primary_down_since_;
  int failovers_ = 0;
};

}  // namespace locksim::sim::mysql
