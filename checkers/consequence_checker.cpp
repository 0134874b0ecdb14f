#include "checkers/consequence_checker.h"

#include <algorithm>

#include <fmt/format.h>

#include "env/assert.h"
#include "env/parse.h"

namespace locksim::checkers {

namespace {

using Kind = ResourceRequest::Kind;

std::string token_text(const StoreAccess& a) {
  return a.fence ? fmt::format("token {}", *a.fence) : std::string("no token");
}

std::string access_text(const StoreAccess& a) {
  return fmt::format("{} (lease of acquire op {}, {}) {} at {}", history::client_label(a.client), a.lease_id,
                     token_text(a), a.kind == Kind::kWrite ? "write" : "read",
                     format_seconds(a.time_ns));
}

// Stale writes: an accepted write of a lease older than one already served.
void find_stale_writes(const std::vector<StoreAccess>& log, ConsequenceVerdict& v) {
  const StoreAccess* newest = nullptr;  // the accepted access of the newest lease so far
  for (const StoreAccess& a : log) {
    if (!a.accepted) continue;
    if (a.kind == Kind::kWrite && newest != nullptr && a.lease_id < newest->lease_id) {
      v.stale_writes.push_back(StaleWrite{a, *newest});
    }
    if (newest == nullptr || a.lease_id > newest->lease_id) newest = &a;
  }
}

// Tallies accesses; counter lost updates and inventory sales.
void tally(const std::vector<StoreAccess>& log, ConsequenceVerdict& v) {
  for (const StoreAccess& a : log) {
    if (!a.accepted) {
      ++v.rejected;
      continue;
    }
    if (!a.fence) ++v.unfenced_accesses;
    if (a.kind == Kind::kRead) {
      ++v.reads_accepted;
      continue;
    }
    ++v.writes_accepted;
    if (v.workload == Workload::kCounter && a.written <= a.value_before) {
      v.lost_updates.push_back(LostUpdate{a, a.value_before + 1 - a.written});
    }
    if (v.workload == Workload::kInventory) {
      ++v.sold;
      if (v.sold > v.items) v.oversales.push_back(a);
    }
  }
  v.final_value = log.empty() ? (v.workload == Workload::kInventory ? v.items : 0)
                              : log.back().value_after;
  if (v.workload == Workload::kCounter) v.lost_increments = v.writes_accepted - v.final_value;
  if (v.workload == Workload::kInventory) v.oversold = std::max<int64_t>(0, v.sold - v.items);
  LOCKSIM_ASSERT(v.sold <= v.writes_accepted && v.oversold <= v.sold && v.lost_increments >= 0);
  LOCKSIM_ASSERT(v.oversales.size() == static_cast<size_t>(v.oversold));
}

std::string explain(const ConsequenceVerdict& v) {
  std::string text;
  if (v.oversold > 0) {
    const StoreAccess& s = v.oversales.front();
    text += fmt::format(
        "Oversold: {} items sold of {} ({} too many); sale {} was {}, which saw {} in stock. ",
        v.sold, v.items, v.oversold, v.items + 1, access_text(s), s.written + 1);
  }
  if (v.lost_increments > 0) {
    text += fmt::format("Lost updates: {} of {} accepted increments vanished (final value {}).",
                        v.lost_increments, v.writes_accepted, v.final_value);
    if (!v.lost_updates.empty()) {
      const LostUpdate& l = v.lost_updates.front();
      text += fmt::format(" The first: {} stored {} over {}. ", access_text(l.write),
                          l.write.written, l.write.value_before);
    } else {
      text += " ";
    }
  }
  if (!v.stale_writes.empty()) {
    const StaleWrite& s = v.stale_writes.front();
    text += fmt::format(
        "Stale writes accepted: {}. The first: {} was accepted after {} had been, though its "
        "lease is older.",
        v.stale_writes.size(), access_text(s.write), access_text(s.newer));
  }
  if (text.empty()) {
    text = fmt::format(
        "The {} stayed consistent: {} reads and {} writes accepted, {} refused by the fencing "
        "check ({}), no stale write, no lost update, no oversell.",
        to_string(v.workload), v.reads_accepted, v.writes_accepted, v.rejected,
        to_string(v.fencing));
  }
  while (!text.empty() && text.back() == ' ') text.pop_back();
  return text;
}

}  // namespace

ConsequenceVerdict check_consequences(const ResourceParams& params,
                                      const std::vector<StoreAccess>& log) {
  ConsequenceVerdict v;
  v.workload = params.workload;
  v.fencing = params.fencing;
  v.items = params.workload == Workload::kInventory ? params.items : 0;
  v.active = params.workload != Workload::kNone;
  if (!v.active) {
    LOCKSIM_ASSERT_MSG(log.empty(), "no store ran, so nothing was logged");
    v.explanation = "No guarded resource in this run (workload none).";
    return v;
  }
  for (size_t i = 1; i < log.size(); ++i) {
    LOCKSIM_ASSERT_MSG(log[i - 1].time_ns <= log[i].time_ns, "the store's log is in time order");
  }
  find_stale_writes(log, v);
  tally(log, v);
  LOCKSIM_ASSERT(v.reads_accepted + v.writes_accepted + v.rejected ==
                 static_cast<int64_t>(log.size()));
  const bool broken = !v.stale_writes.empty() || v.lost_increments > 0 || v.oversold > 0;
  v.kind = broken ? Verdict::Kind::kInvalid : Verdict::Kind::kValid;
  v.explanation = explain(v);
  return v;
}

std::string fencing_note(const ConsequenceVerdict& v) {
  if (!v.active || v.fencing == Fencing::kNone || v.unfenced_accesses == 0) return "";
  return fmt::format(
      "no fencing token: {} accepted accesses carried none (the algorithm hands out no fencing "
      "token), so the store's {} could check nothing",
      v.unfenced_accesses, to_string(v.fencing));
}

}  // namespace locksim::checkers
