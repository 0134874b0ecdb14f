#include "harness/scenario.h"

#include <optional>
#include <set>
#include <vector>

#include <nlohmann/json.hpp>

#include "env/assert.h"
#include "env/parse.h"
#include "harness/settings.h"
#include "harness/strict_json.h"
#include "harness/suggest.h"

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

// Whether the period at text[dot] ends the word before it rather than a
// sentence: an ellipsis ("SELECT ... FOR UPDATE"), an abbreviation ("e.g.",
// "vs."), or an initial ("J. Smith").
bool period_inside_sentence(std::string_view text, size_t dot) {
  if (dot > 0 && text[dot - 1] == '.') return true;
  const size_t space = text.find_last_of(" (", dot);
  const size_t begin = space == std::string_view::npos ? 0 : space + 1;
  const std::string_view word = text.substr(begin, dot - begin);
  static constexpr std::string_view kAbbreviations[] = {"e.g",    "i.e",  "vs", "cf", "etc",
                                                        "approx", "incl", "Dr", "Mr", "Fig"};
  for (const std::string_view a : kAbbreviations) {
    if (word == a) return true;
  }
  return word.size() == 1 && word[0] >= 'A' && word[0] <= 'Z';
}

std::string summary_field(const Json& j, const std::string& source) {
  std::string summary = string_field(j, "summary", source);
  if (summary.find_first_not_of(" \t") == std::string::npos ||
      summary.find('\n') != std::string::npos) {
    fail(source, "summary", "one line of text", Json(summary).dump());
  }
  return summary;
}

}  // namespace

std::string first_sentence(std::string_view text) {
  size_t end = text.size();
  for (size_t i = 0; i + 1 < text.size(); ++i) {
    const char c = text[i];
    if ((c != '.' && c != '!' && c != '?') || (text[i + 1] != ' ' && text[i + 1] != '\n')) {
      continue;
    }
    if (c == '.' && period_inside_sentence(text, i)) continue;
    end = i + 1;
    break;
  }
  std::string out(text.substr(0, end));
  while (!out.empty() && (out.back() == ' ' || out.back() == '\n' || out.back() == '\t')) {
    out.pop_back();
  }
  return out.empty() ? "(no description)" : out;
}

Scenario parse_scenario(std::string_view text, const std::string& source) {
  LOCKSIM_ASSERT_MSG(!source.empty(), "errors name the source");
  const Json j = parse_strict_json(text, source);
  if (!j.is_object()) fail(source, "(top level)", "an object", j.dump());
  Scenario s;
  s.source = source;
  s.config.source = source;
  if (j.contains("name")) s.name = string_field(j, "name", source);
  if (j.contains("description")) s.description = string_field(j, "description", source);
  if (j.contains("expect")) s.expect = parse_expect(string_field(j, "expect", source), source);
  if (j.contains("not_live")) s.not_live = string_field(j, "not_live", source);
  s.summary = j.contains("summary") ? summary_field(j, source) : first_sentence(s.description);
  if (!j.contains("algorithm")) fail(source, "algorithm", "an algorithm name", "nothing");
  // Every run setting, by the table (harness/settings.h); unknown keys are errors.
  settings_from_json(j, s.config, {"name", "summary", "description", "expect", "not_live"});
  LOCKSIM_ASSERT_MSG(!s.config.algorithm.empty(), "the algorithm's row read it");
  LOCKSIM_ASSERT(s.config.source == source);
  LOCKSIM_ASSERT_MSG(!s.summary.empty(), "a listing never shows nothing");
  return s;
}

namespace {

using OrderedJson = nlohmann::ordered_json;

// The settings of `config` that a scenario file must say: algorithm and
// seed always, any other only where it differs from the default (an object
// keeps its differing keys, and goes when none does).
OrderedJson non_default_settings(const RunConfig& config) {
  const OrderedJson given = settings_to_json(config);
  const OrderedJson defaults = settings_to_json(RunConfig{});
  OrderedJson out = OrderedJson::object();
  for (const auto& [key, value] : given.items()) {
    LOCKSIM_ASSERT_MSG(defaults.contains(key), "the same table gives the same keys");
    const OrderedJson& fallback = defaults.at(key);
    if (value.is_object()) {
      OrderedJson kept = OrderedJson::object();
      for (const auto& [k, v] : value.items()) {
        if (!fallback.contains(k) || fallback.at(k) != v) kept[k] = v;
      }
      if (!kept.empty()) out[key] = kept;
    } else if (key == "algorithm" || key == "seed" || value != fallback) {
      out[key] = value;
    }
  }
  return out;
}

// A value as the shipped files write it: an object on one line with a space
// after each colon and comma, a list one item a line.
std::string value_text(const OrderedJson& v) {
  std::string out;
  if (v.is_object()) {
    for (const auto& [k, item] : v.items()) {
      out += (out.empty() ? "{" : ", ") + OrderedJson(k).dump() + ": " + item.dump();
    }
    return out.empty() ? "{}" : out + "}";
  }
  if (v.is_array() && !v.empty()) {
    for (const auto& item : v) out += (out.empty() ? "[\n    " : ",\n    ") + item.dump();
    return out + "\n  ]";
  }
  return v.dump();
}

}  // namespace

std::string scenario_file_text(const Scenario& sc) {
  OrderedJson top = OrderedJson::object();
  if (!sc.name.empty()) top["name"] = sc.name;
  if (!sc.summary.empty()) top["summary"] = sc.summary;
  if (!sc.description.empty()) top["description"] = sc.description;
  if (sc.expect != Scenario::Expect::kUnspecified) top["expect"] = to_string(sc.expect);
  if (!sc.not_live.empty()) top["not_live"] = sc.not_live;
  const OrderedJson settings = non_default_settings(sc.config);  // items() must not outlive it
  for (auto it = settings.begin(); it != settings.end(); ++it) top[it.key()] = it.value();
  LOCKSIM_ASSERT(top.contains("algorithm") && top.contains("seed"));
  std::string out = "{\n";
  size_t left = top.size();
  for (const auto& [key, value] : top.items()) {
    out += "  " + OrderedJson(key).dump() + ": " + value_text(value) + (--left > 0 ? ",\n" : "\n");
  }
  return out + "}\n";
}

const BuiltinScenario* find_builtin_scenario(std::string_view name) {
  for (const BuiltinScenario& b : builtin_scenario_texts()) {
    if (name == b.name) return &b;
  }
  return nullptr;
}

std::string unknown_scenario_message(const std::string& field, const std::string& name,
                                     bool files_too) {
  std::vector<std::string> names;
  for (const BuiltinScenario& b : builtin_scenario_texts()) names.emplace_back(b.name);
  // A few, not all 42: the list is what `locksim list` is for.
  constexpr size_t kSuggestionsMax = 3;
  const std::string maybe = did_you_mean(nearest_names(name, names, kSuggestionsMax));
  return field + ": expected a shipped scenario name" + (files_too ? " or a readable file" : "") +
         ", got '" + name + "' (" + (maybe.empty() ? "see locksim list" : maybe) + ")";
}

Scenario load_scenario(const std::string& name_or_path) {
  if (const BuiltinScenario* b = find_builtin_scenario(name_or_path)) {
    return parse_scenario(b->json, "builtin:" + name_or_path);
  }
  const std::optional<std::string> text =
      read_json_file(name_or_path, "--scenario: " + name_or_path);
  if (!text) throw ConfigError(unknown_scenario_message("--scenario", name_or_path, true));
  return parse_scenario(*text, name_or_path);
}

}  // namespace locksim::harness
