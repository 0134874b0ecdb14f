#include "cli/shrink_command.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "checkers/check.h"
#include "cli/exit_codes.h"
#include "cli/interrupt.h"
#include "cli/output_paths.h"
#include "cli/progress_line.h"
#include "cli/scenario_run.h"
#include "env/assert.h"
#include "env/atomic_file.h"
#include "env/parse.h"
#include "harness/explain_run.h"
#include "harness/prepared_run.h"
#include "harness/run.h"
#include "harness/scenario.h"
#include "harness/settings.h"
#include "harness/shrink/shrink.h"
#include "harness/strict_json.h"
#include "harness/sweep/sweep.h"
#include "reports/matrix.h"

namespace locksim::cli {

namespace {

namespace fs = std::filesystem;
using harness::RunConfig;
using harness::shrink::Finding;

using Start = ShrinkStart;

std::string seed_text(const RunConfig& c) {
  return std::to_string(c.seed);
}

Start start_from_flags(const CLI::App& app, const RunOptions& o) {
  Start s;
  s.config = config_from_options(app, Mode::kRun, o);
  s.field = "--seed " + seed_text(s.config);
  s.replay = harness::replay_command(s.config);
  s.name = s.config.algorithm + "-" + (s.config.profile.empty() ? "faults" : s.config.profile) +
           "-seed-" + seed_text(s.config) + "-shrunk";
  return s;
}

Start start_from_scenario(const CLI::App& app, const RunOptions& o) {
  Start s;
  const harness::Scenario sc = scenario_for_run(o, app, &s.replay);
  s.config = sc.config;
  s.field = "--scenario " + o.scenario + " (seed " + seed_text(s.config) + ")";
  s.name = (sc.name.empty() ? fs::path(o.scenario).stem().string() : sc.name) + "-shrunk";
  return s;
}

// A sweep's plan says how every run of it was configured, so the cell's run
// is re-created from the plan and the seed, as the matrix's replay is.
harness::SweepPlan read_plan(const std::string& dir) {
  const std::string path = (fs::path(dir) / "sweep.json").string();
  const std::optional<std::string> text = harness::read_json_file(path, "--sweep: " + path);
  if (!text) throw ConfigError("--sweep: no " + path + " (not the --out of a locksim sweep)");
  return harness::plan_from_json(harness::parse_strict_json(*text, path), path);
}

std::string joined(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& i : items) out += (out.empty() ? "" : ", ") + i;
  return out;
}

// The cell's first safety finding in seed order (what the matrix links as its
// counterexample), else its first liveness finding.
uint64_t first_failing_seed(const harness::SweepPlan& plan, const std::string& dir,
                            const std::string& algorithm, const std::string& profile,
                            const std::string& cell) {
  int64_t cell_runs = 0;
  std::optional<uint64_t> safety, liveness;
  for (const harness::RunSummary& r :
       harness::read_runs((fs::path(dir) / "runs.jsonl").string(), plan)) {
    if (r.algorithm != algorithm || r.profile != profile) continue;
    ++cell_runs;
    if (r.finding == "safety" && !safety) safety = r.seed;
    if (r.finding == "liveness" && !liveness) liveness = r.seed;
  }
  if (safety) return *safety;
  if (liveness) return *liveness;
  throw ConfigError("--cell " + cell + ": no failing seed in " + dir + " (" +
                    std::to_string(cell_runs) + " of its " + std::to_string(plan.seeds()) +
                    " runs there, none with a safety or liveness finding)");
}

Start start_from_sweep(const CLI::App& app, const ShrinkFlags& f) {
  for (const harness::Setting& s : harness::all_settings()) {
    if (app.count(s.flag) > 0) {
      throw ConfigError(s.flag + ": cannot be combined with --sweep (the sweep's plan decides it)");
    }
  }
  if (app.count("--ttl") > 0 || !f.run.scenario.empty()) {
    throw ConfigError(std::string(app.count("--ttl") > 0 ? "--ttl" : "--scenario") +
                      ": cannot be combined with --sweep");
  }
  if (f.cell.empty()) throw ConfigError("--cell: expected ALGORITHM/PROFILE with --sweep");
  // The last '/': a profile has none, a lock file's path may (script:a/b.json).
  const size_t slash = f.cell.rfind('/');
  if (slash == std::string::npos) {
    throw ConfigError("--cell: expected ALGORITHM/PROFILE (e.g. set-nx-lua/pause), got '" + f.cell +
                      "'");
  }
  const std::string algorithm = f.cell.substr(0, slash), profile = f.cell.substr(slash + 1);
  const harness::SweepPlan plan = read_plan(f.sweep);
  auto has = [](const std::vector<std::string>& v, const std::string& x) {
    return std::find(v.begin(), v.end(), x) != v.end();
  };
  if (!has(plan.algorithms, algorithm) || !has(plan.profiles, profile)) {
    throw ConfigError("--cell: no cell '" + f.cell + "' in " + f.sweep + " (algorithms: " +
                      joined(plan.algorithms) + "; profiles: " + joined(plan.profiles) + ")");
  }
  harness::SweepPlan cell_plan = plan;  // only the cell's lock file matters
  cell_plan.algorithms = {algorithm};
  harness::refuse_changed_scripts(cell_plan, "--sweep");
  const uint64_t seed = first_failing_seed(plan, f.sweep, algorithm, profile, f.cell);
  Start s;
  s.config = plan.config_of(algorithm, profile, seed);
  s.field = "--cell " + f.cell + " (seed " + std::to_string(seed) + ")";
  s.replay = harness::replay_command(s.config);
  s.name = shrunk_cell_name(algorithm, profile, seed);
  return s;
}

Start start_of(const CLI::App& app, const ShrinkFlags& f) {
  // Alone, shrink would shrink the default run (set-nx-lua, seed 1), which
  // has nothing to shrink, and say so about a --seed nobody gave.
  size_t given = 0;
  for (const CLI::Option* o : app.get_options()) given += o->count();
  if (given == 0) {
    throw ConfigError(
        "shrink: expected what to shrink: --scenario NAME|FILE, --sweep DIR --cell "
        "ALGORITHM/PROFILE, or a failing run's flags (e.g. --algorithm set-nx-lua --profile "
        "pause --seed 3)");
  }
  if (!f.sweep.empty()) return start_from_sweep(app, f);
  if (!f.cell.empty()) throw ConfigError("--cell: needs --sweep DIR");
  if (!f.run.scenario.empty()) return start_from_scenario(app, f.run);
  return start_from_flags(app, f.run);
}

// The progress line: on a terminal only, redrawn at most 5 times a second.
struct Progress {
  bool shown = false;
  int runs_max = 0;
  int64_t start_ns = wall_ns();
  int64_t last_ns = 0;

  int last_runs = 0;
  RunConfig last_smallest;

  // The final line, with the last state update() saw.
  void finish() {
    if (last_runs > 0) update(last_runs, last_smallest, true);
  }

  void update(int runs, const RunConfig& smallest, bool final) {
    if (!shown) return;
    if (!final) {
      last_runs = runs;
      last_smallest = smallest;
    }
    const int64_t now = wall_ns();
    if (!final && !progress_due(now, last_ns, true)) return;
    last_ns = now;
    char line[200];
    const size_t faults = smallest.faults.events.size();
    const int clients = smallest.workload.clients;
    std::snprintf(line, sizeof line, "shrink: %d/%d runs, %zu fault%s, %d client%s, %s run, %.1fs",
                  runs, runs_max, faults, faults == 1 ? "" : "s", clients, clients == 1 ? "" : "s",
                  format_duration(smallest.duration).c_str(),
                  static_cast<double>(now - start_ns) / 1e9);
    print_progress_line(line, true, final);
  }
};

// What the scenario's description counts, before and after.
struct Size {
  size_t faults = 0;
  int clients = 0;
  Duration run_length;
  int64_t events = 0;
  int64_t client_ops = 0;
  int servers = 0;
};

Size size_of(const RunConfig& c, const harness::RunResult& r) {
  return {c.faults.events.size(),        c.workload.clients, c.duration, r.events, r.client_ops,
          harness::shrink::servers_of(c)};
}

const char* finding_words(Finding f) {
  switch (f) {
    case Finding::kSafety:
      return "safety finding (two holders at once, in true time)";
    case Finding::kConsequence:
      return "consequence finding (the guarded data damaged)";
    case Finding::kLiveness:
      return "liveness finding (the lock stuck)";
    case Finding::kNone:
      break;
  }
  LOCKSIM_ASSERT_MSG(false, "only a failing run is shrunk");
  return "";
}

std::string plural(size_t n, const char* word) {
  return reports::counted(static_cast<int64_t>(n), word);
}

// "faults 4 -> 1, clients 5 -> 2, run length 20s -> 6s, events ..., client ops ..."
std::string how_far(const Size& a, const Size& b) {
  auto arrow = [](const std::string& x, const std::string& y) { return x + " -> " + y; };
  return "faults " + arrow(std::to_string(a.faults), std::to_string(b.faults)) + ", clients " +
         arrow(std::to_string(a.clients), std::to_string(b.clients)) + ", run length " +
         arrow(format_duration(a.run_length), format_duration(b.run_length)) + ", events " +
         arrow(std::to_string(a.events), std::to_string(b.events)) + ", client ops " +
         arrow(std::to_string(a.client_ops), std::to_string(b.client_ops)) +
         (a.servers == b.servers
              ? ""
              : ", servers " + arrow(std::to_string(a.servers), std::to_string(b.servers)));
}

// Everything the search did, for the file: deterministic (no wall time).
struct Story {
  Start start;
  Finding finding = Finding::kNone;
  checkers::Mechanism cause = checkers::Mechanism::kNone;
  size_t drawn = 0;  // faults the profile drew, made explicit
  bool same_run = true;
  Size before, after;
  harness::shrink::Result result;
  int runs_max = 0;
};

// " and its cause, MECHANISM" when the search kept one (a cause explain
// found), else nothing.
std::string kept_cause(checkers::Mechanism cause) {
  if (cause == checkers::Mechanism::kNone || cause == checkers::Mechanism::kUndetermined) return "";
  return std::string(" and its cause, ") + checkers::mechanism_id(cause);
}

std::string description(const Story& s) {
  std::string d = "Shrunk by locksim shrink from `" + s.start.replay + "`";
  if (s.drawn > 0) {
    d += " (its profile's " + plural(s.drawn, "drawn fault") + " made explicit" +
         (s.same_run ? "" : "; that run differs from the profile's but fails the same way") + ")";
  }
  d += ", keeping its " + std::string(finding_words(s.finding)) + kept_cause(s.cause) + ": " +
       how_far(s.before, s.after) + "; " +
       plural(static_cast<size_t>(s.result.runs), "candidate run") + ".";
  switch (s.result.stopped) {
    case harness::shrink::Stopped::kDone:
      break;
    case harness::shrink::Stopped::kRunsMax:
      d += " The search stopped at --max-runs " + std::to_string(s.runs_max) +
           " before it finished: a smaller failing scenario may exist.";
      break;
    case harness::shrink::Stopped::kInterrupted:
      d += " The search was interrupted before it finished: a smaller failing scenario may exist.";
      break;
  }
  if (s.result.one_minimal) {
    d += " The fault list is 1-minimal: without any one of its faults the run no longer fails "
         "this way.";
  }
  return d;
}

harness::Scenario shrunk_scenario(const Story& s) {
  harness::Scenario sc;
  sc.name = s.start.name;
  sc.summary = s.start.config.algorithm + " shrunk to " + plural(s.after.faults, "fault") + ", " +
               plural(static_cast<size_t>(s.after.clients), "client") + ", a run of " +
               format_duration(s.after.run_length) + ".";
  sc.description = description(s);
  sc.expect = s.finding == Finding::kLiveness ? harness::Scenario::Expect::kLiveness
                                              : harness::Scenario::Expect::kViolation;
  sc.config = s.result.smallest;
  sc.config.source.clear();
  return sc;
}

// The input, run once: its finding, and the config the search starts from.
struct Input {
  Finding finding = Finding::kNone;
  // What explain says caused it, in the run the search starts from: every
  // candidate must keep it (harness::shrink::real_runs says why).
  checkers::Mechanism cause = checkers::Mechanism::kNone;
  RunConfig failing;  // the profile's drawn faults made explicit
  size_t drawn = 0;
  Size size;
  bool same_run = true;  // the explicit faults replayed the profile's run exactly
};

Input run_input(const Start& start) {
  // Each run here with the lock traced, for the cause explain finds in it
  // (tracing leaves a run as it is): it is the config the search starts
  // from, so no run is made again only to ask its cause.
  harness::RunExtras traced;
  traced.trace_lock = true;
  const harness::PreparedRun prepared = harness::prepare_run(start.config);
  const harness::SimRunReport report = harness::run_prepared(prepared, traced);
  const std::vector<checkers::Check>& checks = report.result.checks;
  Input in;
  in.finding = harness::shrink::finding_of(checks);
  if (in.finding == Finding::kNone) {
    std::string verdict = checkers::to_string(checkers::merged(checks));
    if (std::string(checkers::finding(checks)) == "latent") verdict += ", a latent finding only";
    throw ConfigError(start.field + ": run shows no finding to shrink (verdict: " + verdict + ")");
  }
  in.drawn = report.result.profile_faults.events.size();
  in.failing = harness::shrink::materialized(prepared.config(), report.result.profile_faults);
  in.size = size_of(in.failing, report.result);
  if (start.config.profile.empty()) {  // in.failing is the config just run
    in.cause = harness::explain_result(report.result).mechanism;
    return in;
  }
  // The search shrinks the explicit faults, so they must fail as the profile
  // did; if they do not, shrinking them would shrink some other run: refuse.
  // They should be the very same run (same events and ops); one that differs
  // but fails the same way can still be shrunk, and the file says so.
  harness::SimRunReport again;
  try {
    again = harness::simulate_and_check(in.failing, traced);
  } catch (const ConfigError& e) {  // a drawn fault that does not read as a --fault: a bug
    throw std::runtime_error(start.field + ": the profile's faults, made explicit: " + e.what());
  }
  in.same_run = again.result.events == report.result.events &&
                again.result.client_ops == report.result.client_ops;
  if (!harness::shrink::keeps_finding(in.finding, again.result.checks)) {
    throw std::runtime_error(start.field + ": the " + plural(in.drawn, "fault") + " profile '" +
                             start.config.profile +
                             "' drew, given as explicit faults without the profile, no longer "
                             "show the run's " +
                             harness::shrink::to_string(in.finding) +
                             " finding, so there is nothing to shrink them from (a bug: please "
                             "report it with this command)");
  }
  in.cause = harness::explain_result(again.result).mechanism;
  return in;
}

// The scenario file for `s`, after checking that it replays: the final
// config is run (its events and ops for the description), its file is read
// back as `locksim run --scenario` reads it, and that config is run again.
std::string replayed_file(Story& s) {
  const harness::SimRunReport last = harness::simulate_and_check(s.result.smallest);
  if (!harness::shrink::keeps_finding(s.finding, last.result.checks)) {
    throw std::runtime_error(
        "the smallest failing config no longer fails when run again (a bug: "
        "runs are meant to be deterministic)");
  }
  s.after = size_of(s.result.smallest, last.result);
  const std::string text = harness::scenario_file_text(shrunk_scenario(s));
  const harness::Scenario back = harness::parse_scenario(text, "the shrunk scenario");
  LOCKSIM_ASSERT_MSG(
      harness::settings_to_json(back.config) == harness::settings_to_json(s.result.smallest),
      "a scenario file reads back as the config it was written from");
  const harness::SimRunReport replay = harness::simulate_and_check(back.config);
  if (!harness::shrink::keeps_finding(s.finding, replay.result.checks) ||
      replay.result.events != last.result.events) {
    throw std::runtime_error("the shrunk scenario does not replay as its config ran (a bug)");
  }
  return text;
}

void report(const ShrinkFlags& f, const Start& start, const Shrunk& s, double seconds) {
  if (f.run.quiet) return;
  std::ostream& out = f.run.out.empty() ? std::cerr : std::cout;
  char timing[64];
  std::snprintf(timing, sizeof timing, " (%.1fs)", seconds);
  out << "shrink: " << start.field << ": " << s.how_far << timing << "\n";
  if (s.stopped == harness::shrink::Stopped::kRunsMax) {
    out << "shrink: stopped at --max-runs " << f.max_runs
        << ": this is the smallest failing scenario found so far\n";
  } else if (s.stopped == harness::shrink::Stopped::kInterrupted) {
    out << "shrink: interrupted: this is the smallest failing scenario found so far\n";
  }
  if (!f.run.out.empty()) {
    out << "wrote " << f.run.out << "; replay: locksim run --scenario "
        << harness::shell_quote(f.run.out) << "\n";
  }
}

}  // namespace

CLI::App* add_shrink_command(CLI::App& app, ShrinkFlags& f) {
  CLI::App* s = app.add_subcommand(
      "shrink",
      "find the smallest failing scenario for one failing run (fewer faults, smaller faults, "
      "fewer clients, a shorter run) by deterministic re-runs; write it as a scenario file");
  add_run_options(*s, Mode::kRun, f.run);
  s->get_option("--out")->description(
      "write the shrunk scenario (JSON) to this file (default: stdout)");
  s->get_option("--scenario")
      ->description(
          "shrink a shipped scenario (see locksim list) or a scenario file; --seed may override "
          "its "
          "seed");
  s->add_option("--sweep", f.sweep,
                "shrink a sweep cell's first failing seed: the sweep's --out directory (with "
                "--cell)");
  s->add_option("--cell", f.cell, "the sweep cell, ALGORITHM/PROFILE (with --sweep)");
  s->add_option("--max-runs", f.max_runs,
                "at most this many candidate runs; then the smallest failing scenario so far is "
                "written (default 300)");
  return s;
}

std::string file_slug(const std::string& name) {
  auto plain = [](char ch) {
    return std::isalnum(static_cast<unsigned char>(ch)) != 0 || ch == '.' || ch == '_' ||
           ch == '+' || ch == '-';
  };
  std::string slug;
  for (const char ch : name) {
    if (plain(ch)) {
      slug += ch;
    } else if (!slug.ends_with('-')) {
      slug += '-';
    }
  }
  if (slug == name) return slug;
  // FNV-1a: the same name gives the same file on every machine (std::hash need not).
  uint32_t hash = 2166136261u;
  for (const char ch : name) hash = (hash ^ static_cast<unsigned char>(ch)) * 16777619u;
  char hex[9];
  std::snprintf(hex, sizeof hex, "%08x", hash);
  slug += (slug.ends_with('-') ? "" : "-") + std::string(hex);
  LOCKSIM_ASSERT(slug.find('/') == std::string::npos && slug.find(':') == std::string::npos);
  return slug;
}

std::string shrunk_cell_name(const std::string& algorithm, const std::string& profile,
                             uint64_t seed) {
  return file_slug(algorithm) + "-" + file_slug(profile) + "-seed-" + std::to_string(seed) +
         "-shrunk";
}

Shrunk shrink_start(const ShrinkStart& start, const harness::shrink::Options& options) {
  Story story;
  story.start = start;
  story.runs_max = options.runs_max;
  const Input input = run_input(story.start);
  story.finding = input.finding;
  story.cause = input.cause;
  story.drawn = input.drawn;
  story.same_run = input.same_run;
  story.before = input.size;
  story.result = harness::shrink::shrink(
      input.failing, harness::shrink::real_runs(input.finding, input.cause), options);
  Shrunk out;
  out.scenario_text = replayed_file(story);
  out.summary = shrunk_scenario(story).summary;
  out.how_far = "kept its " + std::string(harness::shrink::to_string(story.finding)) + " finding" +
                kept_cause(story.cause) + ": " + how_far(story.before, story.after) + " in " +
                plural(static_cast<size_t>(story.result.runs), "candidate run");
  out.stopped = story.result.stopped;
  return out;
}

int run_shrink_command(const CLI::App& app, const ShrinkFlags& f) {
  if (f.max_runs < 0 || f.max_runs > harness::shrink::Options::kRunsMaxMax) {
    throw ConfigError("--max-runs: expected 0..100000, got " + std::to_string(f.max_runs));
  }
  const Start start = start_of(app, f);
  check_writable_file(f.run.out, "--out");
  Progress progress;
  progress.shown = !f.run.quiet && stderr_is_terminal();
  progress.runs_max = f.max_runs;
  harness::shrink::Options o;
  o.runs_max = f.max_runs;
  o.stop = &stop_flag();
  o.on_run = [&progress](int runs, const RunConfig& smallest) {
    progress.update(runs, smallest, false);
  };
  Shrunk shrunk;
  {
    // From the first run on: Ctrl-C during it ends the search before its
    // first candidate, and the input itself (faults made explicit) is written.
    const StopOnInterrupt interrupt;
    shrunk = shrink_start(start, o);
  }
  progress.finish();
  if (f.run.out.empty()) {
    std::cout << shrunk.scenario_text << std::flush;
  } else {
    write_file_atomically(f.run.out, shrunk.scenario_text);
  }
  report(f, start, shrunk, static_cast<double>(wall_ns() - progress.start_ns) / 1e9);
  return shrunk.stopped == harness::shrink::Stopped::kInterrupted ? interrupted_exit_code()
                                                                  : kExitClean;
}

}  // namespace locksim::cli
