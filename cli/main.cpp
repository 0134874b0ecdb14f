// locksim — the command line.
//
//   locksim run  --algorithm set-nx-lua --seed 42 [any setting: see --help] [--out DIR]
//   locksim run  --scenario NAME|FILE [--seed N] [--out DIR]
//   locksim live --algorithm redlock [--duration 10s] ...
//   locksim list [SCENARIO]
//   locksim sweep --algorithms all --profiles all --seeds 1..1000 --out DIR [--expect FILE]
//   locksim merge --out DIR SHARD_DIR...
//   locksim shrink [run settings | --scenario NAME|FILE | --sweep DIR --cell A/P] [--out FILE]
//   locksim margin --algorithm A --fault KIND [--range LO..HI] [--out DIR]
//   locksim margins [--algorithms LIST] [--out DIR] [--jobs N]
//   locksim explain [run settings | --scenario NAME|FILE] [--html FILE]
//
// The run settings' flags are generated from harness/settings.h (cli/run_options.h).
// Exit codes: cli/exit_codes.h.
#include <CLI/CLI.hpp>

#include <filesystem>
#include <iostream>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "cli/agree_command.h"
#include "cli/check_command.h"
#include "cli/exit_codes.h"
#include "cli/interrupt.h"
#include "cli/list_command.h"
#include "cli/live_command.h"
#include "cli/margin_command.h"
#include "cli/margins_command.h"
#include "cli/next_step.h"
#include "cli/output_paths.h"
#include "cli/run_options.h"
#include "cli/run_progress.h"
#include "cli/scenario_run.h"
#include "cli/shrink_command.h"
#include "cli/sweep_command.h"
#include "cli/unknown_argument.h"
#include "cli/version.h"
#include "env/atomic_file.h"
#include "env/parse.h"
#include "harness/backends.h"
#include "harness/explain_run.h"
#include "harness/run.h"
#include "harness/scenario.h"
#include "harness/script_file.h"
#include "history/history_io.h"
#include "live/live_run.h"
#include "live/owned_processes.h"
#include "reports/result_json.h"
#include "reports/summary_text.h"
#include "reports/timeline_svg.h"

namespace {

using locksim::ConfigError;

using locksim::cli::kExitBadInput;
using locksim::cli::kExitClean;
using locksim::cli::kExitInternal;

using locksim::write_file_atomically;

using locksim::cli::Mode;
using locksim::cli::RunOptions;

// What cmd_run writes besides the run: its scenario (null for none), and
// the signal that cut the run (0: it ran to its end).
struct RunContext {
  const locksim::harness::Scenario* scenario = nullptr;
  int cut_by = 0;
};

// result.json: for a cut run "interrupted" first (cli/interrupt.h); for a
// scenario run the scenario's expected and found result as its last key.
std::string result_text(const locksim::harness::RunResult& result, const RunContext& context) {
  if (context.scenario == nullptr && context.cut_by == 0) {
    return locksim::reports::result_json_text(result);
  }
  nlohmann::ordered_json j;
  if (context.cut_by != 0) {
    j["interrupted"] =
        locksim::cli::interrupted_entry(context.cut_by, result.history.run_length.ns);
  }
  j.update(locksim::reports::result_to_json(result));
  if (context.scenario != nullptr) {
    j["scenario"] = locksim::cli::scenario_json(*context.scenario, result);
  }
  return j.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

void write_outputs(const std::string& out, const locksim::harness::RunResult& result, bool quiet,
                   const RunContext& context) {
  const std::filesystem::path dir(out);
  const std::vector<std::string>& files = locksim::cli::kRunOutputs;
  write_file_atomically(dir / files[0], locksim::history::to_edn(result.history));
  write_file_atomically(dir / files[1], locksim::history::to_jsonl(result.history));
  write_file_atomically(dir / files[2], result_text(result, context));
  if (!quiet)
    std::cout << "wrote " << (dir / "result.json").string() << ", history.edn, history.jsonl\n";
}

// The simulation with a progress line on a long run; a SIGINT or SIGTERM
// cuts it where it stands (cli/run_progress.h). Sets `cut_by` to the signal
// that cut it, else 0.
locksim::harness::RunResult run_with_progress(const locksim::harness::PreparedRun& prepared,
                                              locksim::harness::RunExtras extras, bool quiet,
                                              int* cut_by) {
  const locksim::cli::StopOnInterrupt interrupt;
  locksim::cli::RunProgress progress(prepared.config().duration, quiet);
  extras.poll = [&progress](locksim::TimePoint now, uint64_t events) {
    return progress.poll(now, events);
  };
  locksim::harness::SimRunReport report = locksim::harness::run_prepared(prepared, extras);
  progress.finish();
  *cut_by = report.output.stopped ? locksim::cli::interrupt_signal() : 0;
  if (*cut_by != 0) {
    const locksim::harness::RunResult& r = report.result;
    std::cerr << "run: interrupted (" << locksim::cli::signal_name(*cut_by) << ") at "
              << locksim::format_seconds(r.history.run_length.ns) << " of "
              << locksim::format_duration(prepared.config().duration)
              << " simulated; what ran is checked and written, marked interrupted\n";
  }
  return std::move(report.result);
}

int cmd_run(const CLI::App& run, const RunOptions& o) {
  locksim::harness::RunExtras extras;
  std::optional<locksim::harness::Scenario> scenario;
  if (!o.scenario.empty()) {
    scenario = locksim::cli::scenario_for_run(o, run, &extras.replay_command);
  }
  const locksim::harness::PreparedRun prepared = locksim::harness::prepare_run(
      scenario ? scenario->config : locksim::cli::config_from_options(run, Mode::kRun, o));
  extras.knossos = locksim::cli::knossos_options(o.knossos);
  // The story and the timeline's server lanes read the lock on each server.
  extras.trace_lock = o.explain || o.story_only || !o.html.empty();
  locksim::cli::make_out_dir(o.out, "--out", locksim::cli::kRunOutputs);
  locksim::cli::check_writable_file(o.html, "--html");
  RunContext context{.scenario = scenario ? &*scenario : nullptr, .cut_by = 0};
  const auto result = run_with_progress(prepared, extras, o.quiet, &context.cut_by);
  // A signal exits as it says, whatever the run found (sweep does so too):
  // also one that came after the simulation, while the checkers (Knossos)
  // ran, which cut nothing and leaves the outputs whole.
  const int exit_code = locksim::cli::stop_flag().load() ? locksim::cli::interrupted_exit_code()
                                                         : locksim::cli::exit_code(result.checks);
  if (o.story_only) {
    if (!o.quiet) {
      std::cout << locksim::checkers::format_story(locksim::harness::explain_result(result))
                << "replay: " << result.replay_command << "\n";
    }
    if (!o.html.empty()) write_file_atomically(o.html, locksim::reports::timeline_page(result));
    if (!o.out.empty()) write_outputs(o.out, result, o.quiet, context);
    return exit_code;
  }
  if (!o.quiet) std::cout << locksim::reports::summary_text(result);
  if (!o.quiet && scenario) std::cout << locksim::cli::scenario_text(*scenario, result);
  if (!o.quiet && o.explain)
    std::cout << locksim::checkers::format_story(locksim::harness::explain_result(result));
  if (!o.out.empty()) write_outputs(o.out, result, o.quiet, context);
  if (!o.html.empty()) {
    write_file_atomically(o.html, locksim::reports::timeline_page(result));
    if (!o.quiet) std::cout << "wrote " << o.html << "\n";
  }
  if (!o.quiet) {
    std::cout << locksim::cli::next_after_run(locksim::checkers::finding(result.checks),
                                              result.replay_command, o.html);
  }
  return exit_code;
}

// `locksim explain`: run's settings and --html; the story instead of the
// summary (cmd_run with story_only).
CLI::App* add_explain_command(CLI::App& app, RunOptions& o) {
  o.story_only = true;
  CLI::App* explain = app.add_subcommand(
      "explain", "simulate one run and tell its finding as a chain of causes, with its mechanism");
  locksim::cli::add_run_options(*explain, Mode::kRun, o);
  explain->add_option("--html", o.html,
                      "write the run's timeline (SVG in HTML), with a lane per lock server, here");
  return explain;
}

// CLI11's own words for the commonest mistakes, in the project's ("FIELD:
// expected ..., got ..."); any other message is kept as CLI11 writes it.
// `commands`: the subcommands in the order the help lists them.
std::string in_our_words(const std::string& what, const CLI::App& app,
                         const std::vector<const CLI::App*>& commands) {
  static const std::regex convert(R"(^Could not convert: (\S+) = (.*)$)");
  static const std::regex twice(R"(^(\S+): At Most 1 required but received (\d+)$)");
  static const std::regex no_value(R"(^(\S+): 1 required \S+ missing$)");
  static const std::regex range(R"(^(\S+): Value (.*) not in range (\S+) to (\S+)$)");
  static const std::regex required(R"(^(\S+) is required$)");
  static const std::regex stray(R"(^The following arguments? (?:was|were) not expected: (.*)$)");
  std::smatch m;
  if (std::regex_match(what, m, required)) {
    // The command given, whose option it is: "--out" belongs to several.
    for (const CLI::App* sub : app.get_subcommands()) {
      if (const CLI::Option* o = sub->get_option_no_throw(m[1].str()))
        return m[1].str() + ": expected " + o->get_description() + "; none given (locksim " +
               sub->get_name() + " --help)";
    }
    return m[1].str() + ": expected a value; none given";
  }
  if (std::regex_match(what, m, range)) {
    return m[1].str() + ": expected a whole number from " + m[3].str() + " to " + m[4].str() +
           ", got '" + m[2].str() + "'";
  }
  if (std::regex_match(what, m, convert)) {
    // The flags that take a typed value are on/off flags or whole numbers.
    bool flag = false;
    for (const CLI::App* sub : app.get_subcommands({})) {
      const CLI::Option* o = sub->get_option_no_throw(m[1].str());
      if (o != nullptr) flag = o->get_expected_min() == 0;
    }
    return m[1].str() + ": expected " + (flag ? "true or false (or no value)" : "a whole number") +
           ", got '" + m[2].str() + "'";
  }
  if (std::regex_match(what, m, twice)) {
    // One option under two names, on and off (--swarm, --fixed-workload):
    // CLI11 names only the first, so both are named.
    for (const CLI::App* sub : app.get_subcommands({})) {
      const CLI::Option* o = sub->get_option_no_throw(m[1].str());
      if (o == nullptr || o->get_lnames().size() < 2) continue;
      std::string names;
      for (const std::string& n : o->get_lnames()) names += (names.empty() ? "--" : ", --") + n;
      const size_t n = o->get_lnames().size();
      return names + ": expected one of the " + (n == 2 ? "two" : std::to_string(n)) +
             ", once; given " + m[2].str() + " times";
    }
    return m[1].str() + ": expected once, given " + m[2].str() + " times";
  }
  if (std::regex_match(what, m, no_value)) return m[1].str() + ": expected a value after it";
  if (std::regex_match(what, m, stray)) {
    // A word no flag or positional takes (`check a.edn b.edn`, `run extra`):
    // name it and the command, as a mistyped flag is named.
    std::string where = "locksim";
    for (const CLI::App* sub : app.get_subcommands()) where = "locksim " + sub->get_name();
    // CLI11 lists them last first: the last is the first typed.
    const std::string word = m[1].str().substr(m[1].str().rfind(' ') + 1);
    return word + ": an argument " + where + " does not take (see " + where + " --help)";
  }
  if (what == "A subcommand is required") {
    std::string names;
    for (size_t i = 0; i < commands.size(); ++i) {
      names += (i == 0 ? "" : i + 1 == commands.size() ? " or " : ", ") + commands[i]->get_name();
    }
    return "expected a command: " + names + " (locksim --help)";
  }
  return what;
}

// CLI11's messages are one line already; keep them so, and add no help dump.
// A mistyped flag or command gets our own line instead, with the nearest
// names (CLI11 only says "The following arguments were not expected").
int parse_error(const CLI::ParseError& e, const CLI::App& app,
                const std::vector<const CLI::App*>& commands, int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  const std::string unknown = locksim::cli::unknown_argument_message(app, args);
  std::string what = unknown.empty() ? in_our_words(e.what(), app, commands) : unknown;
  for (char& ch : what) {
    if (ch == '\n') ch = ' ';
  }
  std::cerr << "locksim: " << what << "\n";
  return kExitBadInput;
}

// Every subcommand, its flags, and its CLI11 App once added.
struct Commands {
  RunOptions run_options, live_options, explain_options;
  locksim::cli::CheckFlags check_flags;
  locksim::cli::ListFlags list_flags;
  locksim::cli::SweepFlags sweep_flags;
  locksim::cli::MergeFlags merge_flags;
  locksim::cli::ShrinkFlags shrink_flags;
  locksim::cli::MarginFlags margin_flags;
  locksim::cli::MarginsFlags margins_flags;
  locksim::cli::AgreeFlags agree_flags;
  CLI::App *run = nullptr, *live = nullptr, *check = nullptr, *list = nullptr, *sweep = nullptr,
           *merge = nullptr, *shrink = nullptr, *margin = nullptr, *margins = nullptr,
           *explain = nullptr, *agree = nullptr;
  std::vector<const CLI::App*> all() const {
    return {run, live, check, sweep, merge, list, shrink, margin, margins, explain, agree};
  }
};

void add_commands(CLI::App& app, Commands& c) {
  c.run = app.add_subcommand("run", "simulate one run and check it for violations");
  locksim::cli::add_run_options(*c.run, Mode::kRun, c.run_options);
  locksim::cli::add_knossos_options(c.run, c.run_options.knossos);
  c.check = locksim::cli::add_check_command(app, c.check_flags);
  c.list = locksim::cli::add_list_command(app, c.list_flags);
  c.live = app.add_subcommand(
      "live",
      "run the same algorithm code against real servers on loopback (redis-server, mariadbd or "
      "a ZooKeeper ensemble)");
  locksim::cli::add_run_options(*c.live, Mode::kLive, c.live_options);
  c.run->add_option("--html", c.run_options.html, "write the run's timeline (SVG in HTML) here");
  c.run->add_flag("--explain", c.run_options.explain,
                  "after the summary, tell the finding as a chain of causes (locksim explain)");
  c.explain = add_explain_command(app, c.explain_options);
  c.sweep = locksim::cli::add_sweep_command(app, c.sweep_flags);
  c.merge = locksim::cli::add_merge_command(app, c.merge_flags);
  c.shrink = locksim::cli::add_shrink_command(app, c.shrink_flags);
  c.margin = locksim::cli::add_margin_command(app, c.margin_flags);
  c.margins = locksim::cli::add_margins_command(app, c.margins_flags);
  c.agree = locksim::cli::add_agree_command(app, c.agree_flags);
}

// An option given an empty value ('--seed ""', '--scenario ""') is bad
// input, never a default: CLI11 reads "" as 0 for a number and the checks
// below it read an empty path or list as "not given" (`agree --only ""` ran
// every scenario live, for hours). On/off flags are CLI11's to read (a bare
// flag is true); this check is for the values options take.
void refuse_empty_values(const Commands& c) {
  const CLI::Validator non_empty(
      [](std::string& value) {
        return value.empty() ? std::string("expected a value, got an empty string") : std::string();
      },
      "", "non-empty");
  for (const CLI::App* sub : c.all()) {
    for (CLI::Option* opt : const_cast<CLI::App*>(sub)->get_options()) {
      if (opt->get_type_size_max() > 0) opt->check(non_empty);
    }
  }
}

// Runs the subcommand that was parsed. Throws what it throws.
int dispatch(const Commands& c) {
  if (c.list->parsed()) return locksim::cli::run_list_command(c.list_flags);
  if (c.live->parsed()) {
    // Before any thread exists: Ctrl-C stops the servers this run starts.
    locksim::live::stop_owned_on_interrupt();
    return locksim::cli::run_live_command(*c.live, c.live_options);
  }
  if (c.agree->parsed()) {
    // Before any thread exists: Ctrl-C stops the servers the live run starts.
    locksim::live::stop_owned_on_interrupt();
    return locksim::cli::run_agree_command(c.agree_flags);
  }
  if (c.check->parsed()) return locksim::cli::run_check_command(c.check_flags);
  if (c.sweep->parsed()) return locksim::cli::run_sweep_command(c.sweep_flags);
  if (c.merge->parsed()) return locksim::cli::run_merge_command(c.merge_flags);
  if (c.shrink->parsed()) return locksim::cli::run_shrink_command(*c.shrink, c.shrink_flags);
  if (c.margin->parsed()) return locksim::cli::run_margin_command(*c.margin, c.margin_flags);
  if (c.margins->parsed()) return locksim::cli::run_margins_command(c.margins_flags);
  if (c.explain->parsed()) return cmd_run(*c.explain, c.explain_options);
  return cmd_run(*c.run, c.run_options);
}

}  // namespace

int main(int argc, char** argv) {
  locksim::harness::install_script_loader();  // --algorithm script:FILE.json
  // Named, or CLI11 names it after argv[0] (build/locksim), and every message
  // that says "see locksim --help" would say the path instead.
  CLI::App app{"locksim: a deterministic testbed for distributed lock algorithms", "locksim"};
  app.require_subcommand(1);
  app.set_version_flag("--version", locksim::cli::version_line(),
                       "print locksim's version, the commit it was built from, and exit");
  Commands commands;
  add_commands(app, commands);
  refuse_empty_values(commands);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    // The help of the subcommand asked about: its options come from the table.
    const CLI::App* asked = &app;
    for (const CLI::App* sub : commands.all()) {
      if (sub->parsed()) asked = sub;
    }
    std::cout << asked->help();
    return kExitClean;
  } catch (const CLI::CallForVersion& e) {
    std::cout << e.what() << "\n";
    return kExitClean;
  } catch (const CLI::CallForAllHelp&) {
    std::cout << app.help("", CLI::AppFormatMode::All);
    return kExitClean;
  } catch (const CLI::ParseError& e) {
    return parse_error(e, app, commands.all(), argc, argv);
  }
  // Every way out waits for an interrupt being handled (live/owned_processes.h):
  // its watcher writes what is done and exits 128 + the signal.
  try {
    const int code = dispatch(commands);
    locksim::live::park_if_interrupted();
    return code;
  } catch (const ConfigError& e) {
    locksim::live::park_if_interrupted();
    std::cerr << "locksim: " << e.what() << "\n";
    return kExitBadInput;
  } catch (const locksim::live::CannotRunLive& e) {
    locksim::live::park_if_interrupted();
    std::cerr << "locksim: cannot run live: " << e.what() << "\n";
    return kExitInternal;
  } catch (const std::exception& e) {
    locksim::live::park_if_interrupted();
    std::cerr << "locksim: internal error: " << e.what() << "\n";
    return kExitInternal;
  }
}
