#include "cli/agree_command.h"

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "checkers/check.h"
#include "cli/exit_codes.h"
#include "cli/output_paths.h"
#include "cli/scenario_run.h"
#include "env/atomic_file.h"
#include "env/parse.h"
#include "harness/backends.h"
#include "harness/run.h"
#include "harness/scenario.h"
#include "harness/settings.h"
#include "harness/time_scale.h"
#include "history/history_io.h"
#include "live/live_run.h"
#include "reports/agree_html.h"
#include "reports/result_json.h"

namespace locksim::cli {

namespace {

// The instants that matter in one run, as "12.345s" ("-": none).
struct Instants {
  std::string first_overlap = "-";
  int overlaps = 0;
  int faults = 0;  // nemesis steps taken (skips included)
  int acquisitions = 0;
};

Instants instants_of(const harness::RunResult& r) {
  Instants in;
  in.overlaps = static_cast<int>(r.mutex.overlaps.size());
  if (!r.mutex.overlaps.empty()) {
    in.first_overlap = format_seconds(r.mutex.overlaps.front().window_start.ns);
  }
  for (const history::Op& op : r.history.ops) {
    if (!history::is_client_op(op)) {
      ++in.faults;
    } else if (op.f == history::OpF::kAcquire && op.type == history::OpType::kOk) {
      ++in.acquisitions;
    }
  }
  return in;
}

std::string row(const std::string& what, const std::string& sim, const std::string& live) {
  std::string out = "  " + what;
  out.resize(std::max<size_t>(out.size() + 1, 22), ' ');
  out += sim;
  out.resize(std::max<size_t>(out.size() + 1, 44), ' ');
  return out + live + "\n";
}

std::string table(const harness::Scenario& sc, const harness::RunResult& sim,
                  const harness::RunResult& live) {
  const Instants a = instants_of(sim);
  const Instants b = instants_of(live);
  const std::string expected = to_string(sc.expect);
  std::string out = "agree: " + (sc.name.empty() ? sc.source : sc.name) +
                    (expected.empty() ? "" : " (expects " + expected + ")") + "\n";
  out += row("", "simulation", "live");
  out += row("verdict", found_as_scenario(sim), found_as_scenario(live));
  out += row("first overlap", a.first_overlap, b.first_overlap);
  out += row("overlaps", std::to_string(a.overlaps), std::to_string(b.overlaps));
  out += row("acquisitions", std::to_string(a.acquisitions), std::to_string(b.acquisitions));
  out += row("nemesis steps", std::to_string(a.faults), std::to_string(b.faults));
  for (const std::string& e : live.errors) out += "  live error: " + e + "\n";
  return out;
}

void write_run(const std::filesystem::path& dir, const harness::RunResult& r) {
  std::filesystem::create_directories(dir);
  write_file_atomically(dir / "history.edn", history::to_edn(r.history));
  write_file_atomically(dir / "history.jsonl", history::to_jsonl(r.history));
  write_file_atomically(dir / "result.json", reports::result_json_text(r));
}

nlohmann::ordered_json agree_json(const harness::Scenario& sc, const harness::RunResult& sim,
                                  const harness::RunResult& live) {
  auto side = [](const harness::RunResult& r) {
    const Instants in = instants_of(r);
    nlohmann::ordered_json j;
    j["verdict"] = found_as_scenario(r);
    j["first_overlap"] = in.first_overlap == "-" ? nlohmann::ordered_json()
                                                 : nlohmann::ordered_json(in.first_overlap);
    // The same instant in nanoseconds, for the timing difference agree.html shows.
    j["first_overlap_ns"] = r.mutex.overlaps.empty()
                                ? nlohmann::ordered_json()
                                : nlohmann::ordered_json(r.mutex.overlaps.front().window_start.ns);
    j["overlaps"] = in.overlaps;
    j["acquisitions"] = in.acquisitions;
    j["nemesis_steps"] = in.faults;
    j["errors"] = r.errors;
    return j;
  };
  nlohmann::ordered_json j;
  j["scenario"] = sc.name.empty() ? sc.source : sc.name;
  const std::string expected = to_string(sc.expect);
  j["expected"] = expected.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(expected);
  j["seed"] = sc.config.seed;
  j["duration"] = format_duration(sc.config.duration);
  j["simulation"] = side(sim);
  j["live"] = side(live);
  j["agree"] = std::string(found_as_scenario(sim)) == found_as_scenario(live);
  return j;
}

// Loads the scenario with the command line's --seed and --time-scale.
harness::Scenario load_for_agree(const std::string& name, const AgreeFlags& flags) {
  harness::Scenario sc = harness::load_scenario(name);
  if (!flags.seed.empty()) {
    harness::find_setting_by_flag("--seed")->parse(sc.config, flags.seed, "--seed");
  }
  if (!flags.time_scale.empty()) {
    harness::scale_time(sc.config, harness::parse_time_scale(flags.time_scale, "--time-scale"));
  }
  return sc;
}

// Throws ConfigError, before anything runs, for a scenario live cannot
// express: a setting or fault it cannot apply (check_live_run), or a story
// its file says live cannot reproduce (not_live).
void check_expressible(const harness::Scenario& sc) {
  live::check_live_run(sc.config);
  if (!sc.not_live.empty()) throw ConfigError(sc.source + ": not_live: " + sc.not_live);
}

// Both runs of one scenario live can express; writes sim/ and live/ under
// `out` ("" nothing). Returns agree.json's row and the exit code.
std::pair<nlohmann::ordered_json, int> compare(const harness::Scenario& sc, const std::string& out,
                                               bool quiet) {
  const harness::PreparedRun prepared = harness::prepare_run(sc.config);
  const harness::RunResult sim = harness::run_prepared(prepared, {}).result;
  if (!quiet) {
    std::cout << "agree: simulated; now live against real " << harness::backend_of(sc.config).name
              << " for " << format_duration(sc.config.duration) << " of real time...\n"
              << std::flush;
  }
  const harness::RunResult live = live::run_live_and_check(prepared);
  if (!quiet) std::cout << table(sc, sim, live) << std::flush;
  nlohmann::ordered_json j = agree_json(sc, sim, live);
  if (!out.empty()) {
    write_run(std::filesystem::path(out) / "sim", sim);
    write_run(std::filesystem::path(out) / "live", live);
  }
  const bool judged = checkers::merged(sim.checks) != checkers::Validity::kUnknown &&
                      checkers::merged(live.checks) != checkers::Validity::kUnknown &&
                      live.errors.empty();
  if (!judged) return {j, kExitInternal};
  return {j, j["agree"].get<bool>() ? kExitClean : kExitViolation};
}

// agree.md: a row per scenario, the ones live cannot express last.
std::string agree_markdown(const nlohmann::ordered_json& report) {
  std::string md = "# locksim agree: the simulation and real servers, scenario by scenario\n\n";
  const nlohmann::ordered_json& sum = report["summary"];
  md += "Scenarios: " + std::to_string(sum["scenarios"].get<int>()) +
        "; expressible live: " + std::to_string(sum["expressible"].get<int>()) +
        "; agreeing: " + std::to_string(sum["agree"].get<int>()) + "; time scale " +
        sum["time_scale"].get<std::string>() + ".\n\n";
  md += "| scenario | expects | simulation | live | first overlap (sim / live) | agree |\n";
  md += "|---|---|---|---|---|---|\n";
  std::string refused;
  for (const auto& r : report["scenarios"]) {
    const std::string name = "`" + r["scenario"].get<std::string>() + "`";
    if (!r["expressible"].get<bool>()) {
      refused += "| " + name + " | " + r["why"].get<std::string>() + " |\n";
      continue;
    }
    auto overlap = [](const nlohmann::ordered_json& side) {
      return side["first_overlap"].is_null() ? std::string("-")
                                             : side["first_overlap"].get<std::string>();
    };
    md += "| " + name + " | " + (r["expected"].is_null() ? "-" : r["expected"].get<std::string>()) +
          " | " + r["simulation"]["verdict"].get<std::string>() + " | " +
          r["live"]["verdict"].get<std::string>() + " | " + overlap(r["simulation"]) + " / " +
          overlap(r["live"]) + " | " + (r["agree"].get<bool>() ? "yes" : "**no**") + " |\n";
  }
  md += "\nNot expressible live:\n\n| scenario | why |\n|---|---|\n" + refused;
  return md;
}

// The shipped scenarios --all runs: every one, or those --only names (each
// must be shipped: one unknown name is bad input, never silently skipped).
std::vector<harness::BuiltinScenario> scenarios_for_all(const std::string& only) {
  const auto& shipped = harness::builtin_scenario_texts();
  if (only.empty()) return shipped;
  std::vector<std::string> names;
  for (size_t start = 0; start <= only.size();) {
    const size_t comma = std::min(only.find(',', start), only.size());
    names.push_back(only.substr(start, comma - start));
    start = comma + 1;
  }
  for (const std::string& n : names) {
    if (harness::find_builtin_scenario(n) == nullptr) {
      throw ConfigError(harness::unknown_scenario_message("--only", n, false));
    }
  }
  std::vector<harness::BuiltinScenario> out;
  for (const harness::BuiltinScenario& b : shipped) {
    if (std::find(names.begin(), names.end(), b.name) != names.end()) out.push_back(b);
  }
  return out;
}

// Every shipped scenario (or --only's), the report rewritten after each (an
// interrupted --all keeps what finished).
int agree_all(const AgreeFlags& flags) {
  if (flags.out.empty()) throw ConfigError("--out: --all writes its report there; give a folder");
  const std::vector<harness::BuiltinScenario> all = scenarios_for_all(flags.only);
  make_out_dir(flags.out);
  const std::filesystem::path out(flags.out);
  nlohmann::ordered_json report;
  report["scenarios"] = nlohmann::ordered_json::array();
  int expressible = 0, agreeing = 0, code = kExitClean;
  for (size_t i = 0; i < all.size(); ++i) {
    const harness::Scenario sc = load_for_agree(all[i].name, flags);
    nlohmann::ordered_json row;
    try {
      check_expressible(sc);
    } catch (const ConfigError& e) {
      row["scenario"] = all[i].name;
      row["expressible"] = false;
      row["why"] = e.what();
    }
    if (row.empty()) {
      auto [j, one] = compare(sc, (out / all[i].name).string(), true);
      row = std::move(j);
      row["expressible"] = true;
      ++expressible;
      agreeing += row["agree"].get<bool>() ? 1 : 0;
      code = std::max(code, one);
    }
    if (!flags.quiet) {
      std::cout << "[" << i + 1 << "/" << all.size() << "] " << all[i].name << ": "
                << (row["expressible"].get<bool>()
                        ? row["simulation"]["verdict"].get<std::string>() + " / " +
                              row["live"]["verdict"].get<std::string>() +
                              (row["agree"].get<bool>() ? " (agree)" : " (DIFFER)")
                        : "not expressible live")
                << "\n"
                << std::flush;
    }
    report["scenarios"].push_back(row);
    report["summary"] = {{"scenarios", static_cast<int>(i + 1)},
                         {"expressible", expressible},
                         {"agree", agreeing},
                         {"time_scale", flags.time_scale.empty() ? "1" : flags.time_scale}};
    write_file_atomically(out / "agree.json", report.dump(2) + "\n");
    write_file_atomically(out / "agree.md", agree_markdown(report));
    write_file_atomically(out / "agree.html", reports::agree_html(report));
  }
  return code;
}

}  // namespace

CLI::App* add_agree_command(CLI::App& app, AgreeFlags& flags) {
  CLI::App* agree = app.add_subcommand(
      "agree", "run a scenario in the simulation and against real servers; compare the verdicts");
  CLI::Option* one = agree->add_option("--scenario", flags.scenario,
                                       "a shipped scenario (locksim list) or a file");
  CLI::Option* all = agree->add_flag(
      "--all", flags.all, "every shipped scenario; writes agree.json, agree.md and agree.html");
  one->excludes(all);
  agree
      ->add_option("--only", flags.only,
                   "with --all: only these shipped scenarios (comma-separated)")
      ->needs(all);
  agree->add_option("--seed", flags.seed, "override the scenario's seed (both runs)");
  agree->add_option("--time-scale", flags.time_scale,
                    "multiply every duration of the scenario by F on both sides (0.01 to 100)");
  agree->add_option("--out", flags.out, "write sim/, live/ and agree.json here");
  agree->add_flag("--quiet", flags.quiet, "print nothing; rely on the exit code");
  return agree;
}

int run_agree_command(const AgreeFlags& flags) {
  if (flags.all) return agree_all(flags);
  if (flags.scenario.empty()) throw ConfigError("--scenario: expected a scenario, or --all");
  const harness::Scenario sc = load_for_agree(flags.scenario, flags);
  // Everything live cannot do is refused before the simulation runs.
  check_expressible(sc);
  make_out_dir(flags.out);
  auto [j, code] = compare(sc, flags.out, flags.quiet);
  if (!flags.out.empty()) {
    write_file_atomically(std::filesystem::path(flags.out) / "agree.json", j.dump(2) + "\n");
  }
  return code;
}

}  // namespace locksim::cli
