// A better line than CLI11's "The following arguments were not expected:
// --durration 5s" for a mistyped flag or command: the argument, where it was
// given, and the nearest names that exist ("did you mean --duration?").
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

namespace locksim::cli {

// `args` are the command line without the program name. Returns one line
// (no newline) naming the first argument that `app` or the subcommand it
// selects does not know, with the nearest known names; empty when every
// flag and command is known (then the error is something else, and CLI11's
// own message says it better).
std::string unknown_argument_message(const CLI::App& app, const std::vector<std::string>& args);

}  // namespace locksim::cli
