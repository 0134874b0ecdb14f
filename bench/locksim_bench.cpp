// Speed of the parts a sweep spends its time in. Run:
//   build/locksim_bench            (numbers go in docs/measurements.md)
#include <benchmark/benchmark.h>

#include <boost/fiber/algo/round_robin.hpp>
#include <boost/fiber/all.hpp>

#include <thread>

#include "algorithms/set_nx_lua.h"
#include "bench/five_client_run.h"
#include "harness/simulation.h"
#include "sim/event_queue.h"
#include "sim/redis/server.h"
#include "sim/scheduler.h"
#include "sim/world.h"

namespace {

using locksim::Duration;
using locksim::TimePoint;

// Push and pop one event through a heap holding ~1000 pending events, the
// size a many-client run keeps.
void BM_EventQueuePushPop(benchmark::State& state) {
  locksim::sim::EventQueue q;
  locksim::sim::Rng rng(1);
  int64_t now = 0;
  for (int i = 0; i < 1000; ++i) q.push(TimePoint{rng.between(0, 1'000'000)}, [] {});
  for (auto _ : state) {
    auto e = q.pop();
    now = e.at.ns;
    q.push(TimePoint{now + rng.between(0, 1'000'000)}, [] {});
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_EventQueuePushPop);

// Two fibers yielding to each other: every yield is one switch chosen by the
// installed scheduling algorithm. Runs on a fresh thread because Boost.Fiber
// allows one algorithm per thread for the thread's life. (Main cannot be one
// of the pair: SimScheduler runs main only when no client fiber is ready.)
template <class Install>
void yield_ping_pong(benchmark::State& state, Install install) {
  constexpr int kYieldsPerFiber = 10'000;
  std::thread t([&] {
    install();
    for (auto _ : state) {
      auto body = [] {
        for (int i = 0; i < kYieldsPerFiber; ++i) boost::this_fiber::yield();
      };
      boost::fibers::fiber a(body), b(body);
      a.join();
      b.join();
    }
  });
  t.join();
  state.SetItemsProcessed(state.iterations() * 2 * kYieldsPerFiber);
  state.SetLabel("items = fiber switches");
}

void BM_FiberSwitch_BareBoostRoundRobin(benchmark::State& state) {
  yield_ping_pong(
      state, [] { boost::fibers::use_scheduling_algorithm<boost::fibers::algo::round_robin>(); });
}
BENCHMARK(BM_FiberSwitch_BareBoostRoundRobin);

void BM_FiberSwitch_SimScheduler(benchmark::State& state) {
  yield_ping_pong(state, [] {
    static thread_local locksim::sim::Rng rng(1);
    locksim::sim::SimScheduler::for_this_thread().attach(locksim::sim::SchedulePolicy::kSeeded,
                                                         &rng);
  });
}
BENCHMARK(BM_FiberSwitch_SimScheduler);

// A fiber blocking on the World's timer and waking: sleep(0) through the
// event heap, the way every client step in a run goes.
void BM_WorldSleepWake(benchmark::State& state) {
  std::thread t([&] {
    locksim::sim::World w(locksim::sim::WorldOptions{});
    int64_t n = 0;
    bool done = false;
    w.spawn("sleeper", nullptr, [&] {
      while (!done) {
        w.sleep(Duration::nanos(1));
        ++n;
      }
    });
    for (auto _ : state) w.run_until(w.now() + Duration::nanos(1));
    done = true;
    w.shutdown();
  });
  t.join();
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_WorldSleepWake);

void BM_SimRedis_SetNxPx(benchmark::State& state) {
  locksim::sim::redis::Server server(1);
  const TimePoint now{1'700'000'000'000'000'000};
  const std::vector<std::string> set = {"SET", "lock", "c1:0123456789abcdef", "NX", "PX", "10000"};
  const std::vector<std::string> del = {"DEL", "lock"};
  for (auto _ : state) {
    benchmark::DoNotOptimize(server.execute(set, now));
    benchmark::DoNotOptimize(server.execute(del, now));
  }
  state.SetItemsProcessed(state.iterations());
  state.SetLabel("one SET NX PX + one DEL per iteration");
}
BENCHMARK(BM_SimRedis_SetNxPx);

// The release script as C++ (sim/redis/lua_intrinsics.h) or, with
// `by_lua`, through the interpreter, as every script ran before.
void BM_SimRedis_EvalCompareAndDelete(benchmark::State& state, bool by_lua) {
  locksim::sim::redis::Server server(1);
  server.set_script_intrinsics(!by_lua);
  const TimePoint now{1'700'000'000'000'000'000};
  const std::string token = "c1:0123456789abcdef";
  const std::vector<std::string> set = {"SET", "lock", token, "PX", "10000"};
  const std::vector<std::string> eval = {"EVAL", locksim::algorithms::SetNxLua::kReleaseScript, "1",
                                         "lock", token};
  for (auto _ : state) {
    server.execute(set, now);
    benchmark::DoNotOptimize(server.execute(eval, now));
  }
  state.SetItemsProcessed(state.iterations());
  state.SetLabel("one SET + one EVAL (compare-and-delete) per iteration");
}
BENCHMARK_CAPTURE(BM_SimRedis_EvalCompareAndDelete, intrinsic, false);
BENCHMARK_CAPTURE(BM_SimRedis_EvalCompareAndDelete, by_lua, true);

// A whole run: 5 clients, 60 s of virtual time, default holds; set-nx-lua on
// one master, Redlock on five.
void BM_FiveClientRun(benchmark::State& state, std::string algorithm, bool trace_lock = false) {
  uint64_t events = 0, acquisitions = 0, seed = 1;
  locksim::harness::SimWatch watch;
  watch.trace_lock = trace_lock;
  for (auto _ : state) {
    const auto out =
        locksim::harness::run_simulation(locksim::bench::five_client_run(algorithm, seed++), watch);
    events += out.events;
    for (const auto& op : out.history.ops) {
      acquisitions +=
          op.f == locksim::history::OpF::kAcquire && op.type == locksim::history::OpType::kOk;
    }
  }
  state.counters["sim_events_per_s"] =
      benchmark::Counter(static_cast<double>(events), benchmark::Counter::kIsRate);
  state.counters["lock_cycles_per_s"] =
      benchmark::Counter(static_cast<double>(acquisitions), benchmark::Counter::kIsRate);
  state.counters["events_per_run"] =
      benchmark::Counter(static_cast<double>(events), benchmark::Counter::kAvgIterations);
}
BENCHMARK_CAPTURE(BM_FiveClientRun, set_nx_lua, std::string("set-nx-lua"))
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_FiveClientRun, redlock_5_masters, std::string("redlock"))
    ->Unit(benchmark::kMillisecond);
// The same runs with the lock traced on every server after every event, as
// `locksim explain` and `--html` run them (harness/lock_tracer.h).
BENCHMARK_CAPTURE(BM_FiveClientRun, set_nx_lua_traced, std::string("set-nx-lua"), true)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_FiveClientRun, redlock_5_masters_traced, std::string("redlock"), true)
    ->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
