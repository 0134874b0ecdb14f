// `locksim margins`: the table of safety margins, every algorithm x every
// fault kind that applies, each cell one `locksim margin` with the
// algorithm's defaults (issue 23; harness/margin/margins.h).
//
//   locksim margins [--algorithms all|A,B,...] [--seed N] [--out DIR] [--jobs N] [--quiet]
//
// Writes DIR/margins.json, DIR/margins.md and DIR/margins.html (the same
// bytes for the same input, whatever --jobs), and prints margins.md's table.
// Exit codes: 0 the table measured, 2 bad input (one line naming the flag),
// 3 a run that could not be judged, 130 Ctrl-C (nothing written).
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <string>

namespace locksim::cli {

struct MarginsFlags {
  std::string algorithms = "all";  // "all" or a comma list
  // As typed, read by the seed's own parser: CLI11 read "-1" into a
  // uint64_t as 2^64-1 and the error quoted that.
  std::string seed = "1";
  std::string out;  // "": print only
  int jobs = 0;     // 0: every core
  bool quiet = false;
  std::string vary;  // --vary PARAM=A..B; "": the table only
};

CLI::App* add_margins_command(CLI::App& app, MarginsFlags& flags);

int run_margins_command(const MarginsFlags& flags);

}  // namespace locksim::cli
