// One shape for every checker's answer, and one rule to merge them.
//
// Each checker keeps its own detailed verdict (the overlaps, the stuck
// stretch, the stale writes...: the evidence a report draws), and also says
// what it found in this one shape, so whoever reads a run — the exit code, a
// sweep's cell, a report's headline — reads one list and never a checker by
// name. As in Jepsen's checker.clj: valid, invalid or unknown, plus why.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace locksim::checkers {

// Jepsen's :valid? — true, false, or :unknown (the checker could not decide).
enum class Validity { kValid, kInvalid, kUnknown };

// What an answer means for the lock's user; kNone when it found nothing.
//   safety       two holders at once (mutual exclusion broken in true time);
//   consequence  the guarded data was damaged (stale write, lost update,
//                oversell) — a safety finding about the data;
//   latent       no violation, but the store stopped protecting a holder that
//                still believed it held the lock (valid: exit 0, reported);
//   liveness     the lock got stuck;
//   unknown      the checker could not decide (the run is not judged valid).
enum class Kind { kNone, kSafety, kConsequence, kLatent, kLiveness, kUnknown };

const char* to_string(Validity v);  // "valid", "invalid", "unknown"
const char* to_string(Kind k);      // "none", "safety", "consequence", ...

struct Check {
  std::string checker;  // "mutual-exclusion", "liveness", "knossos", ...
  Validity validity = Validity::kValid;
  Kind kind = Kind::kNone;  // kNone exactly when it found nothing
  std::string explanation;  // one paragraph for people
  // The pieces of evidence, one line each, most telling first (at most
  // kEvidenceMax: a report shows the first; the detailed verdict has all).
  std::vector<std::string> evidence;
  // Whether this answer takes part in the run's verdict (and so its exit
  // code). The history-only checkers and exposure are reported but do not
  // decide: the ground truth (mutual exclusion in true time) does.
  bool decides = true;
  // An unknown answer here voids a liveness finding (merged() says unknown
  // over it): the run could not finish as asked (a client threw), and a
  // lock that looks stuck may be clients that died. A violation it never
  // voids: two holders were seen, whatever else went wrong.
  bool voids_run = false;
  // The check this one referees ("" for none): Knossos referees the built-in
  // linearizability checker. Two decided answers that differ are a bug in
  // one of the two, never a verdict on the lock.
  std::string referees;

  static constexpr size_t kEvidenceMax = 20;
};

// A detailed verdict's validity as a check: `invalid_kind` says what an
// invalid answer found; an unknown one is Kind::kUnknown, a valid one kNone.
Check check_of(std::string checker, Validity validity, Kind invalid_kind, std::string explanation,
               bool decides);

// Appends one line of evidence, up to Check::kEvidenceMax (the rest is in the
// checker's detailed verdict).
void add_evidence(Check& check, std::string line);

// Jepsen's merge-valid over the checks that decide: invalid over unknown over
// valid, except that an unknown answer that voids the run (Check::voids_run)
// is unknown over a liveness finding (never over a violation). An empty
// list is valid.
Validity merged(const std::vector<Check>& checks);

// The run's finding for people and for CI: "safety" (mutual exclusion broken
// or the data damaged; wins over the rest), "liveness", "latent" or "none".
// Undecided checks are not findings: a caller shows "unknown" from merged().
const char* finding(const std::vector<Check>& checks);

// A check that referees another and decided otherwise (valid vs invalid), or
// nullptr. Its explanation names both answers.
const Check* disagreement(const std::vector<Check>& checks);

}  // namespace locksim::checkers
