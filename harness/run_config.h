// Everything one simulated run needs, as plain data: the same config and seed
// give the same history, byte for byte.
#pragma once

#include <cstdint>
#include <set>
#include <string>

#include "algorithms/registry.h"
#include "faults/fault_schedule.h"
#include "harness/workload.h"
#include "sim/mysql/mysql_node.h"
#include "sim/network.h"
#include "sim/redis/topology.h"
#include "sim/scheduler.h"
#include "sim/zookeeper/zk_params.h"

namespace locksim::harness {

struct RunConfig {
  std::string algorithm = "set-nx-lua";
  algorithms::ParamValues algorithm_params;  // text, validated by the algorithm's spec
  // Where the settings came from, which decides how errors name a field:
  // "" for the command line (errors name the flag, "--timeout"), else the
  // scenario file ("my.json", errors name "my.json: redis.timeout").
  std::string source;
  // The settings the user gave, by JSON path ("redis.down_after", "params",
  // "faults"), whatever their value: filled by give_setting()
  // (harness/settings.h), the one way a flag or a scenario key is read.
  // Why a set and not a comparison with the default: a value typed can equal
  // the default, and --time-scale moves every duration off it, so only this
  // tells "left out" from "given". validate() refuses a given setting the run
  // does not read (--rdb-interval without --persistence rdb) and one the
  // fault profile would replace (--down-after 5s with --profile failover);
  // a setting left out is the run's to fill. Code that sets a field (time
  // scaling, a profile's deployment, margin, shrink) adds nothing here. Never
  // written out: not in result.json, the replay command or sweep.json, which
  // say values, not where they came from.
  std::set<std::string> given_paths;
  // Set when the user asked the values to move after they gave them, so a
  // fault profile's deployment may replace a given one again: --time-scale
  // (scale_time checks the given values against the profile before it
  // scales them; the profile's draws are not scaled, so a later check would
  // compare two units), or --seed on a scenario file (result.json's
  // "params" carry the deployment of the seed they came from; another seed
  // draws its own). validate_profile_keeps_given() then has nothing to do.
  bool profile_may_replace_given = false;
  // False for `locksim live`, which takes no fault profile: a message then
  // offers no --profile as the way out (harness/setting_needs.cpp).
  bool profiles_offered = true;
  uint64_t seed = 1;
  Duration duration = Duration::seconds(60);
  WorkloadParams workload;
  sim::redis::Topology redis;          // masters, replicas, persistence, failover, timeouts
  sim::zookeeper::ZkParams zookeeper;  // ensemble size, tick, session timeout, ...
  sim::mysql::MysqlParams mysql;       // service time, lock wait timeout, client timeout
  // A lock unheld for this long at the end of the run, while clients kept
  // failing to take it, is reported as stuck (a liveness finding).
  Duration stuck_after = Duration::seconds(30);
  sim::LinkParams link;
  sim::TcpParams tcp;  // retransmission limit, RTO bounds (sim/connection.h)
  faults::FaultSchedule faults;
  // A fault profile ("pause", "pause+partition"; faults/profile.h), "" for
  // none: its schedule is drawn from the seed and the deployment when the run
  // starts and applied besides `faults`.
  std::string profile;
  sim::SchedulePolicy policy = sim::SchedulePolicy::kSeeded;

  // How errors name an algorithm parameter ("--ttl", "my.json: params.ttl")
  // and a fault ("--fault[0]", "my.json: faults[0]"): prefixes to append to.
  // How errors name the algorithm's parameters: algorithms::param_field.
  std::string param_field_prefix() const {
    return source.empty() ? "--param " : source + ": params.";
  }
  std::string fault_field_prefix() const {
    return source.empty() ? "--fault" : source + ": faults";
  }

  // Limits (Tiger Style): a run is bounded in clients, servers and length.
  static constexpr int kClientsMax = 1000;
  static constexpr int kRedisMastersMax = 64;
  static constexpr int kReplicasPerMasterMax = 8;
  static constexpr Duration kDurationMax = Duration::seconds(7 * 24 * 3600);
};

// Checks what no single setting can check alone (values across settings,
// parameters against the topology), and what the user gave against the rest
// of the run: a given setting the run does not read, or one the fault
// profile would replace, is refused (given_paths). Each value's own range is
// checked when it is parsed (harness/settings.h). Throws ConfigError (one
// line, naming the setting as the user wrote it).
void validate(const RunConfig& config);

// The topology with defaults filled in (masters from the algorithm's spec).
sim::redis::Topology resolved_topology(const RunConfig& config);

}  // namespace locksim::harness
