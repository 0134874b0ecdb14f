#include "harness/settings.h"

#include <charconv>
#include <cstdint>
#include <map>

#include "algorithms/registry.h"
#include "env/assert.h"
#include "env/parse.h"
#include "harness/backends.h"
#include "harness/profile_deployment.h"
#include "harness/script_file.h"
#include "harness/setting_rows.h"

namespace locksim::harness {

namespace {

using Json = nlohmann::json;

// The run's general rows; each backend's rows come from its own file.
std::vector<Setting> general_settings() {
  using K = Setting::Kind;
  std::vector<Setting> rows;
  Setting algorithm{
      "--algorithm", "algorithm", K::kText, "NAME", "lock algorithm (see locksim list)", true};
  algorithm.parse = [](RunConfig& c, const std::string& text, const std::string& field) {
    install_script_loader();  // "script:FILE.json" (harness/script_file.h)
    const algorithms::AlgorithmSpec* spec = nullptr;
    try {
      spec = algorithms::find_algorithm(text);
    } catch (const ConfigError& e) {
      // The script file's own error names that file; say which setting led there.
      throw ConfigError(field + ": " + e.what());
    }
    if (spec == nullptr) {
      throw ConfigError(field + ": expected one of " + algorithms::algorithm_names() + ", got '" +
                        text + "'");
    }
    c.algorithm = text;
  };
  algorithm.format = [](const RunConfig& c) { return c.algorithm; };
  rows.push_back(std::move(algorithm));

  rows.push_back(int_row(
      "--seed", "seed", "seed; the same seed (and binary) replays the same run byte for byte", true,
      0, INT64_MAX, [](auto& c) -> auto& { return c.seed; }));
  rows.back().live_help =
      "seed of the clients' own draws (hold lengths, tokens); a live run depends on real timing "
      "and does not replay";
  rows.push_back(duration_row(
      "--duration", "duration", "run length (virtual; real in live mode)", true,
      DurationRule::kPositive, [](auto& c) -> auto& { return c.duration; }));
  rows.back().live_help =
      "run length in real time: nothing is recorded after it, and an op in flight then stays "
      "open";
  rows.push_back(int_row(
      "--clients", "workload.clients", "lock clients, each on its own node c1..cN", true, 1,
      RunConfig::kClientsMax, [](auto& c) -> auto& { return c.workload.clients; }));
  rows.push_back(range_row(
      "--hold", "workload.hold", "critical-section length, drawn per hold", true,
      [](auto& c) -> auto& { return c.workload.hold_min; },
      [](auto& c) -> auto& { return c.workload.hold_max; }));
  rows.push_back(duration_row(
      "--retry-pause", "workload.retry_pause", "client pause after a failed acquire", false,
      DurationRule::kNonNegative, [](auto& c) -> auto& { return c.workload.retry_pause; }));
  rows.push_back(range_row(
      "--idle", "workload.idle", "idle time after a release before the next acquire, drawn per gap",
      false, [](auto& c) -> auto& { return c.workload.idle_min; },
      [](auto& c) -> auto& { return c.workload.idle_max; }));
  rows.push_back(flag_row(
      "--hold-within-validity", "workload.hold_within_validity",
      "cut each hold to the lease's validity (a careful Redlock client)",
      [](auto& c) -> auto& { return c.workload.hold_within_validity; }));
  rows.push_back(params_row());
  rows.push_back(duration_row(
      "--stuck-after", "stuck_after", "liveness: a lock unheld this long at the end is stuck",
      false, DurationRule::kPositive, [](auto& c) -> auto& { return c.stuck_after; }));
  rows.push_back(schedule_row());
  return rows;
}

std::vector<Setting> build_table() {
  std::vector<Setting> rows = general_settings();
  for (auto& row : resource_settings()) rows.push_back(std::move(row));
  for (const BackendSpec& b : all_backends()) {
    for (auto& row : b.settings()) rows.push_back(std::move(row));
  }
  for (auto& row : network_settings()) rows.push_back(std::move(row));
  rows.push_back(profile_row());
  rows.push_back(faults_row());
  // Every row complete, flags and paths unique: a table error is a bug.
  for (size_t i = 0; i < rows.size(); ++i) {
    LOCKSIM_ASSERT(rows[i].parse && (rows[i].format || rows[i].items));
    LOCKSIM_ASSERT(rows[i].flag.rfind("--", 0) == 0 && !rows[i].json_path.empty());
    for (size_t j = 0; j < i; ++j) {
      LOCKSIM_ASSERT_MSG(rows[i].flag != rows[j].flag, "flags are unique");
      LOCKSIM_ASSERT_MSG(rows[i].json_path != rows[j].json_path, "JSON paths are unique");
    }
  }
  return rows;
}

// "redis.timeout" -> {"redis", "timeout"}; at most one level of nesting.
std::pair<std::string, std::string> split_path(const std::string& path) {
  const size_t dot = path.find('.');
  if (dot == std::string::npos) return {"", path};
  LOCKSIM_ASSERT(path.find('.', dot + 1) == std::string::npos);
  return {path.substr(0, dot), path.substr(dot + 1)};
}

[[noreturn]] void fail_json(const std::string& field, const std::string& expected, const Json& v) {
  throw ConfigError(field + ": expected " + expected + ", got " + v.dump());
}

// "5", "-1", "+7": a number written as a string.
bool is_quoted_integer(const std::string& text) {
  size_t i = !text.empty() && (text[0] == '-' || text[0] == '+') ? 1 : 0;
  if (i == text.size()) return false;
  for (; i < text.size(); ++i) {
    if (text[i] < '0' || text[i] > '9') return false;
  }
  return true;
}

// One value from a scenario file, as the text parse() reads.
std::string json_to_text(const Setting& s, const Json& v, const std::string& field) {
  switch (s.kind) {
    case Setting::Kind::kText:
      if (!v.is_string()) fail_json(field, "a string (" + s.value_hint + ")", v);
      return v.get<std::string>();
    case Setting::Kind::kInteger:
      // A string is allowed for a word such as masters' "auto", never for a
      // quoted number: "5" beside a refused "true" would be one type rule
      // for integers and another for flags.
      if (v.is_number_integer()) return v.dump();
      if (v.is_string() && !is_quoted_integer(v.get<std::string>())) return v.get<std::string>();
      fail_json(field, "a whole number (" + s.value_hint + ")", v);
    case Setting::Kind::kNumber:
      if (!v.is_number()) fail_json(field, "a number (" + s.value_hint + ")", v);
      return v.dump();
    case Setting::Kind::kFlag:
      if (!v.is_boolean()) fail_json(field, "true or false", v);
      return v.get<bool>() ? "true" : "false";
    case Setting::Kind::kList:
    case Setting::Kind::kParams:
      break;
  }
  LOCKSIM_ASSERT_MSG(false, "lists and params are read by their own code");
  return "";
}

void read_row(const Setting& s, const Json& v, RunConfig& c) {
  const std::string field = c.source + ": " + s.json_path;
  if (s.kind == Setting::Kind::kList) {
    if (!v.is_array()) fail_json(field, "an array of strings", v);
    for (size_t i = 0; i < v.size(); ++i) {
      const std::string item_field = field + "[" + std::to_string(i) + "]";
      if (!v[i].is_string()) fail_json(item_field, "a string (" + s.value_hint + ")", v[i]);
      give_setting(s, c, v[i].get<std::string>(), item_field);
    }
  } else if (s.kind == Setting::Kind::kParams) {
    if (!v.is_object()) fail_json(field, "an object of NAME: \"VALUE\"", v);
    for (const auto& [name, value] : v.items()) {
      if (!value.is_string() && !value.is_number()) {
        fail_json(field + "." + name, "a string or a number", value);
      }
      const std::string text = value.is_string() ? value.get<std::string>() : value.dump();
      give_setting(s, c, name + "=" + text, field + "." + name);
    }
  } else {
    give_setting(s, c, json_to_text(s, v, field), field);
  }
}

// Keys of `j` that no row and no caller claims are errors, named by path.
void reject_unknown(const Json& object, const std::string& prefix, const std::string& source,
                    const std::vector<std::string>& known) {
  for (const auto& [key, value] : object.items()) {
    bool found = false;
    for (const std::string& k : known) found = found || k == key;
    if (found) continue;
    std::string list;
    for (const std::string& k : known) list += (list.empty() ? "" : ", ") + k;
    throw ConfigError(source + ": " + prefix + key +
                      ": expected no such field (known here: " + list + "), got '" + key + "'");
  }
}

}  // namespace

const std::vector<Setting>& all_settings() {
  static const std::vector<Setting> table = build_table();
  return table;
}

const Setting* find_setting_by_flag(std::string_view flag) {
  for (const Setting& s : all_settings()) {
    if (s.flag == flag) return &s;
  }
  return nullptr;
}

const Setting* find_setting_by_path(std::string_view json_path) {
  for (const Setting& s : all_settings()) {
    if (s.json_path == json_path) return &s;
  }
  return nullptr;
}

void give_setting(const Setting& setting, RunConfig& config, const std::string& text,
                  const std::string& field) {
  setting.parse(config, text, field);  // throws before anything is recorded
  config.given_paths.insert(setting.json_path);
  // validate() looks given settings up by path: it must be the table's.
  LOCKSIM_ASSERT(find_setting_by_path(setting.json_path) != nullptr);
}

bool asks_for(const RunConfig& config, const Setting& setting) {
  if (config.given_paths.count(setting.json_path) == 0) return false;
  if (config.source.empty()) return true;
  static const RunConfig defaults;
  return !setting.format || setting.format(config) != setting.format(defaults);
}

std::string field_name(const RunConfig& config, const Setting& setting) {
  return config.source.empty() ? setting.flag : config.source + ": " + setting.json_path;
}

std::string field_name(const RunConfig& config, std::string_view json_path) {
  const Setting* s = find_setting_by_path(json_path);
  LOCKSIM_ASSERT_MSG(s != nullptr, "field_name() is called with paths of the table");
  return field_name(config, *s);
}

std::string short_field_name(const RunConfig& config, std::string_view json_path) {
  const Setting* s = find_setting_by_path(json_path);
  LOCKSIM_ASSERT_MSG(s != nullptr, "short_field_name() is called with paths of the table");
  return config.source.empty() ? s->flag : s->json_path;
}

std::string backend_section(const Setting& s) {
  const std::string section = s.json_path.substr(0, s.json_path.find('.'));
  return section == "redis" || section == "mysql" || section == "zookeeper" ? section : "";
}

bool belongs_to_other_backend(const Setting& s, const RunConfig& config) {
  const algorithms::AlgorithmSpec* spec = algorithms::find_algorithm(config.algorithm);
  const std::string section = backend_section(s);
  return spec != nullptr && !section.empty() && section != spec->backend;
}

void settings_from_json(const Json& j, RunConfig& config,
                        const std::vector<std::string>& other_top_keys) {
  LOCKSIM_ASSERT(!config.source.empty());
  LOCKSIM_ASSERT(j.is_object());
  std::vector<std::string> top_known = other_top_keys;
  std::map<std::string, std::vector<std::string>> section_known;  // ordered: stable messages
  for (const Setting& s : all_settings()) {
    const auto [section, key] = split_path(s.json_path);
    if (section.empty()) {
      top_known.push_back(key);
    } else {
      if (section_known.count(section) == 0) top_known.push_back(section);
      section_known[section].push_back(key);
    }
  }
  reject_unknown(j, "", config.source, top_known);
  for (const auto& [section, keys] : section_known) {
    if (!j.contains(section)) continue;
    const Json& object = j.at(section);
    if (!object.is_object()) fail_json(config.source + ": " + section, "an object", object);
    reject_unknown(object, section + ".", config.source, keys);
  }
  for (const Setting& s : all_settings()) {
    const auto [section, key] = split_path(s.json_path);
    const Json& object = section.empty() ? j : (j.contains(section) ? j.at(section) : Json());
    if (object.is_object() && object.contains(key)) read_row(s, object.at(key), config);
  }
}

nlohmann::ordered_json settings_to_json(const RunConfig& config) {
  nlohmann::ordered_json out = nlohmann::ordered_json::object();
  for (const Setting& s : all_settings()) {
    const auto [section, key] = split_path(s.json_path);
    nlohmann::ordered_json& object = section.empty() ? out : out[section];
    switch (s.kind) {
      case Setting::Kind::kList: {
        object[key] = nlohmann::ordered_json::array();
        for (const std::string& item : s.items(config)) object[key].push_back(item);
        break;
      }
      case Setting::Kind::kParams: {
        object[key] = nlohmann::ordered_json::object();
        for (const auto& [name, value] : config.algorithm_params) object[key][name] = value;
        break;
      }
      case Setting::Kind::kFlag:
        object[key] = s.format(config) == "true";
        break;
      case Setting::Kind::kInteger:
      case Setting::Kind::kNumber: {
        // Numbers as JSON numbers; a word such as "auto" stays a string.
        const std::string text = s.format(config);
        const Json parsed = Json::parse(text, nullptr, false);
        object[key] =
            parsed.is_number() ? nlohmann::ordered_json::parse(text) : nlohmann::ordered_json(text);
        break;
      }
      case Setting::Kind::kText:
        object[key] = s.format(config);
        break;
    }
  }
  return out;
}

std::string shell_quote(const std::string& text) {
  bool plain = !text.empty();
  for (char ch : text) {
    const bool safe = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
                      (ch >= '0' && ch <= '9') ||
                      std::string_view("-_.,:/=+@%").find(ch) != std::string_view::npos;
    plain = plain && safe;
  }
  if (plain) return text;
  std::string out = "'";
  for (char ch : text) out += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return out + "'";
}

std::string replay_command(const RunConfig& config) {
  const RunConfig defaults;
  std::string cmd = "locksim run --algorithm " + shell_quote(config.algorithm) + " --seed " +
                    std::to_string(config.seed);
  for (const Setting& s : all_settings()) {
    if (s.flag == "--algorithm" || s.flag == "--seed") continue;
    if (s.kind == Setting::Kind::kList || s.kind == Setting::Kind::kParams) {
      for (const std::string& item : s.items(config)) {
        // "--ttl" is what users type for the one parameter every algorithm has.
        if (s.kind == Setting::Kind::kParams && item.rfind("ttl=", 0) == 0) {
          cmd += " --ttl " + shell_quote(item.substr(4));
        } else {
          cmd += " " + s.flag + " " + shell_quote(item);
        }
      }
      continue;
    }
    const std::string value = s.format(config);
    if (value == s.format(defaults)) continue;
    cmd += s.kind == Setting::Kind::kFlag ? " " + s.flag : " " + s.flag + " " + shell_quote(value);
  }
  return cmd;
}

}  // namespace locksim::harness
