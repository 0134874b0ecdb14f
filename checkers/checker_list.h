// The one list of checkers that every run and every history goes through: a
// simulated run, a live run and `locksim check` (a Jepsen EDN history) all
// call check_recorded(), which runs each checker whose input was recorded and
// says what each found in one shape (checkers/check.h), beside its detailed
// verdict. Nothing else calls a checker, so adding one is one entry here.
//
// The checkers read only what was recorded: the history (Jepsen ops and, for
// runs, the ground truth of who believed it held the lock), the guarded
// store's log, and the exposure samples; never the World that made them.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "checkers/check.h"
#include "checkers/consequence_checker.h"
#include "checkers/exposure_checker.h"
#include "checkers/knossos.h"
#include "checkers/linearizability_report.h"
#include "checkers/liveness_checker.h"
#include "checkers/mutex_checker.h"
#include "env/resource_access.h"
#include "history/history.h"

namespace locksim::checkers {

// What a run or a file recorded: the checkers' only input. Pointers are
// borrowed for the call and may be null when nothing of that kind was recorded.
struct Recorded {
  const history::History* history = nullptr;  // required
  // true: history->held is the ground truth of a run (simulated or live), so
  // the truth checkers (mutual exclusion, liveness) judge and decide; false: a
  // history from a file, judged by the history-only checkers, which then decide.
  bool truth = true;
  Duration stuck_after = Duration::seconds(10);  // liveness: > 0
  // The workload's longest planned hold (liveness's "stuck held" rule);
  // zero when unknown (a history from a file), which turns that rule off.
  Duration hold_max = Duration::zero();
  // The guarded store (simulation only): what it was, and its log in execution order.
  ResourceParams store;
  const std::vector<StoreAccess>* store_log = nullptr;
  const ExposureSamples* exposure = nullptr;  // simulation only
  // Exceptions caught inside client fibers or threads: the history may be cut short.
  const std::vector<std::string>* errors = nullptr;
  MutexModel model = MutexModel::kMutex;  // the built-in linearizability model
  std::optional<KnossosOptions> knossos;  // also ask Knossos (the referee)
};

// Every checker's detailed verdict, and the list of what each found.
struct Verdicts {
  Verdict mutex;                          // the ground truth (runs only)
  LivenessVerdict liveness;               // runs only
  LinearizabilityReport linearizability;  // the history alone, and Knossos when asked
  ConsequenceVerdict consequences;        // inactive without a store
  ExposureReport exposure;                // unsupported without samples
  std::vector<Check> checks;              // in the order above; what reads a run reads this
};

// Runs the list. Throws only what Knossos's set-up throws (a temporary file
// that cannot be written); a Knossos failure is an unknown answer, not an error.
Verdicts check_recorded(const Recorded& recorded);

// Knossos on `ops` (written to a private temporary EDN file), as the referee
// of the built-in checker's mutex-model verdict: its check is appended to
// `verdicts` (and, when `builtin` used another model, the mutex-model check
// it was compared with, deciding nothing). Returns that mutex-model verdict.
LinearizabilityVerdict referee_with_knossos(const std::vector<history::Op>& ops,
                                            const KnossosOptions& options,
                                            const LinearizabilityVerdict& builtin,
                                            Verdicts& verdicts);

}  // namespace locksim::checkers
