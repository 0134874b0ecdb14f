// The engine's overhead as one number per algorithm: what a whole run spends
// per simulated event, divided by the two things an event cannot do without
// (one event-queue push + pop, one fiber switch through the SimScheduler).
// A ratio of 1 would be a run that does nothing but its essential parts; the
// rest is the model's own work (a Redis command, an InnoDB lock) plus the
// engine's overhead. All three are measured inside one benchmark, in one
// binary, so machines and builds never mix in a ratio. The engine_only row
// runs the same kind of client loop with no store at all (below): what the
// engine alone costs an event, so that a lock's row can be read as the
// engine plus its model. Run:
//   build/locksim_bench --benchmark_filter=BM_PerEventRatio
// The BM_RatioPart_* benchmarks run the same parts one at a time, each once
// at a given size, so that scripts/instruction-ratio can count their
// instructions under callgrind: the same ratio, counted instead of timed.
#include <benchmark/benchmark.h>

#include <boost/fiber/all.hpp>

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "bench/five_client_run.h"
#include "harness/simulation.h"
#include "sim/event_queue.h"
#include "sim/network.h"
#include "sim/node.h"
#include "sim/rng.h"
#include "sim/rpc.h"
#include "sim/scheduler.h"

namespace {

using locksim::Duration;
using locksim::TimePoint;
using Clock = std::chrono::steady_clock;

double ns_since(Clock::time_point start, uint64_t items) {
  const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start);
  return static_cast<double>(ns.count()) / static_cast<double>(items);
}

// The parts' sizes in BM_PerEventRatio: long enough that each settles.
constexpr uint64_t kRatioPushPops = 2'000'000;
constexpr int kRatioYields = 500'000;  // each of two fibers: 1,000,000 switches

// One push and one pop through a heap of ~1000 pending events (a many-client
// run's size), with an action of a typical event's size; `ops` of them.
double push_pop_ns(uint64_t ops) {
  LOCKSIM_ASSERT(ops > 0);
  locksim::sim::EventQueue q;
  locksim::sim::Rng rng(1);
  for (int i = 0; i < 1000; ++i) q.push(TimePoint{rng.between(0, 1'000'000)}, [] {});
  uint64_t sink = 0;
  const auto start = Clock::now();
  for (uint64_t i = 0; i < ops; ++i) {
    auto e = q.pop();
    sink += e.seq;
    const int64_t at = e.at.ns + rng.between(0, 1'000'000);
    q.push(TimePoint{at}, [p = &sink, i] { *p += i; });
  }
  const double ns = ns_since(start, ops);
  benchmark::DoNotOptimize(sink);
  return ns;
}

// One switch between two client fibers under the SimScheduler, on a thread
// of its own (Boost keeps one scheduling algorithm per thread); each fiber
// yields `yields` times.
double fiber_switch_ns(int yields) {
  LOCKSIM_ASSERT(yields > 0);
  double ns = 0;
  std::thread t([&] {
    locksim::sim::Rng rng(1);
    locksim::sim::SimScheduler& s = locksim::sim::SimScheduler::for_this_thread();
    s.attach(locksim::sim::SchedulePolicy::kSeeded, &rng);
    auto body = [yields] {
      for (int i = 0; i < yields; ++i) boost::this_fiber::yield();
    };
    const auto start = Clock::now();
    boost::fibers::fiber a(body), b(body);
    a.join();
    b.join();
    ns = ns_since(start, 2 * static_cast<uint64_t>(yields));
    s.detach();
  });
  t.join();
  return ns;
}

// The engine with no model: five clients, each on its node, call a server
// node over the run's default link (RPC with a timeout, a handler that
// returns a number) and pause 50-150 ms, for `length` of virtual time: the
// events of a lock run's acquire loop (the request, its network pump and
// delivery, the reply, the timeout, the fiber's block and wake-up, the
// pause) without a store's work. Returns the events run.
uint64_t engine_only_run_for(uint64_t seed, Duration length) {
  namespace sim = locksim::sim;
  sim::World w(sim::WorldOptions{.seed = seed});
  sim::Network net(w, w.rng().split("network"));
  sim::Node server(w, "server");
  std::vector<std::unique_ptr<sim::Node>> nodes;
  LOCKSIM_ASSERT(length > Duration::zero());
  const TimePoint end = TimePoint{} + length;
  for (int i = 0; i < 5; ++i) {
    nodes.push_back(std::make_unique<sim::Node>(w, "c" + std::to_string(i + 1)));
    sim::Node* node = nodes.back().get();
    sim::Rng rng = w.rng().split(node->name());
    w.spawn(node->name(), node, [&w, &net, &server, node, rng, end]() mutable {
      std::string error;
      auto conn = sim::dial(w, net, *node, server, Duration::seconds(1), error);
      LOCKSIM_ASSERT_MSG(conn != nullptr, "the engine-only run's link never fails");
      int64_t answers = 0;
      while (w.now() < end) {
        auto r = sim::call<int64_t>(
            w, *conn, [&answers] { return ++answers; }, Duration::millis(500));
        benchmark::DoNotOptimize(r);
        w.sleep(rng.uniform_duration(Duration::millis(50), Duration::millis(150)));
      }
    });
  }
  w.run_until(end);
  w.shutdown();
  return w.events_executed();
}

// The engine-only row's run: 60 s, as a lock's standard run.
uint64_t engine_only_run(uint64_t seed) {
  return engine_only_run_for(seed, Duration::seconds(60));
}

// A lock's standard run (bench/five_client_run.h); returns the events run.
std::function<uint64_t(uint64_t)> lock_run(std::string algorithm) {
  return [algorithm](uint64_t seed) {
    return locksim::harness::run_simulation(locksim::bench::five_client_run(algorithm, seed))
        .events;
  };
}

// `run` makes one whole run of the given seed and returns its events.
void BM_PerEventRatio(benchmark::State& state, std::function<uint64_t(uint64_t)> run) {
  uint64_t events = 0, seed = 1;
  Clock::duration runs{};
  for (auto _ : state) {
    const auto start = Clock::now();
    events += run(seed++);
    runs += Clock::now() - start;
  }
  // After the timed loop: the parts are measured, not counted in its time.
  const double pop_ns = push_pop_ns(kRatioPushPops);
  const double switch_ns = fiber_switch_ns(kRatioYields);
  const double event_ns =
      static_cast<double>(std::chrono::duration_cast<std::chrono::nanoseconds>(runs).count()) /
      static_cast<double>(events);
  state.counters["events_per_run"] =
      benchmark::Counter(static_cast<double>(events), benchmark::Counter::kAvgIterations);
  state.counters["event_ns"] = event_ns;
  state.counters["push_pop_ns"] = pop_ns;
  state.counters["switch_ns"] = switch_ns;
  state.counters["ratio"] = event_ns / (pop_ns + switch_ns);
}

BENCHMARK_CAPTURE(BM_PerEventRatio, engine_only, engine_only_run)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_PerEventRatio, set_nx_lua, lock_run("set-nx-lua"))
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_PerEventRatio, redlock, lock_run("redlock"))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_PerEventRatio, mysql_center, lock_run("mysql-center"))
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_PerEventRatio, zk_curator, lock_run("zk-curator"))
    ->Unit(benchmark::kMillisecond);

// The ratio's parts one at a time, each once at the size its argument gives
// (scripts/instruction-ratio counts each at both sizes under callgrind and
// divides the difference by the difference in size, so start-up cancels).
void BM_RatioPart_PushPop(benchmark::State& state) {
  for (auto _ : state) {
    state.counters["ns"] = push_pop_ns(static_cast<uint64_t>(state.range(0)));
  }
}
BENCHMARK(BM_RatioPart_PushPop)->Arg(200'000)->Arg(kRatioPushPops)->Iterations(1);

// The argument is each fiber's yields: twice as many switches.
void BM_RatioPart_Switch(benchmark::State& state) {
  for (auto _ : state) {
    state.counters["ns"] = fiber_switch_ns(static_cast<int>(state.range(0)));
  }
}
BENCHMARK(BM_RatioPart_Switch)->Arg(50'000)->Arg(kRatioYields)->Iterations(1);

// The argument is the run's length in seconds; the counter, its events.
void BM_RatioPart_EngineOnly(benchmark::State& state) {
  for (auto _ : state) {
    const uint64_t events = engine_only_run_for(1, Duration::seconds(state.range(0)));
    state.counters["events"] = static_cast<double>(events);
  }
}
BENCHMARK(BM_RatioPart_EngineOnly)->Arg(10)->Arg(60)->Iterations(1);

}  // namespace
