// Speed of the built-in linearizability checker on big histories. The
// target: a 1 M-op history checked in under a second. Run:
//   build/locksim_bench --benchmark_filter=Linearizab
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "bench/contended_history.h"
#include "checkers/knossos.h"
#include "checkers/linearizability.h"
#include "history/history.h"

namespace {

using locksim::bench::contended_history;
using locksim::history::Op;

void BM_Linearizability(benchmark::State& state) {
  const int64_t ops = state.range(0);
  const double info = static_cast<double>(state.range(1)) / 100.0;
  const bool violate = state.range(2) != 0;
  const std::vector<Op> h = contended_history(ops, 5, info, violate);
  const auto model = state.range(3) == 0 ? locksim::checkers::MutexModel::kMutex
                                         : locksim::checkers::MutexModel::kOwnerMutex;
  const bool expected_valid = !violate;
  for (auto _ : state) {
    const auto v = locksim::checkers::check_linearizable(h, model);
    if ((v.kind == locksim::checkers::Verdict::Kind::kValid) != expected_valid) {
      state.SkipWithError("unexpected verdict");
      break;
    }
    benchmark::DoNotOptimize(v);
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(h.size()));
  state.counters["ops"] = static_cast<double>(h.size());
}
// {ops, % :info, violation at the end, model (0 mutex, 1 owner-mutex)}
BENCHMARK(BM_Linearizability)
    ->Args({1'000'000, 0, 0, 0})
    ->Args({1'000'000, 1, 0, 0})
    ->Args({1'000'000, 5, 0, 0})
    ->Args({1'000'000, 5, 0, 1})
    ->Args({1'000'000, 1, 1, 0})
    ->ArgsProduct(
        {{1'000, 10'000, 40'000}, {0, 1, 5}, {0}, {0}})  // docs/reference/settings.md's table
    ->Unit(benchmark::kMillisecond);

// docs/measurements.md's table: the built-in checker against Knossos (wgl) on the same
// history, {ops, % :info}. Needs LOCKSIM_KNOSSOS (the command) and takes
// LOCKSIM_KNOSSOS_HEAP (default 8g) and LOCKSIM_KNOSSOS_LIMIT_S (default 600);
// skipped without them. One Knossos call per history, JVM start included.
void BM_KnossosVsBuiltin(benchmark::State& state) {
  const char* command = std::getenv("LOCKSIM_KNOSSOS");
  if (command == nullptr || *command == '\0') {
    state.SkipWithError("set LOCKSIM_KNOSSOS to the Knossos command to run this");
    return;
  }
  const std::vector<Op> h =
      contended_history(state.range(0), 5, static_cast<double>(state.range(1)) / 100.0, false);
  const std::string file = "/tmp/locksim-knossos-bench-" + std::to_string(getpid()) + ".edn";
  std::ofstream(file) << locksim::checkers::knossos_edn(h);
  locksim::checkers::KnossosOptions o;
  o.command = command;
  const char* heap = std::getenv("LOCKSIM_KNOSSOS_HEAP");
  o.heap = heap != nullptr && *heap != '\0' ? heap : "8g";
  const char* limit = std::getenv("LOCKSIM_KNOSSOS_LIMIT_S");
  o.time_limit = locksim::Duration::seconds(limit != nullptr ? std::atoll(limit) : 600);
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    const auto v = locksim::checkers::check_linearizable(h);
    const double builtin_s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const locksim::checkers::KnossosRun run = locksim::checkers::run_knossos({file}, o);
    const auto& k = run.verdicts.front();
    state.counters["builtin_ms"] = builtin_s * 1e3;
    state.counters["knossos_s"] = run.seconds;
    state.counters["knossos_MB"] = static_cast<double>(run.peak_rss_bytes) / 1e6;
    state.counters["agree"] = k.kind == v.kind ? 1 : 0;
    state.SetLabel(std::string(to_string(v.kind)) + " / Knossos " + to_string(k.kind) +
                   (k.why.empty() ? "" : " (" + k.why + ")"));
  }
  std::remove(file.c_str());
}
BENCHMARK(BM_KnossosVsBuiltin)
    ->ArgsProduct({{1'000, 10'000, 40'000}, {0, 1, 5}})
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);

}  // namespace
