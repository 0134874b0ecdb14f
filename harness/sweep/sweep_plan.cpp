// A sweep's plan: parsing its flags, numbering its runs, and its JSON form.
#include <algorithm>
#include <optional>

#include "algorithms/registry.h"
#include "env/assert.h"
#include "env/parse.h"
#include "faults/profile.h"
#include "harness/profile_deployment.h"
#include "harness/script_file.h"
#include "harness/settings.h"
#include "harness/sweep/sweep.h"
#include "harness/workload_draw.h"
#include "sim/redis/sha1.h"

namespace locksim::harness {

namespace {

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  size_t begin = 0;
  while (begin <= text.size()) {
    const size_t comma = std::min(text.find(',', begin), text.size());
    out.push_back(text.substr(begin, comma - begin));
    begin = comma + 1;
  }
  return out;
}

void refuse_repeats(const std::vector<std::string>& items, const std::string& field) {
  for (size_t i = 0; i < items.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      if (items[i] == items[j]) throw ConfigError(field + ": '" + items[i] + "' given twice");
    }
  }
}

// Runs `settings_from_json`-style checks on the plan's base settings.
RunConfig base_from_json(const nlohmann::json& j, const std::string& source) {
  RunConfig base;
  base.source = source;
  settings_from_json(j, base, {});
  base.source.clear();
  // sweep.json writes every setting; none of them is one a user gave (a
  // sweep takes no setting but --duration, and its runs none as given), so
  // a resumed sweep's runs are validated as the first ones were.
  base.given_paths.clear();
  return base;
}

}  // namespace

uint64_t SweepPlan::index_of(size_t algorithm, size_t profile, uint64_t seed) const {
  LOCKSIM_ASSERT(algorithm < algorithms.size() && profile < profiles.size());
  LOCKSIM_ASSERT(seed >= seed_first && seed <= seed_last);
  const uint64_t index = (algorithm * profiles.size() + profile) * seeds() + (seed - seed_first);
  LOCKSIM_ASSERT(index < runs_total());
  return index;
}

SweepPlan::Coordinates SweepPlan::coordinates_of(uint64_t index) const {
  LOCKSIM_ASSERT(index < runs_total());
  const uint64_t cell = index / seeds();
  Coordinates c{static_cast<size_t>(cell / profiles.size()),
                static_cast<size_t>(cell % profiles.size()), seed_first + index % seeds()};
  LOCKSIM_ASSERT(index_of(c.algorithm, c.profile, c.seed) == index);  // pair of index_of
  return c;
}

RunConfig SweepPlan::config_of(const std::string& algorithm, const std::string& profile,
                               uint64_t seed) const {
  RunConfig c = base;
  c.algorithm = algorithm;
  c.profile = profile == "none" ? "" : profile;
  c.seed = seed;
  c.faults = base.faults;
  const algorithms::AlgorithmSpec* spec = algorithms::find_algorithm(algorithm);
  LOCKSIM_ASSERT_MSG(spec != nullptr, "the plan's algorithms were checked");
  for (const auto& [path, text] : spec->sweep_settings) {
    const Setting* row = find_setting_by_path(path);
    LOCKSIM_ASSERT_MSG(row != nullptr, "an algorithm's sweep setting is a row of the table");
    row->parse(c, text, algorithm + " sweep setting " + path);
  }
  // The seed's workload (a swarm sweep's): drawn here, so the run's replay
  // command carries the drawn values.
  c = with_drawn_workload(c);
  if (!c.profile.empty()) {
    // A column that needs longer runs gets them (its replay commands say so).
    // The lease as the run will have it (a profile may draw one).
    const Duration at_least = faults::profile_min_run(faults::parse_profile(c.profile, "profile"),
                                                      profile_lease(with_profile_deployment(c)));
    c.duration = std::max(c.duration, at_least);
  }
  LOCKSIM_ASSERT(c.seed == seed && c.algorithm == algorithm);
  LOCKSIM_ASSERT_MSG(c.profile.empty() || c.profile == profile, "none runs without a profile");
  return c;
}

std::pair<uint64_t, uint64_t> parse_seed_range(const std::string& text, const std::string& field) {
  const size_t dots = text.find("..");
  const std::string lo = dots == std::string::npos ? text : text.substr(0, dots);
  const std::string hi = dots == std::string::npos ? text : text.substr(dots + 2);
  const auto first = static_cast<uint64_t>(parse_integer(lo, field, 0, INT64_MAX));
  const auto last = static_cast<uint64_t>(parse_integer(hi, field, 0, INT64_MAX));
  if (last < first) {
    throw ConfigError(field + ": expected A..B with A <= B, got '" + text + "'");
  }
  if (last - first >= 100'000'000) {
    throw ConfigError(field + ": at most 100000000 seeds, got '" + text + "'");
  }
  LOCKSIM_ASSERT(first <= last);
  return {first, last};
}

void refuse_too_many_runs(const SweepPlan& plan, const std::string& field) {
  if (plan.runs_total() <= kSweepRunsMax) return;
  const auto counted = [](uint64_t n, const std::string& what) {
    return std::to_string(n) + " " + what + (n == 1 ? "" : "s");
  };
  throw ConfigError(field + ": at most " + std::to_string(kSweepRunsMax) +
                    " runs in one sweep (its report holds every run), got " +
                    counted(plan.algorithms.size(), "algorithm") + " x " +
                    counted(plan.profiles.size(), "profile") + " x " +
                    counted(plan.seeds(), "seed") + " = " + std::to_string(plan.runs_total()) +
                    "; give fewer seeds");
}

std::pair<int, int> parse_shard(const std::string& text, const std::string& field) {
  const size_t slash = text.find('/');
  if (slash == std::string::npos) {
    throw ConfigError(field + ": expected i/N (e.g. 2/4), got '" + text + "'");
  }
  const auto n = static_cast<int>(parse_integer(text.substr(slash + 1), field, 1, 10000));
  const auto i = static_cast<int>(parse_integer(text.substr(0, slash), field, 1, 10000));
  if (i > n) {
    throw ConfigError(field + ": expected i/N with 1 <= i <= N, got '" + text + "'");
  }
  LOCKSIM_ASSERT(i >= 1 && i <= n);
  return {i, n};
}

std::vector<std::string> parse_algorithm_list(const std::string& text, const std::string& field) {
  std::vector<std::string> out;
  if (text == "all") {
    for (const auto& spec : algorithms::all_algorithms()) out.push_back(spec.name);
    return out;
  }
  for (const auto& name : split_list(text)) {
    if (name == "all") {  // "all,script:mine.json": every listed algorithm but script files
      for (const auto& spec : algorithms::all_algorithms()) {
        if (spec.name.rfind("script:", 0) != 0) out.push_back(spec.name);
      }
      continue;
    }
    const algorithms::AlgorithmSpec* spec = nullptr;
    try {
      spec = algorithms::find_algorithm(name);
    } catch (const ConfigError& e) {  // a script file that cannot be loaded
      throw ConfigError(field + ": " + e.what());
    }
    if (spec == nullptr) {
      throw ConfigError(field + ": expected all or a comma list of " +
                        algorithms::algorithm_names() + " or script:FILE.json, got '" + name + "'");
    }
    out.push_back(name);
  }
  refuse_repeats(out, field);
  return out;
}

std::vector<std::string> parse_profile_list(const std::string& text, const std::string& field) {
  if (text == "all") return faults::profile_names();
  std::vector<std::string> out = split_list(text);
  for (const auto& p : out) faults::parse_profile(p, field);  // throws naming the field
  for (const auto& p : out) {
    if (p.empty()) throw ConfigError(field + ": an empty profile in '" + text + "'");
  }
  refuse_repeats(out, field);
  return out;
}

nlohmann::ordered_json plan_to_json(const SweepPlan& plan, bool with_shard) {
  nlohmann::ordered_json j;
  j["locksim_sweep"] = 1;
  j["algorithms"] = plan.algorithms;
  j["profiles"] = plan.profiles;
  j["seeds"] = std::to_string(plan.seed_first) + ".." + std::to_string(plan.seed_last);
  j["runs"] = plan.runs_total();
  if (with_shard) {
    j["shard"] = std::to_string(plan.shard_index) + "/" + std::to_string(plan.shard_count);
  }
  j["settings"] = settings_to_json(plan.base);
  // Not a setting (a run replays by the values drawn), so kept beside them;
  // a plan written before it existed ran the fixed workload.
  j["swarm"] = plan.base.workload.draw;
  // Only with a lock script, so every other sweep.json reads as before.
  if (!plan.script_sha1.empty()) j["scripts"] = plan.script_sha1;
  return j;
}

std::map<std::string, std::string> script_digests(const std::vector<std::string>& algorithms,
                                                  const std::string& field) {
  std::map<std::string, std::string> out;
  for (const std::string& a : algorithms) {
    const std::optional<std::string> path = script_path_of(a);
    if (!path) continue;
    try {
      out[a] = sim::redis::sha1_hex(script_file_text(*path));
    } catch (const ConfigError& e) {
      throw ConfigError(field + ": " + e.what());
    }
  }
  return out;
}

void refuse_changed_scripts(const SweepPlan& plan, const std::string& field) {
  const std::map<std::string, std::string> now = script_digests(plan.algorithms, field);
  for (const auto& [algorithm, sha1] : now) {
    const auto then = plan.script_sha1.find(algorithm);
    if (then != plan.script_sha1.end() && then->second == sha1) continue;
    throw ConfigError(field + ": " + script_path_of(algorithm).value() +
                      " changed since the sweep ran it (SHA-1 " +
                      (then == plan.script_sha1.end() ? std::string("not recorded")
                                                      : then->second.substr(0, 12)) +
                      ", now " + sha1.substr(0, 12) +
                      "): its runs are another lock's; restore the file or start a new sweep");
  }
}

SweepPlan plan_from_json(const nlohmann::json& j, const std::string& source) {
  SweepPlan plan;
  try {
    if (j.at("locksim_sweep").get<int>() != 1) {
      throw ConfigError(source + ": locksim_sweep: expected 1");
    }
    plan.algorithms = j.at("algorithms").get<std::vector<std::string>>();
    plan.profiles = j.at("profiles").get<std::vector<std::string>>();
    std::tie(plan.seed_first, plan.seed_last) =
        parse_seed_range(j.at("seeds").get<std::string>(), source + ": seeds");
    if (j.contains("shard")) {
      std::tie(plan.shard_index, plan.shard_count) =
          parse_shard(j.at("shard").get<std::string>(), source + ": shard");
    }
    plan.base = base_from_json(j.at("settings"), source + ": settings");
    plan.base.workload.draw = j.value("swarm", false);
    if (j.contains("scripts")) {
      plan.script_sha1 = j.at("scripts").get<std::map<std::string, std::string>>();
    }
  } catch (const nlohmann::json::exception& e) {
    throw ConfigError(source + ": not a sweep plan (" + e.what() + ")");
  }
  for (const auto& a : plan.algorithms) parse_algorithm_list(a, source + ": algorithms");
  for (const auto& p : plan.profiles) parse_profile_list(p, source + ": profiles");
  refuse_too_many_runs(plan, source + ": seeds");
  LOCKSIM_ASSERT(plan.shard_index >= 1 && plan.shard_index <= plan.shard_count);
  return plan;
}

}  // namespace locksim::harness
