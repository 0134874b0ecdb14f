// `locksim shrink`: the smallest failing scenario for one failing run
// (issue 22; the search is harness/shrink/shrink.h).
//
//   locksim shrink --algorithm set-nx-lua --profile pause --seed 3 [any run setting] [--out FILE]
//   locksim shrink --scenario NAME|FILE [--seed N] [--out FILE]
//   locksim shrink --sweep DIR --cell ALGORITHM/PROFILE [--out FILE]
//   ... [--max-runs N] [--quiet]
//
// The run is run once; a run with no finding is bad input (exit 2). A
// profile's drawn faults are made explicit and that config is run once more
// (it must fail the same way, else exit 3: a bug, not a smaller scenario).
// Then at most --max-runs candidate runs, and the smallest failing config is
// written as a scenario file: to --out FILE, else to stdout (the report
// lines then go to stderr, so `locksim shrink ... > x.json` works). The file
// is re-read and re-run before the command ends: it must replay with the
// same finding (exit 3 otherwise).
//
// This layer owns what must not be in deterministic code: the wall clock
// (the progress line on a terminal, the seconds in the report, never in the
// file) and SIGINT (cli/interrupt.h: Ctrl-C stops the search and writes the
// smallest failing scenario found so far, exit 130).
//
// Exit codes: 0 written (also when --max-runs ended the search: it says so),
// 2 bad input (one line), 3 internal error, 130 interrupted (written).
#pragma once

#include <CLI/CLI.hpp>

#include <string>

#include "cli/run_options.h"
#include "harness/run_config.h"
#include "harness/shrink/shrink.h"

namespace locksim::cli {

struct ShrinkFlags {
  RunOptions run;     // every setting of `locksim run`, --scenario, --out (a file here), --quiet
  std::string sweep;  // --sweep DIR
  std::string cell;   // --cell ALGORITHM/PROFILE
  // The bound on candidate runs: a few hundred take seconds to a minute on
  // the shipped algorithms and, measured over the reference's violating cells,
  // finish the search (docs/measurements.md).
  int max_runs = 300;
};

CLI::App* add_shrink_command(CLI::App& app, ShrinkFlags& flags);

// What to shrink, and how the command names it.
struct ShrinkStart {
  harness::RunConfig config;
  std::string field;   // how an error names the input: "--seed 3"
  std::string replay;  // the command that runs it: the shrunk scenario's "from"
  std::string name;    // the shrunk scenario's name
};

// What one shrink gave: the scenario file (checked to replay with the same
// finding) and the words that report it.
struct Shrunk {
  std::string scenario_text;
  std::string summary;  // the scenario's one-line summary: "redlock shrunk to 1 fault, ..."
  std::string how_far;  // "kept its safety finding: faults 2 -> 1, ... in 78 candidate runs"
  harness::shrink::Stopped stopped = harness::shrink::Stopped::kDone;
};

// The deterministic part of `locksim shrink`, also run by `sweep --shrink`:
// runs `start` once (ConfigError naming start.field when it shows no
// finding), makes a profile's faults explicit, shrinks within `options` and
// checks the file replays (std::runtime_error otherwise: a bug).
Shrunk shrink_start(const ShrinkStart& start, const harness::shrink::Options& options);

// A name as one file name's part: itself when it holds only letters, digits
// and . _ + -; otherwise each run of other characters ('/' and ':' in
// "script:examples/scripts/x.json") becomes one '-' and 8 hex digits of the
// name's hash follow ("script-examples-scripts-x.json-1a2b3c4d"), so two
// names that differ only there stay two files. Deterministic.
std::string file_slug(const std::string& name);

// The name of a sweep cell's first failing seed's shrink: "A-P-seed-N-shrunk",
// A and P as file_slug gives them (it names a file in DIR/shrunk/).
std::string shrunk_cell_name(const std::string& algorithm, const std::string& profile,
                             uint64_t seed);

// `shrink` is the subcommand add_shrink_command() returned, parsed.
int run_shrink_command(const CLI::App& shrink, const ShrinkFlags& flags);

}  // namespace locksim::cli
