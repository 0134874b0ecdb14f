#include "checkers/liveness_checker.h"

#include "env/assert.h"
#include "env/parse.h"

#include <algorithm>
#include <vector>

namespace locksim::checkers {

LivenessVerdict check_liveness(const history::History& history, Duration stuck_after) {
  LOCKSIM_ASSERT_MSG(stuck_after > Duration::zero(), "validate() rejects stuck_after <= 0");
  LivenessVerdict v;
  const TimePoint end = TimePoint{} + history.run_length;

  // Merge held intervals into covered stretches, in true time.
  std::vector<const history::HeldInterval*> held;
  for (const history::HeldInterval& h : history.held) {
    if (h.end > h.start) held.push_back(&h);
  }
  std::sort(held.begin(), held.end(), [](const history::HeldInterval* a, const history::HeldInterval* b) {
    return a->start < b->start || (a->start == b->start && a->acquire_index < b->acquire_index);
  });
  TimePoint covered_until{};
  const history::HeldInterval* last = nullptr;
  for (const history::HeldInterval* h : held) {
    LOCKSIM_ASSERT_MSG(h->end <= end, "no hold outlasts the run");
    if (h->start - covered_until > v.longest_gap) {
      v.longest_gap = h->start - covered_until;
      v.longest_gap_start = covered_until;
    }
    if (h->end >= covered_until) {
      covered_until = h->end;
      last = h;
    }
  }
  if (end - covered_until > v.longest_gap) {
    v.longest_gap = end - covered_until;
    v.longest_gap_start = covered_until;
  }

  v.unheld_since = covered_until;
  v.unheld_for = end - covered_until;
  LOCKSIM_ASSERT(v.unheld_for >= Duration::zero() && v.unheld_for <= v.longest_gap);
  LOCKSIM_ASSERT(v.longest_gap_start + v.longest_gap <= end);
  for (const history::Op& op : history.ops) {
    if (!history::is_client_op(op)) continue;  // a fault is not an attempt, as in Jepsen
    if (op.f == history::OpF::kAcquire && op.time_ns >= covered_until.ns &&
        (op.type == history::OpType::kFail || op.type == history::OpType::kInfo)) {
      ++v.failed_attempts;
    }
  }
  if (last != nullptr) {
    v.last_holder = last->client;
    v.last_acquire_index = last->acquire_index;
  }

  LOCKSIM_ASSERT(v.failed_attempts >= 0);
  if (v.unheld_for >= stuck_after && v.failed_attempts > 0) {
    v.kind = Verdict::Kind::kInvalid;
    v.explanation = "The lock was stuck: nobody held it for the last " +
                    format_seconds(v.unheld_for.ns) + " of the run (from " +
                    format_seconds(covered_until.ns) + ") although " +
                    std::to_string(v.failed_attempts) + " acquire attempts failed in that time.";
    if (last != nullptr) {
      v.explanation += " The last holder was " + history::client_label(last->client) + " (acquire op " +
                       std::to_string(last->acquire_index) + "), whose hold ended by " +
                       to_string(last->end_reason) + " at " + format_seconds(last->end.ns) + ".";
    } else {
      v.explanation += " Nobody ever acquired it.";
    }
  } else {
    v.explanation = "No stuck lock: the longest stretch without a holder was " +
                    format_seconds(v.longest_gap.ns) + " (from " +
                    format_seconds(v.longest_gap_start.ns) + ").";
  }
  return v;
}

}  // namespace locksim::checkers
