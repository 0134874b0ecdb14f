// Per-run cost of a sweep: one simulate_and_check of each algorithm under
// each fault profile, at the run settings a sweep uses (60 s of virtual time,
// 5 clients). docs/measurements.md quotes these and the sweep's own
// runs/s; the full matrix's time is the sum of these costs over cores.
#include <benchmark/benchmark.h>

#include "algorithms/registry.h"
#include "faults/profile.h"
#include "harness/run.h"

namespace {

void BM_SweepRun(benchmark::State& state, std::string algorithm, std::string profile) {
  uint64_t seed = 1;
  for (auto _ : state) {
    locksim::harness::RunConfig c;
    c.algorithm = algorithm;
    c.profile = profile == "none" ? "" : profile;
    c.seed = seed++;
    auto report = locksim::harness::simulate_and_check(c);
    benchmark::DoNotOptimize(report.result.acquisitions);
  }
  state.counters["runs/s"] =
      benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}

int register_all() {
  for (const auto& spec : locksim::algorithms::all_algorithms()) {
    for (const auto& profile : locksim::faults::profile_names()) {
      benchmark::RegisterBenchmark(("BM_SweepRun/" + spec.name + "/" + profile).c_str(),
                                   BM_SweepRun, spec.name, profile)
          ->Unit(benchmark::kMillisecond);
    }
  }
  return 0;
}

const int registered = register_all();

}  // namespace
