// The simulated ZooKeeper ensemble's speed, and the herd effect in messages.
//
//   BM_ZkCurator5Clients60s — a 5-client zk-curator run of 60 s virtual time
//     on a 3-server ensemble; counter events_per_s = World events executed
//     per second of real time (target >= 1 M).
//   BM_ZkMessagesPerAcquire — 20 waiters on one lock for 60 s: network
//     messages per successful acquire, zk-herd (every waiter watches the
//     children) against zk-curator (each watches its predecessor).
#include <benchmark/benchmark.h>

#include <memory>
#include <string>
#include <vector>

#include "algorithms/zk_lock.h"
#include "harness/workload.h"
#include "history/history.h"
#include "sim/client_env.h"
#include "sim/network.h"
#include "sim/world.h"
#include "sim/zookeeper/deployment.h"

namespace locksim {
namespace {

// A Truth that only counts acquires: the bench measures the simulation.
class CountingTruth : public harness::Truth {
 public:
  CountingTruth(sim::World& world, Duration length) : world_(world), length_(length) {}
  TimePoint true_now() override { return world_.now(); }
  bool stopping() override { return world_.now() >= TimePoint{} + length_; }
  int64_t fresh_process() override { return next_++; }
  int64_t record(history::Op op, bool begin_hold, bool) override {
    if (begin_hold && op.type == history::OpType::kOk) ++acquires;
    return index_++;
  }
  int64_t acquires = 0;

 private:
  sim::World& world_;
  Duration length_;
  int64_t next_ = 1000;
  int64_t index_ = 0;
};

struct RunStats {
  uint64_t events = 0;
  uint64_t messages = 0;
  int64_t acquires = 0;
};

RunStats run_zk(const std::string& variant, int clients, uint64_t seed, Duration hold_max) {
  std::unique_ptr<algorithms::LockAlgorithm> algorithm;
  for (const auto& spec : algorithms::zk_algorithm_specs()) {
    if (spec.name == variant) algorithm = spec.make({{"wait", "60s"}}, "params.");
  }
  const Duration length = Duration::seconds(60);
  std::vector<std::unique_ptr<sim::Node>> nodes;
  std::vector<std::unique_ptr<sim::ClientEnv>> envs;
  std::unique_ptr<sim::zookeeper::ZkDeployment> deployment;
  std::unique_ptr<sim::Network> net;
  std::unique_ptr<CountingTruth> truth;
  sim::World world(sim::WorldOptions{.seed = seed});
  net = std::make_unique<sim::Network>(world, world.rng().split("network"));
  deployment =
      std::make_unique<sim::zookeeper::ZkDeployment>(world, *net, sim::zookeeper::ZkParams{});
  truth = std::make_unique<CountingTruth>(world, length);
  harness::WorkloadParams w;
  w.clients = clients;
  w.hold_min = Duration::millis(10);
  w.hold_max = hold_max;
  for (int i = 0; i < clients; ++i) {
    nodes.push_back(std::make_unique<sim::Node>(world, history::client_label(i)));
    auto env = std::make_unique<sim::ClientEnv>(world, *nodes.back(),
                                                world.rng().split(nodes.back()->name()),
                                                std::vector<std::unique_ptr<RedisConnection>>{});
    env->set_zk(
        deployment->connect_client(*nodes.back(), world.rng().split("zk" + std::to_string(i))));
    envs.push_back(std::move(env));
  }
  for (int i = 0; i < clients; ++i) {
    sim::ClientEnv* env = envs[i].get();
    world.spawn(nodes[i]->name(), nodes[i].get(), [env, &algorithm, &w, &truth, i] {
      harness::run_client(*env, *algorithm, i, w, *truth);
    });
  }
  world.run_until(TimePoint{} + length);
  RunStats s;
  s.events = world.events_executed();
  s.messages = net->sent();
  s.acquires = truth->acquires;
  world.shutdown();
  return s;
}

void BM_ZkCurator5Clients60s(benchmark::State& state) {
  uint64_t events = 0;
  uint64_t seed = 1;
  for (auto _ : state) events += run_zk("zk-curator", 5, seed++, Duration::millis(100)).events;
  state.counters["events_per_s"] =
      benchmark::Counter(static_cast<double>(events), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_ZkCurator5Clients60s)->Unit(benchmark::kMillisecond);

void BM_ZkMessagesPerAcquire(benchmark::State& state) {
  const std::string variant = state.range(0) == 0 ? "zk-curator" : "zk-herd";
  RunStats total;
  uint64_t seed = 1;
  for (auto _ : state) {
    const RunStats s = run_zk(variant, 20, seed++, Duration::millis(50));
    total.messages += s.messages;
    total.acquires += s.acquires;
  }
  state.SetLabel(variant);
  state.counters["messages_per_acquire"] =
      static_cast<double>(total.messages) /
      static_cast<double>(std::max<int64_t>(total.acquires, 1));
}
BENCHMARK(BM_ZkMessagesPerAcquire)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace locksim
