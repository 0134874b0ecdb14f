#include "harness/scenario.h"

#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "env/assert.h"
#include "env/parse.h"
#include "harness/settings.h"

namespace locksim::harness {

const char* to_string(Scenario::Expect e) {
  switch (e) {
    case Scenario::Expect::kUnspecified:
      return "";
    case Scenario::Expect::kSafe:
      return "safe";
    case Scenario::Expect::kViolation:
      return "violation";
    case Scenario::Expect::kLiveness:
      return "liveness";
  }
  return "";
}

namespace {

using Json = nlohmann::json;

[[noreturn]] void fail(const std::string& source, const std::string& field,
                       const std::string& expected, const std::string& got) {
  throw ConfigError(source + ": " + field + ": expected " + expected + ", got " + got);
}

std::string string_field(const Json& j, const char* key, const std::string& source) {
  const Json& v = j.at(key);
  if (!v.is_string()) fail(source, key, "a string", v.dump());
  return v.get<std::string>();
}

Scenario::Expect parse_expect(const std::string& e, const std::string& source) {
  if (e == "safe") return Scenario::Expect::kSafe;
  if (e == "violation") return Scenario::Expect::kViolation;
  if (e == "liveness") return Scenario::Expect::kLiveness;
  fail(source, "expect", "one of safe, violation, liveness", "'" + e + "'");
}

}  // namespace

Scenario parse_scenario(std::string_view text, const std::string& source) {
  LOCKSIM_ASSERT_MSG(!source.empty(), "errors name the source");
  Json j;
  try {
    j = Json::parse(text.begin(), text.end());
  } catch (const Json::exception& e) {  // parse_error, and out_of_range for 1E400
    std::string what = e.what();
    for (char& c : what) c = c == '\n' ? ' ' : c;
    throw ConfigError(source + ": invalid JSON: " + what);
  }
  if (!j.is_object()) fail(source, "(top level)", "an object", j.dump());
  Scenario s;
  s.source = source;
  s.config.source = source;
  if (j.contains("name")) s.name = string_field(j, "name", source);
  if (j.contains("description")) s.description = string_field(j, "description", source);
  if (j.contains("expect")) s.expect = parse_expect(string_field(j, "expect", source), source);
  if (!j.contains("algorithm")) fail(source, "algorithm", "an algorithm name", "nothing");
  // Every run setting, by the table (harness/settings.h); unknown keys are errors.
  settings_from_json(j, s.config, {"name", "description", "expect"});
  LOCKSIM_ASSERT_MSG(!s.config.algorithm.empty(), "the algorithm's row read it");
  LOCKSIM_ASSERT(s.config.source == source);
  return s;
}

Scenario load_scenario(const std::string& name_or_path) {
  for (const BuiltinScenario& b : builtin_scenario_texts()) {
    if (name_or_path == b.name) return parse_scenario(b.json, "builtin:" + name_or_path);
  }
  std::ifstream in(name_or_path, std::ios::binary);
  if (!in) {
    std::string names;
    for (const BuiltinScenario& b : builtin_scenario_texts()) {
      names += (names.empty() ? "" : ", ") + std::string(b.name);
    }
    throw ConfigError("--scenario: expected a shipped scenario name (" + names +
                      ") or a readable file, got '" + name_or_path + "'");
  }
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_scenario(ss.str(), name_or_path);
}

}  // namespace locksim::harness
