// A MySQL primary with its replicas and, when failover is on, the monitor
// (MHA/orchestrator-like, the node "mysql-monitor") that promotes a replica
// and demotes a returning old primary: sim/replication.h's FailoverGroup, the
// same shape as the Redis ReplicaGroup (sim/redis/redis_node.h).
//
// Every kCheckPeriod the monitor looks at the members it can reach. After the
// primary has been unreachable for down_after, the reachable replica that has
// applied the most is promoted; clients are told discovery_delay later (DNS, a
// proxy or a VIP moving). Any reachable member not following the current
// primary is made to (a returning old primary loses the commits the new one
// never saw); a replica back from a partition resyncs.
#pragma once

#include <string>
#include <vector>

#include "sim/mysql/mysql_node.h"
#include "sim/network.h"
#include "sim/node.h"
#include "sim/replication.h"
#include "sim/world.h"

namespace locksim::sim::mysql {

class MysqlGroup : public FailoverGroup<MysqlNode> {
 public:
  // members[0] is the initial primary. `monitor` observes reachability
  // (nullptr: no failover, members are always "reachable" if running).
  MysqlGroup(World& world, Network& net, std::string name, std::vector<MysqlNode*> members,
             Node* monitor, const MysqlParams& params);
};

}  // namespace locksim::sim::mysql
