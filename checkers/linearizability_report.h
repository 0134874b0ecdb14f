// What the history-only checkers said about one history, side by side: the
// built-in linearizability checker (always) and Knossos (when asked), and
// how they compare with each other and with the ground truth.
#pragma once

#include <optional>
#include <string>

#include "checkers/knossos.h"
#include "checkers/linearizability.h"
#include "checkers/mutex_checker.h"

namespace locksim::checkers {

// Knossos's verdict on one history, with what the call cost. When several
// histories share one call (one JVM), seconds and memory are the call's.
struct KnossosReport {
  KnossosVerdict verdict;
  double seconds = 0;
  int64_t peak_rss_bytes = 0;
  bool shared_call = false;  // seconds and memory cover other histories too
  // False when the command never ran (not found, not executable: exit 127
  // or 126): no JVM started, so seconds and memory measure nothing and are
  // not shown.
  bool started = true;
};

struct LinearizabilityReport {
  LinearizabilityVerdict builtin;        // check_linearizable(ops), on every run
  std::optional<KnossosReport> knossos;  // only when Knossos was asked (--knossos)
};

// True when Knossos answered (valid or invalid) and said otherwise than the
// built-in checker: a bug in one of the two, reported loudly (exit 3).
bool knossos_disagrees(const LinearizabilityReport& report);

// One line when Knossos disagrees, naming both verdicts; "" otherwise.
std::string knossos_disagreement_text(const LinearizabilityReport& report);

// How the history-only verdict relates to the ground truth's (mutual
// exclusion in true time), one line, or "" when they agree or the ground
// truth is unknown:
//   - ground truth invalid, history valid: possible and not a bug. A history
//     records what clients were told, not what they believed; a harness that
//     lets a holder act after it invoked release (or that drops ops) shows
//     overlaps in its truth that no order of the recorded ops reveals.
//     locksim's own recorder ends each belief at the release invocation, so
//     there the two agree (docs/explanation/checkers.md).
//   - ground truth valid, history invalid: a bug in how the history was
//     written (docs/explanation/checkers.md, "The history encoding"), said loudly.
std::string ground_truth_comparison(const Verdict& truth, const LinearizabilityVerdict& history);

// "valid", "invalid", "unknown (why)", for people.
std::string knossos_verdict_text(const KnossosVerdict& v);

}  // namespace locksim::checkers
