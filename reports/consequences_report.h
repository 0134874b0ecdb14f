// result.json's "consequences" and "exposure" objects and their summary
// lines: what a broken lock did to the guarded resource, and how long
// holders were unprotected (checkers/consequence_checker.h,
// checkers/exposure_checker.h).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "harness/run_result.h"

namespace locksim::reports {

// {"checker", "active", "workload", "fencing", "verdict", "fencing_token"
//  ("none" when accepted accesses carried no token, else "present"),
//  "note", "reads_accepted", "writes_accepted", "rejected", "final_value",
//  "stale_writes": n, "stale_write_evidence": [{"write": access, "newer": access}] (first 10),
//  "lost_increments", "lost_update_evidence": [{"write", "overwritten"}] (first 10),
//  "items", "sold", "oversold", "oversale_evidence": [access] (first 10),
//  "explanation"}; an access is {client, lease_acquire_index, fence (null if
//  none), kind, time_ns, value_before, written, accepted}.
nlohmann::ordered_json consequences_json(const checkers::ConsequenceVerdict& v);

// {"checker": "lease-exposure", "supported", "resolution_ns", "total_ns",
//  "largest_ns", "windows", "intervals_exposed", "latent", "never_told" (the
//  acquire op indices of the held intervals whose holder was never told),
//  "first_window": null | {client, acquire_index, start_ns, end_ns, duration_ns},
//  "explanation"}.
nlohmann::ordered_json exposure_json(const checkers::ExposureReport& r);

// The summary's lines: the resource's verdict (only with a store) and the
// exposure line (always, when measured).
std::string consequences_summary(const harness::RunResult& result);

}  // namespace locksim::reports
