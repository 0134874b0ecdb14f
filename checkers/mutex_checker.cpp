#include "checkers/mutex_checker.h"
#include "env/assert.h"
#include "env/parse.h"

#include <algorithm>
#include <cstdint>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <fmt/format.h>

namespace locksim::checkers {

namespace {

std::string end_text(const history::HeldInterval& h) {
  switch (h.end_reason) {
    case history::HeldInterval::EndReason::kRelease:
      return fmt::format("until {} (release op {})", format_seconds(h.end.ns), h.release_index);
    case history::HeldInterval::EndReason::kCrash:
      return fmt::format("until it crashed at {}", format_seconds(h.end.ns));
    case history::HeldInterval::EndReason::kRunEnd:
      return fmt::format("until the run ended at {}, never released", format_seconds(h.end.ns));
  }
  return "";
}

// Every field, so that two distinct intervals never compare equal and the
// order never depends on where the intervals sat in memory.
auto interval_key(const history::HeldInterval& h) {
  return std::make_tuple(h.start.ns, h.acquire_index, h.end.ns, h.release_index, h.client,
                         h.process, static_cast<int>(h.end_reason));
}

auto overlap_key(const Overlap& o) {
  return std::make_tuple(o.window_start.ns, o.a.acquire_index, o.b.acquire_index, o.a.release_index,
                         o.b.release_index, o.a.client, o.b.client, o.window_end.ns);
}

std::string explain_invalid(const std::vector<Overlap>& overlaps, size_t intervals) {
  const Overlap& o = overlaps.front();
  std::string text = fmt::format(
      "Mutual exclusion was violated: {} overlapping pair{} among {} held intervals. The first: "
      "{} (process {}) held the lock from {} (acquire op {}) {}, and {} (process "
      "{}) acquired it at {} (acquire op {}) while {} still held it, so both held it in "
      "[{}, {}) for {}.",
      overlaps.size(), overlaps.size() == 1 ? "" : "s", intervals, history::client_label(o.a.client),
      o.a.process, format_seconds(o.a.start.ns), o.a.acquire_index, end_text(o.a),
      history::client_label(o.b.client), o.b.process, format_seconds(o.b.start.ns), o.b.acquire_index,
      history::client_label(o.a.client), format_seconds(o.window_start.ns), format_seconds(o.window_end.ns),
      format_span(o.window_end.ns - o.window_start.ns));
  if (overlaps.size() > 1) {
    std::set<int> clients;  // ordered, so the list reads the same every time
    for (const Overlap& x : overlaps) {
      clients.insert(x.a.client);
      clients.insert(x.b.client);
    }
    std::string names;
    for (int c : clients) names += (names.empty() ? "" : ", ") + history::client_label(c);
    text += fmt::format(" {} more overlapping pair{} follow; clients involved: {}.",
                        overlaps.size() - 1, overlaps.size() == 2 ? "" : "s", names);
  }
  return text;
}

}  // namespace

Verdict check_mutex(const history::History& history) {
  Verdict verdict;
  const std::vector<history::HeldInterval>& held = history.held;

  // Intervals that end before they start cannot come from a correct recorder;
  // they are set aside (and make the answer kUnknown) rather than guessed at.
  std::vector<size_t> order;
  std::vector<size_t> malformed;
  order.reserve(held.size());
  for (size_t i = 0; i < held.size(); ++i) {
    (held[i].end < held[i].start ? malformed : order).push_back(i);
  }
  std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) {
    return interval_key(held[x]) < interval_key(held[y]);
  });

  // Sweep in start order. The active set holds the intervals that started
  // earlier, keyed by end so the ones that are over pop off the front. Every
  // interval still active when another starts overlaps it: each report is a
  // real pair, hence O(n log n + k).
  std::set<std::pair<int64_t, size_t>> active;  // (end ns, position in `order`)
  for (size_t pos = 0; pos < order.size(); ++pos) {
    const history::HeldInterval& b = held[order[pos]];
    // Half-open: an interval ending exactly when b starts only touches it.
    while (!active.empty() && active.begin()->first <= b.start.ns) active.erase(active.begin());
    // A zero-length interval contains no instant, so it overlaps nothing.
    if (b.end == b.start) continue;
    for (const auto& [end_ns, apos] : active) {
      const history::HeldInterval& a = held[order[apos]];
      // The sweep's invariant: everything active started no later than b and
      // ends after b starts, so the window is non-empty.
      LOCKSIM_ASSERT(a.start <= b.start && a.end > b.start && b.end > b.start);
      verdict.overlaps.push_back(Overlap{a, b, b.start, std::min(a.end, b.end)});
      LOCKSIM_ASSERT_MSG(verdict.overlaps.back().window_start < verdict.overlaps.back().window_end,
                         "an overlap has a non-empty window");
    }
    active.emplace(b.end.ns, pos);
  }
  std::stable_sort(
      verdict.overlaps.begin(), verdict.overlaps.end(),
      [](const Overlap& x, const Overlap& y) { return overlap_key(x) < overlap_key(y); });

  LOCKSIM_ASSERT(order.size() + malformed.size() == held.size());
  // A proven overlap is a violation whatever else is wrong with the history.
  if (!verdict.overlaps.empty()) {
    verdict.kind = Verdict::Kind::kInvalid;
    verdict.explanation = explain_invalid(verdict.overlaps, held.size());
  } else if (!malformed.empty()) {
    const history::HeldInterval& m = held[malformed.front()];
    verdict.kind = Verdict::Kind::kUnknown;
    verdict.explanation = fmt::format(
        "{} of {} held intervals end before they start (first: client {}, process {}, acquire op "
        "{}, [{}, {})), so the history is malformed and mutual exclusion cannot be decided; the "
        "other {} intervals do not overlap.",
        malformed.size(), held.size(), m.client, m.process, m.acquire_index,
        format_seconds(m.start.ns), format_seconds(m.end.ns), order.size());
  } else if (held.empty()) {
    verdict.kind = Verdict::Kind::kValid;
    verdict.explanation =
        "No client ever held the lock, so mutual exclusion holds trivially: the run tested "
        "nothing.";
  } else {
    verdict.kind = Verdict::Kind::kValid;
    verdict.explanation = fmt::format(
        "No two of the {} held intervals overlap in true time: at most one client believed it "
        "held the lock at any instant of the {} run.",
        held.size(), format_seconds(history.run_length.ns));
  }
  return verdict;
}

}  // namespace locksim::checkers
