// `locksim run --scenario NAME|FILE`: the file decides everything but the
// seed, and the run says what the scenario expected beside what it found,
// on stdout and in result.json.
#pragma once

#include <CLI/CLI.hpp>

#include <string>

#include <nlohmann/json.hpp>

#include "cli/run_options.h"
#include "harness/run_result.h"
#include "harness/scenario.h"

namespace locksim::cli {

// The scenario `o.scenario` names, with --seed applied if given; sets
// `*replay` to the command that replays it by name. Throws ConfigError for
// any other setting on the command line, or a scenario it cannot load.
harness::Scenario scenario_for_run(const RunOptions& o, const CLI::App& run, std::string* replay);

// What a run found, in a scenario's terms: "violation" (a safety finding),
// "liveness", "safe", or "unknown" (the checkers could not decide).
const char* found_as_scenario(const harness::RunResult& result);

// Printed after the summary: the expected result beside the found one, then
// the scenario's description, each one line:
//   scenario set-nx-lua-gc-pause: expected violation, found violation
//     SET NX PX with a compare-and-delete release is ...
// A result other than the expected one says so: "..., found safe (not what
// the scenario expects)".
std::string scenario_text(const harness::Scenario& sc, const harness::RunResult& result);

// result.json's "scenario" key: {"name", "expected" (null when the file
// says nothing), "found"}.
nlohmann::ordered_json scenario_json(const harness::Scenario& sc, const harness::RunResult& result);

}  // namespace locksim::cli
