#include "cli/scenario_run.h"

#include "checkers/check.h"
#include "env/assert.h"
#include "env/parse.h"
#include "harness/settings.h"
#include "harness/time_scale.h"

namespace locksim::cli {

namespace {

// A user's file may have no name: then it is known by its path.
std::string shown_name(const harness::Scenario& sc) {
  return sc.name.empty() ? sc.source : sc.name;
}

}  // namespace

harness::Scenario scenario_for_run(const RunOptions& o, const CLI::App& run, std::string* replay) {
  refuse_with_scenario(run);
  harness::Scenario sc = harness::load_scenario(o.scenario);
  if (run.count("--seed") > 0) {
    // As every setting given twice without --scenario (run_options.cpp).
    if (run.count("--seed") > 1) throw given_more_than_once("--seed", run.count("--seed"));
    const harness::Setting& seed = *harness::find_setting_by_flag("--seed");
    harness::give_setting(seed, sc.config, o.values.at("--seed").front(), "--seed");
    // The file's values may be a profile's deployment for its own seed
    // (result.json's "params"): the profile draws this seed's anew.
    sc.config.profile_may_replace_given = true;
  }
  *replay = "locksim run --scenario " + harness::shell_quote(o.scenario) + " --seed " +
            std::to_string(sc.config.seed);
  if (!o.time_scale.empty()) {
    harness::scale_time(sc.config, harness::parse_time_scale(o.time_scale, "--time-scale"));
    *replay += " --time-scale " + o.time_scale;
  }
  return sc;
}

const char* found_as_scenario(const harness::RunResult& result) {
  if (checkers::merged(result.checks) == checkers::Validity::kUnknown) return "unknown";
  const std::string finding = checkers::finding(result.checks);
  if (finding == "safety") return "violation";
  if (finding == "liveness") return "liveness";
  return "safe";  // "none", or a latent finding: nobody used the exposure
}

std::string scenario_text(const harness::Scenario& sc, const harness::RunResult& result) {
  const std::string found = found_as_scenario(result);
  const std::string expected = to_string(sc.expect);
  std::string out = "scenario " + shown_name(sc) + ": ";
  if (expected.empty()) {
    out += "found " + found + " (the file does not say what to expect)\n";
  } else {
    out += "expected " + expected + ", found " + found +
           (found == expected ? "" : " (not what the scenario expects)") + "\n";
  }
  if (!sc.description.empty()) out += "  " + sc.description + "\n";
  return out;
}

nlohmann::ordered_json scenario_json(const harness::Scenario& sc,
                                     const harness::RunResult& result) {
  nlohmann::ordered_json j;
  j["name"] = shown_name(sc);
  const std::string expected = to_string(sc.expect);
  j["expected"] = expected.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(expected);
  j["found"] = found_as_scenario(result);
  LOCKSIM_ASSERT(j.size() == 3);
  return j;
}

}  // namespace locksim::cli
