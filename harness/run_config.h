// Everything one simulated run needs, as plain data: the same config and seed
// give the same history, byte for byte.
#pragma once

#include <cstdint>
#include <string>

#include "algorithms/registry.h"
#include "faults/fault_schedule.h"
#include "harness/workload.h"
#include "sim/network.h"
#include "sim/scheduler.h"

namespace locksim::harness {

struct RunConfig {
  std::string algorithm = "set-nx-lua";
  algorithms::ParamValues algorithm_params;  // text, validated by the algorithm's spec
  // How errors name an algorithm parameter: "--" for flags, a JSON path for files.
  std::string param_field_prefix = "--";
  uint64_t seed = 1;
  Duration duration = Duration::seconds(60);
  WorkloadParams workload;
  int redis_servers = 1;
  // Client-side timeout of one Redis command: the reply may still come, and
  // the command may still have run, after it.
  Duration redis_timeout = Duration::millis(500);
  sim::LinkParams link;
  faults::FaultSchedule faults;
  sim::SchedulePolicy policy = sim::SchedulePolicy::kSeeded;

  // Limits (Tiger Style): a run is bounded in clients, servers and length.
  static constexpr int kMaxClients = 1000;
  static constexpr int kMaxRedisServers = 64;
  static constexpr Duration kMaxDuration = Duration::seconds(7 * 24 * 3600);
};

// Throws ConfigError (one line, naming the flag) for anything out of range.
void validate(const RunConfig& config);

// The one command line that replays this run.
std::string replay_command(const RunConfig& config);

}  // namespace locksim::harness
