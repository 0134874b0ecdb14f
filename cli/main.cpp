// locksim — the command line.
//
//   locksim run  --algorithm set-nx-lua --seed 42 [any setting: see --help] [--out DIR]
//   locksim run  --scenario NAME|FILE [--seed N] [--out DIR]
//   locksim live --algorithm redlock [--duration 10s] ...
//   locksim list
//   locksim sweep --algorithms all --profiles all --seeds 1..1000 --out DIR [--expect FILE]
//   locksim merge --out DIR SHARD_DIR...
//
// The run settings' flags are generated from harness/settings.h (cli/run_options.h).
// Exit codes: cli/exit_codes.h.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "algorithms/registry.h"
#include "cli/check_command.h"
#include "cli/exit_codes.h"
#include "cli/run_options.h"
#include "cli/sweep_command.h"
#include "env/atomic_file.h"
#include "env/parse.h"
#include "harness/backends.h"
#include "history/history_io.h"
#include "live/live_run.h"
#include "live/owned_processes.h"
#include "harness/run.h"
#include "harness/scenario.h"
#include "harness/settings.h"
#include "reports/result_json.h"
#include "reports/summary_text.h"
#include "reports/timeline_svg.h"

namespace {

using locksim::ConfigError;

using locksim::cli::kExitBadInput;
using locksim::cli::kExitClean;
using locksim::cli::kExitInternal;

using locksim::write_file_atomically;

int cmd_list() {
  std::cout << "Algorithms (locksim run --algorithm NAME; parameters via --param NAME=VALUE,\n"
               "--ttl is short for --param ttl=VALUE):\n";
  for (const auto& spec : locksim::algorithms::all_algorithms()) {
    std::cout << "\n  " << spec.name << "\n    " << spec.summary << "\n";
    for (const auto& p : spec.params) {
      std::printf("      %-14s default %-12s %s\n", p.name.c_str(), p.default_value.c_str(),
                  p.help.c_str());
    }
    if (!spec.sweep_settings.empty()) {
      std::string with;
      for (const auto& [path, text] : spec.sweep_settings) {
        const auto* row = locksim::harness::find_setting_by_path(path);
        with += " " + (row != nullptr ? row->flag : path) + " " + text;
      }
      std::cout << "      (in a sweep, every run with" << with << ")\n";
    }
  }
  std::cout << "\nScenarios (locksim run --scenario NAME; expected result in brackets):\n";
  for (const auto& b : locksim::harness::builtin_scenario_texts()) {
    const auto sc = locksim::harness::parse_scenario(b.json, std::string("builtin:") + b.name);
    std::string first = sc.description.substr(0, sc.description.find(". ") + 1);
    std::printf("  %-34s [%s] %s\n", b.name, to_string(sc.expect), first.c_str());
  }
  return kExitClean;
}

// The settings table as Markdown (`locksim list --settings`): docs/reference/settings.md's
// table of settings is this output, so the docs are generated from the table too.
int cmd_list_settings() {
  const locksim::harness::RunConfig defaults;
  std::cout << "| flag | scenario file | value | default | meaning |\n"
               "|---|---|---|---|---|\n";
  for (const auto& s : locksim::harness::all_settings()) {
    std::string def = s.format ? s.format(defaults) : "";
    if (s.kind == locksim::harness::Setting::Kind::kFlag) def = "off";
    std::string hint = s.value_hint;
    for (size_t at = hint.find('|'); at != std::string::npos; at = hint.find('|', at + 2)) {
      hint.replace(at, 1, "\\|");  // a literal | inside a Markdown table cell
    }
    std::cout << "| `" << s.flag << "` | `" << s.json_path << "` | " << hint << " | "
              << (def.empty() ? "" : "`" + def + "`") << " | " << s.help
              << (s.live ? " (also live)" : "") << " |\n";
  }
  return kExitClean;
}

using locksim::cli::Mode;
using locksim::cli::RunOptions;

// A scenario run: the file decides everything but the seed (and where the
// output goes), so a seed sweep over a scenario is one flag away.
locksim::harness::RunConfig scenario_config(const RunOptions& o, const CLI::App& run,
                                            std::string* replay) {
  locksim::cli::refuse_with_scenario(run);
  locksim::harness::Scenario sc = locksim::harness::load_scenario(o.scenario);
  if (run.count("--seed") > 0) {
    const locksim::harness::Setting& seed = *locksim::harness::find_setting_by_flag("--seed");
    seed.parse(sc.config, o.values.at("--seed").front(), "--seed");
  }
  *replay = "locksim run --scenario " + locksim::harness::shell_quote(o.scenario) + " --seed " +
            std::to_string(sc.config.seed);
  return sc.config;
}

void write_outputs(const std::string& out, const locksim::harness::RunResult& result, bool quiet) {
  const std::filesystem::path dir(out);
  write_file_atomically(dir / "history.edn", locksim::history::to_edn(result.history));
  write_file_atomically(dir / "history.jsonl", locksim::history::to_jsonl(result.history));
  write_file_atomically(dir / "result.json", locksim::reports::result_json_text(result));
  if (!quiet)
    std::cout << "wrote " << (dir / "result.json").string() << ", history.edn, history.jsonl\n";
}

void make_out_dir(const std::string& out) {
  if (out.empty()) return;
  std::error_code ec;
  std::filesystem::create_directories(out, ec);
  if (ec) throw ConfigError("--out: cannot create directory '" + out + "': " + ec.message());
}

// The same algorithm code against real servers (Redis or ZooKeeper) on loopback.
int cmd_live(const CLI::App& live, const RunOptions& o) {
  // Before any thread exists: Ctrl-C stops the servers this run starts.
  locksim::live::stop_owned_on_interrupt();
  const locksim::harness::PreparedRun prepared =
      locksim::harness::prepare_run(locksim::cli::config_from_options(live, Mode::kLive, o));
  const locksim::harness::RunConfig& config = prepared.config();
  make_out_dir(o.out);
  if (!o.quiet) {
    std::cout << "live: " << config.algorithm << " against real "
              << locksim::harness::backend_of(config).name << " on 127.0.0.1 for "
              << locksim::format_duration(config.duration) << " of real time...\n"
              << std::flush;
  }
  const auto result = locksim::live::run_live_and_check(prepared);
  if (!o.quiet) std::cout << locksim::reports::summary_text(result);
  if (!o.out.empty()) write_outputs(o.out, result, o.quiet);
  return locksim::cli::exit_code(result.checks);
}

int cmd_run(const CLI::App& run, const RunOptions& o) {
  locksim::harness::RunExtras extras;
  const locksim::harness::RunConfig config =
      o.scenario.empty() ? locksim::cli::config_from_options(run, Mode::kRun, o)
                         : scenario_config(o, run, &extras.replay_command);
  const locksim::harness::PreparedRun prepared = locksim::harness::prepare_run(config);
  extras.knossos = locksim::cli::knossos_options(o.knossos);
  make_out_dir(o.out);
  const auto result = locksim::harness::run_prepared(prepared, extras).result;
  if (!o.quiet) std::cout << locksim::reports::summary_text(result);
  if (!o.out.empty()) write_outputs(o.out, result, o.quiet);
  if (!o.html.empty()) write_file_atomically(o.html, locksim::reports::timeline_page(result));
  return locksim::cli::exit_code(result.checks);
}

// CLI11's messages are one line already; keep them so, and add no help dump.
int parse_error(const CLI::ParseError& e) {
  std::string what = e.what();
  for (char& ch : what) {
    if (ch == '\n') ch = ' ';
  }
  std::cerr << "locksim: " << what << "\n";
  return kExitBadInput;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"locksim: a deterministic testbed for distributed lock algorithms"};
  app.require_subcommand(1);
  RunOptions run_options, live_options;
  CLI::App* run = app.add_subcommand("run", "simulate one run and check it for violations");
  locksim::cli::add_run_options(*run, Mode::kRun, run_options);
  locksim::cli::add_knossos_options(run, run_options.knossos);
  locksim::cli::CheckFlags check_flags;
  CLI::App* check = locksim::cli::add_check_command(app, check_flags);
  CLI::App* list = app.add_subcommand("list", "list algorithms, their parameters, and scenarios");
  bool list_settings = false;
  list->add_flag("--settings", list_settings, "print the run settings as a Markdown table");
  CLI::App* live = app.add_subcommand(
      "live",
      "run the same algorithm code against real servers (redis-server or ZooKeeper, loopback)");
  locksim::cli::add_run_options(*live, Mode::kLive, live_options);
  run->add_option("--html", run_options.html, "write the run's timeline (SVG in HTML) here");
  locksim::cli::SweepFlags sweep_flags;
  CLI::App* sweep = locksim::cli::add_sweep_command(app, sweep_flags);
  locksim::cli::MergeFlags merge_flags;
  CLI::App* merge = locksim::cli::add_merge_command(app, merge_flags);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    // The help of the subcommand asked about: its options come from the table.
    const CLI::App* asked = run->parsed()     ? run
                            : live->parsed()  ? live
                            : check->parsed() ? check
                            : sweep->parsed() ? sweep
                            : merge->parsed() ? merge
                                              : &app;
    std::cout << asked->help();
    return kExitClean;
  } catch (const CLI::CallForAllHelp&) {
    std::cout << app.help("", CLI::AppFormatMode::All);
    return kExitClean;
  } catch (const CLI::ParseError& e) {
    return parse_error(e);
  }
  try {
    if (list->parsed()) return list_settings ? cmd_list_settings() : cmd_list();
    if (live->parsed()) return cmd_live(*live, live_options);
    if (check->parsed()) return locksim::cli::run_check_command(check_flags);
    if (sweep->parsed()) return locksim::cli::run_sweep_command(sweep_flags);
    if (merge->parsed()) return locksim::cli::run_merge_command(merge_flags);
    return cmd_run(*run, run_options);
  } catch (const ConfigError& e) {
    std::cerr << "locksim: " << e.what() << "\n";
    return kExitBadInput;
  } catch (const std::exception& e) {
    std::cerr << "locksim: internal error: " << e.what() << "\n";
    return kExitInternal;
  }
}
