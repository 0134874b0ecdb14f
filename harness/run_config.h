// Everything one simulated run needs, as plain data: the same config and seed
// give the same history, byte for byte.
#pragma once

#include <cstdint>
#include <string>

#include "algorithms/registry.h"
#include "faults/fault_schedule.h"
#include "harness/workload.h"
#include "sim/network.h"
#include "sim/redis/topology.h"
#include "sim/scheduler.h"

namespace locksim::harness {

struct RunConfig {
  std::string algorithm = "set-nx-lua";
  algorithms::ParamValues algorithm_params;  // text, validated by the algorithm's spec
  // How errors name an algorithm parameter: "--" for flags, a JSON path for files.
  std::string param_field_prefix = "--";
  // How errors name a topology field: "--" for flags, "redis." in files.
  std::string topology_field_prefix = "--";
  // How errors name a fault: "--fault" for flags, "FILE: faults" in files.
  std::string fault_field_prefix = "--fault";
  uint64_t seed = 1;
  Duration duration = Duration::seconds(60);
  WorkloadParams workload;
  sim::redis::Topology redis;  // masters, replicas, persistence, failover, timeouts
  // A lock unheld for this long at the end of the run, while clients kept
  // failing to take it, is reported as stuck (a liveness finding).
  Duration stuck_after = Duration::seconds(30);
  sim::LinkParams link;
  faults::FaultSchedule faults;
  sim::SchedulePolicy policy = sim::SchedulePolicy::kSeeded;

  // Limits (Tiger Style): a run is bounded in clients, servers and length.
  static constexpr int kMaxClients = 1000;
  static constexpr int kMaxRedisMasters = 64;
  static constexpr int kMaxReplicasPerMaster = 8;
  static constexpr Duration kMaxDuration = Duration::seconds(7 * 24 * 3600);
};

// Throws ConfigError (one line, naming the flag) for anything out of range.
void validate(const RunConfig& config);

// The topology with defaults filled in (masters from the algorithm's spec).
sim::redis::Topology resolved_topology(const RunConfig& config);

// The one command line that replays this run.
std::string replay_command(const RunConfig& config);

}  // namespace locksim::harness
