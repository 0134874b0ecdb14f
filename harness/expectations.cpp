#include "harness/expectations.h"

#include <algorithm>
#include <fstream>
#include <set>

#include "algorithms/registry.h"
#include "env/assert.h"
#include "env/parse.h"
#include "faults/profile.h"

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

CellExpectation parse_cell(const Json& cell, const std::string& field) {
  if (!cell.is_object()) throw ConfigError(field + ": expected an object");
  static const std::set<std::string> kKeys = {"algorithm", "profile", "verdict", "seeds_within",
                                              "note"};
  for (const auto& [key, value] : cell.items()) {
    if (kKeys.count(key) == 0) throw ConfigError(field + "." + key + ": unknown key");
  }
  CellExpectation e;
  e.algorithm = string_field(cell, "algorithm", field);
  if (algorithms::find_algorithm(e.algorithm) == nullptr) {
    throw ConfigError(field + ".algorithm: expected one of " + algorithms::algorithm_names() +
                      ", got '" + e.algorithm + "'");
  }
  e.profile = string_field(cell, "profile", field);
  if (e.profile.empty()) throw ConfigError(field + ".profile: expected a profile, got ''");
  faults::parse_profile(e.profile, field + ".profile");
  if (!cell.contains("verdict")) throw ConfigError(field + ".verdict: missing");
  e.verdict = expected_from(cell.at("verdict"), field + ".verdict");
  if (cell.contains("seeds_within")) {
    if (e.verdict != Expected::kViolation) {
      throw ConfigError(field + ".seeds_within: only a violation cell has one");
    }
    const Json& v = cell.at("seeds_within");
    if (!v.is_number_integer() || v.get<int64_t>() < 1) {
      throw ConfigError(field + ".seeds_within: expected a whole number >= 1, got " + v.dump());
    }
    e.seeds_within = v.get<int64_t>();
  } else if (e.verdict == Expected::kViolation) {
    throw ConfigError(field +
                      ".seeds_within: missing (a violation cell says within how many seeds)");
  }
  if (cell.contains("note")) e.note = string_field(cell, "note", field);
  LOCKSIM_ASSERT((e.verdict == Expected::kViolation) == (e.seeds_within >= 1));
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
  std::ifstream in(path);
  if (!in) throw ConfigError("--expect: cannot read '" + path + "'");
  const Json j = Json::parse(in, nullptr, false);
  if (j.is_discarded()) throw ConfigError("--expect: " + path + ": not valid JSON");
  return parse_expectations(j, path);
}

GateOutcome judge_cell(const CellExpectation* e, const CellFacts& f) {
  GateOutcome g;
  LOCKSIM_ASSERT(f.safety <= f.runs && f.unknown <= f.runs);
  if (e == nullptr || e->verdict == Expected::kAny) return g;
  LOCKSIM_ASSERT_MSG(e->verdict != Expected::kViolation || e->seeds_within >= 1,
                     "parse_cell gives every violation cell its bound");
  g.gated = true;
  if (f.unknown > 0) {
    g.holds = false;
    g.failure = "unknown verdicts";
    g.message = std::to_string(f.unknown) +
                " run(s) ended with a client error; first: " + f.first_unknown_replay;
  } else if (e->verdict == Expected::kViolation) {
    const bool found =
        f.first_violation_position > 0 && f.first_violation_position <= e->seeds_within;
    const int64_t needed = std::min(e->seeds_within, f.seeds_planned);
    if (!found && f.first_violation_position == 0 && f.seeds_run < needed) {
      // Not every seed within the bound ran (interrupted, or one shard): no
      // verdict yet, rather than a lost detection that is not one.
      g.gated = false;
      g.message = "not judged: " + std::to_string(f.seeds_run) + " of the first " +
                  std::to_string(needed) + " seeds ran";
    } else if (!found) {
      g.holds = false;
      g.failure = "lost detection";
      g.message =
          "expected a violation within " + std::to_string(e->seeds_within) + " seeds, " +
          (f.first_violation_position == 0
               ? "found none in " + std::to_string(f.seeds_run)
               : "first found at seed position " + std::to_string(f.first_violation_position) +
                     ": " + f.first_violation_replay);
    }
  } else if (f.safety > 0) {
    g.holds = false;
    g.failure = "false alarm";
    g.message = std::string("expected ") + to_string(e->verdict) + ", found " +
                std::to_string(f.safety) + " violating run(s); first: " + f.first_violation_replay;
  }
  LOCKSIM_ASSERT(g.holds == g.failure.empty());
  return g;
}

}  // namespace locksim::harness
