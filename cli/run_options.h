// The options of `locksim run` and `locksim live`, generated from the settings
// table (harness/settings.h): every row becomes a flag with its help, value
// hint and default; the values given are parsed by the row's own parser.
#pragma once

#include <CLI/CLI.hpp>

#include <map>
#include <string>
#include <vector>

#include "cli/check_command.h"
#include "env/parse.h"
#include "harness/run_config.h"

namespace locksim::cli {

// What one subcommand collects: the raw text of every setting given, plus the
// options that are not run settings.
struct RunOptions {
  std::map<std::string, std::vector<std::string>> values;  // by flag, as typed
  std::map<std::string, bool> flags;                       // bare flags, by flag
  std::vector<std::string> ttl;  // --ttl: --param ttl=; a vector so twice is our error
  std::string scenario;
  std::string time_scale;  // --time-scale F (harness/time_scale.h); "": 1
  std::string out;
  std::string html;  // run: --html FILE, the run's timeline page
  bool quiet = false;
  bool explain = false;     // run --explain: the story after the summary
  bool story_only = false;  // locksim explain: the story instead of the summary
  KnossosFlags knossos;     // run: --knossos, --knossos-time-limit, --knossos-heap
};

enum class Mode { kRun, kLive };

// The config a subcommand starts from: the table's defaults, and for live
// mode a short real-time run.
harness::RunConfig default_config(Mode mode);

// Adds the table's options (all rows for run; the live rows for live) and the
// subcommand's own (--out, --quiet, --ttl, --time-scale; --scenario for run)
// to `app`.
// `options` must outlive the parse.
void add_run_options(CLI::App& app, Mode mode, RunOptions& options);

// The config the given options describe, each value parsed, then scaled by
// --time-scale; the run validates the whole (harness::prepare_run). Throws ConfigError naming the
// flag as typed. `taken`: flags of the table the subcommand replaced with
// its own (margin's --fault names a fault kind), skipped here.
harness::RunConfig config_from_options(const CLI::App& app, Mode mode, const RunOptions& options,
                                       const std::vector<std::string>& taken = {});

// Flags that a scenario run refuses, because the scenario file decides them:
// every setting but --seed. Throws ConfigError naming the first one given.
void refuse_with_scenario(const CLI::App& app);

// "FLAG: expected once, given N times": a setting given twice is an error,
// never a silent "last one wins".
ConfigError given_more_than_once(const std::string& flag, size_t times);

}  // namespace locksim::cli
