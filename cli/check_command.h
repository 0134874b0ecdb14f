// `locksim check HISTORY`: judge any history of lock ops, a Jepsen EDN
// history or locksim's own history.edn or history.jsonl (the format is told
// by content: history/history_file.h), with the built-in linearizability
// checker and, when asked, with Knossos; and `--knossos` on `locksim run`,
// which asks Knossos about a run's history.
//
//   locksim check HISTORY [--model mutex|owner-mutex] [--knossos CMD]
//                 [--knossos-time-limit 60s] [--knossos-heap 4g]
//
// Exit codes: 0 valid, 1 invalid, 2 input it cannot read (a one-line error
// with the line and column, or the op index and the broken Jepsen rule) or
// a history without client ops,
// 3 the built-in checker and Knossos disagree (a bug in one of them; both
// verdicts are printed). A Knossos timeout, out-of-memory or crash is
// "Knossos: unknown (why)" and never changes the exit code.
#pragma once

#include <CLI/CLI.hpp>

#include <string>

#include <optional>

#include "checkers/knossos.h"

namespace locksim::cli {

struct KnossosFlags {
  std::string command;  // --knossos CMD; empty: Knossos is not asked
  // Empty when not given (then 60s and 4g); given without --knossos, each
  // is bad input, as a flag that would do nothing.
  std::string time_limit;  // --knossos-time-limit: wall clock for the whole call
  std::string heap;        // --knossos-heap: the JVM's -Xmx
};

struct CheckFlags {
  std::string history;  // the file: EDN or JSON lines
  std::string model = "mutex";
  bool quiet = false;
  KnossosFlags knossos;
};

// Adds --knossos, --knossos-time-limit and --knossos-heap to a subcommand.
void add_knossos_options(CLI::App* command, KnossosFlags& flags);

// Adds the `check` subcommand, its options bound to `flags` (which must
// outlive parsing).
CLI::App* add_check_command(CLI::App& app, CheckFlags& flags);

// Runs `locksim check`; returns the exit code. Throws ConfigError for input
// it cannot read (the caller prints it and exits 2).
int run_check_command(const CheckFlags& flags);

// The Knossos options the flags ask for; nullopt when --knossos is not
// given. Throws ConfigError for a bad --knossos-* value, a --knossos-* flag
// without --knossos, and a --knossos command whose program is not found (a
// typo must not pass a CI job with its cross-check quietly "unknown").
std::optional<checkers::KnossosOptions> knossos_options(const KnossosFlags& flags);

}  // namespace locksim::cli
