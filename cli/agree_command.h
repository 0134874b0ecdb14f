// `locksim agree`: one scenario in the simulation and against real servers,
// its two verdicts side by side (issue 25). A design review trusts a
// simulator only as far as it has been held to reality; this is the holding,
// scenario by scenario.
//
//   locksim agree --scenario NAME|FILE [--seed N] [--time-scale F] [--out DIR] [--quiet]
//
// --time-scale F multiplies every duration of the scenario by F on both
// sides (harness/time_scale.h), so a 60 s scenario runs live in 6 s.
//   locksim agree --all --out DIR [--only NAME,NAME...] [--time-scale F] [--resume]
//
// Prints both results and the instants that matter (the first overlap, the
// faults taken), and writes, with --out, DIR/sim and DIR/live (each a run's
// result.json and histories) and DIR/agree.json. --all runs every shipped
// scenario and writes DIR/agree.json and DIR/agree.md (a row per scenario:
// both verdicts, or why live cannot express it), rewritten after each one.
//
// Exit codes: 0 the two verdicts agree, 1 they differ, 2 bad input (an
// unknown scenario, or one live mode cannot express: one line saying why,
// before any server starts), 3 a run that could not be judged or an
// internal error.
#pragma once

#include <CLI/CLI.hpp>

#include <string>

namespace locksim::cli {

struct AgreeFlags {
  std::string scenario;
  std::string seed;        // "": the scenario's own
  std::string time_scale;  // "": 1
  std::string out;
  bool all = false;     // --all: every shipped scenario, a report in --out
  std::string only;     // with --all: "a,b,c" of them only ("": all)
  bool resume = false;  // with --all: keep the finished rows of --out's agree.json
  bool quiet = false;
};

CLI::App* add_agree_command(CLI::App& app, AgreeFlags& flags);

// Precondition: stop_owned_on_interrupt() has run (main calls it first).
int run_agree_command(const AgreeFlags& flags);

}  // namespace locksim::cli
