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

using checkers::Overlap;
using checkers::Verdict;
using harness::RunResult;
using history::HeldInterval;
using Json = nlohmann::ordered_json;

double seconds(int64_t ns) {
  return static_cast<double>(ns) / 1e9;
}

Json interval_json(const history::HeldInterval& h) {
  Json j;
  j["client"] = history::client_label(h.client);
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
  j["seconds"] = k.started ? Json(k.seconds) : Json();
  j["peak_rss_bytes"] = k.started ? Json(k.peak_rss_bytes) : Json();
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
  j["locksim_result"] =
      2;  // format version: bump when a field changes meaning (2: clients as "c1")
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
  liveness["failed_attempts"] = l.failed_attempts;  // unknown ones included
  liveness["unknown_attempts"] = l.unknown_attempts;
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

}  // namespace locksim::reports
