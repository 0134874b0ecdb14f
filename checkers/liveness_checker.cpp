#include "checkers/liveness_checker.h"

#include "checkers/explain_records.h"
#include "env/assert.h"
#include "env/parse.h"

#include <algorithm>
#include <map>
#include <string>
#include <vector>

namespace locksim::checkers {

namespace {

// Acquires that did not succeed at or after `from`, and of them the ones
// whose outcome is unknown.
struct Unsuccessful {
  int64_t total = 0;
  int64_t unknown = 0;
};

Unsuccessful failed_acquires_since(const history::History& history, TimePoint from) {
  Unsuccessful n;
  for (const history::Op& op : history.ops) {
    if (!history::is_client_op(op)) continue;  // a fault is not an attempt, as in Jepsen
    if (op.f == history::OpF::kAcquire && op.time_ns >= from.ns &&
        (op.type == history::OpType::kFail || op.type == history::OpType::kInfo)) {
      ++n.total;
      if (op.type == history::OpType::kInfo) ++n.unknown;
    }
  }
  LOCKSIM_ASSERT(n.unknown <= n.total);
  return n;
}

// Acquires invoked and still waiting at the end of the history (a waiter
// that sleeps on the holder's release, as Redisson's does, never fails).
int64_t acquires_waiting_at_end(const history::History& history) {
  std::map<int64_t, bool> open;  // process -> its acquire is open
  for (const history::Op& op : history.ops) {
    if (!history::is_client_op(op) || op.f != history::OpF::kAcquire) continue;
    open[op.process] = op.type == history::OpType::kInvoke;
  }
  int64_t n = 0;
  for (const auto& [process, waiting] : open) n += waiting ? 1 : 0;
  return n;
}

// The header's "stuck held" rule: sets v.held_by and the explanation when
// one holder kept the lock past any planned hold while others tried.
void check_stuck_held(const history::History& history, Duration stuck_after, Duration hold_max,
                      LivenessVerdict& v) {
  const TimePoint end = TimePoint{} + history.run_length;
  const history::HeldInterval* hung = nullptr;
  for (const history::HeldInterval& h : history.held) {
    if (h.end_reason != history::HeldInterval::EndReason::kRunEnd) continue;
    if (h.end - h.start <= hold_max + stuck_after) continue;
    if (hung == nullptr || h.start < hung->start) hung = &h;
  }
  // A holder a pause still freezes at the end is the pause's story.
  if (hung == nullptr ||
      records::pause_at(history, history::client_label(hung->client), end) != nullptr)
    return;
  const TimePoint overdue = hung->start + hold_max;
  for (const history::HeldInterval& h : history.held) {
    if (&h != hung && h.start >= overdue) return;  // somebody else got it meanwhile
  }
  const Unsuccessful failed = failed_acquires_since(history, overdue);
  const int64_t waiting = acquires_waiting_at_end(history);
  if (failed.total == 0 && waiting == 0) return;
  LOCKSIM_ASSERT(end - overdue > stuck_after);
  v.kind = Verdict::Kind::kInvalid;
  v.held_by = hung->client;
  v.held_acquire_index = hung->acquire_index;
  v.overdue_since = overdue;
  v.failed_attempts = failed.total;
  v.unknown_attempts = failed.unknown;
  v.waiting_at_end = waiting;
  v.explanation = "The lock was stuck with its holder: " + history::client_label(hung->client) +
                  " (acquire op " + std::to_string(hung->acquire_index) + ") held it from " +
                  format_seconds(hung->start.ns) + " to the end of the run, " +
                  format_seconds((end - overdue).ns) + " past the longest planned hold (" +
                  format_seconds(hold_max.ns) + "), while " +
                  unsuccessful_text(failed.total, failed.unknown, "acquire attempt") + ", " +
                  std::to_string(waiting) +
                  " were still waiting at the end, and nobody else got it.";
}

// Every held interval, by start (then acquire). A zero-length hold (--hold
// 0s..0s) covers no time but is a grant all the same: the lock moved, so it
// ends a stretch nobody held it in.
std::vector<const history::HeldInterval*> held_in_order(const history::History& history) {
  std::vector<const history::HeldInterval*> held;
  for (const history::HeldInterval& h : history.held) {
    LOCKSIM_ASSERT(h.end >= h.start);
    held.push_back(&h);
  }
  std::sort(
      held.begin(), held.end(), [](const history::HeldInterval* a, const history::HeldInterval* b) {
        return a->start < b->start || (a->start == b->start && a->acquire_index < b->acquire_index);
      });
  return held;
}

}  // namespace

std::string unsuccessful_text(int64_t total, int64_t unknown, const std::string& noun) {
  LOCKSIM_ASSERT(unknown >= 0 && unknown <= total);
  const int64_t failed = total - unknown;
  const std::string nouns = noun + (total == 1 ? "" : "s");
  const std::string head = std::to_string(total) + " " + nouns;
  if (unknown == 0) return head + " failed";
  if (failed == 0) return head + " ended unknown";
  return std::to_string(failed) + " " + noun + (failed == 1 ? "" : "s") + " failed and " +
         std::to_string(unknown) + " ended unknown";
}

LivenessVerdict check_liveness(const history::History& history, Duration stuck_after,
                               Duration hold_max) {
  LOCKSIM_ASSERT_MSG(stuck_after > Duration::zero(), "validate() rejects stuck_after <= 0");
  LOCKSIM_ASSERT(hold_max >= Duration::zero());
  LivenessVerdict v;
  const TimePoint end = TimePoint{} + history.run_length;

  // Merge held intervals into covered stretches, in true time.
  const std::vector<const history::HeldInterval*> held = held_in_order(history);
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
  const Unsuccessful failed = failed_acquires_since(history, covered_until);
  v.failed_attempts = failed.total;
  v.unknown_attempts = failed.unknown;
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
                    unsuccessful_text(v.failed_attempts, v.unknown_attempts, "acquire attempt") +
                    " in that time.";
    if (last != nullptr) {
      v.explanation += " The last holder was " + history::client_label(last->client) +
                       " (acquire op " + std::to_string(last->acquire_index) +
                       "), whose hold ended by " + to_string(last->end_reason) + " at " +
                       format_seconds(last->end.ns) + ".";
    } else {
      v.explanation += " Nobody ever acquired it.";
    }
    return v;
  }
  v.explanation = "No stuck lock: the longest stretch without a holder was " +
                  format_seconds(v.longest_gap.ns) + " (from " +
                  format_seconds(v.longest_gap_start.ns) + ").";
  if (hold_max > Duration::zero()) check_stuck_held(history, stuck_after, hold_max, v);
  return v;
}

}  // namespace locksim::checkers
