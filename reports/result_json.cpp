#include "reports/result_json.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "env/assert.h"
#include "env/parse.h"
#include "history/history_io.h"
#include "reports/consequences_report.h"

namespace locksim::reports {

namespace {

using history::HeldInterval;
using checkers::Overlap;
using harness::RunResult;
using checkers::Verdict;
using Json = nlohmann::ordered_json;

double seconds(int64_t ns) {
  return static_cast<double>(ns) / 1e9;
}

Json interval_json(const history::HeldInterval& h) {
  Json j;
  j["client"] = h.client;
  j["process"] = h.process;
  j["acquire_index"] = h.acquire_index;
  j["release_index"] = h.release_index;
  j["start_ns"] = h.start.ns;
  j["end_ns"] = h.end.ns;
  j["end_reason"] = to_string(h.end_reason);
  j["start_s"] = seconds(h.start.ns);
  j["end_s"] = seconds(h.end.ns);
  return j;
}

Json overlap_json(const checkers::Overlap& o) {
  Json window;
  window["start_ns"] = o.window_start.ns;
  window["end_ns"] = o.window_end.ns;
  window["duration_ns"] = o.window_end.ns - o.window_start.ns;
  window["start_s"] = seconds(o.window_start.ns);
  window["end_s"] = seconds(o.window_end.ns);
  Json j;
  j["window"] = std::move(window);
  j["a"] = interval_json(o.a);
  j["b"] = interval_json(o.b);
  return j;
}

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

Json call_json(const std::optional<checkers::LockCall>& c) {
  if (!c) return Json();
  Json j;
  j["process"] = c->process;
  j["client"] = c->client < 0 ? Json() : Json(history::client_label(c->client));
  j["f"] = to_string(c->f);
  j["outcome"] = to_string(c->outcome);
  j["invoke_index"] = c->invoke_index;
  j["complete_index"] = c->complete_index < 0 ? Json() : Json(c->complete_index);
  return j;
}

Json knossos_json(const checkers::LinearizabilityReport& report) {
  const checkers::KnossosReport& k = *report.knossos;
  Json j;
  j["verdict"] = to_string(k.verdict.kind);
  j["op_index"] = k.verdict.op_index < 0 ? Json() : Json(k.verdict.op_index);
  j["why"] = k.verdict.why;
  j["agrees"] = !checkers::knossos_disagrees(report);
  // Real time and memory: the one part of result.json that differs between
  // two runs of the same seed, and only when Knossos was asked.
  j["seconds"] = k.seconds;
  j["peak_rss_bytes"] = k.peak_rss_bytes;
  j["shared_call"] = k.shared_call;
  return j;
}

// result.json's "linearizability": the history-only checkers beside the ground truth.
Json linearizability_json(const RunResult& result) {
  const checkers::LinearizabilityVerdict& v = result.linearizability.builtin;
  Json j;
  j["checker"] = v.checker;
  j["model"] = to_string(v.model);
  j["verdict"] = to_string(v.kind);
  j["client_ops"] = v.client_ops;
  j["calls"] = v.calls;
  j["info_calls"] = v.info_calls;
  j["fail_calls"] = v.fail_calls;
  j["unlinearizable"] = call_json(v.unlinearizable);
  j["state_from"] = call_json(v.state_from);
  j["prefix_end_index"] = v.prefix_end_index < 0 ? Json() : Json(v.prefix_end_index);
  j["prefix_ops"] = v.prefix_ops;
  j["explanation"] = v.explanation;
  j["ground_truth"] = checkers::ground_truth_comparison(result.mutex, v);
  j["knossos"] = result.linearizability.knossos ? knossos_json(result.linearizability) : Json();
  return j;
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
    out += fmt::format("; Knossos: {} ({:.1f}s, {} peak)", checkers::knossos_verdict_text(k.verdict),
                       k.seconds, checkers::format_bytes(k.peak_rss_bytes));
  }
  out += "\n";
  for (const std::string& note :
       {checkers::ground_truth_comparison(result.mutex, v), checkers::knossos_disagreement_text(r)}) {
    if (!note.empty()) out += "  " + note + "\n";
  }
  return out;
}

// The backend's notes as one object, key -> text, in the backend's order.
Json backend_notes_json(const RunResult& result) {
  Json notes = Json::object();
  for (const auto& [key, text] : result.backend_notes) notes[key] = text;
  return notes;
}

// The timeline's fault markers: the history's nemesis ops, not a second log.
Json faults_json(const RunResult& result) {
  Json faults = Json::array();
  for (const history::Op& op : result.history.ops) {
    if (history::is_client_op(op)) continue;
    Json fj;
    fj["index"] = op.index;
    fj["time_ns"] = op.time_ns;
    fj["f"] = to_string(op.f);
    fj["value"] = op.value;
    fj["what"] = history::describe_nemesis_op(op);
    faults.push_back(std::move(fj));
  }
  return faults;
}

Json profile_json(const RunResult& result) {
  LOCKSIM_ASSERT(!result.profile.empty());
  Json profile;
  profile["name"] = result.profile;
  Json schedule = Json::array();
  for (const auto& e : result.profile_faults.events) schedule.push_back(e.describe());
  profile["schedule"] = schedule;
  return profile;
}

}  // namespace

Json result_to_json(const RunResult& result) {
  Json j;
  j["locksim_result"] = 1;  // format version: bump when a field changes meaning
  j["algorithm"] = result.algorithm;
  j["seed"] = result.seed;
  // params arrives as nlohmann::json (keys sorted), which is deterministic too.
  j["params"] = Json(result.params);
  j["verdict"] = to_string(harness::overall_verdict(result));
  j["finding"] = checkers::finding(result.checks);

  Json safety;
  safety["checker"] = result.mutex.checker;
  safety["verdict"] = to_string(result.mutex.kind);
  safety["violations"] = result.mutex.overlaps.size();
  safety["explanation"] = result.mutex.explanation;
  Json overlaps = Json::array();
  for (const checkers::Overlap& o : result.mutex.overlaps) overlaps.push_back(overlap_json(o));
  safety["overlaps"] = std::move(overlaps);
  j["safety"] = std::move(safety);
  j["consequences"] = consequences_json(result.consequences);
  j["exposure"] = exposure_json(result.exposure);
  j["linearizability"] = linearizability_json(result);

  const checkers::LivenessVerdict& l = result.liveness;
  Json liveness;
  liveness["checker"] = l.checker;
  liveness["verdict"] = to_string(l.kind);
  liveness["stuck"] = l.kind == checkers::Verdict::Kind::kInvalid;
  liveness["unheld_since_ns"] = l.unheld_since.ns;
  liveness["unheld_for_ns"] = l.unheld_for.ns;
  liveness["failed_attempts"] = l.failed_attempts;
  liveness["last_holder"] = l.last_holder < 0 ? Json() : Json(history::client_label(l.last_holder));
  liveness["longest_gap_ns"] = l.longest_gap.ns;
  liveness["longest_gap_start_ns"] = l.longest_gap_start.ns;
  liveness["explanation"] = l.explanation;
  j["liveness"] = std::move(liveness);

  j["faults"] = faults_json(result);
  // The schedule a profile drew (data: `locksim run --fault ...` with these
  // replays the same faults without the profile); only runs with a profile.
  if (!result.profile.empty()) j["profile"] = profile_json(result);

  Json counts;
  counts["ops"] = result.client_ops;
  counts["held_intervals"] = result.history.held.size();
  counts["acquisitions"] = result.acquisitions;
  counts["acquire_fail"] = result.acquire_fail;
  counts["acquire_info"] = result.acquire_info;
  counts["releases_ok"] = result.releases_ok;
  counts["releases_fail"] = result.releases_fail;
  counts["releases_info"] = result.releases_info;
  counts["events"] = result.events;
  // Only backends that can deadlock report it (MySQL's v1: the article's complaint).
  if (result.deadlocks > 0) counts["deadlocks"] = result.deadlocks;
  counts["run_length_ns"] = result.history.run_length.ns;
  j["counts"] = std::move(counts);

  j["held"] = history::held_to_json(result.history);
  j["errors"] = Json(result.errors);
  j["replay"] = result.replay_command;
  j["backend"] = backend_notes_json(result);
  return j;
}

std::string result_json_text(const RunResult& result) {
  return result_to_json(result).dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

namespace {

// One screen: the rest is in result.json.
constexpr size_t kMaxListed = 10;
constexpr size_t kMaxErrors = 5;

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
      return fmt::format(
          "UNKNOWN: no mutual-exclusion violation in {} {}, but {} client {} recorded\n",
          result.acquisitions, plural(result.acquisitions, "acquisition", "acquisitions"), e,
          plural(e, "error was", "errors were"));
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

// Each overlapping pair of holders, the first kMaxListed of them.
std::string overlaps_text(const std::vector<checkers::Overlap>& overlaps) {
  std::string out;
  for (size_t i = 0; i < overlaps.size() && i < kMaxListed; ++i) {
    const checkers::Overlap& o = overlaps[i];
    out += fmt::format("  {}. {} and {} both held the lock in [{}, {}) for {}\n", i + 1,
                       interval_text(o.a), interval_text(o.b), format_seconds(o.window_start.ns),
                       format_seconds(o.window_end.ns),
                       format_span(o.window_end.ns - o.window_start.ns));
  }
  if (overlaps.size() > kMaxListed) {
    out += fmt::format("  ... and {} more\n", overlaps.size() - kMaxListed);
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
  for (size_t i = 0; i < faults.size() && i < kMaxListed; ++i) {
    out += fmt::format(" {} {}{}", format_seconds(faults[i]->time_ns),
                       history::describe_nemesis_op(*faults[i]), i + 1 < faults.size() ? ";" : "");
  }
  if (faults.size() > kMaxListed) {
    out += fmt::format(" ... and {} more", faults.size() - kMaxListed);
  }
  return out + "\n";
}

// The first line of each client error, the first kMaxErrors of them.
std::string errors_text(const std::vector<std::string>& errors) {
  if (errors.empty()) return "";
  std::string out = fmt::format("client errors ({}):\n", errors.size());
  for (size_t i = 0; i < errors.size() && i < kMaxErrors; ++i) {
    out += "  " + first_line(errors[i]) + "\n";
  }
  if (errors.size() > kMaxErrors) {
    out += fmt::format("  ... and {} more\n", errors.size() - kMaxErrors);
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
