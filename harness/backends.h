// The backends a run can use, each as one entry: its settings (its section of
// the scenario format, its flags), the checks across them, and how to build
// its simulated deployment. The runner, the CLI and the scenario loader reach
// backends only through this list, so none of them names one.
#pragma once

#include <algorithm>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "env/assert.h"
#include "harness/run_config.h"
#include "harness/settings.h"
#include "sim/backend.h"
#include "sim/network.h"
#include "sim/world.h"

namespace locksim::harness {

struct BackendSpec {
  std::string name;  // "redis"; what AlgorithmSpec::backend names
  // Its rows of the settings table, JSON paths under "<name>.".
  std::function<std::vector<Setting>()> settings;
  // Checks across its settings and against the algorithm (e.g. failover
  // needs a replica; Redlock's quorum <= masters). Throws ConfigError naming
  // the setting as the user wrote it (harness::field_name).
  std::function<void(const RunConfig& config)> validate;
  // Its deployment for a validated config.
  std::function<std::unique_ptr<sim::Deployment>(sim::World& world, sim::Network& net,
                                                 const RunConfig& config)>
      make;
  // For fault profiles (faults/profile.h), which know no backend by name.
  // add_failover: give the deployment what a failover needs (replicas, a
  // failover mechanism) if it lacks it, its replicas at least `lag` behind
  // (the seed's draw); empty when failover is built in (a ZooKeeper ensemble
  // elects a new leader by itself). Idempotent.
  std::function<void(RunConfig& config, Duration lag)> add_failover;
  // lease: the time a fault must outlast to break a lock on this backend when
  // the algorithm has no "ttl" parameter (a ZooKeeper session timeout);
  // empty: the algorithm's ttl decides.
  std::function<Duration(const RunConfig& config)> lease;
  // set_client_timeout: the partition profile's per-seed client timeout
  // (sim::kNoTimeout for none) on this backend's clients; empty when its
  // client has no per-request timeout (a ZooKeeper client's patience is its
  // session timeout's 2T/3).
  std::function<void(RunConfig& config, Duration timeout)> set_client_timeout;
};

// The failover profile's monitor: the primary unreachable at most this long
// before a replica is promoted, and clients told at most this much later, so
// the lock's holder is still in its critical section when clients move to
// the promoted replica.
inline constexpr Duration kFailoverProfileDownAfterMax = Duration::seconds(1);
inline constexpr Duration kFailoverProfileDiscoveryDelayMax = Duration::millis(200);

// The failover profile's deployment for a replicated topology (Redis's or
// MySQL's: the same field names): one asynchronous replica at least `lag`
// behind, and a monitor within the two bounds above (the
// set-nx-lua-failover and mysql-center-failover scenarios' shape). Values
// already set stronger stay; a weaker one the user gave never reaches here,
// validate() refuses it (validate_profile_keeps_given). For
// BackendSpec::add_failover.
template <class Topology>
void give_failover(Topology& t, Duration lag) {
  LOCKSIM_ASSERT(lag > Duration::zero());
  t.replicas = std::max(t.replicas, 1);
  t.failover = true;
  t.replication_lag = std::max(t.replication_lag, lag);
  t.down_after = std::min(t.down_after, kFailoverProfileDownAfterMax);
  t.discovery_delay = std::min(t.discovery_delay, kFailoverProfileDiscoveryDelayMax);
  LOCKSIM_ASSERT(t.replicas >= 1 && t.failover);
}

const std::vector<BackendSpec>& all_backends();

// The backend the config's algorithm runs on. Precondition: the algorithm exists.
const BackendSpec& backend_of(const RunConfig& config);

// The Redis entry's rows and checks (harness/backend_redis.cpp).
BackendSpec redis_backend();
// The ZooKeeper entry's (harness/backend_zookeeper.cpp).
BackendSpec zookeeper_backend();
// The MySQL entry (harness/backend_mysql.cpp).
BackendSpec mysql_backend();

}  // namespace locksim::harness
