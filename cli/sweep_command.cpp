#include "cli/sweep_command.h"

#include "cli/exit_codes.h"
#include "cli/next_step.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <set>
#include <thread>

#include "cli/interrupt.h"
#include "cli/output_paths.h"
#include "cli/progress_line.h"
#include "cli/shrink_command.h"
#include "env/assert.h"
#include "env/parse.h"
#include "harness/explain_run.h"
#include "harness/run.h"
#include "harness/scenario.h"
#include "harness/settings.h"
#include "harness/strict_json.h"
#include "harness/sweep/sweep.h"
#include "reports/matrix.h"

namespace locksim::cli {

namespace {

namespace fs = std::filesystem;

std::string eta_text(double seconds) {
  if (seconds < 0 || seconds > 1e7) return "?";
  return format_span(static_cast<int64_t>(seconds * 1e9));
}

// Progress: a line as cli/progress_line.h prints it.
struct Progress {
  bool tty = stderr_is_terminal();
  bool quiet = false;
  int64_t start_ns = wall_ns();
  int64_t last_ns = 0;
  uint64_t resumed = 0;  // runs already done when the sweep started

  void update(uint64_t done, uint64_t total, uint64_t findings, bool final) {
    if (quiet) return;
    const int64_t now = wall_ns();
    if (!final && !progress_due(now, last_ns, tty)) return;
    last_ns = now;
    const double elapsed = static_cast<double>(now - start_ns) / 1e9;
    const double rate = elapsed > 0 ? static_cast<double>(done - resumed) / elapsed : 0;
    const double left = rate > 0 ? static_cast<double>(total - done) / rate : -1;
    // Nothing left is not "0ns left": the time left shows only while runs are.
    const std::string left_text = done < total ? ", " + eta_text(left) + " left" : "";
    char line[200];
    std::snprintf(line, sizeof line, "sweep: %llu/%llu runs, %.1f runs/s%s, %llu %s",
                  static_cast<unsigned long long>(done), static_cast<unsigned long long>(total),
                  rate, left_text.c_str(), static_cast<unsigned long long>(findings),
                  findings == 1 ? "finding" : "findings");
    print_progress_line(line, tty, final);
  }
};

// Prints each broken cell (kind, cell, why, replay), the gate's line and
// the cells it did not judge, and returns the exit code: 1 when a cell broke
// its expectation, 4 when no cell did but the runs do not cover the sweep or
// no cell was judged.
int report_gate(const reports::Matrix& m, bool quiet) {
  for (const auto& c : m.cells) {
    if (c.gate.holds) continue;
    std::cout << c.gate.failure << ": " << c.algorithm << " × " << c.profile << ": "
              << c.gate.message << "\n";
  }
  const reports::GateState state = reports::gate_state(m);
  // The verdict lines print even with --quiet: a CI log must show why it failed.
  if (m.gated && (!quiet || state != reports::GateState::kHolds)) {
    std::cout << "gate: " << reports::gate_text(m) << "\n";
    if (const std::string u = reports::unjudged_text(m); !u.empty() && !quiet) {
      std::cout << "gate: " << u << "\n";
    }
  }
  switch (state) {
    case reports::GateState::kFails:
      return kExitViolation;
    case reports::GateState::kIncomplete:
    case reports::GateState::kNothingJudged:
      return kExitIncomplete;
    case reports::GateState::kNone:
    case reports::GateState::kHolds:
      break;
  }
  // Runs that could not finish judge nothing: exit 3, as `run` (a gated
  // cell with them already failed, exit 1). Said even with --quiet.
  int64_t unknown = 0;
  std::string replay;
  for (const auto& c : m.cells) {
    unknown += c.unknown;
    if (replay.empty()) replay = c.first_unknown_replay;
  }
  if (unknown == 0) return kExitClean;
  std::cout << "sweep: " << unknown << (unknown == 1 ? " run" : " runs")
            << " could not finish (a client's exception or virtual time stopped; verdict "
               "unknown), the first: "
            << replay << "\n";
  return kExitInternal;
}

harness::SweepPlan plan_from_flags(const SweepFlags& f) {
  harness::SweepPlan plan;
  plan.algorithms = harness::parse_algorithm_list(f.algorithms, "--algorithms");
  plan.profiles = harness::parse_profile_list(f.profiles, "--profiles");
  std::tie(plan.seed_first, plan.seed_last) = harness::parse_seed_range(f.seeds, "--seeds");
  harness::refuse_too_many_runs(plan, "--seeds");
  std::tie(plan.shard_index, plan.shard_count) = harness::parse_shard(f.shard, "--shard");
  harness::find_setting_by_flag("--duration")->parse(plan.base, f.duration, "--duration");
  // A lock unheld for half the run at its end is stuck (the run default, 30 s,
  // would never fire in a 20 s run); never more than the run default.
  plan.base.stuck_after = std::min(plan.base.stuck_after, plan.base.duration / 2);
  plan.base.workload.draw = f.swarm;
  plan.script_sha1 = harness::script_digests(plan.algorithms, "--algorithms");
  // Checked here, before any run, as `shrink --max-runs` is: the shrink
  // comes after the whole sweep, too late to refuse it.
  if (f.shrink_runs_max_given && !f.shrink) {  // a bound on nothing, said nothing
    throw ConfigError("--shrink-max-runs: only with --shrink, whose search it bounds; got " +
                      std::to_string(f.shrink_runs_max) + " without it");
  }
  if (f.shrink_runs_max < 0 || f.shrink_runs_max > harness::shrink::Options::kRunsMaxMax) {
    throw ConfigError("--shrink-max-runs: expected 0.." +
                      std::to_string(harness::shrink::Options::kRunsMaxMax) + ", got " +
                      std::to_string(f.shrink_runs_max));
  }
  return plan;
}

void write_text(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::trunc | std::ios::binary);
  out << text;
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

// The shrunk scenario's story (locksim explain), written beside it and kept
// in the cell for the reports.
void tell_shrunk(const fs::path& dir, const std::string& name, const Shrunk& shrunk,
                 reports::MatrixCell& c) {
  const harness::Scenario sc = harness::parse_scenario(shrunk.scenario_text, name);
  harness::RunExtras extras;
  extras.trace_lock = true;
  const harness::RunResult r = harness::simulate_and_check(sc.config, extras).result;
  const checkers::Story story = harness::explain_result(r);
  c.shrunk_story = checkers::format_story(story);
  c.shrunk_mechanism = checkers::mechanism_id(story.mechanism);
  c.shrunk_story_file = "shrunk/" + name + ".story.txt";
  write_text(dir / (name + ".story.txt"),
             c.shrunk_story + "replay: locksim run --scenario " + c.shrunk_file + "\n");
}

// One cell's shrink: its first counterexample (the seed its timeline draws)
// shrunk into DIR/NAME.json, its story beside it, both named in the cell.
void shrink_cell(reports::MatrixCell& c, uint64_t seed, const harness::SweepPlan& plan,
                 const SweepFlags& f, const fs::path& dir) {
  ShrinkStart start;
  start.config = plan.config_of(c.algorithm, c.profile, seed);
  start.field = "cell " + c.algorithm + "/" + c.profile + " (seed " + std::to_string(seed) + ")";
  start.replay = harness::replay_command(start.config);
  start.name = shrunk_cell_name(c.algorithm, c.profile, seed);
  harness::shrink::Options o;
  o.runs_max = f.shrink_runs_max;
  o.stop = &stop_flag();
  const Shrunk shrunk = shrink_start(start, o);
  write_text(dir / (start.name + ".json"), shrunk.scenario_text);
  c.shrunk_file = "shrunk/" + start.name + ".json";
  c.shrunk_summary = shrunk.summary;
  tell_shrunk(dir, start.name, shrunk, c);
  if (!f.quiet) std::cerr << "shrink: " << start.field << ": " << shrunk.how_far << "\n";
}

// --shrink: each cell's first counterexample shrunk into DIR/shrunk/ and
// named in the cell for the reports. Deterministic, as the reports are: the
// same runs give the same files. Ctrl-C stops between (and inside) cells;
// what is written stays. A cell whose shrink fails (a file that cannot be
// written) says why in the reports and on stderr, and the other cells and the
// report go on: an extra must never cost the sweep's report. Returns the
// number of cells that failed.
int shrink_cells(reports::Matrix& m, const SweepFlags& f) {
  const fs::path dir = fs::path(f.out) / "shrunk";
  fs::create_directories(dir);
  int failed = 0;
  for (reports::MatrixCell& c : m.cells) {
    const std::optional<uint64_t> seed =
        c.first_violation_seed ? c.first_violation_seed : c.first_liveness_seed;
    if (!seed || stop_flag().load()) continue;
    try {
      shrink_cell(c, *seed, m.plan, f, dir);
    } catch (const std::exception& e) {
      c.shrunk_file = c.shrunk_summary = c.shrunk_story_file = "";
      c.shrunk_story = c.shrunk_mechanism = "";
      c.shrunk_error = e.what();
      ++failed;
      std::cerr << "sweep: shrink: " << c.algorithm << " × " << c.profile << ": " << e.what()
                << "; the report is written without it\n";
    }
  }
  return failed;
}

// The files and folders a sweep's report writes into --out (beside
// sweep.json, runs.jsonl and histories/, which run_sweep owns): an earlier
// sweep's are removed before this one runs, so a kill at any point never
// leaves a report, or a shrunk file, that this sweep's runs did not make.
const std::vector<std::string>& report_outputs() {
  static const std::vector<std::string> kOutputs = {"matrix.json", "matrix.md",   "matrix.html",
                                                    "junit.xml",   "timing.json", "shrunk"};
  return kOutputs;
}

// The files (not folders) a sweep or merge writes in --out.
std::vector<std::string> written_files() {
  std::vector<std::string> files = {"sweep.json", "runs.jsonl"};
  for (const std::string& name : report_outputs()) {
    if (name != "shrunk") files.push_back(name);
  }
  return files;
}

// What an earlier sweep or merge left in a merge's --out, once the shards
// are read: its report, timing and shrunk files, and its histories unless
// --out is one of the shards (whose histories are its own runs'), so
// nothing there passes for the merged sweep's.
void remove_earlier_outputs(const std::string& out, const std::vector<std::string>& shards) {
  std::vector<std::string> names = report_outputs();
  const bool out_is_a_shard = std::any_of(shards.begin(), shards.end(), [&out](const auto& s) {
    std::error_code ec;
    return fs::equivalent(out, s, ec);
  });
  if (!out_is_a_shard) names.emplace_back("histories");
  harness::remove_outputs(out, names);
}

}  // namespace

CLI::App* add_sweep_command(CLI::App& app, SweepFlags& f) {
  CLI::App* s = app.add_subcommand(
      "sweep", "run algorithms x fault profiles x seeds; write the matrix; gate with --expect");
  s->add_option("--algorithms", f.algorithms, "all, or a comma list (see locksim list)");
  s->add_option("--profiles", f.profiles,
                "all, or a comma list of profiles (none, client-clock, server-clock, pause, "
                "failover, crash-restart, partition, client-crash; combine with +)");
  s->add_option("--seeds", f.seeds, "seed range A..B (default 1..100)");
  s->add_option("--jobs", f.jobs, "worker threads, 1 to 256 (default: every core)")
      ->check(CLI::Range(1, 256));
  s->add_option("--shard", f.shard, "run only shard i of N (i/N, 1-based); combine with merge");
  s->add_flag("--resume", f.resume, "keep the runs already in --out and do only the missing");
  s->add_option("--expect", f.expect, "expectations file: exit 1 when a cell breaks it");
  s->add_option("--duration", f.duration, "virtual length of every run (default 20s)");
  s->add_option("--out", f.out, "the folder to write the sweep into")->required();
  s->add_flag("--quiet", f.quiet, "no progress line");
  s->add_flag("--swarm,!--fixed-workload", f.swarm,
              "draw each run's workload from its seed (the default: clients, holds, idle gaps, "
              "retry pause: docs/reference/faults.md, \"Swarm workloads\"); --fixed-workload: "
              "locksim run's fixed workload in every run")
      // '--swarm --fixed-workload' is a contradiction, not "the last wins".
      ->multi_option_policy(CLI::MultiOptionPolicy::Throw);
  s->add_flag("--histories", f.histories,
              "also keep each run's history in --out/histories/ALGORITHM/PROFILE/SEED.jsonl");
  s->add_flag("--shrink", f.shrink,
              "shrink each cell's first counterexample into --out/shrunk/ (see locksim shrink); "
              "matrix.md and matrix.html link it");
  s->add_option("--shrink-max-runs", f.shrink_runs_max,
                "with --shrink: at most this many candidate runs per cell (default 300)")
      ->each([&f](const std::string&) { f.shrink_runs_max_given = true; });
  return s;
}

CLI::App* add_merge_command(CLI::App& app, MergeFlags& f) {
  CLI::App* m = app.add_subcommand(
      "merge", "combine sweep shard directories into the report of the whole sweep");
  m->add_option("--out", f.out, "the folder to write the merged report into")->required();
  m->add_option("--expect", f.expect, "expectations file: exit 1 when a cell breaks it");
  m->add_flag("--partial", f.partial,
              "the shards given are all you want: report and gate what ran (without it, a "
              "merge missing runs exits 4)");
  m->add_option("shards", f.shards, "the shards' folders (each sweep --shard's --out)")->required();
  return m;
}

int run_sweep_command(const SweepFlags& f) {
  const harness::SweepPlan plan = plan_from_flags(f);
  harness::Expectations expectations;
  if (!f.expect.empty()) expectations = harness::load_expectations(f.expect);
  // Before any run, and before an earlier sweep's outputs are removed: an
  // unwritable --out, or a folder where a report file goes, is bad input.
  make_out_dir(f.out, "--out", written_files());
  harness::SweepOptions o;
  o.jobs =
      f.jobs != 0 ? f.jobs : std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  o.resume = f.resume;
  o.histories = f.histories;
  o.stop = &stop_flag();
  o.wall_now_ns = wall_ns;
  Progress progress;
  progress.quiet = f.quiet;
  // Runs/s counts this process's runs only, not the ones a resume keeps.
  if (f.resume) {
    try {
      progress.resumed = harness::read_runs((fs::path(f.out) / "runs.jsonl").string(), plan).size();
    } catch (const ConfigError&) {
      // Another sweep's runs: run_sweep says so, after it names a changed plan.
    }
  }
  o.on_progress = [&progress](uint64_t done, uint64_t total, uint64_t findings) {
    progress.update(done, total, findings, false);
  };
  o.stale_outputs = report_outputs();
  // From the first run to the last report file: a signal while the report
  // is written (or a cell shrunk) lets it finish, then the exit says so.
  const StopOnInterrupt interrupt;
  const std::vector<harness::RunSummary> runs = harness::run_sweep(plan, f.out, o);
  uint64_t findings = 0;
  for (const auto& r : runs) findings += r.finding != "none" ? 1 : 0;
  const uint64_t shard_runs = (plan.runs_total() + static_cast<uint64_t>(plan.shard_count) -
                               static_cast<uint64_t>(plan.shard_index)) /
                              static_cast<uint64_t>(plan.shard_count);
  LOCKSIM_ASSERT(runs.size() <= shard_runs);
  progress.update(runs.size(), shard_runs, findings, true);
  reports::Matrix m = reports::build_matrix(plan, runs, f.expect.empty() ? nullptr : &expectations);
  if (plan.shard_count > 1) {
    m.partial_by_request = "shard " + f.shard + "; merge the shards for the whole sweep";
  }
  int shrinks_failed = 0;
  if (f.shrink) shrinks_failed = shrink_cells(m, f);
  reports::write_matrix_reports(m, f.out);
  if (!f.quiet) {
    const double s = static_cast<double>(wall_ns() - progress.start_ns) / 1e9;
    // Joined as a path: --out s/ must not print "s//matrix".
    const std::string matrix = (fs::path(f.out) / "matrix.{json,md,html}").string();
    std::printf("wrote %s, junit.xml: %s in %.1f s (%.1f runs/s)\n", matrix.c_str(),
                reports::coverage_text(m).c_str(), s,
                s > 0 ? static_cast<double>(runs.size()) / s : 0.0);
  }
  if (!f.quiet) std::cout << next_after_sweep(f.out) << std::flush;
  if (stop_flag().load()) {
    std::cerr << "sweep: interrupted (" << interrupt_name() << "); the report covers the "
              << runs.size() << " finished runs; rerun with --resume to finish\n";
    return interrupted_exit_code();
  }
  const int code = report_gate(m, f.quiet);
  // A shrink that failed is an internal error, but never hides the gate's word.
  return code == kExitClean && shrinks_failed > 0 ? kExitInternal : code;
}

int run_merge_command(const MergeFlags& f) {
  harness::SweepPlan plan;
  std::vector<harness::RunSummary> all;
  std::set<int> shards_seen;
  int shard_count = 0;
  for (size_t i = 0; i < f.shards.size(); ++i) {
    const fs::path dir(f.shards[i]);
    const std::string plan_path = (dir / "sweep.json").string();
    const std::string field = "shards[" + std::to_string(i) + "]";
    const std::optional<std::string> text =
        harness::read_json_file(plan_path, field + ": " + plan_path);
    if (!text) throw ConfigError(field + ": no " + plan_path);
    const nlohmann::json j = harness::parse_strict_json(*text, plan_path);
    harness::SweepPlan p = harness::plan_from_json(j, plan_path);
    harness::SweepPlan unsharded = p;
    unsharded.shard_index = unsharded.shard_count = 1;
    if (i == 0) plan = unsharded;
    if (unsharded.script_sha1 != plan.script_sha1 && unsharded.algorithms == plan.algorithms) {
      throw ConfigError(plan_path + ": ran other bytes of a lock file than " + f.shards[0] +
                        " did (sweep.json's \"scripts\" differ): its runs are another lock's");
    }
    if (harness::plan_to_json(unsharded, false) != harness::plan_to_json(plan, false)) {
      throw ConfigError(plan_path + ": a different sweep than " + f.shards[0] + "/sweep.json");
    }
    if (i == 0) shard_count = p.shard_count;
    if (p.shard_count != shard_count) {
      throw ConfigError(plan_path + ": shard " + std::to_string(p.shard_index) + "/" +
                        std::to_string(p.shard_count) + " does not split the sweep into " +
                        std::to_string(shard_count) + " like " + f.shards[0]);
    }
    if (!shards_seen.insert(p.shard_index).second) {
      throw ConfigError(plan_path + ": shard " + std::to_string(p.shard_index) + " given twice");
    }
    for (auto& r : harness::read_runs((dir / "runs.jsonl").string(), p)) {
      all.push_back(std::move(r));
    }
  }
  std::sort(all.begin(), all.end(), [](const auto& a, const auto& b) { return a.index < b.index; });
  // Bad input is refused before anything of an earlier merge is removed.
  harness::Expectations expectations;
  if (!f.expect.empty()) expectations = harness::load_expectations(f.expect);
  make_out_dir(f.out, "--out", written_files());
  remove_earlier_outputs(f.out, f.shards);
  write_text(fs::path(f.out) / "sweep.json", harness::plan_to_json(plan, true).dump(2) + "\n");
  std::string lines;
  for (const auto& r : all) lines += harness::summary_to_json(r).dump() + "\n";
  write_text(fs::path(f.out) / "runs.jsonl", lines);
  reports::Matrix m = reports::build_matrix(plan, all, f.expect.empty() ? nullptr : &expectations);
  if (f.partial && !m.complete()) m.partial_by_request = "merge --partial";
  reports::write_matrix_reports(m, f.out);
  std::printf("merged %zu of %d %s into %s: %s\n", f.shards.size(), shard_count,
              shard_count == 1 ? "shard" : "shards", f.out.c_str(),
              reports::coverage_text(m).c_str());
  std::cout << next_after_sweep(f.out);
  const int code = report_gate(m, false);
  // Without a gate the exit code stays 0, but a missing part is still said.
  if (!m.gated && !m.complete() && m.partial_by_request.empty()) {
    std::cout << "merge: INCOMPLETE: " << m.runs_done << " of " << m.plan.runs_total()
              << " runs ran; pass --partial if these shards are all you want\n";
    return kExitIncomplete;
  }
  return code;
}

}  // namespace locksim::cli
