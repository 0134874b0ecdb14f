#include "reports/consequences_report.h"

#include <fmt/format.h>

#include "env/assert.h"
#include "env/parse.h"

namespace locksim::reports {

namespace {

using Json = nlohmann::ordered_json;

// Evidence lists stop here; the counts are complete.
constexpr size_t kEvidenceMax = 10;

Json access_json(const StoreAccess& a) {
  Json j;
  j["client"] = history::client_label(a.client);
  j["lease_acquire_index"] = a.lease_id;
  j["fence"] = a.fence ? Json(*a.fence) : Json();
  j["kind"] = a.kind == ResourceRequest::Kind::kWrite ? "write" : "read";
  j["time_ns"] = a.time_ns;
  j["value_before"] = a.value_before;
  j["written"] = a.written;
  j["accepted"] = a.accepted;
  return j;
}

}  // namespace

Json consequences_json(const checkers::ConsequenceVerdict& v) {
  Json j;
  j["checker"] = v.checker;
  j["active"] = v.active;
  j["workload"] = to_string(v.workload);
  j["fencing"] = to_string(v.fencing);
  j["verdict"] = to_string(v.kind);
  j["fencing_token"] = v.unfenced_accesses > 0 ? "none" : "present";
  j["note"] = checkers::fencing_note(v);
  j["reads_accepted"] = v.reads_accepted;
  j["writes_accepted"] = v.writes_accepted;
  j["rejected"] = v.rejected;
  j["final_value"] = v.final_value;
  j["stale_writes"] = v.stale_writes.size();
  Json stale = Json::array();
  for (size_t i = 0; i < v.stale_writes.size() && i < kEvidenceMax; ++i) {
    stale.push_back(Json{{"write", access_json(v.stale_writes[i].write)},
                         {"newer", access_json(v.stale_writes[i].newer)}});
  }
  j["stale_write_evidence"] = std::move(stale);
  j["lost_increments"] = v.lost_increments;
  Json lost = Json::array();
  for (size_t i = 0; i < v.lost_updates.size() && i < kEvidenceMax; ++i) {
    lost.push_back(Json{{"write", access_json(v.lost_updates[i].write)},
                        {"overwritten", v.lost_updates[i].overwritten}});
  }
  j["lost_update_evidence"] = std::move(lost);
  j["items"] = v.items;
  j["sold"] = v.sold;
  j["oversold"] = v.oversold;
  Json over = Json::array();
  for (size_t i = 0; i < v.oversales.size() && i < kEvidenceMax; ++i) {
    over.push_back(access_json(v.oversales[i]));
  }
  j["oversale_evidence"] = std::move(over);
  j["explanation"] = v.explanation;
  return j;
}

Json exposure_json(const checkers::ExposureReport& r) {
  LOCKSIM_ASSERT(r.windows.empty() || r.total > Duration::zero());
  Json j;
  j["checker"] = "lease-exposure";
  j["supported"] = r.supported;
  j["resolution_ns"] = r.resolution.ns;
  j["total_ns"] = r.total.ns;
  j["largest_ns"] = r.largest.ns;
  j["windows"] = r.windows.size();
  j["intervals_exposed"] = r.intervals_exposed;
  j["latent"] = r.latent;
  j["never_told"] = r.never_told;  // acquire op indices of the held intervals never told
  if (r.windows.empty()) {
    j["first_window"] = Json();
  } else {
    const checkers::ExposureWindow& w = r.windows.front();
    j["first_window"] = Json{{"client", history::client_label(w.client)},
                             {"acquire_index", w.acquire_index},
                             {"start_ns", w.start.ns},
                             {"end_ns", w.end.ns},
                             {"duration_ns", (w.end - w.start).ns}};
  }
  j["explanation"] = r.explanation;
  return j;
}

std::string consequences_summary(const harness::RunResult& result) {
  std::string out;
  const checkers::ConsequenceVerdict& v = result.consequences;
  if (v.active) {
    out += fmt::format(
        "resource ({}, fencing {}): {}{}\n", to_string(v.workload), to_string(v.fencing),
        v.kind == checkers::Verdict::Kind::kInvalid ? "DAMAGED: " : "", v.explanation);
    const std::string note = checkers::fencing_note(v);
    if (!note.empty()) out += "  " + note + "\n";
  }
  const checkers::ExposureReport& e = result.exposure;
  if (e.supported) {
    out += fmt::format("exposure{}: {}\n", e.latent ? " (LATENT)" : "", e.explanation);
  }
  return out;
}

}  // namespace locksim::reports
