// Scenario files: everything one run needs, as JSON, so a published failure
// can be reproduced step by step and a CI job can pin a configuration.
//
//   {
//     "name": "set-nx-lua-gc-pause",
//     "summary": "one line for locksim list (optional: else the description's first sentence)",
//     "description": "one paragraph: the failure this shows",
//     "expect": "violation" | "safe" | "liveness",
//     "algorithm": "set-nx-lua",
//     "params": {"ttl": "5s"},
//     "seed": 1,
//     "duration": "60s",
//     "workload": {"clients": 3, "hold": "1s..3s", "retry_pause": "50ms",
//                  "hold_within_validity": false},
//     "redis": {"masters": 1, "replicas": 1, "replication_lag": "10ms",
//               "persistence": "none|aof-everysec|aof-always|rdb", "rdb_interval": "60s",
//               "failover": true, "down_after": "5s", "discovery_delay": "1s",
//               "timeout": "500ms"},
//     "network": {"latency_base": "200us", "latency_jitter_mean": "300us", "loss": 0},
//     "stuck_after": "30s", "schedule": "seeded",
//     "faults": ["pause @holder at 3s for 15s", "crash redis-1 at 5s for 1s"]
//   }
//
// Besides name, summary, description and expect, every key is a row of the settings
// table (harness/settings.h), read by the same parser as its flag. Every key
// but "algorithm" is optional (defaults as for `locksim run`); unknown keys
// are errors, so a typo never silently runs a default, and so is a key given
// twice in one object, as a flag given twice is.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "harness/run_config.h"

namespace locksim::harness {

struct Scenario {
  enum class Expect { kUnspecified, kSafe, kViolation, kLiveness };
  std::string name;
  std::string summary;  // one line, never empty: the file's "summary", else first_sentence()
  std::string description;
  Expect expect = Expect::kUnspecified;
  RunConfig config;
  std::string source;  // the file path, or "builtin:NAME"
  // The file's "not_live": why live mode cannot reproduce what the story
  // needs although it can run every setting and fault ("": nothing). Why a
  // field: a story that needs a given client to win a race decided by
  // sub-millisecond network jitter is invisible to any check of settings,
  // and only its author knows it. Read by `locksim agree`, never by a run.
  std::string not_live;
};

const char* to_string(Scenario::Expect e);  // "", "safe", "violation", "liveness"

// The first sentence of `text`: up to the first ". " (or "! ", "? ") that
// ends a sentence, not one inside "..." or after an abbreviation such as
// "e.g." or "vs."; the whole text when no sentence ends earlier. Trailing
// whitespace removed; "(no description)" for an empty text, so a listing
// never shows nothing.
std::string first_sentence(std::string_view text);

// Parses a scenario. Throws ConfigError "SOURCE: FIELD.PATH: expected ..., got ..."
// (one line) for invalid JSON, a missing, unknown or repeated field, or a
// malformed value. It reads, it does not validate: the checks across fields
// (a quorum above the masters, a fault naming no node) are prepare_run's
// (harness/prepared_run.h), which names fields the same way, so a scenario
// run validates once, after the CLI's --seed is applied.
Scenario parse_scenario(std::string_view json_text, const std::string& source);

// The inverse of parse_scenario(): `sc` as a scenario file in the shipped
// files' shape (scenarios/*.json): name, summary, description and expect
// where set, then "algorithm" and "seed", then every other setting whose
// value differs from the default (settings_to_json, so the table decides
// the keys and their text), one top-level key a line, an object on one line,
// each fault on its own. Written by `locksim shrink`; parse_scenario() of
// the text gives back sc's config. Deterministic: the same scenario gives
// the same bytes.
std::string scenario_file_text(const Scenario& sc);

// A shipped scenario by name, else a file by path. Throws ConfigError; for
// a name that is neither, the error suggests the nearest shipped names.
Scenario load_scenario(const std::string& name_or_path);

struct BuiltinScenario {
  const char* name;
  const char* json;
};
// Generated at build time from scenarios/*.json, sorted by name.
const std::vector<BuiltinScenario>& builtin_scenario_texts();

// The shipped scenario named `name`, or nullptr.
const BuiltinScenario* find_builtin_scenario(std::string_view name);

// "--scenario: expected a shipped scenario name or a readable file, got 'X'
// (did you mean A, B or C?)", for a name that is not shipped; `field` names
// where it was given, and `files_too` says whether a file would have done.
std::string unknown_scenario_message(const std::string& field, const std::string& name,
                                     bool files_too);

}  // namespace locksim::harness
