// The per-run result: result.json, and the one-screen text summary the CLI
// prints after a run.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "harness/run_result.h"

namespace locksim::reports {

// result.json as a JSON value, keys in this fixed order:
//   {"locksim_result": 2, "algorithm", "seed", "params",
//    "verdict": "valid"|"invalid"|"unknown"        (harness::overall_verdict)
//    "finding": "safety"|"liveness"|"none"         (harness::finding)
//    "safety": {"checker", "verdict", "violations", "explanation",
//               "overlaps": [{"window": {start_ns, end_ns, duration_ns, start_s, end_s},
//                             "a": {client, process, acquire_index, release_index,
//                                   start_ns, end_ns, end_reason, start_s, end_s},
//                             "b": {...}}]},
//    "linearizability": {checker, model, verdict, client_ops, calls, info_calls, fail_calls,
//                        unlinearizable, state_from, prefix_end_index, prefix_ops,
//                        explanation, ground_truth, knossos: null | {verdict, op_index, why,
//                        agrees, seconds, peak_rss_bytes, shared_call}}   (the history alone)
//    "liveness": {checker, verdict, stuck, unheld_since_ns, unheld_for_ns, failed_attempts,
//                 unknown_attempts (of failed_attempts, those of unknown outcome),
//                 last_holder, longest_gap_ns, longest_gap_start_ns, explanation},
//    "faults": [{index, time_ns, f, value, what}]  (the history's nemesis ops, in order:
//              index, f and value as in history.jsonl, what = describe_nemesis_op)
//    "profile": {"name", "schedule": ["pause @holder at 5s for 12s", ...]}
//              (only with a fault profile: the faults it drew, in --fault syntax)
//    "counts": {ops (client ops only), held_intervals, acquisitions, acquire_fail, acquire_info,
//               releases_ok, releases_fail, releases_info, events, run_length_ns},
//    "held": [...harness::held_to_json...], "errors": [...], "replay": "..."}
// Times are integer nanoseconds since run start; the *_s fields repeat them in
// seconds for people reading the file.
nlohmann::ordered_json result_to_json(const harness::RunResult& result);

// The bytes of result.json: result_to_json indented by 2, a trailing newline,
// and invalid UTF-8 (a verbatim error text can hold anything) replaced by
// U+FFFD instead of throwing.
std::string result_json_text(const harness::RunResult& result);

// The summary the CLI prints, several lines, ending in a newline:
//   VIOLATION: mutual exclusion broken 3 times        (or OK: / UNKNOWN:)
//   redlock, seed 42: 1234 ops, 312 acquisitions (...), 310 releases (...), ...
//     1. c2 (acquire op 17, release op 25) and c4 (...) both held
//        the lock in [12.345s, 14.000s) for 1.655s
//     ... and 2 more                                   (after the first 10)
//   client errors (1): ...
//   replay: locksim run --algorithm redlock --seed 42 ...
}  // namespace locksim::reports
