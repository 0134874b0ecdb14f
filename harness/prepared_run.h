// The one way into a run: a config validated once, with its fault profile's
// deployment applied once. The simulation takes nothing else, so no run can
// skip validation and none validates twice.
#pragma once

#include <utility>

#include "harness/run_config.h"

namespace locksim::harness {

// A config that passed validation, as the run will have it (a failover
// profile's replicas, a partition profile's client timeout, a drawn lease
// included), so its params and replay command say what really ran. Only
// prepare_run() makes one: holding one is the proof the config was checked.
class PreparedRun {
 public:
  const RunConfig& config() const { return config_; }

 private:
  friend PreparedRun prepare_run(const RunConfig& given);
  explicit PreparedRun(RunConfig config) : config_(std::move(config)) {}
  RunConfig config_;
};

// Validates `given` (throws ConfigError naming the field) and applies its
// profile's deployment (harness/profile_deployment.h).
PreparedRun prepare_run(const RunConfig& given);

}  // namespace locksim::harness
