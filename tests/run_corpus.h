// Test helper: a corpus of locksim runs for the history checkers — every
// algorithm under every kind of fault, and every shipped scenario, over
// several seeds — so the checkers are compared on violating and clean runs alike.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "algorithms/registry.h"
#include "faults/fault_schedule.h"
#include "harness/run_config.h"
#include "harness/scenario.h"

namespace locksim::testing {

struct CorpusRun {
  std::string name;  // "redlock/pause-holder/seed 3", "scenario getset-clock-skew/seed 5"
  std::string algorithm;
  harness::RunConfig config;
};

// One fault profile per kind of fault REFERENCE-VERDICTS.md lists (failover
// comes from the shipped scenarios, which set up replicas).
struct FaultProfile {
  const char* name;
  std::vector<const char*> faults;
};

inline const std::vector<FaultProfile>& fault_profiles() {
  static const std::vector<FaultProfile> profiles = {
      {"none", {}},
      {"pause-holder", {"pause @holder at 5s for 12s"}},
      {"client-clock-jump", {"jump c2 at 0s +9s"}},
      {"client-drift", {"drift c2 at 0s +300000ppm"}},
      {"server-clock-jump", {"jump SERVER at 4s +20s"}},
      {"crash-holder", {"crash @holder at 5s for 3s", "crash @holder at 15s for 1s"}},
      {"crash-server", {"crash SERVER at 5s for 2s"}},
      {"partition", {"partition c1|SERVER at 4s for 12s"}},
  };
  return profiles;
}

// The node a profile's SERVER means: the first server of the algorithm's backend.
inline std::string server_node(const std::string& algorithm) {
  if (algorithm.rfind("mysql", 0) == 0) return "mysql-1";
  if (algorithm.rfind("zk", 0) == 0) return "zk-1";
  return "redis-1";
}

// Every algorithm x fault profile x seeds [1, seeds], 30 s runs, 3 clients,
// TTL 5 s where the algorithm has one, holds 1-3 s (short enough that faults bite).
inline std::vector<CorpusRun> algorithm_fault_runs(int seeds) {
  std::vector<CorpusRun> runs;
  for (const auto& spec : algorithms::all_algorithms()) {
    for (const FaultProfile& p : fault_profiles()) {
      for (int s = 1; s <= seeds; ++s) {
        harness::RunConfig c;
        c.algorithm = spec.name;
        c.seed = static_cast<uint64_t>(s);
        c.duration = Duration::seconds(30);
        c.workload.clients = 3;
        for (const auto& param : spec.params) {
          if (param.name == "ttl") c.algorithm_params["ttl"] = "5s";
        }
        for (std::string f : p.faults) {
          if (const size_t at = f.find("SERVER"); at != std::string::npos) {
            f.replace(at, 6, server_node(spec.name));
          }
          c.faults.events.push_back(faults::parse_fault(f, "fault"));
        }
        runs.push_back({spec.name + "/" + p.name + "/seed " + std::to_string(s), spec.name, c});
      }
    }
  }
  return runs;
}

// Every shipped scenario over seeds [1, seeds].
inline std::vector<CorpusRun> scenario_runs(int seeds) {
  std::vector<CorpusRun> runs;
  for (const auto& b : harness::builtin_scenario_texts()) {
    const harness::Scenario sc = harness::parse_scenario(b.json, std::string("builtin:") + b.name);
    for (int s = 1; s <= seeds; ++s) {
      harness::RunConfig c = sc.config;
      c.seed = static_cast<uint64_t>(s);
      runs.push_back({"scenario " + sc.name + "/seed " + std::to_string(s), c.algorithm, c});
    }
  }
  return runs;
}

}  // namespace locksim::testing
