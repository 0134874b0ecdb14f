#include "cli/agree_command.h"

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "checkers/check.h"
#include "cli/exit_codes.h"
#include "cli/interrupt.h"
#include "cli/live_command.h"
#include "cli/output_paths.h"
#include "cli/scenario_run.h"
#include "env/assert.h"
#include "env/atomic_file.h"
#include "env/parse.h"
#include "harness/backends.h"
#include "harness/run.h"
#include "harness/scenario.h"
#include "harness/settings.h"
#include "harness/strict_json.h"
#include "harness/time_scale.h"
#include "history/history_io.h"
#include "live/live_run.h"
#include "live/owned_processes.h"
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

// One side's finding in words: its verdict and, for an overlap, the first
// one's time and holders ("violation (first overlap at 4.120s: c3 and c1)").
std::string finding(const harness::RunResult& r) {
  std::string out = found_as_scenario(r);
  if (!r.mutex.overlaps.empty()) {
    const checkers::Overlap& o = r.mutex.overlaps.front();
    out += " (first overlap at " + format_seconds(o.window_start.ns) + ": " +
           history::client_label(o.a.client) + " and " + history::client_label(o.b.client) + ")";
  }
  return out;
}

// Which side missed the scenario's expected verdict: "simulation", "live",
// "both" or "" (none, or no expectation).
std::string missed_by(const harness::Scenario& sc, const harness::RunResult& sim,
                      const harness::RunResult& live) {
  const std::string expected = to_string(sc.expect);
  if (expected.empty()) return "";
  const bool sim_missed = expected != found_as_scenario(sim);
  const bool live_missed = expected != found_as_scenario(live);
  if (sim_missed && live_missed) return "both";
  return sim_missed ? "simulation" : live_missed ? "live" : "";
}

// The one line that says whether the two sides agree, and on a disagreement
// what each found and which missed the scenario's expectation.
std::string verdict_line(const harness::Scenario& sc, const harness::RunResult& sim,
                         const harness::RunResult& live) {
  const std::string a = found_as_scenario(sim);
  const std::string b = found_as_scenario(live);
  if (a == b) return "AGREE: both " + a;
  std::string out = "DISAGREE: simulation " + finding(sim) + "; live " + finding(live);
  const std::string missed = missed_by(sc, sim, live);
  if (!missed.empty()) {
    // "Missed" would be wrong of a safe scenario that one side broke.
    out += "; the scenario expects " + std::string(to_string(sc.expect)) + ", and " +
           (missed == "both" ? std::string("both sides found otherwise")
                             : missed + " found otherwise");
  }
  return out;
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
  return out + verdict_line(sc, sim, live) + "\n";
}

void write_run(const std::filesystem::path& dir, const harness::RunResult& r) {
  std::filesystem::create_directories(dir);
  write_file_atomically(dir / "history.edn", history::to_edn(r.history));
  write_file_atomically(dir / "history.jsonl", history::to_jsonl(r.history));
  write_file_atomically(dir / "result.json", reports::result_json_text(r));
}

// One side of agree.json's row.
nlohmann::ordered_json side_json(const harness::RunResult& r) {
  const Instants in = instants_of(r);
  nlohmann::ordered_json j;
  j["verdict"] = found_as_scenario(r);
  j["first_overlap"] =
      in.first_overlap == "-" ? nlohmann::ordered_json() : nlohmann::ordered_json(in.first_overlap);
  // The same instant in nanoseconds, for the timing difference agree.html shows.
  j["first_overlap_ns"] = r.mutex.overlaps.empty()
                              ? nlohmann::ordered_json()
                              : nlohmann::ordered_json(r.mutex.overlaps.front().window_start.ns);
  j["overlaps"] = in.overlaps;
  j["acquisitions"] = in.acquisitions;
  j["nemesis_steps"] = in.faults;
  j["errors"] = r.errors;
  return j;
}

// agree.json's row up to its simulation side.
nlohmann::ordered_json row_head(const harness::Scenario& sc, const harness::RunResult& sim) {
  nlohmann::ordered_json j;
  j["scenario"] = sc.name.empty() ? sc.source : sc.name;
  const std::string expected = to_string(sc.expect);
  j["expected"] = expected.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(expected);
  j["seed"] = sc.config.seed;
  j["duration"] = format_duration(sc.config.duration);
  j["simulation"] = side_json(sim);
  return j;
}

nlohmann::ordered_json agree_json(const harness::Scenario& sc, const harness::RunResult& sim,
                                  const harness::RunResult& live) {
  nlohmann::ordered_json j = row_head(sc, sim);
  j["live"] = side_json(live);
  j["agree"] = std::string(found_as_scenario(sim)) == found_as_scenario(live);
  const std::string missed = missed_by(sc, sim, live);
  j["missed_expected"] = missed.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(missed);
  j["verdict_line"] = verdict_line(sc, sim, live);
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

// agree.md: a row per scenario, the ones live cannot express last.
std::string agree_markdown(const nlohmann::ordered_json& report) {
  std::string md = "# locksim agree: the simulation and real servers, scenario by scenario\n\n";
  const nlohmann::ordered_json& sum = report["summary"];
  if (sum.contains("incomplete")) md += "**" + sum["incomplete"].get<std::string>() + "**\n\n";
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
  if (!refused.empty())
    md += "\nNot expressible live:\n\n| scenario | why |\n|---|---|\n" + refused;
  if (report.contains("not_run")) {
    md += "\nNot run (interrupted):";
    for (const auto& r : report["not_run"]) md += " `" + r["scenario"].get<std::string>() + "`";
    md += "\n";
  }
  return md;
}

// Writes --all's report: agree.json, agree.md, agree.html. `done` of
// `total` scenarios ran; `interrupted`: the signal's name, or "" while the
// command runs on (the summary then says nothing of the rest).
void write_report(const std::string& out, nlohmann::ordered_json report, size_t done, size_t total,
                  const std::string& interrupted) {
  LOCKSIM_ASSERT(done <= total);
  nlohmann::ordered_json& sum = report["summary"];
  if (!interrupted.empty()) {
    sum["interrupted"] = interrupted;
    sum["not_run"] = static_cast<int>(total - done);
    sum["incomplete"] = "INCOMPLETE: " + std::to_string(total - done) + " of " +
                        std::to_string(total) + " scenarios not run (interrupted by " +
                        interrupted + ")";
  }
  const std::filesystem::path dir(out);
  write_file_atomically(dir / "agree.json", report.dump(2) + "\n");
  write_file_atomically(dir / "agree.md", agree_markdown(report));
  write_file_atomically(dir / "agree.html", reports::agree_html(report));
}

// What an interrupt finds done, for the interrupt watcher's save
// (live/owned_processes.h), which writes it marked interrupted and exits
// 128 + the signal: the rows finished, and the scenario in progress with its
// simulation side when that finished (its sim/ is written at once).
// Threads: the main thread reports, the watcher's thread saves.
class AgreeProgress {
 public:
  // `names`: the scenarios this command runs, in order; `all`: --all's
  // report (agree.json, .md, .html) rather than one scenario's agree.json.
  AgreeProgress(std::string out, std::vector<std::string> names, bool all)
      : out_(std::move(out)), names_(std::move(names)), all_(all) {
    LOCKSIM_ASSERT(!names_.empty() && (names_.size() == 1 || all_));
    live::set_interrupt_save([this](int signal) { save(signal); });
  }
  ~AgreeProgress() { live::set_interrupt_save(nullptr); }
  AgreeProgress(const AgreeProgress&) = delete;
  AgreeProgress& operator=(const AgreeProgress&) = delete;

  void simulated(nlohmann::ordered_json head) {
    const std::lock_guard<std::mutex> lock(mutex_);
    current_ = std::move(head);
  }
  // --all: the report after scenario `done` of names (1-based count).
  void finished(const nlohmann::ordered_json& report, size_t done) {
    const std::lock_guard<std::mutex> lock(mutex_);
    LOCKSIM_ASSERT(done <= names_.size() && (done > done_ || done == 0));
    report_ = report;
    done_ = done;
    current_ = nullptr;
  }

 private:
  void save(int signal) {
    try {
      const std::lock_guard<std::mutex> lock(mutex_);
      if (!out_.empty()) all_ ? save_report(signal) : save_one(signal);
      std::cerr << "agree: interrupted (" << signal_name(signal) << "); " << names_.size() - done_
                << " of " << names_.size() << " scenario(s) not run"
                << (out_.empty() ? "" : "; wrote " + out_ + "/agree.json marked interrupted")
                << "\n";
    } catch (const std::exception& e) {
      std::cerr << "agree: interrupted; could not write what ran: " << e.what() << "\n";
    }
  }
  // The scenario in progress: its simulation side (null when it had not
  // finished) and the live side that did not run to its end.
  nlohmann::ordered_json interrupted_row(int signal) const {
    nlohmann::ordered_json row =
        current_.is_null()
            ? nlohmann::ordered_json{{"scenario", names_[done_]}, {"simulation", nullptr}}
            : current_;
    row["live"] = {{"interrupted", signal_name(signal)}, {"verdict", nullptr}};
    row["agree"] = nullptr;
    return row;
  }
  void save_one(int signal) const {
    nlohmann::ordered_json j = interrupted_row(signal);
    j["interrupted"] = signal_name(signal);
    write_file_atomically(std::filesystem::path(out_) / "agree.json", j.dump(2) + "\n");
  }
  void save_report(int signal) const {
    nlohmann::ordered_json report = report_;
    if (!report.contains("scenarios")) report["scenarios"] = nlohmann::ordered_json::array();
    nlohmann::ordered_json not_run = nlohmann::ordered_json::array();
    if (done_ < names_.size()) not_run.push_back(interrupted_row(signal));
    for (size_t i = done_ + 1; i < names_.size(); ++i) not_run.push_back({{"scenario", names_[i]}});
    report["not_run"] = not_run;
    write_report(out_, report, done_, names_.size(), signal_name(signal));
  }

  const std::string out_;
  const std::vector<std::string> names_;
  const bool all_;
  std::mutex mutex_;
  nlohmann::ordered_json report_;   // --all: as of done_; guarded by mutex_
  size_t done_ = 0;                 // scenarios finished; guarded by mutex_
  nlohmann::ordered_json current_;  // the one in progress, simulated; guarded by mutex_
};

// A row's exit code, from the row alone (a fresh one, or one --resume
// keeps): 3 when a side could not be judged (its verdict unknown, or
// errors), else 0 or 1 as the verdicts agree; 0 for a scenario live cannot
// express.
int row_exit_code(const nlohmann::ordered_json& row) {
  if (row.contains("expressible") && !row["expressible"].get<bool>()) return kExitClean;
  // A side missing or without a verdict was not judged either.
  const auto unjudged = [&row](const char* side) {
    if (!row.contains(side) || !row[side].is_object()) return true;
    const nlohmann::ordered_json& j = row[side];
    const bool errors = j.contains("errors") && j["errors"].is_array() && !j["errors"].empty();
    return !j.contains("verdict") || j["verdict"] == "unknown" || errors;
  };
  if (unjudged("simulation") || unjudged("live")) return kExitInternal;
  return row.contains("agree") && row["agree"] == true ? kExitClean : kExitViolation;
}

// Both runs of one scenario live can express; writes sim/ and live/ under
// `out` ("" nothing), sim/ as soon as it is done. Returns agree.json's row
// and the exit code.
std::pair<nlohmann::ordered_json, int> compare(const harness::Scenario& sc, const std::string& out,
                                               bool quiet, AgreeProgress& progress) {
  const harness::PreparedRun prepared = harness::prepare_run(sc.config);
  const harness::RunResult sim = harness::run_prepared(prepared, {}).result;
  if (!out.empty()) write_run(std::filesystem::path(out) / "sim", sim);
  progress.simulated(row_head(sc, sim));
  if (!quiet) {
    std::cout << "agree: simulated; now live against real " << harness::backend_of(sc.config).name
              << " for " << format_duration(sc.config.duration) << " of real time...\n"
              << std::flush;
  }
  const harness::RunResult live = live::run_live_and_check(prepared);
  if (!quiet) std::cout << table(sc, sim, live) << std::flush;
  nlohmann::ordered_json j = agree_json(sc, sim, live);
  if (!out.empty()) write_run(std::filesystem::path(out) / "live", live);
  return {j, row_exit_code(j)};
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

// One scenario's row of --all's report: both sides, or why live cannot
// express it. Raises *code to the scenario's exit code.
nlohmann::ordered_json agree_row(const harness::Scenario& sc, const std::string& name,
                                 const std::filesystem::path& out, AgreeProgress& progress,
                                 int* code) {
  nlohmann::ordered_json row;
  try {
    check_expressible(sc);
  } catch (const ConfigError& e) {
    row["scenario"] = name;
    row["expressible"] = false;
    row["why"] = e.what();
    return row;
  }
  auto [j, one] = compare(sc, (out / name).string(), true, progress);
  row = std::move(j);
  row["expressible"] = true;
  *code = std::max(*code, one);
  return row;
}

// --resume: the rows an earlier --all into --out finished, by scenario, to
// be kept rather than run again. Refused (exit 2, before any server starts)
// when that run was another one: another time scale or seed, or a scenario
// this one does not run; the scenarios it did not finish run again.
std::map<std::string, nlohmann::ordered_json> finished_rows(const AgreeFlags& flags,
                                                            const std::vector<std::string>& names) {
  const std::filesystem::path path = std::filesystem::path(flags.out) / "agree.json";
  const std::string where = "--resume: " + path.string();
  const std::optional<std::string> text = harness::read_json_file(path.string(), where);
  if (!text) throw ConfigError(where + ": not found; nothing to resume (drop --resume)");
  // Checked strictly, read again in order: a kept row keeps its keys' order.
  harness::parse_strict_json(*text, path.string());
  const nlohmann::ordered_json report = nlohmann::ordered_json::parse(*text);
  const std::string scale = flags.time_scale.empty() ? "1" : flags.time_scale;
  if (!report.contains("summary") || !report.contains("scenarios") ||
      report["summary"].value("time_scale", "") != scale) {
    throw ConfigError(where + ": not an agree --all report at --time-scale " + scale +
                      "; use another --out or drop --resume");
  }
  std::map<std::string, nlohmann::ordered_json> rows;
  if (!report["scenarios"].is_array()) throw ConfigError(where + ": scenarios: expected a list");
  for (size_t i = 0; i < report["scenarios"].size(); ++i) {
    const nlohmann::ordered_json& row = report["scenarios"][i];
    if (!row.is_object() || !row.contains("scenario") || !row["scenario"].is_string() ||
        !row.contains("expressible") || !row["expressible"].is_boolean() ||
        (row["expressible"] == true &&
         (!row.contains("agree") || !row["agree"].is_boolean() || !row.contains("verdict_line") ||
          !row["verdict_line"].is_string()))) {
      throw ConfigError(where + ": scenarios[" + std::to_string(i) +
                        "]: expected a row agree --all wrote");
    }
    const std::string name = row["scenario"].get<std::string>();
    if (std::find(names.begin(), names.end(), name) == names.end()) {
      throw ConfigError(where + ": has " + name + ", which this run does not (another --only)");
    }
    const harness::Scenario sc = load_for_agree(name, flags);
    if (row.contains("seed") && row["seed"] != sc.config.seed) {
      throw ConfigError(where + ": ran " + name + " with seed " + row["seed"].dump() +
                        ", this run with " + std::to_string(sc.config.seed) + " (another --seed)");
    }
    rows[name] = row;
  }
  return rows;
}

// Every shipped scenario (or --only's), the report rewritten after each; an
// interrupt writes it marked INCOMPLETE, with the scenarios not run.
int agree_all(const AgreeFlags& flags) {
  if (flags.out.empty()) throw ConfigError("--out: --all writes its report there; give a folder");
  const std::vector<harness::BuiltinScenario> all = scenarios_for_all(flags.only);
  make_out_dir(flags.out, "--out", {"agree.json", "agree.md", "agree.html"});
  const std::filesystem::path out(flags.out);
  std::vector<std::string> names;
  for (const harness::BuiltinScenario& b : all) names.push_back(b.name);
  const std::map<std::string, nlohmann::ordered_json> kept =
      flags.resume ? finished_rows(flags, names) : std::map<std::string, nlohmann::ordered_json>{};
  AgreeProgress progress(flags.out, names, true);
  nlohmann::ordered_json report;
  report["scenarios"] = nlohmann::ordered_json::array();
  int expressible = 0, agreeing = 0, code = kExitClean;
  auto summarise = [&](size_t done) {
    report["summary"] = {{"scenarios", static_cast<int>(done)},
                         {"expressible", expressible},
                         {"agree", agreeing},
                         {"time_scale", flags.time_scale.empty() ? "1" : flags.time_scale}};
  };
  summarise(0);
  progress.finished(report, 0);
  for (size_t i = 0; i < all.size(); ++i) {
    const auto was = kept.find(all[i].name);
    nlohmann::ordered_json row;
    if (was != kept.end()) {
      row = was->second;
      code = std::max(code, row_exit_code(row));
    } else {
      const harness::Scenario sc = load_for_agree(all[i].name, flags);
      row = agree_row(sc, all[i].name, out, progress, &code);
    }
    const bool expressed = row["expressible"].get<bool>();
    expressible += expressed ? 1 : 0;
    agreeing += expressed && row["agree"].get<bool>() ? 1 : 0;
    if (!flags.quiet) {
      std::cout << "[" << i + 1 << "/" << all.size() << "] " << all[i].name << ": "
                << (expressed ? row["verdict_line"].get<std::string>() : "not expressible live")
                << (was != kept.end() ? " (kept from the earlier run)" : "") << "\n"
                << std::flush;
    }
    report["scenarios"].push_back(row);
    summarise(i + 1);
    write_report(flags.out, report, i + 1, all.size(), "");
    progress.finished(report, i + 1);
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
  agree
      ->add_flag("--resume", flags.resume,
                 "with --all: keep the scenarios --out's agree.json finished; run the rest")
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
  make_out_dir(flags.out, "--out", {"agree.json"});
  AgreeProgress progress(flags.out, {sc.name.empty() ? sc.source : sc.name}, false);
  auto [j, code] = compare(sc, flags.out, flags.quiet, progress);
  if (!flags.out.empty()) {
    write_file_atomically(std::filesystem::path(flags.out) / "agree.json", j.dump(2) + "\n");
  }
  return code;
}

}  // namespace locksim::cli
