// What `locksim margin` prints and writes: one paragraph for people and
// margin.json for tools, both from the same MarginResult, both deterministic
// (no wall time, no path: the same input gives the same bytes).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "harness/margin/margin.h"

namespace locksim::reports {

// margin.json, keys in this fixed order (U is the kind's unit, "ns" for a
// duration, "ppm" for a clock drift; every size key names it):
//   {"locksim_margin": 1, "algorithm", "fault", "seed", "lease_ns", "hold_ns",
//    "range": {"lo_U", "hi_U"}, "position",
//    "outcome": "found"|"breaks-at-any-size"|"never-breaks",
//    "margin_U": N | null (the smallest size that failed),
//    "resolution_U": the search's (1 ms, 1 ppm; a drift scan's step), "unit": U,
//    ["scan": {"lo_U", "hi_U", "step_U", "runs", "bisected_U", "found_lower"}:
//     a drift's scan below its bisected edge (harness/margin/margin.h: DriftScan),]
//    "theory": {"formula", U: N | null (never breaks, or not known)},
//    "difference": {U, "percent_of_margin", "within_resolution"} | null,
//    ["tick_ns": ZooKeeper's tick, for a session lock only,]
//    "below": {"size_U", "exposed": false, "replay"} | null,
//    "above": {"size_U", "exposed": true, "replay"} | null, "probes"}
nlohmann::ordered_json margin_to_json(const harness::margin::MarginResult& m);
std::string margin_json_text(const harness::margin::MarginResult& m);

// The summary: the margin with its unit, the range searched, theory and
// difference (flagged when beyond 1 %), and both confirming runs' replay
// commands, each on its own line so it can be pasted.
std::string margin_summary(const harness::margin::MarginResult& m);

// (margin - theory) / margin in percent, rounded to 0.01; 0 for a zero margin.
double difference_percent(const harness::margin::MarginResult& m);

// margin - theory with its sign and unit: "+0.001s", "-4ppm" (kFound with a
// theory only).
std::string difference_size_text(const harness::margin::MarginResult& m);

// The search's resolution with its unit: "1ms", "1ppm".
std::string search_resolution_text(const harness::margin::MarginResult& m);

}  // namespace locksim::reports
