// One live run, end to end: start real servers on loopback (redis-server
// processes, a ZooKeeper ensemble for the zk-* algorithms, or a mariadbd
// for the mysql-* ones),
// run the workload against them with real threads and time, stop the
// servers (also on error), and check the history like a simulated one.
#pragma once

#include "harness/prepared_run.h"
#include "harness/run_config.h"
#include "harness/run_result.h"

namespace locksim::live {

// Uses config.algorithm/params, workload, duration (real time!), seed and
// redis.masters (one redis-server each; replicas, failover and faults are
// simulation-only and rejected here), or for a ZooKeeper algorithm
// zookeeper.servers (1 or 3), .tick and .session_timeout, or for a MySQL
// algorithm mysql.lock_wait_timeout (whole seconds) and mysql.timeout (one
// mariadbd; its service time is the real server's). Throws ConfigError for a bad config,
// std::runtime_error when a server cannot be started.
harness::RunResult run_live_and_check(const harness::PreparedRun& run);

}  // namespace locksim::live
