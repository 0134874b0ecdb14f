// One algorithm's entry in the registry: its name, what it does, its
// parameters and how to build it from text (CLI flags or a scenario file).
//
// Each algorithm declares its own entry beside its Params (e.g.
// set_nx_lua_spec() in set_nx_lua.h), so the parameter names, defaults and
// help texts live next to the code that reads them; algorithms/registry.h
// lists the entries.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "algorithms/lock_algorithm.h"

namespace locksim::algorithms {

using ParamValues = std::map<std::string, std::string>;  // name -> text, e.g. "ttl" -> "10s"

struct AlgorithmSpec {
  std::string name;
  std::string summary;
  std::vector<ParamInfo> params;
  // Independent Redis masters a run gives it unless told otherwise (Redlock: 5).
  int default_masters = 1;
  // The store it runs against: a name in harness/backends.h's list.
  std::string backend = "redis";
  // Settings (scenario-file path -> text, e.g. "resource.workload" ->
  // "counter") that every run of a sweep gives this algorithm: what it
  // cannot be judged without. A fencing token means nothing without a
  // resource that checks it, so the fenced lock's sweep runs guard one.
  ParamValues sweep_settings;
  // Builds the algorithm from `values` (missing names take the defaults).
  // Throws ConfigError naming `field_prefix + name` for a bad or unknown value.
  std::function<std::unique_ptr<LockAlgorithm>(const ParamValues& values,
                                               const std::string& field_prefix)>
      make;
  // The parameter holding a lease the client's process keeps renewing
  // (Redisson's watchdog-timeout): what a fault must outlast to break the
  // lock, as a session timeout is. Empty: the lease is the `ttl` parameter,
  // or the backend's (harness/backends.h).
  std::string renewed_lease_param;
  // The parameter holding how often that lease is renewed (a script file's
  // renew-period). Empty: a third of the lease, as Redisson's watchdog.
  std::string renew_period_param;
  // True when a grant stands only once a replica acknowledged it (Redisson's
  // WAIT after its write): a grant the replicas lack is never believed held,
  // so a failover cannot take it from a holder (harness/margin: failover-lag).
  bool waits_for_replicas = false;
};

}  // namespace locksim::algorithms
