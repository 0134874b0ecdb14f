#include "cli/list_command.h"

#include <cstdio>
#include <iostream>

#include "algorithms/registry.h"
#include "cli/exit_codes.h"
#include "cli/run_options.h"
#include "env/parse.h"
#include "harness/scenario.h"
#include "harness/settings.h"

namespace locksim::cli {

namespace {

void print_algorithm(const algorithms::AlgorithmSpec& spec);

void print_algorithms() {
  std::cout << "Algorithms (locksim run --algorithm NAME; parameters via --param NAME=VALUE,\n"
               "--ttl is short for --param ttl=VALUE):\n";
  for (const auto& spec : algorithms::all_algorithms()) {
    std::cout << "\n";  // a blank line between entries (none before a lone one)
    print_algorithm(spec);
  }
}

// One entry: its name, summary, parameters and any sweep settings.
void print_algorithm(const algorithms::AlgorithmSpec& spec) {
  {
    std::cout << "  " << spec.name << "\n    " << spec.summary << "\n";
    for (const auto& p : spec.params) {
      std::printf("      %-14s default %-12s %s\n", p.name.c_str(), p.default_value.c_str(),
                  p.help.c_str());
    }
    if (!spec.sweep_settings.empty()) {
      std::string with;
      for (const auto& [path, text] : spec.sweep_settings) {
        const auto* row = harness::find_setting_by_path(path);
        with += " " + (row != nullptr ? row->flag : path) + " " + text;
      }
      std::cout << "      (in a sweep, every run with" << with << ")\n";
    }
  }
}

void print_scenarios() {
  // One header line: scripts read the scenario names from the lines after it.
  std::cout << "\nScenarios (locksim run --scenario NAME; expected result in brackets; "
               "locksim list NAME prints its file):\n";
  for (const auto& b : harness::builtin_scenario_texts()) {
    const auto sc = harness::parse_scenario(b.json, std::string("builtin:") + b.name);
    // The summary is one line, the file's own or its description's first sentence.
    std::printf("  %-34s [%s] %s\n", b.name, to_string(sc.expect), sc.summary.c_str());
  }
}

// The settings table as Markdown: docs/reference/settings.md's table of
// settings is this output, so the docs are generated from the table too.
void print_settings() {
  const harness::RunConfig defaults;
  const harness::RunConfig live_defaults = default_config(Mode::kLive);
  std::cout << "| flag | scenario file | value | default | meaning |\n"
               "|---|---|---|---|---|\n";
  for (const auto& s : harness::all_settings()) {
    std::string def = s.format ? s.format(defaults) : "";
    if (s.kind == harness::Setting::Kind::kFlag) def = "off";
    std::string hint = s.value_hint;
    for (size_t at = hint.find('|'); at != std::string::npos; at = hint.find('|', at + 2)) {
      hint.replace(at, 1, "\\|");  // a literal | inside a Markdown table cell
    }
    // "(also live)", with what differs there: its default, its meaning.
    std::string live;
    if (s.live) {
      std::string live_def = s.format ? s.format(live_defaults) : def;
      if (s.kind == harness::Setting::Kind::kFlag) live_def = live_def == "true" ? "on" : "off";
      live = " (also live";
      if (live_def != def) live += "; live default `" + live_def + "`";
      if (!s.live_help.empty()) live += "; live: " + s.live_help;
      live += ")";
    }
    std::cout << "| `" << s.flag << "` | `" << s.json_path << "` | " << hint << " | "
              << (def.empty() ? "" : "`" + def + "`") << " | " << s.help << live << " |\n";
  }
}

}  // namespace

CLI::App* add_list_command(CLI::App& app, ListFlags& flags) {
  CLI::App* list = app.add_subcommand(
      "list", "list algorithms, their parameters, and scenarios; or print one scenario's file");
  list->add_option("scenario", flags.scenario,
                   "a shipped scenario: print its file, to copy and change; or script:FILE.json: "
                   "that script file's parameters");
  list->add_flag("--settings", flags.settings, "print the run settings as a Markdown table");
  return list;
}

int run_list_command(const ListFlags& flags) {
  if (flags.settings && !flags.scenario.empty()) {
    throw ConfigError("--settings: cannot be combined with a scenario name");
  }
  if (flags.settings) {
    print_settings();
    return kExitClean;
  }
  if (flags.scenario.rfind("script:", 0) == 0) {
    // A script file's parameters, as --param takes them (it is loaded, and
    // so validated, here: a bad file exits 2).
    print_algorithm(*algorithms::find_algorithm(flags.scenario));
    return kExitClean;
  }
  if (!flags.scenario.empty()) {
    const harness::BuiltinScenario* b = harness::find_builtin_scenario(flags.scenario);
    if (b == nullptr) {
      throw ConfigError(harness::unknown_scenario_message("scenario", flags.scenario, false));
    }
    // The file as shipped, byte for byte: `locksim list NAME > my.json` is a copy.
    std::cout << b->json;
    return kExitClean;
  }
  print_algorithms();
  print_scenarios();
  return kExitClean;
}

}  // namespace locksim::cli
