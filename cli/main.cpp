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
#include "cli/check_command.h"
#include "env/parse.h"
#include "harness/history_io.h"
#include "harness/live/live_check.h"
#include "harness/run_sim.h"
#include "harness/scenario.h"
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
  std::cout << "\nScenarios (locksim run --scenario NAME; expected result in brackets):\n";
  for (const auto& b : locksim::harness::builtin_scenario_texts()) {
    const auto sc = locksim::harness::parse_scenario(b.json, std::string("builtin:") + b.name);
    std::string first = sc.description.substr(0, sc.description.find(". ") + 1);
    std::printf("  %-34s [%s] %s\n", b.name, locksim::harness::to_string(sc.expect), first.c_str());
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
  std::string scenario;
  std::string retry_pause;
  bool hold_within_validity = false;
  std::string masters, replicas, replication_lag, persistence, rdb_interval, down_after,
      discovery_delay, timeout, stuck_after;
  bool failover = false;
  locksim::cli::KnossosFlags knossos;
};

locksim::harness::RunConfig to_config(const RunFlags& f) {
  locksim::harness::RunConfig c;
  c.algorithm = f.algorithm;
  if (locksim::algorithms::find_algorithm(c.algorithm) == nullptr) {
    throw ConfigError("--algorithm: expected one of " + locksim::algorithms::algorithm_names() +
                      ", got '" + f.algorithm + "'");
  }
  c.seed = static_cast<uint64_t>(locksim::parse_integer(f.seed, "--seed", 0, INT64_MAX));
  c.workload.clients = static_cast<int>(
      locksim::parse_integer(f.clients, "--clients", 1, locksim::harness::RunConfig::kMaxClients));
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
  if (!f.retry_pause.empty())
    c.workload.retry_pause = locksim::parse_duration(f.retry_pause, "--retry-pause");
  c.workload.hold_within_validity = f.hold_within_validity;
  auto& t = c.redis;
  if (!f.masters.empty()) {
    t.masters = static_cast<int>(locksim::parse_integer(
        f.masters, "--masters", 1, locksim::harness::RunConfig::kMaxRedisMasters));
  }
  if (!f.replicas.empty()) {
    t.replicas = static_cast<int>(locksim::parse_integer(
        f.replicas, "--replicas", 0, locksim::harness::RunConfig::kMaxReplicasPerMaster));
  }
  if (!f.replication_lag.empty())
    t.replication_lag = locksim::parse_duration(f.replication_lag, "--replication-lag");
  if (!f.persistence.empty()) {
    const auto mode = locksim::sim::redis::persistence_from(f.persistence);
    if (!mode) {
      throw ConfigError(
          "--persistence: expected one of none, aof-everysec, aof-always, rdb, got '" +
          f.persistence + "'");
    }
    t.persistence = *mode;
  }
  if (!f.rdb_interval.empty())
    t.rdb_interval = locksim::parse_duration(f.rdb_interval, "--rdb-interval");
  t.failover = f.failover;
  if (!f.down_after.empty()) t.down_after = locksim::parse_duration(f.down_after, "--down-after");
  if (!f.discovery_delay.empty())
    t.discovery_delay = locksim::parse_duration(f.discovery_delay, "--discovery-delay");
  if (!f.timeout.empty()) t.timeout = locksim::parse_duration(f.timeout, "--timeout");
  if (!f.stuck_after.empty())
    c.stuck_after = locksim::parse_duration(f.stuck_after, "--stuck-after");
  // Also builds the algorithm, so a bad parameter fails before any work.
  locksim::harness::validate(c);
  return c;
}

// A scenario run: the file decides everything but the seed (and where the
// output goes), so a seed sweep over a scenario is one flag away.
locksim::harness::RunConfig scenario_config(const RunFlags& f, const CLI::App& run,
                                            std::string* replay) {
  for (const char* flag :
       {"--algorithm", "--clients", "--duration", "--ttl", "--hold", "--param", "--fault",
        "--retry-pause", "--hold-within-validity", "--masters", "--replicas", "--replication-lag",
        "--persistence", "--rdb-interval", "--failover", "--down-after", "--discovery-delay",
        "--timeout", "--stuck-after"}) {
    if (run.count(flag) > 0) {
      throw ConfigError(std::string(flag) +
                        ": cannot be combined with --scenario (edit the scenario file instead)");
    }
  }
  locksim::harness::Scenario sc = locksim::harness::load_scenario(f.scenario);
  if (run.count("--seed") > 0) {
    sc.config.seed = static_cast<uint64_t>(locksim::parse_integer(f.seed, "--seed", 0, INT64_MAX));
  }
  *replay = "locksim run --scenario " + f.scenario + " --seed " + std::to_string(sc.config.seed);
  return sc.config;
}

void write_outputs(const std::string& out, const locksim::harness::RunResult& result, bool quiet) {
  const std::filesystem::path dir(out);
  write_file(dir / "history.edn", locksim::harness::to_edn(result.history));
  write_file(dir / "history.jsonl", locksim::harness::to_jsonl(result.history));
  write_file(dir / "result.json", locksim::reports::result_json_text(result));
  if (!quiet)
    std::cout << "wrote " << (dir / "result.json").string() << ", history.edn, history.jsonl\n";
}

void make_out_dir(const std::string& out) {
  if (out.empty()) return;
  std::error_code ec;
  std::filesystem::create_directories(out, ec);
  if (ec) throw ConfigError("--out: cannot create directory '" + out + "': " + ec.message());
}

int exit_code(const locksim::harness::RunResult& result) {
  switch (locksim::harness::overall_verdict(result)) {
    case locksim::harness::Verdict::Kind::kValid:
      return kExitClean;
    case locksim::harness::Verdict::Kind::kInvalid:
      return kExitViolation;
    case locksim::harness::Verdict::Kind::kUnknown:
      return kExitInternal;
  }
  return kExitInternal;
}

// The same algorithm code against real redis-server processes on loopback.
int cmd_live(const RunFlags& flags) {
  const locksim::harness::RunConfig config = to_config(flags);
  make_out_dir(flags.out);
  if (!flags.quiet) {
    std::cout << "live: " << config.algorithm << " against real redis-server on 127.0.0.1 for "
              << locksim::format_duration(config.duration) << " of real time...\n"
              << std::flush;
  }
  const auto result = locksim::live::run_live_and_check(config);
  if (!flags.quiet) std::cout << locksim::reports::summary_text(result);
  if (!flags.out.empty()) write_outputs(flags.out, result, flags.quiet);
  return exit_code(result);
}

int cmd_run(const RunFlags& flags, const CLI::App& run) {
  std::string replay;
  const locksim::harness::RunConfig config =
      flags.scenario.empty() ? to_config(flags) : scenario_config(flags, run, &replay);
  make_out_dir(flags.out);
  auto report = locksim::harness::simulate_and_check(config);
  if (!replay.empty()) report.result.replay_command = replay;
  locksim::cli::check_run_with_knossos(report.result, flags.knossos);
  const auto& result = report.result;
  if (!flags.quiet) std::cout << locksim::reports::summary_text(result);
  if (!flags.out.empty()) write_outputs(flags.out, result, flags.quiet);
  if (locksim::harness::knossos_disagrees(result.linearizability)) return kExitInternal;
  return exit_code(result);
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
  run->add_option("--scenario", flags.scenario,
                  "run a shipped scenario (see locksim list) or a scenario file; --seed may "
                  "override its seed");
  run->add_option("--retry-pause", flags.retry_pause, "client pause after a failed acquire");
  run->add_flag("--hold-within-validity", flags.hold_within_validity,
                "cut each hold to the lease's validity (a careful Redlock client)");
  run->add_option("--masters", flags.masters, "independent Redis masters (Redlock's N)");
  run->add_option("--replicas", flags.replicas, "asynchronous replicas per master");
  run->add_option("--replication-lag", flags.replication_lag, "how far replicas run behind");
  run->add_option("--persistence", flags.persistence, "none, aof-everysec, aof-always or rdb");
  run->add_option("--rdb-interval", flags.rdb_interval, "RDB snapshot period");
  run->add_flag("--failover", flags.failover, "Sentinel-like failover to a replica");
  run->add_option("--down-after", flags.down_after, "failover: master unreachable this long");
  run->add_option("--discovery-delay", flags.discovery_delay,
                  "failover: clients learn the new master this much later");
  run->add_option("--timeout", flags.timeout, "client timeout of one Redis command");
  run->add_option("--stuck-after", flags.stuck_after,
                  "report a stuck lock unheld this long at the end of the run");
  locksim::cli::add_knossos_options(run, flags.knossos);
  locksim::cli::CheckFlags check_flags;
  CLI::App* check = locksim::cli::add_check_command(app, check_flags);
  CLI::App* list = app.add_subcommand("list", "list algorithms and their parameters");
  RunFlags live_flags;
  live_flags.duration = "10s";
  live_flags.hold = "50ms..200ms";
  CLI::App* live = app.add_subcommand(
      "live", "run the same algorithm code against real redis-server processes (loopback)");
  live->add_option("--algorithm", live_flags.algorithm, "lock algorithm (see locksim list)");
  live->add_option("--seed", live_flags.seed, "seed of the clients' random choices");
  live->add_option("--clients", live_flags.clients, "number of client threads");
  live->add_option("--duration", live_flags.duration, "real run length, e.g. 10s");
  live->add_option("--ttl", live_flags.ttl, "lock TTL (algorithm parameter ttl)");
  live->add_option("--hold", live_flags.hold, "critical-section length range");
  live->add_option("--param", live_flags.params, "algorithm parameter NAME=VALUE (repeatable)");
  live->add_option("--masters", live_flags.masters, "redis-server processes to start");
  live->add_option("--persistence", live_flags.persistence, "none, aof-everysec or aof-always");
  live->add_option("--timeout", live_flags.timeout, "client timeout of one Redis command");
  live->add_option("--out", live_flags.out, "write result.json, history.edn, history.jsonl here");
  live->add_flag("--quiet", live_flags.quiet, "print nothing; rely on the exit code");

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
    if (check->parsed()) return locksim::cli::run_check_command(check_flags);
    if (live->parsed()) return cmd_live(live_flags);
    return cmd_run(flags, *run);
  } catch (const ConfigError& e) {
    std::cerr << "locksim: " << e.what() << "\n";
    return kExitBadInput;
  } catch (const std::exception& e) {
    std::cerr << "locksim: internal error: " << e.what() << "\n";
    return kExitInternal;
  }
}
