// locksim — the command line.
//
//   locksim run  --algorithm set-nx-lua --seed 42 [--clients 5] [--duration 60s]
//                [--ttl 10s] [--hold 1s..3s] [--fault '...']... [--out DIR]
//   locksim list
//
// Exit codes (CI gates rely on them): 0 nothing found, 1 a violation found,
// 2 bad input (one line naming the flag), 3 internal error.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "algorithms/registry.h"
#include "env/parse.h"
#include "harness/history_io.h"
#include "harness/run_sim.h"
#include "reports/result_json.h"

namespace {

using locksim::ConfigError;

constexpr int kExitClean = 0;
constexpr int kExitViolation = 1;
constexpr int kExitBadInput = 2;
constexpr int kExitInternal = 3;

// Writes through a temporary file and a rename, so an interrupted run never
// leaves a half-written result that looks whole.
void write_file(const std::filesystem::path& path, const std::string& bytes) {
  const std::filesystem::path tmp = path.string() + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw std::runtime_error("cannot write " + tmp.string());
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!out) throw std::runtime_error("cannot write " + tmp.string());
  }
  std::filesystem::rename(tmp, path);
}

int cmd_list() {
  std::cout << "Algorithms (locksim run --algorithm NAME; parameters via --param NAME=VALUE,\n"
               "--ttl is short for --param ttl=VALUE):\n";
  for (const auto& spec : locksim::algorithms::all_algorithms()) {
    std::cout << "\n  " << spec.name << "\n    " << spec.summary << "\n";
    for (const auto& p : spec.params) {
      std::printf("      %-14s default %-12s %s\n", p.name.c_str(), p.default_value.c_str(),
                  p.help.c_str());
    }
  }
  return kExitClean;
}

struct RunFlags {
  std::string algorithm = "set-nx-lua";
  std::string seed = "1";
  std::string clients = "5";
  std::string duration = "60s";
  std::string ttl;
  std::string hold = "1s..3s";
  std::string out;
  std::vector<std::string> params;
  std::vector<std::string> faults;
  bool quiet = false;
};

locksim::harness::RunConfig to_config(const RunFlags& f) {
  locksim::harness::RunConfig c;
  c.algorithm = f.algorithm;
  if (locksim::algorithms::find_algorithm(c.algorithm) == nullptr) {
    throw ConfigError("--algorithm: expected one of " + locksim::algorithms::algorithm_names() +
                      ", got '" + f.algorithm + "'");
  }
  c.seed = static_cast<uint64_t>(locksim::parse_integer(f.seed, "--seed", 0, INT64_MAX));
  c.workload.clients = static_cast<int>(locksim::parse_integer(
      f.clients, "--clients", 1, locksim::harness::RunConfig::kMaxClients));
  c.duration = locksim::parse_duration(f.duration, "--duration");
  if (c.duration <= locksim::Duration::zero()) {
    throw ConfigError("--duration: expected a positive duration, got '" + f.duration + "'");
  }
  std::tie(c.workload.hold_min, c.workload.hold_max) =
      locksim::parse_duration_range(f.hold, "--hold");
  for (const std::string& p : f.params) {
    const size_t eq = p.find('=');
    if (eq == std::string::npos || eq == 0) {
      throw ConfigError("--param: expected NAME=VALUE, got '" + p + "'");
    }
    c.algorithm_params[p.substr(0, eq)] = p.substr(eq + 1);
  }
  if (!f.ttl.empty()) c.algorithm_params["ttl"] = f.ttl;
  // "--ttl" is the flag users type; the algorithm names its parameter "ttl".
  c.param_field_prefix = "--";
  for (size_t i = 0; i < f.faults.size(); ++i) {
    c.faults.events.push_back(locksim::faults::parse_fault(f.faults[i], "--fault"));
  }
  // Build the algorithm once now, so a bad parameter fails before any work.
  locksim::algorithms::find_algorithm(c.algorithm)->make(c.algorithm_params, "--");
  locksim::harness::validate(c);
  return c;
}

int cmd_run(const RunFlags& flags) {
  const locksim::harness::RunConfig config = to_config(flags);
  if (!flags.out.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(flags.out, ec);
    if (ec) throw ConfigError("--out: cannot create directory '" + flags.out + "': " + ec.message());
  }
  const auto report = locksim::harness::simulate_and_check(config);
  const auto& result = report.result;
  if (!flags.quiet) std::cout << locksim::reports::summary_text(result);
  if (!flags.out.empty()) {
    const std::filesystem::path dir(flags.out);
    write_file(dir / "history.edn", locksim::harness::to_edn(result.history));
    write_file(dir / "history.jsonl", locksim::harness::to_jsonl(result.history));
    write_file(dir / "result.json", locksim::reports::result_json_text(result));
    if (!flags.quiet) std::cout << "wrote " << (dir / "result.json").string() << ", history.edn, history.jsonl\n";
  }
  switch (locksim::harness::overall_verdict(result)) {
    case locksim::harness::Verdict::Kind::kValid: return kExitClean;
    case locksim::harness::Verdict::Kind::kInvalid: return kExitViolation;
    case locksim::harness::Verdict::Kind::kUnknown: return kExitInternal;
  }
  return kExitInternal;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"locksim: a deterministic testbed for distributed lock algorithms"};
  app.require_subcommand(1);
  RunFlags flags;
  CLI::App* run = app.add_subcommand("run", "simulate one run and check it for violations");
  run->add_option("--algorithm", flags.algorithm, "lock algorithm (see locksim list)");
  run->add_option("--seed", flags.seed, "seed; the same seed replays the same run");
  run->add_option("--clients", flags.clients, "number of lock clients");
  run->add_option("--duration", flags.duration, "virtual run length, e.g. 60s");
  run->add_option("--ttl", flags.ttl, "lock TTL, e.g. 10s (algorithm parameter ttl)");
  run->add_option("--hold", flags.hold, "critical-section length range, e.g. 1s..3s");
  run->add_option("--param", flags.params, "algorithm parameter NAME=VALUE (repeatable)");
  run->add_option("--fault", flags.faults,
                  "fault, e.g. 'pause c1 at 5s for 12s' (repeatable; see README)");
  run->add_option("--out", flags.out, "write result.json, history.edn, history.jsonl here");
  run->add_flag("--quiet", flags.quiet, "print nothing; rely on the exit code");
  CLI::App* list = app.add_subcommand("list", "list algorithms and their parameters");

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    std::cout << app.help();
    return kExitClean;
  } catch (const CLI::CallForAllHelp&) {
    std::cout << app.help("", CLI::AppFormatMode::All);
    return kExitClean;
  } catch (const CLI::ParseError& e) {
    // CLI11's messages are one line already; keep them so, and add no help dump.
    std::string what = e.what();
    for (char& ch : what) {
      if (ch == '\n') ch = ' ';
    }
    std::cerr << "locksim: " << what << "\n";
    return kExitBadInput;
  }

  try {
    if (list->parsed()) return cmd_list();
    return cmd_run(flags);
  } catch (const ConfigError& e) {
    std::cerr << "locksim: " << e.what() << "\n";
    return kExitBadInput;
  } catch (const std::exception& e) {
    std::cerr << "locksim: internal error: " << e.what() << "\n";
    return kExitInternal;
  }
}
