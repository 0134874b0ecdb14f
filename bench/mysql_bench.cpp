// The simulated MySQL backend's speed, and the article's v3-over-v2 speedup.
//
//   BM_MysqlCenter5Clients60s — a 5-client mysql-center run of 60 s virtual
//     time through the runner (default settings); counter events_per_s =
//     World events executed per second of real time (target >= 1 M).
//   BM_MysqlDistinctNames — the article's workload: 50 clients, each taking
//     and releasing 100 distinct lock names one after the other (5,000
//     acquires, no hold), on v2 (one center row) and v3 (100 center rows);
//     counter virtual_s = simulated seconds until the last release. The
//     article measured v2 about 8 s and v3 about 5 s (1.6x).
#include <benchmark/benchmark.h>

#include <memory>
#include <string>
#include <vector>

#include "algorithms/registry.h"
#include "env/assert.h"
#include "harness/simulation.h"
#include "history/history.h"
#include "sim/client_env.h"
#include "sim/mysql/mysql_deployment.h"
#include "sim/network.h"
#include "sim/world.h"

namespace locksim {
namespace {

void BM_MysqlCenter5Clients60s(benchmark::State& state) {
  uint64_t events = 0, statements = 0, seed = 1;
  for (auto _ : state) {
    harness::RunConfig c;
    c.algorithm = "mysql-center";
    c.seed = seed++;
    c.duration = Duration::seconds(60);
    c.workload.clients = 5;
    const harness::SimOutput out = harness::run_simulation(harness::prepare_run(c));
    events += out.events;
    statements += out.server_commands;
  }
  state.counters["events_per_s"] =
      benchmark::Counter(static_cast<double>(events), benchmark::Counter::kIsRate);
  state.counters["statements_per_s"] =
      benchmark::Counter(static_cast<double>(statements), benchmark::Counter::kIsRate);
  state.counters["events_per_run"] =
      benchmark::Counter(static_cast<double>(events), benchmark::Counter::kAvgIterations);
}
BENCHMARK(BM_MysqlCenter5Clients60s)->Unit(benchmark::kMillisecond);

struct DistinctNamesResult {
  Duration elapsed = Duration::zero();  // virtual time until the last client finished
  int64_t acquires = 0;
  uint64_t events = 0;
};

// `clients` clients each acquire and release `names` lock names of their own,
// back to back (an acquire that fails is retried with the same name).
DistinctNamesResult run_distinct_names(const std::string& algorithm_name, int clients, int names,
                                       uint64_t seed) {
  auto algorithm = algorithms::find_algorithm(algorithm_name)->make({}, "--");
  sim::World world(sim::WorldOptions{.seed = seed});
  auto net = std::make_unique<sim::Network>(world, world.rng().split("network"));
  auto deployment =
      std::make_unique<sim::mysql::MysqlDeployment>(world, *net, sim::mysql::MysqlParams{});
  std::vector<std::unique_ptr<sim::Node>> nodes;
  std::vector<std::unique_ptr<sim::ClientEnv>> envs;
  DistinctNamesResult result;
  int finished = 0;
  for (int i = 0; i < clients; ++i) {
    nodes.push_back(std::make_unique<sim::Node>(world, history::client_label(i)));
    envs.push_back(std::make_unique<sim::ClientEnv>(
        world, *nodes.back(), world.rng().split(nodes.back()->name()),
        std::vector<std::unique_ptr<RedisConnection>>{}));
    envs.back()->set_sql(std::move(deployment->connect(*nodes.back()).sql));
  }
  for (int i = 0; i < clients; ++i) {
    sim::ClientEnv* env = envs[i].get();
    world.spawn(nodes[i]->name(), nodes[i].get(), [&, env, i] {
      for (int n = 0; n < names; ++n) {
        const std::string name = "lock-" + std::to_string(i) + "-" + std::to_string(n);
        algorithms::AcquireResult a;
        do {
          a = algorithm->acquire(*env, name);
        } while (a.outcome != algorithms::Outcome::kOk);
        ++result.acquires;
        LOCKSIM_ASSERT(algorithm->release(*env, a.lease).outcome == algorithms::Outcome::kOk);
      }
      if (++finished == clients) result.elapsed = world.now() - TimePoint{};
    });
  }
  world.run_until(TimePoint{} + Duration::seconds(3600));
  LOCKSIM_ASSERT_MSG(finished == clients, "every client finished its names within the hour");
  result.events = world.events_executed();
  world.shutdown();
  return result;
}

void BM_MysqlDistinctNames(benchmark::State& state) {
  const std::string algorithm = state.range(0) == 0 ? "mysql-center" : "mysql-segmented";
  DistinctNamesResult r;
  uint64_t seed = 1;
  for (auto _ : state) r = run_distinct_names(algorithm, 50, 100, seed++);
  state.SetLabel(algorithm + ", 50 clients x 100 distinct names");
  state.counters["virtual_s"] = static_cast<double>(r.elapsed.ns) / 1e9;
  state.counters["acquires"] = static_cast<double>(r.acquires);
  state.counters["events"] = static_cast<double>(r.events);
}
BENCHMARK(BM_MysqlDistinctNames)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond)->Iterations(1);

}  // namespace
}  // namespace locksim
