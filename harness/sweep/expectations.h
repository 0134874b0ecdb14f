// The CI gate: what each cell of a sweep's matrix is expected to show.
//
// An expectations file (expectations/reference.json encodes
// ../shared/REFERENCE-VERDICTS.md) gives cells, each an algorithm x profile
// with a verdict:
//   safe       no mutual-exclusion violation in any seed (a violation is a
//              FALSE ALARM: the testbed cries wolf, or the algorithm regressed);
//   violation  a violation within the first `seeds_within` seeds of the
//              sweep (none is a LOST DETECTION: the testbed sleeps; a sweep
//              with fewer seeds than that, or whose first seeds did not all
//              run, cannot judge the cell: it is listed as not judged);
//   liveness   no mutual-exclusion violation (stuck or delayed locks are
//              allowed and shown; a violation is a false alarm);
//   any        not gated (a boundary the default intensities straddle, or a
//              capability still missing: the cell's note says which).
// A cell may also judge the guarded resource's data (runs with a resource:
// a --workload, or an algorithm whose sweep_settings give it one), the
// reference's fencing row: "data": "safe" (a stale write accepted, a lost
// update or an oversell is a DATA FALSE ALARM) or "violation" with
// "data_seeds_within" (none within is a DATA LOST DETECTION); absent: any.
// Liveness findings are reported, never gated: the reference's S promises
// safety, not progress under faults. Runs whose verdict is unknown (a client
// raised an error) fail every gated cell: a cut-short history proves nothing.
//
// File format:
//   {"locksim_expectations": 1, "description": "...",
//    "cells": [{"algorithm": "ALGORITHM", "profile": "pause",
//               "verdict": "violation", "seeds_within": 10,
//               "data": "violation", "data_seeds_within": 20, "note": "why"}, ...]}
// Unknown keys, algorithms, profiles or verdicts, a duplicate cell, or
// seeds_within on a verdict other than violation are errors naming the field
// ("FILE: cells[3].verdict: expected one of safe, violation, liveness, any").
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace locksim::harness {

enum class Expected { kSafe, kViolation, kLiveness, kAny };
const char* to_string(Expected e);

struct CellExpectation {
  std::string algorithm;
  std::string profile;
  Expected verdict = Expected::kAny;
  int64_t seeds_within = 0;        // violation only: >= 1
  Expected data = Expected::kAny;  // safe, violation or any (not gated)
  int64_t data_seeds_within = 0;   // data violation only: >= 1
  std::string note;
};

struct Expectations {
  std::string source;  // the file, for messages
  std::vector<CellExpectation> cells;
  // The cell's expectation, or nullptr when the file says nothing about it.
  const CellExpectation* find(const std::string& algorithm, const std::string& profile) const;
};

// Throws ConfigError naming "SOURCE: cells[i].field" (or the file) on bad input.
Expectations parse_expectations(const nlohmann::json& j, const std::string& source);
Expectations load_expectations(const std::string& path);

// What the gate says about one cell.
struct GateOutcome {
  bool gated = false;  // the cell has an expectation other than any, and it was judged
  // Not gated because it could not be judged: it expects a violation within
  // N seeds, found none, and not every one of those N seeds ran; or none of
  // its runs ran at all (another shard's seeds, an interrupted sweep), which
  // proves nothing either way. Distinct from a cell that expects nothing
  // (any, or absent from the file).
  bool not_judged = false;
  bool holds = true;
  // "false alarm", "lost detection", "data false alarm", "data lost
  // detection", "data not checked", "unknown verdicts"; "" when it holds.
  std::string failure;
  std::string message;  // one line, for people: what was expected, what was seen, and the replay
};

// The facts of a cell the gate reads (reports/matrix.h fills them).
struct CellFacts {
  int64_t runs = 0;
  int64_t safety = 0;                    // runs with a mutual-exclusion violation
  int64_t unknown = 0;                   // runs with a client error
  int64_t first_violation_position = 0;  // 1-based seed position of the first violation; 0 none
  // Seeds of this cell that ran, counted from the plan's first seed without a
  // gap (an interrupted sweep or one shard has holes), and the plan's seeds.
  int64_t seeds_run = 0;
  int64_t seeds_planned = 0;
  std::string first_violation_replay;
  std::string first_unknown_replay;
  // The guarded resource's data: runs that had one, runs whose data broke,
  // the first such run's 1-based seed position (0: none) and its replay.
  int64_t data_runs = 0;
  int64_t data_violations = 0;
  int64_t first_data_violation_position = 0;
  std::string first_data_violation_replay;
  // Acquisitions over the cell's runs: a cell expected safe whose lock was
  // never granted (a script whose every acquire errs) proves nothing, and
  // fails as "never acquired" instead of passing.
  int64_t acquisitions = 0;
};

GateOutcome judge_cell(const CellExpectation* expectation, const CellFacts& facts);

}  // namespace locksim::harness
