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

#include "checkers/knossos.h"
#include "checkers/linearizability.h"
#include "history/history.h"
#include "sim/rng.h"

namespace {

using locksim::history::Op;
using locksim::history::OpF;
using locksim::history::OpType;

// A linearizable history of `ops` ops from `clients` clients contending for
// one lock, as a lock service would produce it: an acquire succeeds when the
// lock is free at its completion, fails otherwise; a fraction `info` of the
// completions are :info, after which the client continues under a fresh process (an :info release
// frees the lock, an :info acquire never took it). `violate` appends one acquire that succeeds
// while the lock is held, so the history is invalid at its end.
std::vector<Op> contended_history(int64_t ops, int clients, double info, bool violate) {
  locksim::sim::Rng rng(20240917);
  struct Client {
    int64_t process;
    bool pending = false;
    OpF f = OpF::kAcquire;
    bool holding = false;
  };
  std::vector<Client> c;
  for (int i = 0; i < clients; ++i) c.push_back(Client{i});
  int64_t next_process = clients;
  int holder = -1;
  std::vector<Op> h;
  h.reserve(static_cast<size_t>(ops) + 2);
  auto emit = [&](int i, OpType t, OpF f) {
    Op op;
    op.index = static_cast<int64_t>(h.size());
    op.time_ns = op.index * 1000;
    op.process = c[static_cast<size_t>(i)].process;
    op.client = i;
    op.type = t;
    op.f = f;
    h.push_back(op);
  };
  auto step = [&] {
    const int i = static_cast<int>(rng.below(static_cast<uint64_t>(clients)));
    Client& x = c[static_cast<size_t>(i)];
    if (!x.pending) {
      x.f = x.holding ? OpF::kRelease : OpF::kAcquire;
      x.pending = true;
      emit(i, OpType::kInvoke, x.f);
      return;
    }
    x.pending = false;
    const bool unknown = rng.chance(info);
    if (x.f == OpF::kRelease) {
      // Released, or (:info) the lease was given up: free from here on.
      holder = -1;
      x.holding = false;
      emit(i, unknown ? OpType::kInfo : OpType::kOk, OpF::kRelease);
    } else {
      // An :info acquire here never took effect (a timed-out request the
      // store refused); the checker must find it may be left out.
      const bool won = holder < 0 && !unknown;
      if (won) {
        holder = i;
        x.holding = true;
      }
      emit(i, unknown ? OpType::kInfo : (won ? OpType::kOk : OpType::kFail), OpF::kAcquire);
    }
    if (unknown) x.process = next_process++;
  };
  while (static_cast<int64_t>(h.size()) < ops) step();
  // The violation: a second acquire succeeds while the holder has not even
  // invoked its release.
  while (violate && (holder < 0 || c[static_cast<size_t>(holder)].pending)) step();
  if (violate) {
    const int other = (holder + 1) % clients;
    c[static_cast<size_t>(other)].process = next_process++;
    emit(other, OpType::kInvoke, OpF::kAcquire);
    emit(other, OpType::kOk, OpF::kAcquire);
  }
  return h;
}

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
