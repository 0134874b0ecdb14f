// How the simulated Redis deployment is laid out and how durable it is.
#pragma once

#include <optional>
#include <string_view>

#include "env/time.h"

namespace locksim::sim::redis {

// What survives a crash-restart of a node, as redis-server's settings decide.
enum class Persistence {
  kNone,         // no AOF, no RDB: a restart comes back empty
  kAofEverysec,  // appendonly yes, appendfsync everysec: loses up to the last second
  kAofAlways,    // appendonly yes, appendfsync always: every write is on disk before the reply
  kRdb,          // periodic snapshots only: loses everything since the last one
};

const char* to_string(Persistence p);  // "none", "aof-everysec", "aof-always", "rdb"
std::optional<Persistence> persistence_from(std::string_view name);

struct Topology {
  // Independent masters (Redlock's N); each is a group with its replicas.
  // 0: the algorithm's default (1, or 5 for Redlock).
  int masters = 0;
  int replicas = 0;  // per master
  // How far behind the master a replica runs: a write reaches the replicas
  // this long after the master applied it, and is lost if the master dies first.
  Duration replication_lag = Duration::millis(10);
  Persistence persistence = Persistence::kNone;
  Duration rdb_interval = Duration::seconds(60);
  // Sentinel-like failover: after the master has been unreachable for
  // down_after, the most up-to-date reachable replica is promoted; clients
  // learn of it discovery_delay later.
  bool failover = false;
  Duration down_after = Duration::seconds(5);
  Duration discovery_delay = Duration::seconds(1);
  // Client-side timeout of one command: the reply may still come, and the
  // command may still have run, after it.
  Duration timeout = Duration::millis(500);
};

}  // namespace locksim::sim::redis
