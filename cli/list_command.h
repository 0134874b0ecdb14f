// `locksim list`: what there is to run.
//
//   locksim list              algorithms (parameters, defaults) and shipped scenarios
//   locksim list SCENARIO     that shipped scenario's file, to copy and change
//   locksim list --settings   the settings table as Markdown (docs/reference/settings.md)
//
// Exit codes: 0, or 2 for a scenario name that is not shipped (one line,
// with the nearest names).
#pragma once

#include <CLI/CLI.hpp>

#include <string>

namespace locksim::cli {

struct ListFlags {
  std::string scenario;  // empty: list everything
  bool settings = false;
};

// Adds the `list` subcommand, its options bound to `flags` (which must
// outlive parsing).
CLI::App* add_list_command(CLI::App& app, ListFlags& flags);

// Runs `locksim list`; returns the exit code. Throws ConfigError for an
// unknown scenario or --settings with a scenario.
int run_list_command(const ListFlags& flags);

}  // namespace locksim::cli
