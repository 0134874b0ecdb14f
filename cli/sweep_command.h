// `locksim sweep` and `locksim merge`: many runs, one matrix, one gate.
//
//   locksim sweep [--algorithms all|A,B] [--profiles all|P,Q+R] [--seeds 1..1000]
//                 [--jobs N] [--shard i/N] [--resume] [--expect FILE]
//                 [--duration 20s] [--shrink [--shrink-max-runs 300]] --out DIR
//   locksim merge --out DIR [--expect FILE] [--partial] SHARD_DIR...
//
// The sweep engine is harness/sweep/sweep.h; the reports are reports/matrix.h.
// This layer owns what must not be in deterministic code: the wall clock
// (progress, timing.json) and the SIGINT handler (stop taking runs, write the
// report of what is done).
//
// Exit codes: 0 the gate holds (or no --expect), 1 a cell breaks its
// expectation (each printed with its kind and replay command), 2 bad input
// (one line naming the flag or the file's field), 3 internal error, 4 the
// runs do not cover the sweep (a merge missing a shard, without --partial;
// a --shard sweep is a part by request), 130 interrupted (the report of the
// finished runs is written).
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

namespace locksim::cli {

struct SweepFlags {
  std::string algorithms = "all";
  std::string profiles = "all";
  std::string seeds = "1..100";
  int jobs = 0;  // 0: every core
  std::string shard = "1/1";
  bool resume = false;
  std::string expect;
  // Every run's length. Shorter than a single run's default (60 s): a
  // sweep's strength is many seeds, each drawing its own faults, and 20 s
  // holds several leases (TTL 10 s) and a whole fault; it is what keeps the
  // full matrix inside its time budget (docs/reference/cli.md, "locksim sweep").
  std::string duration = "20s";
  std::string out;
  bool quiet = false;
  bool histories = false;  // --histories: keep each run's history.jsonl
  // Each run's workload drawn from its seed (harness/workload_draw.h), the
  // default: a fixed workload never meets some faults where they bite.
  // --fixed-workload: `locksim run`'s fixed one instead.
  bool swarm = true;
  // --shrink: shrink each cell's first counterexample (the seed its timeline
  // draws) into --out/shrunk/, at most shrink_runs_max candidate runs each
  // (locksim shrink's --max-runs default: measured to finish every cell of
  // the reference, docs/measurements.md).
  bool shrink = false;
  int shrink_runs_max = 300;
  bool shrink_runs_max_given = false;  // refused without --shrink: a bound on nothing
};

struct MergeFlags {
  std::string out;
  std::string expect;
  bool partial = false;  // --partial: a report of the shards given, gated on what ran
  std::vector<std::string> shards;
};

CLI::App* add_sweep_command(CLI::App& app, SweepFlags& flags);
CLI::App* add_merge_command(CLI::App& app, MergeFlags& flags);

int run_sweep_command(const SweepFlags& flags);
int run_merge_command(const MergeFlags& flags);

}  // namespace locksim::cli
