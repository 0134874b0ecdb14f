// Writing histories out (EDN for Knossos, JSON lines for everything else) and
// reading the JSON lines back.
//
// All output is byte-deterministic: fields in a fixed order, integers as
// integers, no iteration over unordered containers. Two runs with the same
// seed must produce files that `cmp` equal.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "history/history.h"

namespace locksim::history {

// The ops as EDN, one op map per line in true-time order, client and nemesis
// ops together, as Jepsen writes them:
//   {:index 0, :time 1000000, :process 0, :type :invoke, :f :acquire, :value nil}
//   {:index 12, :time 5000000000, :process :nemesis, :type :info, :f :pause, :value ["c1" "12s"]}
// exactly the shape Knossos's `mutex` model reads (knossos.cli reads a file of
// bare op maps). Client ops' :value is always nil and locksim's extra fields
// (client, token, fence, detail) are left out, so the file is accepted as is.
// Knossos takes the nemesis ops in its stride (checked with Knossos 0.3.16,
// wgl, linear and competition: an :info op with no invocation of its process
// is skipped), so there is no client-only mode; tests/knossos_test.cpp runs
// the real Knossos on a shipped scenario's EDN to keep it so.
std::string to_edn(const History& history);

// The ops as JSON lines, one object per op, every field. A client op:
//   {"index":0,"time_ns":1000000,"process":0,"type":"invoke","f":"acquire",
//    "client":"c1","token":"","fence":7,"detail":"timeout"}
// ("client" is the label every text shows, c1 first; "fence" only when set,
// "detail" only when non-empty); a nemesis op:
//   {"index":12,"time_ns":5000000000,"process":"nemesis","type":"info","f":"pause",
//    "value":["c1","12s"]}
// ("detail" only when non-empty: why a :skip was skipped). Ops only: the held
// intervals go into result.json through held_to_json(). Bytes in token or
// detail that are not valid UTF-8 are written as U+FFFD (JSON must be UTF-8).
std::string to_jsonl(const History& history);

// Reads what to_jsonl wrote. The result has ops only (held empty, run_length
// zero). Blank lines are skipped. Throws std::runtime_error with one line that
// names `source` (a path; "history.jsonl" when not given), the line and field, e.g.
//   history.jsonl line 3: field 'type': expected one of invoke|ok|fail|info, got "done"
// or, for an op whose fields are fine but which breaks a HistoryRules rule
// (history.h) given the ops before it, the line, the op index and the rule:
//   history.jsonl line 4: op 3: process 0 completes :release without an open
//   invocation (rule 4: a completion matches its process's open invocation, ...)
// (dense indices and true-time order are reported as field errors of "index"
// and "time_ns"). A history from outside is bad input, never an assertion.
History parse_jsonl(std::string_view text, const std::string& source = "history.jsonl");

// The ground-truth held intervals as a JSON array, in recorded order:
//   [{"client":"c2","process":1,"start_ns":..,"end_ns":..,"acquire_index":..,
//     "release_index":..,"end_reason":"release"}, ...]
// ordered_json keeps the keys in this reading order rather than sorting them.
nlohmann::ordered_json held_to_json(const History& history);

// Reads what held_to_json wrote (e.g. result.json's "held"), so a history can
// be re-checked from files. Throws std::runtime_error naming the element and
// field: "held[2]: field 'end_reason': expected one of release|crash|run-end",
// also for an interval that ends before it starts and for two intervals of
// one client that overlap (a client holds one lease at a time): the recorder
// asserts both, so a file that breaks them is bad input.
std::vector<HeldInterval> held_from_json(const nlohmann::ordered_json& held);
std::vector<HeldInterval> held_from_json(const nlohmann::json& held);

}  // namespace locksim::history
