// One simulated run, end to end: simulate, check, and assemble the result.
#pragma once

#include "harness/run_config.h"
#include "harness/run_result.h"
#include "harness/sim_runner.h"

namespace locksim::harness {

struct SimRunReport {
  RunResult result;
  SimOutput output;  // what the simulation saw besides the history (counters, faults)
};

// Throws ConfigError for a bad config; never for what happens inside the run
// (a fiber's exception is recorded in result.errors).
SimRunReport simulate_and_check(const RunConfig& config);

// The config as JSON, for result.json's "params".
nlohmann::json config_to_json(const RunConfig& config);

}  // namespace locksim::harness
