#include "checkers/checker_list.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "env/assert.h"
#include "env/parse.h"

namespace locksim::checkers {

namespace {

Check mutex_check(const Verdict& v) {
  Check c = check_of(v.checker, v.kind, Kind::kSafety, v.explanation, true);
  for (const Overlap& o : v.overlaps) {
    add_evidence(c,
                 fmt::format("{} (acquire op {}) and {} (acquire op {}) both held in [{}, {})",
                             history::client_label(o.a.client), o.a.acquire_index,
                             history::client_label(o.b.client), o.b.acquire_index,
                             format_seconds(o.window_start.ns), format_seconds(o.window_end.ns)));
  }
  return c;
}

Check liveness_check(const LivenessVerdict& v) {
  Check c = check_of(v.checker, v.kind, Kind::kLiveness, v.explanation, true);
  if (v.kind == Validity::kInvalid) {
    add_evidence(c, fmt::format("unheld from {} for {}, {}", format_seconds(v.unheld_since.ns),
                                format_duration(v.unheld_for),
                                unsuccessful_text(v.failed_attempts, v.unknown_attempts,
                                                  "acquire attempt")));
  }
  return c;
}

Check consequence_check(const ConsequenceVerdict& v) {
  Check c = check_of(v.checker, v.kind, Kind::kConsequence, v.explanation, true);
  for (const StaleWrite& s : v.stale_writes) {
    add_evidence(c,
                 fmt::format("stale write by {} at {} (lease {}) after lease {}",
                             history::client_label(s.write.client), format_seconds(s.write.time_ns),
                             s.write.lease_id, s.newer.lease_id));
  }
  if (v.lost_increments > 0) add_evidence(c, fmt::format("{} increments lost", v.lost_increments));
  if (v.oversold > 0) add_evidence(c, fmt::format("{} items oversold", v.oversold));
  return c;
}

// Exposure never decides: without an overlap it is a near miss (latent), and
// with one, the mutual-exclusion check already has the violation.
Check exposure_check(const ExposureReport& r) {
  Check c;
  c.checker = "exposure";
  c.kind = r.latent ? Kind::kLatent : Kind::kNone;
  c.explanation = r.explanation;
  c.decides = false;
  for (const ExposureWindow& w : r.windows) {
    add_evidence(c, fmt::format("{} (acquire op {}) unprotected in [{}, {})",
                                history::client_label(w.client), w.acquire_index,
                                format_seconds(w.start.ns), format_seconds(w.end.ns)));
  }
  return c;
}

// The holders whose store dropped their lease inside what they believed, and
// whom nothing told (checkers/exposure_checker.h). Reported, never deciding:
// with an overlap it is why the overlap happened, without one a near miss.
Check never_told_check(const ExposureReport& r) {
  Check c;
  c.checker = "holder-never-told";
  c.kind = r.never_told.empty() ? Kind::kNone : Kind::kLatent;
  c.decides = false;
  if (r.never_told.empty()) return c;
  c.explanation = fmt::format(
      "{} held interval{} lost {} lease while the holder believed it valid, and nothing told the "
      "holder before it released.",
      r.never_told.size(), r.never_told.size() == 1 ? "" : "s",
      r.never_told.size() == 1 ? "its" : "their");
  std::set<int64_t> told_of;  // one line per interval: its first window
  for (const ExposureWindow& w : r.windows) {
    if (!w.believed ||
        !std::binary_search(r.never_told.begin(), r.never_told.end(), w.acquire_index))
      continue;
    if (!told_of.insert(w.acquire_index).second) continue;
    add_evidence(c, fmt::format("{} (acquire op {}) believed it held; the store let go at {}",
                                history::client_label(w.client), w.acquire_index,
                                format_seconds(w.start.ns)));
  }
  return c;
}

// Exceptions inside client fibers: the history may be cut short and the
// clients that threw stopped trying, so the run is unknown over a liveness
// finding (Check::voids_run): every client dead looks like a stuck lock.
Check errors_check(const std::vector<std::string>& errors) {
  Check c = check_of("client-errors", errors.empty() ? Validity::kValid : Validity::kUnknown,
                     Kind::kUnknown,
                     errors.empty() ? ""
                                    : fmt::format("{} {} inside clients", errors.size(),
                                                  errors.size() == 1 ? "exception" : "exceptions"),
                     true);
  for (const std::string& e : errors) add_evidence(c, e);
  c.voids_run = true;
  return c;
}

}  // namespace

Verdicts check_recorded(const Recorded& in) {
  LOCKSIM_ASSERT(in.history != nullptr);
  const history::History& h = *in.history;
  Verdicts v;
  if (in.truth) {
    v.mutex = check_mutex(h);
    v.checks.push_back(mutex_check(v.mutex));
    v.liveness = check_liveness(h, in.stuck_after, in.hold_max);
    v.checks.push_back(liveness_check(v.liveness));
  }
  v.linearizability.builtin = check_linearizable(h.ops, in.model);
  const LinearizabilityVerdict& lin = v.linearizability.builtin;
  // The history alone decides only where there is no ground truth to ask.
  v.checks.push_back(check_of(lin.checker, lin.kind, Kind::kSafety, lin.explanation, !in.truth));
  if (in.store_log != nullptr) {
    v.consequences = check_consequences(in.store, *in.store_log);
    v.checks.push_back(consequence_check(v.consequences));
  }
  if (in.exposure != nullptr) {
    LOCKSIM_ASSERT_MSG(in.truth, "exposure is measured against held intervals");
    v.exposure = check_exposure(h, *in.exposure, v.mutex);
    v.checks.push_back(exposure_check(v.exposure));
    v.checks.push_back(never_told_check(v.exposure));
  }
  if (in.errors != nullptr) v.checks.push_back(errors_check(*in.errors));
  if (in.knossos) referee_with_knossos(h.ops, *in.knossos, lin, v);
  LOCKSIM_ASSERT(!v.checks.empty());
  return v;
}

}  // namespace locksim::checkers
