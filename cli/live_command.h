// `locksim live`: one run against real servers on loopback
// (docs/how-to/live-mode.md), and what live commands share about an
// interrupt: what is done is written, marked interrupted, never an earlier
// run's files left looking like this run's.
#pragma once

#include <CLI/CLI.hpp>

#include <string>

#include "cli/run_options.h"

namespace locksim::cli {

// Precondition: stop_owned_on_interrupt() has run (main calls it first).
// --out: an earlier run's result.json and histories there are removed
// before this run starts; an interrupt writes this run's history up to the
// interrupt and a result.json whose "interrupted" key says so, then exits
// 128 + the signal.
int run_live_command(const CLI::App& live, const RunOptions& o);

}  // namespace locksim::cli
