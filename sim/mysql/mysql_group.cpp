#include "sim/mysql/mysql_group.h"

#include <utility>

namespace locksim::sim::mysql {

MysqlGroup::MysqlGroup(World& world, Network& net, std::string name,
                       std::vector<MysqlNode*> members, Node* monitor, const MysqlParams& params)
    : FailoverGroup(world, net, std::move(name), std::move(members), monitor,
                    FailoverParams{params.failover, params.down_after, params.discovery_delay}) {}

}  // namespace locksim::sim::mysql
