// One simulated run, end to end: prepare (validate once, apply the fault
// profile's deployment once), simulate (harness/simulation.h), check with the
// one checker list (checkers/checker_list.h, Knossos included when asked) and
// hand back a finished result, replay line and all. Callers print and write
// it; they decide nothing about it.
#pragma once

#include <optional>
#include <string>

#include "checkers/knossos.h"
#include "harness/prepared_run.h"
#include "harness/run_config.h"
#include "harness/run_result.h"
#include "harness/simulation.h"

namespace locksim::harness {

// What a caller adds to a run, besides its config.
struct RunExtras {
  // The command that replays it; empty: `locksim run` with every setting
  // (replay_command(config)). A scenario run replays by its scenario's name.
  std::string replay_command;
  std::optional<checkers::KnossosOptions> knossos;  // also ask Knossos
  // Record the lock as each server stores it (SimOutput::lock_trace), for
  // `explain` and the timeline's server lanes; costs a look at every server
  // after every event, so only those ask.
  bool trace_lock = false;
  // Asked now and then during the simulation (SimWatch::poll); false cuts
  // the run there and it is checked as it stands (SimOutput::stopped).
  RunPoll poll;
};

struct SimRunReport {
  RunResult result;
  SimOutput output;  // what the simulation saw besides the history (counters)
};

// Never throws for what happens inside the run (a fiber's exception is
// recorded in result.errors and makes the verdict unknown).
SimRunReport run_prepared(const PreparedRun& run, const RunExtras& extras = {});

// prepare_run, then run_prepared: one run from a config (sweeps, tests,
// a traced run for explain: extras.trace_lock).
SimRunReport simulate_and_check(const RunConfig& config, const RunExtras& extras = {});

// The config as JSON, for result.json's "params".
nlohmann::json config_to_json(const RunConfig& config);

}  // namespace locksim::harness
