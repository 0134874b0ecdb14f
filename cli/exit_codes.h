// The exit codes of every `locksim` command, in one place: CI gates rely on
// them, so each means one thing everywhere.
#pragma once

#include <vector>

#include "checkers/check.h"

namespace locksim::cli {

constexpr int kExitClean = 0;      // nothing found (a latent finding included)
constexpr int kExitViolation = 1;  // a violation found; for sweeps: the gate failed
constexpr int kExitBadInput = 2;   // bad input: one line naming the field
// An internal error, a run the checkers could not decide, or two checkers of
// one history that disagree (a bug in one of them).
constexpr int kExitInternal = 3;
// A sweep or merge whose runs do not cover the seeds it declares (a missing
// shard), with no cell broken: a gate cannot hold on part of a sweep unless
// the part was asked for (--shard, merge --partial).
constexpr int kExitIncomplete = 4;
// 70: a broken invariant (env/assert.h), a bug in locksim; set there, not here.
constexpr int kExitInterrupted = 130;  // Ctrl-C (SIGINT): what finished is written
constexpr int kExitTerminated = 143;   // SIGTERM (a CI timeout): the same, 128 + 15

// The exit code for a run's or a history's checks: a disagreement between
// two checkers first (no verdict can be trusted then), else the merge rule
// (invalid 1, unknown 3, valid 0).
inline int exit_code(const std::vector<checkers::Check>& checks) {
  if (checkers::disagreement(checks) != nullptr) return kExitInternal;
  switch (checkers::merged(checks)) {
    case checkers::Validity::kValid:
      return kExitClean;
    case checkers::Validity::kInvalid:
      return kExitViolation;
    case checkers::Validity::kUnknown:
      return kExitInternal;
  }
  return kExitInternal;
}

}  // namespace locksim::cli
