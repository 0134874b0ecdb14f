// `locksim margin`: the smallest fault a lock does not survive, found by
// bisection over deterministic runs of one seed, beside theory (issue 23;
// harness/margin/margin.h).
//
//   locksim margin --algorithm A --fault KIND [--range LO..HI]
//                  [run settings: --ttl, --hold, --seed, --param...] [--out DIR] [--quiet]
//
// Exit codes: 0 a margin measured (or the lock found to break at any size or
// never, in the range: the summary says which), 2 bad input (one line naming
// the flag: a kind that does not apply, an empty range, a hold that is not
// fixed, a setting margin decides itself), 3 a run that could not be judged.
#pragma once

#include <CLI/CLI.hpp>

#include <string>

#include "cli/run_options.h"

namespace locksim::cli {

struct MarginFlags {
  RunOptions run;     // the run settings; --fault is margin's own
  std::string fault;  // the fault kind (harness/margin/margin.h: Kind)
  std::string range;  // --range LO..HI; "": 0 to twice the lease
  std::string vary;   // --vary PARAM=A..B; "": the one margin only
};

CLI::App* add_margin_command(CLI::App& app, MarginFlags& flags);

int run_margin_command(const CLI::App& margin, const MarginFlags& flags);

}  // namespace locksim::cli
