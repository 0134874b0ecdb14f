// The run's result for people: one screen, ending in the replay line (the
// rest is in result.json, reports/result_json.h).
#include "reports/summary_text.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "env/assert.h"
#include "env/parse.h"
#include "reports/consequences_report.h"

namespace locksim::reports {

namespace {

using harness::RunResult;

std::string interval_text(const history::HeldInterval& h) {
  switch (h.end_reason) {
    case history::HeldInterval::EndReason::kRelease:
      return fmt::format("{} (acquire op {}, release op {})", history::client_label(h.client),
                         h.acquire_index, h.release_index);
    case history::HeldInterval::EndReason::kCrash:
      return fmt::format("{} (acquire op {}, crashed)", history::client_label(h.client),
                         h.acquire_index);
    case history::HeldInterval::EndReason::kRunEnd:
      return fmt::format("{} (acquire op {}, held until run end)", history::client_label(h.client),
                         h.acquire_index);
  }
  return "";
}

std::string first_line(const std::string& s) {
  return s.substr(0, s.find('\n'));
}

const char* plural(int64_t n, const char* one, const char* many) {
  return n == 1 ? one : many;
}

// The summary's lines on the history-only checkers: one when all is well.
std::string linearizability_summary(const RunResult& result) {
  const checkers::LinearizabilityReport& r = result.linearizability;
  const checkers::LinearizabilityVerdict& v = r.builtin;
  std::string out = v.kind == checkers::Verdict::Kind::kValid
                        ? fmt::format("history: linearizable in the {} model (built-in checker)",
                                      to_string(v.model))
                        : "history: " + v.explanation;
  if (r.knossos) {
    const checkers::KnossosReport& k = *r.knossos;
    out += "; Knossos: " + checkers::knossos_verdict_text(k.verdict);
    if (k.started) {
      out +=
          fmt::format(" ({:.1f}s, {} peak)", k.seconds, checkers::format_bytes(k.peak_rss_bytes));
    }
  }
  out += "\n";
  for (const std::string& note : {checkers::ground_truth_comparison(result.mutex, v),
                                  checkers::knossos_disagreement_text(r)}) {
    if (!note.empty()) out += "  " + note + "\n";
  }
  return out;
}

}  // namespace

namespace {

// One screen: the rest is in result.json.
constexpr size_t kListedMax = 10;
constexpr size_t kErrorsMax = 5;

// The first line: the verdict, and in a few words why.
std::string headline_text(const RunResult& result) {
  const auto n = static_cast<int64_t>(result.mutex.overlaps.size());
  switch (harness::overall_verdict(result)) {
    case checkers::Verdict::Kind::kInvalid:
      if (result.mutex.kind == checkers::Verdict::Kind::kInvalid) {
        return fmt::format("VIOLATION: mutual exclusion broken {} {}\n", n,
                           plural(n, "time", "times"));
      }
      if (result.consequences.kind == checkers::Verdict::Kind::kInvalid) {
        return "VIOLATION: the guarded resource was damaged (mutual exclusion held)\n";
      }
      if (result.liveness.held_by >= 0) {
        return fmt::format(
            "LIVENESS: lock stuck with its holder {} from {} to the end of the run (no "
            "mutual-exclusion violation)\n",
            history::client_label(result.liveness.held_by),
            format_seconds(result.liveness.overdue_since.ns));
      }
      return fmt::format(
          "LIVENESS: lock stuck for the last {} of the run (no mutual-exclusion violation)\n",
          format_seconds(result.liveness.unheld_for.ns));
    case checkers::Verdict::Kind::kValid:
      return fmt::format("OK: no mutual-exclusion violation in {} {}{}\n", result.acquisitions,
                         plural(result.acquisitions, "acquisition", "acquisitions"),
                         result.exposure.latent ? " (but a latent exposure: see below)" : "");
    case checkers::Verdict::Kind::kUnknown: {
      if (result.mutex.kind == checkers::Verdict::Kind::kUnknown) {
        return "UNKNOWN: " + result.mutex.explanation + "\n";
      }
      const auto e = static_cast<int64_t>(result.errors.size());
      // A stuck lock beside a client error is not said: it may be the
      // clients that threw (checkers::Check::voids_run).
      return fmt::format(
          "UNKNOWN: no mutual-exclusion violation in {} {}, but {} client {} recorded{}\n",
          result.acquisitions, plural(result.acquisitions, "acquisition", "acquisitions"), e,
          plural(e, "error was", "errors were"),
          e > 0 ? ": the run could not finish as asked" : "");
    }
  }
  return "";
}

// The second line: what ran and how much happened.
std::string counts_text(const RunResult& result) {
  std::string out = fmt::format(
      "{}, seed {}: {} ops, {} acquisitions ({} failed, {} unknown), {} releases ({} failed, {} "
      "unknown), {} of true time",
      result.algorithm, result.seed, result.client_ops, result.acquisitions, result.acquire_fail,
      result.acquire_info, result.releases_ok, result.releases_fail, result.releases_info,
      format_seconds(result.history.run_length.ns));
  if (result.events > 0) out += fmt::format(", {} events", result.events);
  if (result.deadlocks > 0) out += fmt::format(", {} deadlocks", result.deadlocks);
  return out + "\n";
}

// Each overlapping pair of holders, the first kListedMax of them.
std::string overlaps_text(const std::vector<checkers::Overlap>& overlaps) {
  std::string out;
  for (size_t i = 0; i < overlaps.size() && i < kListedMax; ++i) {
    const checkers::Overlap& o = overlaps[i];
    out += fmt::format("  {}. {} and {} both held the lock in [{}, {}) for {}\n", i + 1,
                       interval_text(o.a), interval_text(o.b), format_seconds(o.window_start.ns),
                       format_seconds(o.window_end.ns),
                       format_span(o.window_end.ns - o.window_start.ns));
  }
  if (overlaps.size() > kListedMax) {
    out += fmt::format("  ... and {} more\n", overlaps.size() - kListedMax);
  }
  return out;
}

// The faults applied (the history's nemesis ops), on one line; "" when
// there were none.
std::string faults_text(const RunResult& result) {
  std::vector<const history::Op*> faults;
  for (const history::Op& op : result.history.ops) {
    if (!history::is_client_op(op)) faults.push_back(&op);
  }
  if (faults.empty()) return "";
  std::string out = fmt::format("faults ({}):", faults.size());
  for (size_t i = 0; i < faults.size() && i < kListedMax; ++i) {
    out += fmt::format(" {} {}{}", format_seconds(faults[i]->time_ns),
                       history::describe_nemesis_op(*faults[i]), i + 1 < faults.size() ? ";" : "");
  }
  if (faults.size() > kListedMax) {
    out += fmt::format(" ... and {} more", faults.size() - kListedMax);
  }
  return out + "\n";
}

// The first line of each client error, the first kErrorsMax of them.
std::string errors_text(const std::vector<std::string>& errors) {
  if (errors.empty()) return "";
  std::string out = fmt::format("client errors ({}):\n", errors.size());
  for (size_t i = 0; i < errors.size() && i < kErrorsMax; ++i) {
    out += "  " + first_line(errors[i]) + "\n";
  }
  if (errors.size() > kErrorsMax) {
    out += fmt::format("  ... and {} more\n", errors.size() - kErrorsMax);
  }
  return out;
}

// The backend's notes, one per line; "" when it had none.
std::string backend_notes_text(const RunResult& result) {
  std::string out;
  for (const auto& [key, text] : result.backend_notes) out += key + ": " + text + "\n";
  return out;
}

}  // namespace

std::string summary_text(const RunResult& result) {
  std::string out = headline_text(result) + counts_text(result);
  out += overlaps_text(result.mutex.overlaps);
  out += consequences_summary(result);
  if (result.liveness.kind == checkers::Verdict::Kind::kInvalid) {
    out += "  " + result.liveness.explanation + "\n";
  }
  out += linearizability_summary(result);
  out += faults_text(result);
  out += backend_notes_text(result);
  out += errors_text(result.errors);
  if (!result.replay_command.empty()) out += "replay: " + result.replay_command + "\n";
  LOCKSIM_ASSERT_MSG(!out.empty() && out.back() == '\n', "the summary ends in a newline");
  return out;
}

}  // namespace locksim::reports
