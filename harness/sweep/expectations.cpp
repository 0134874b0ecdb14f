#include "harness/sweep/expectations.h"

#include <algorithm>
#include <optional>
#include <set>

#include "algorithms/registry.h"
#include "env/assert.h"
#include "env/parse.h"
#include "faults/profile.h"
#include "harness/strict_json.h"

namespace locksim::harness {

namespace {

using Json = nlohmann::json;

Expected expected_from(const Json& v, const std::string& field) {
  const std::string text = v.is_string() ? v.get<std::string>() : v.dump();
  if (text == "safe") return Expected::kSafe;
  if (text == "violation") return Expected::kViolation;
  if (text == "liveness") return Expected::kLiveness;
  if (text == "any") return Expected::kAny;
  throw ConfigError(field + ": expected one of safe, violation, liveness, any, got '" + text + "'");
}

std::string string_field(const Json& cell, const char* key, const std::string& field) {
  if (!cell.contains(key)) throw ConfigError(field + "." + key + ": missing");
  const Json& v = cell.at(key);
  if (!v.is_string()) throw ConfigError(field + "." + key + ": expected a string, got " + v.dump());
  return v.get<std::string>();
}

// `key` ("verdict" or "data") and its bound `within_key`, into *verdict and
// *within: a violation needs a bound >= 1, nothing else may have one.
void parse_verdict(const Json& cell, const char* key, const char* within_key,
                   const std::string& field, Expected* verdict, int64_t* within) {
  *verdict = expected_from(cell.at(key), field + "." + key);
  if (cell.contains(within_key)) {
    if (*verdict != Expected::kViolation) {
      throw ConfigError(field + "." + within_key + ": only a " + key + " violation has one");
    }
    const Json& v = cell.at(within_key);
    if (!v.is_number_integer() || v.get<int64_t>() < 1) {
      throw ConfigError(field + "." + within_key + ": expected a whole number >= 1, got " +
                        v.dump());
    }
    *within = v.get<int64_t>();
  } else if (*verdict == Expected::kViolation) {
    throw ConfigError(field + "." + within_key + ": missing (a " + key +
                      " violation says within how many seeds)");
  }
  LOCKSIM_ASSERT((*verdict == Expected::kViolation) == (*within >= 1));
}

CellExpectation parse_cell(const Json& cell, const std::string& field) {
  if (!cell.is_object()) throw ConfigError(field + ": expected an object");
  static const std::set<std::string> kKeys = {
      "algorithm", "profile", "verdict", "seeds_within", "data", "data_seeds_within", "note"};
  for (const auto& [key, value] : cell.items()) {
    if (kKeys.count(key) == 0) throw ConfigError(field + "." + key + ": unknown key");
  }
  CellExpectation e;
  e.algorithm = string_field(cell, "algorithm", field);
  const algorithms::AlgorithmSpec* spec = nullptr;
  try {
    spec = algorithms::find_algorithm(e.algorithm);
  } catch (const ConfigError& error) {
    // A script: name loads its file, and the loader's message names only the
    // script ("other.json: cannot read the script file"): say whose field it is.
    throw ConfigError(field + ".algorithm: " + error.what());
  }
  if (spec == nullptr) {
    throw ConfigError(field + ".algorithm: expected one of " + algorithms::algorithm_names() +
                      ", got '" + e.algorithm + "'");
  }
  e.profile = string_field(cell, "profile", field);
  if (e.profile.empty()) throw ConfigError(field + ".profile: expected a profile, got ''");
  faults::parse_profile(e.profile, field + ".profile");
  if (!cell.contains("verdict")) throw ConfigError(field + ".verdict: missing");
  parse_verdict(cell, "verdict", "seeds_within", field, &e.verdict, &e.seeds_within);
  if (cell.contains("data")) {
    parse_verdict(cell, "data", "data_seeds_within", field, &e.data, &e.data_seeds_within);
    if (e.data == Expected::kLiveness) {
      throw ConfigError(field + ".data: expected one of safe, violation, any, got 'liveness'");
    }
  } else if (cell.contains("data_seeds_within")) {
    throw ConfigError(field + ".data_seeds_within: only a data violation has one");
  }
  if (cell.contains("note")) e.note = string_field(cell, "note", field);
  return e;
}

}  // namespace

const char* to_string(Expected e) {
  switch (e) {
    case Expected::kSafe:
      return "safe";
    case Expected::kViolation:
      return "violation";
    case Expected::kLiveness:
      return "liveness";
    case Expected::kAny:
      return "any";
  }
  return "?";
}

const CellExpectation* Expectations::find(const std::string& algorithm,
                                          const std::string& profile) const {
  for (const auto& c : cells) {
    if (c.algorithm == algorithm && c.profile == profile) return &c;
  }
  return nullptr;
}

Expectations parse_expectations(const Json& j, const std::string& source) {
  if (!j.is_object()) throw ConfigError(source + ": expected a JSON object");
  for (const auto& [key, value] : j.items()) {
    if (key != "locksim_expectations" && key != "description" && key != "cells") {
      throw ConfigError(source + ": " + key + ": unknown key");
    }
  }
  if (!j.contains("locksim_expectations") || j.at("locksim_expectations") != 1) {
    throw ConfigError(source + ": locksim_expectations: expected 1");
  }
  if (!j.contains("cells") || !j.at("cells").is_array()) {
    throw ConfigError(source + ": cells: expected an array");
  }
  Expectations out;
  out.source = source;
  const Json& cells = j.at("cells");
  for (size_t i = 0; i < cells.size(); ++i) {
    const std::string field = source + ": cells[" + std::to_string(i) + "]";
    CellExpectation e = parse_cell(cells[i], field);
    if (out.find(e.algorithm, e.profile) != nullptr) {
      throw ConfigError(field + ": " + e.algorithm + " x " + e.profile + " given twice");
    }
    out.cells.push_back(std::move(e));
  }
  LOCKSIM_ASSERT(out.cells.size() == cells.size());
  return out;
}

Expectations load_expectations(const std::string& path) {
  const std::string named = "--expect: " + path;
  const std::optional<std::string> text = read_json_file(path, named);
  if (!text) throw ConfigError("--expect: cannot read '" + path + "'");
  return parse_expectations(parse_strict_json(*text, named), path);
}

namespace {

// One expectation (the lock's or the data's) against its facts. `what` is ""
// for the lock and "data " for the data, so failures read "lost detection" or
// "data lost detection". Leaves `g` alone when the expectation holds.
struct Observed {
  int64_t violations = 0;
  int64_t first_position = 0;  // 1-based seed position of the first; 0 none
  std::string first_replay;
};

// "1 seed", "30 seeds".
std::string seeds_text(int64_t n) {
  return std::to_string(n) + (n == 1 ? " seed" : " seeds");
}

void judge_one(Expected verdict, int64_t within, const Observed& o, const CellFacts& f,
               const std::string& what, GateOutcome& g) {
  if (verdict == Expected::kAny) return;
  if (verdict != Expected::kViolation) {
    if (o.violations == 0) return;
    g.holds = false;
    g.failure = what + "false alarm";
    g.message =
        "expected " + what + to_string(verdict) + ", found " + std::to_string(o.violations) +
        (o.violations == 1 ? " violating run" : " violating runs") + "; first: " + o.first_replay;
    return;
  }
  LOCKSIM_ASSERT_MSG(within >= 1, "parse_cell gives every violation its bound");
  const bool found = o.first_position > 0 && o.first_position <= within;
  if (found) return;
  if (o.first_position == 0 && f.seeds_run < within) {
    // Not every seed within the bound ran: the sweep has fewer seeds than
    // the bound, or it was interrupted, or this is one shard. No verdict,
    // rather than a lost detection that is not one.
    g.gated = false;
    g.not_judged = true;
    g.failure.clear();
    g.message = f.seeds_planned < within
                    ? "not judged: not enough seeds: a " + what + "violation is expected within " +
                          seeds_text(within) + ", the sweep has " + std::to_string(f.seeds_planned)
                    : "not judged: " + std::to_string(f.seeds_run) + " of the first " +
                          seeds_text(within) + " ran";
    return;
  }
  g.holds = false;
  g.failure = what + "lost detection";
  g.message =
      "expected a " + what + "violation within " + seeds_text(within) + ", " +
      (o.first_position == 0 ? "found none in " + std::to_string(f.seeds_run)
                             : "first found at seed position " + std::to_string(o.first_position) +
                                   ": " + o.first_replay);
}

}  // namespace

GateOutcome judge_cell(const CellExpectation* e, const CellFacts& f) {
  LOCKSIM_ASSERT(f.safety <= f.runs && f.unknown <= f.runs);
  LOCKSIM_ASSERT(f.data_violations <= f.data_runs && f.data_runs <= f.runs);
  GateOutcome lock;
  if (e == nullptr || (e->verdict == Expected::kAny && e->data == Expected::kAny)) return lock;
  if (f.runs == 0) {
    // A shard holding none of the cell's seeds held a "safe" cell on nothing:
    // no violation in no runs.
    lock.not_judged = true;
    lock.message = "not judged: none of its " + seeds_text(f.seeds_planned) + " ran";
    return lock;
  }
  if (f.unknown > 0) {
    lock.gated = true;
    lock.holds = false;
    lock.failure = "unknown verdicts";
    lock.message = std::to_string(f.unknown) + (f.unknown == 1 ? " run" : " runs") +
                   " ended with a client error; first: " + f.first_unknown_replay;
    return lock;
  }
  if (e->verdict == Expected::kSafe && f.runs > 0 && f.acquisitions == 0) {
    lock.gated = true;
    lock.holds = false;
    lock.failure = "never acquired";
    lock.message = "expected safe, but none of its " + std::to_string(f.runs) +
                   " runs acquired the lock: a lock that never grants is safe by default, "
                   "not by design";
    return lock;
  }
  // The lock first; then, if it holds, the data. Each part is judged (gated)
  // unless it expects nothing or not every seed of its bound ran.
  lock.gated = e->verdict != Expected::kAny;
  judge_one(e->verdict, e->seeds_within,
            {f.safety, f.first_violation_position, f.first_violation_replay}, f, "", lock);
  if (!lock.holds || e->data == Expected::kAny) return lock;
  GateOutcome data;
  data.gated = true;
  if (f.data_runs == 0 && f.runs > 0) {
    data.holds = false;
    data.failure = "data not checked";
    data.message =
        std::string("expected data ") + to_string(e->data) +
        ", but no run guarded a resource (--workload, or the algorithm's sweep settings)";
    return data;
  }
  judge_one(e->data, e->data_seeds_within,
            {f.data_violations, f.first_data_violation_position, f.first_data_violation_replay}, f,
            "data ", data);
  if (!data.holds) return data;
  data.gated = data.gated || lock.gated;
  // Judged on the lock or on the data is judged; not judged only when neither was.
  data.not_judged = !data.gated && (data.not_judged || lock.not_judged);
  if (data.message.empty()) data.message = lock.message;
  LOCKSIM_ASSERT(data.holds && data.failure.empty());
  return data;
}

}  // namespace locksim::harness
