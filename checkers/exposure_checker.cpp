#include "checkers/exposure_checker.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "env/assert.h"
#include "env/parse.h"

namespace locksim::checkers {

namespace {

std::string explain(const ExposureReport& r, const Verdict& mutex) {
  if (!r.supported) return "Exposure not measured: the backend cannot answer the question.";
  if (r.windows.empty()) {
    std::string text = fmt::format(
        "No exposure: whenever a client believed it held the lock, the store would have refused "
        "a fresh contender ({}).",
        r.resolution == Duration::zero() ? "checked at every instant it could change"
                                         : "sampled every " + format_span(r.resolution.ns));
    // Beside a violation this read as a contradiction: the one who stepped
    // in was not the fresh contender with a true clock this asks about (a
    // ZooKeeper waiter already queued; a GETSET or MySQL-table contender
    // whose own clock ran ahead).
    if (mutex.kind == Verdict::Kind::kInvalid) {
      text +=
          " The one who stepped in was not such a contender: a waiter already queued, or one "
          "whose own clock ran ahead.";
    }
    return text;
  }
  const ExposureWindow& w = r.windows.front();
  std::string text = fmt::format(
      "Exposure {} in {} window{} over {} held interval{} (largest {}): the first, {} (acquire op "
      "{}) believed it held the lock while the store would have granted it to a fresh contender "
      "in [{}, {}).",
      format_span(r.total.ns), r.windows.size(), r.windows.size() == 1 ? "" : "s",
      r.intervals_exposed, r.intervals_exposed == 1 ? "" : "s", format_span(r.largest.ns),
      history::client_label(w.client), w.acquire_index, format_seconds(w.start.ns),
      format_seconds(w.end.ns));
  if (r.latent) {
    text += " No contender stepped in, so mutual exclusion held: a latent violation.";
  } else if (mutex.kind == Verdict::Kind::kInvalid) {
    text += " A contender did step in (see the mutual-exclusion verdict).";
  }
  if (!r.never_told.empty()) {
    text += fmt::format(
        " Holder never told: in {} of them (the first from acquire op {}) the store dropped the "
        "lease while the holder's own clock still read it valid, and nothing told the holder "
        "before it released.",
        r.never_told.size(), r.never_told.front());
  }
  return text;
}

}  // namespace

ExposureReport check_exposure(const history::History& history, const ExposureSamples& samples,
                              const Verdict& mutex) {
  ExposureReport r;
  r.supported = samples.supported;
  r.resolution = samples.resolution;
  LOCKSIM_ASSERT_MSG(samples.supported || samples.windows.empty(),
                     "no windows without a backend that answers");
  // The held intervals by (client, acquire op): each window belongs to one.
  std::map<std::pair<int, int64_t>, const history::HeldInterval*> held;
  for (const history::HeldInterval& h : history.held) held[{h.client, h.acquire_index}] = &h;
  std::map<std::pair<int, int64_t>, bool> exposed;
  const std::set<int64_t> told(samples.told.begin(), samples.told.end());
  std::set<int64_t> never_told;
  for (const ExposureWindow& raw : samples.windows) {
    LOCKSIM_ASSERT_MSG(raw.start <= raw.end, "a window closes after it opens");
    const auto it = held.find({raw.client, raw.acquire_index});
    if (it == held.end()) continue;
    ExposureWindow w = raw;
    w.start = std::max(w.start, it->second->start);
    w.end = std::min(w.end, it->second->end);
    if (w.end <= w.start) continue;
    r.windows.push_back(w);
    exposed[{w.client, w.acquire_index}] = true;
    if (w.believed && told.count(w.acquire_index) == 0) never_told.insert(w.acquire_index);
  }
  r.never_told.assign(never_told.begin(), never_told.end());
  std::sort(r.windows.begin(), r.windows.end(),
            [](const ExposureWindow& a, const ExposureWindow& b) {
              return std::tie(a.start.ns, a.client, a.acquire_index, a.end.ns) <
                     std::tie(b.start.ns, b.client, b.acquire_index, b.end.ns);
            });
  for (const ExposureWindow& w : r.windows) {
    r.total += w.end - w.start;
    r.largest = std::max(r.largest, w.end - w.start);
  }
  r.intervals_exposed = static_cast<int>(exposed.size());
  LOCKSIM_ASSERT(r.never_told.size() <= exposed.size());
  LOCKSIM_ASSERT(r.largest <= r.total && (r.windows.empty() == (r.total == Duration::zero())));
  r.latent = !r.windows.empty() && mutex.kind != Verdict::Kind::kInvalid;
  r.explanation = explain(r, mutex);
  return r;
}

}  // namespace locksim::checkers
