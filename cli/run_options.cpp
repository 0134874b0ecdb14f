#include "cli/run_options.h"

#include <algorithm>

#include "env/assert.h"
#include "env/parse.h"
#include "harness/settings.h"
#include "harness/time_scale.h"

namespace locksim::cli {

namespace {

bool offered(const harness::Setting& s, Mode mode) {
  return mode == Mode::kRun || s.live;
}

// --param may repeat, but each parameter only once, and --ttl is --param
// ttl=: a parameter given twice is an error, as any setting given twice is
// (the parser itself would silently keep the last one).
void refuse_repeated_params(const CLI::App& app, const RunOptions& options) {
  if (options.ttl.size() > 1) {
    throw given_more_than_once("--ttl", options.ttl.size());
  }
  std::map<std::string, std::string> seen;  // name -> the item as typed
  if (app.count("--ttl") > 0) seen["ttl"] = "--ttl " + options.ttl.front();
  const auto given = options.values.find("--param");
  if (given == options.values.end() || app.count("--param") == 0) return;
  for (const std::string& item : given->second) {
    const std::string name = item.substr(0, item.find('='));
    const auto [at, fresh] = seen.emplace(name, "--param " + item);
    if (fresh) continue;
    throw ConfigError("--param: parameter '" + name + "' given twice (" + at->second +
                      " and --param " + item + "); give it once");
  }
}

}  // namespace

harness::RunConfig default_config(Mode mode) {
  harness::RunConfig c;
  if (mode == Mode::kLive) {
    c.profiles_offered = false;
    // Real time: seconds, not minutes, and holds a real server turns around fast.
    c.duration = Duration::seconds(10);
    c.workload.hold_min = Duration::millis(50);
    c.workload.hold_max = Duration::millis(200);
  }
  return c;
}

void add_run_options(CLI::App& app, Mode mode, RunOptions& options) {
  const harness::RunConfig defaults = default_config(mode);
  for (const harness::Setting& s : harness::all_settings()) {
    if (!offered(s, mode)) continue;
    if (s.kind == harness::Setting::Kind::kFlag) {
      app.add_flag(s.flag, options.flags[s.flag], s.help);
      continue;
    }
    const std::string& help = mode == Mode::kLive && !s.live_help.empty() ? s.live_help : s.help;
    CLI::Option* o = app.add_option(s.flag, options.values[s.flag], help);
    o->type_name(s.value_hint);
    if (s.format) o->default_str(s.format(defaults));
    // One value per occurrence; repeatable rows (--fault, --param) repeat the
    // flag, any other row given twice is refused by config_from_options.
    o->type_size(1);
    o->expected(1, CLI::detail::expected_max_vector_size);
    o->allow_extra_args(false);
  }
  CLI::Option* ttl = app.add_option("--ttl", options.ttl, "lock TTL, short for --param ttl=D");
  ttl->type_name("DURATION");
  // As the table's rows: one value per occurrence, twice refused by config_from_options.
  ttl->type_size(1);
  ttl->expected(1, CLI::detail::expected_max_vector_size);
  ttl->allow_extra_args(false);
  if (mode == Mode::kRun) {
    app.add_option("--scenario", options.scenario,
                   "run a shipped scenario (see locksim list) or a scenario file; --seed may "
                   "override its seed");
  }
  app.add_option("--time-scale", options.time_scale,
                 "multiply every duration of the run by F, 0.01 to 100 (a live run of a long "
                 "scenario in less real time)");
  app.add_option("--out", options.out, "write result.json, history.edn, history.jsonl here");
  app.add_flag("--quiet", options.quiet, "print nothing; rely on the exit code");
}

harness::RunConfig config_from_options(const CLI::App& app, Mode mode, const RunOptions& options,
                                       const std::vector<std::string>& taken) {
  harness::RunConfig c = default_config(mode);
  LOCKSIM_ASSERT(c.source.empty());  // errors name flags
  refuse_repeated_params(app, options);
  for (const harness::Setting& s : harness::all_settings()) {
    if (std::find(taken.begin(), taken.end(), s.flag) != taken.end()) continue;
    if (!offered(s, mode) || app.count(s.flag) == 0) continue;
    if (s.kind == harness::Setting::Kind::kFlag) {
      // '--failover --failover', or '--semi-sync=0 --semi-sync': the last
      // one won without a word, as for a setting with a value it may not.
      if (app.count(s.flag) > 1) {
        throw given_more_than_once(s.flag, app.count(s.flag));
      }
      harness::give_setting(s, c, options.flags.at(s.flag) ? "true" : "false", s.flag);
      continue;
    }
    const std::vector<std::string>& given = options.values.at(s.flag);
    LOCKSIM_ASSERT(!given.empty());
    if (given.size() > 1 && !s.items) {
      // Given twice: an error, not a silent "last one wins".
      throw given_more_than_once(s.flag, given.size());
    }
    for (const std::string& text : given) harness::give_setting(s, c, text, s.flag);
  }
  if (app.count("--ttl") > 0) {
    c.algorithm_params["ttl"] = options.ttl.front();  // checked by the algorithm's spec
    c.given_paths.insert("params");                   // --ttl is --param ttl=
  }
  if (!options.time_scale.empty()) {
    harness::scale_time(c, harness::parse_time_scale(options.time_scale, "--time-scale"));
  }
  return c;  // validated once, by the run (harness::prepare_run) or the live run
}

ConfigError given_more_than_once(const std::string& flag, size_t times) {
  LOCKSIM_ASSERT(times > 1);
  return ConfigError(flag + ": expected once, given " + std::to_string(times) + " times");
}

void refuse_with_scenario(const CLI::App& app) {
  std::vector<std::string> refused = {"--ttl"};
  for (const harness::Setting& s : harness::all_settings()) {
    if (s.flag != "--seed") refused.push_back(s.flag);
  }
  for (const std::string& flag : refused) {
    if (app.count(flag) > 0) {
      throw ConfigError(flag +
                        ": cannot be combined with --scenario (edit the scenario file "
                        "instead)");
    }
  }
}

}  // namespace locksim::cli
