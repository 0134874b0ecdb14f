// The comparison matrix of a sweep: one cell per algorithm x profile, built
// from the run summaries alone (harness/sweep/sweep.h), so the same runs give the
// same matrix whatever threads, shards or resumes produced them.
//
// Written as matrix.json (everything, for tools), matrix.md (a CI job's
// summary page), matrix.html (self-contained: the colour-coded matrix, each
// cell linking to its first counterexample drawn as an SVG timeline) and
// junit.xml (one test case per cell, failing exactly where the gate fails).
// Wall-clock figures (seconds to the first violation) are not deterministic,
// so they go to timing.json only, never into these four files.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "harness/sweep/expectations.h"
#include "harness/sweep/sweep.h"

namespace locksim::reports {

struct MatrixCell {
  std::string algorithm, profile;
  int64_t runs = 0;
  int64_t contiguous = 0;  // seeds run from the plan's first without a gap
  int64_t safety = 0;      // runs with a mutual-exclusion violation
  int64_t liveness = 0;    // runs with only a liveness finding
  int64_t unknown = 0;     // runs with a client error
  int64_t latent = 0;      // runs with lease exposure but no violation
  // Runs in which a holder's store dropped its lease while the holder
  // believed it held and nothing told it (with or without a violation).
  int64_t never_told = 0;
  int64_t faulted = 0;  // runs in which at least one fault was applied
  int64_t touched = 0;  // runs in which a fault touched a holder (fault coverage)
  // The first violating run in seed order: its seed, its position among the
  // cell's seeds (1-based: "seeds to the first violation"), simulated events
  // until then (a deterministic stand-in for time), and its replay command.
  std::optional<uint64_t> first_violation_seed;
  int64_t seeds_to_first = 0;
  int64_t events_to_first = 0;
  int64_t wall_ns_to_first = 0;  // timing.json only
  std::string first_violation_replay;
  // Seed positions (1-based) of every violating run, ascending.
  std::vector<int64_t> violation_positions;
  // The guarded resource's data (runs with a resource only): runs whose data
  // broke (stale write accepted, lost update, oversell), and the first.
  int64_t data_runs = 0;
  int64_t data_violations = 0;
  std::optional<uint64_t> first_data_violation_seed;
  int64_t seeds_to_first_data = 0;
  std::string first_data_violation_replay;
  std::optional<uint64_t> first_liveness_seed;
  std::string first_liveness_replay;
  std::string first_unknown_replay;
  int64_t acquisitions = 0;
  int64_t virtual_ns = 0;          // total simulated time of the cell's runs
  std::map<int, int64_t> latency;  // merged acquire-latency histogram
  harness::GateOutcome gate;
  std::string expected;       // the expectation's verdict, "" when the file has none
  std::string expected_data;  // its data verdict, "" when it gives none (any)
  std::string note;           // the expectation's note
  // With `sweep --shrink`: the first counterexample (the timeline's seed)
  // shrunk to a scenario file, its path relative to the sweep's --out
  // ("shrunk/NAME.json") and its one-line summary; empty otherwise. Set by
  // the caller, as partial_by_request is: shrinking runs the simulation,
  // which building the matrix from summaries never does.
  std::string shrunk_file;
  std::string shrunk_summary;
  // Its story (locksim explain): the file beside it ("shrunk/NAME.story.txt"),
  // the mechanism's id and the story's text, which matrix.html shows.
  std::string shrunk_story_file;
  std::string shrunk_mechanism;
  std::string shrunk_story;
  // Why --shrink wrote nothing for a cell that has a counterexample (a file it
  // could not write); the reports say so, and the other cells go on.
  std::string shrunk_error;

  double violation_rate() const { return runs == 0 ? 0 : static_cast<double>(safety) / runs; }
  double coverage() const { return runs == 0 ? 0 : static_cast<double>(touched) / runs; }
  // Acquire latency at quantile q (0..1), in ns: the floor of its bucket; -1 if none.
  int64_t latency_quantile_ns(double q) const;
  double acquisitions_per_virtual_minute() const;
  // A cell whose faults rarely touched a holder (under 25 % of its runs):
  // clean, it is no evidence of safety. Never a `none` cell: it has no faults
  // to cover, and its clean runs are the baseline, not a weak test.
  bool low_coverage() const;
  // How many seeds a sweep of this cell needs to find a violation, as the
  // median over every starting seed of the contiguous seeds run: from a
  // start, the seeds up to and including the next violating one (never, past
  // the last). The lower median, so it is a whole number of seeds; nullopt
  // when at least half the starts never reach one. Seed 1's wait alone is
  // seeds_to_first: one sample, where this one measures the cell.
  std::optional<int64_t> median_seeds_to_violation() const;
};

struct Matrix {
  harness::SweepPlan plan;  // the whole sweep (its shard is not part of the report)
  uint64_t runs_done = 0;
  std::vector<MatrixCell> cells;  // algorithm-major, in the plan's orders
  bool gated = false;             // an expectations file was given
  int64_t gate_failures = 0;
  int64_t gated_cells = 0;
  // What the runs cover, in words, when they do not cover the plan: "shard
  // 1/2" (a shard sweep), "merge --partial", ""; set by the caller. Empty and
  // incomplete: the gate cannot hold (GateState::kIncomplete), because a
  // gate that holds on half a sweep says nothing about the other half.
  std::string partial_by_request;

  bool complete() const { return runs_done == plan.runs_total(); }

  const MatrixCell& cell(size_t algorithm, size_t profile) const {
    return cells.at(algorithm * plan.profiles.size() + profile);
  }
};

// Aggregates `runs` (sorted by run number, each in `plan`) into the matrix
// and judges each cell against `expectations` (may be null: no gate).
Matrix build_matrix(const harness::SweepPlan& plan, const std::vector<harness::RunSummary>& runs,
                    const harness::Expectations* expectations);

// The gate's answer for the whole matrix. kIncomplete: no cell broke its
// expectation, but the runs do not cover the plan and nobody asked for a
// part (a merge missing a shard). kNothingJudged: the runs cover the plan, but
// not one cell was judged (the file names none of these cells, or only
// violation cells wanting more seeds than ran): a gate that judged nothing
// would pass any regression. Both are exit 4 (docs/reference/cli.md).
enum class GateState { kNone, kHolds, kFails, kIncomplete, kNothingJudged };
GateState gate_state(const Matrix& m);
// "none", "holds", "fails", "incomplete", "nothing judged": matrix.json's gate.state.
const char* gate_state_name(GateState s);

// What the gate says of one cell, in every format: "holds", the failure
// ("false alarm", ...), "not judged" (a violation expected within more seeds
// than ran) or "not gated" (expected any, or absent from the file).
std::string gate_word(const MatrixCell& c);

// "1 run", "2 runs", "0 violations": a count with its noun, in the plural
// unless it is one (every noun the reports count takes an -s).
std::string counted(int64_t n, const std::string& noun);

// One line each, shared by the CLI, matrix.md and matrix.html:
//   "12 of 24 runs (incomplete: ...)" or "24 runs";
std::string coverage_text(const Matrix& m);
//   "holds: 70 of 70 judged cells as expected", "FAILS: ...", "INCOMPLETE: ...";
std::string gate_text(const Matrix& m);
//   the cells the gate did not judge and why (too few seeds, seeds that did
//   not run) and the ungated cells (expected "any"); "" when there are none.
std::string unjudged_text(const Matrix& m);

// An acquire latency for matrix.md: "850us", "1.8ms", "1311ms", rounded to
// the nearest unit shown; "-" for none (a negative ns).
std::string latency_text(int64_t ns);

// "data ok" or "data ✗N" (N runs whose guarded data broke); data_runs > 0.
std::string data_brief(const MatrixCell& c);

// The inline stylesheet of locksim's HTML pages (matrix.html, agree.html:
// one look, and nothing fetched): verdict cells td.violation, td.liveness,
// td.safe, td.unknown; td.gatefail frames a cell that breaks what was asked
// of it.
const char* report_style();

// The writers. Each is a pure function of the matrix (timeline SVGs for the
// HTML are passed in, keyed by "algorithm/profile").
std::string matrix_json(const Matrix& m);
std::string matrix_markdown(const Matrix& m);
std::string matrix_junit(const Matrix& m);
std::string matrix_html(const Matrix& m, const std::map<std::string, std::string>& timelines);
std::string timing_json(const Matrix& m);

// Writes matrix.json, matrix.md, matrix.html (re-running each cell's first
// counterexample to draw its timeline: the same seed gives the same run),
// junit.xml and timing.json into `dir`.
void write_matrix_reports(const Matrix& m, const std::string& dir);

}  // namespace locksim::reports
