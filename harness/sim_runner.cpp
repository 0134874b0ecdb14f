#include "harness/sim_runner.h"

#include <map>
#include <memory>
#include <optional>

#include "sim/client_env.h"
#include "sim/network.h"
#include "sim/node.h"
#include "sim/redis/redis_node.h"
#include "sim/world.h"

namespace locksim::harness {

namespace {

// The simulation's Truth: true time is the World's clock, and every record
// happens on the one thread, so no locking. Also remembers each client's
// unfinished op so a crash can close it with :info, as Jepsen does for a
// process that dies mid-operation.
class SimTruth : public Truth {
 public:
  SimTruth(sim::World& world, TimePoint end, int clients)
      : world_(world), end_(end), next_process_(clients), pending_(clients) {}

  TimePoint true_now() override { return world_.now(); }
  bool stopping() override { return world_.now() >= end_; }
  int64_t fresh_process() override { return next_process_++; }

  int64_t record(Op op, bool begin_hold, bool end_hold) override {
    op.time_ns = world_.now().ns;
    const int64_t index = recorder_.record(op);
    pending_[op.client] = op.type == OpType::kInvoke ? std::optional<Op>(op) : std::nullopt;
    if (begin_hold) recorder_.begin_hold(op.client, op.process, world_.now(), index);
    if (end_hold) {
      recorder_.end_hold(op.client, world_.now(), index, HeldInterval::EndReason::kRelease);
    }
    return index;
  }

  // The client's node crashed: whatever it was doing ends now, outcome unknown.
  void client_crashed(int client) {
    if (pending_[client]) {
      Op info = *pending_[client];
      info.type = OpType::kInfo;
      info.detail = "client crashed";
      record(info, false, false);
    }
    recorder_.end_hold(client, world_.now(), -1, HeldInterval::EndReason::kCrash);
  }

  History finish() { return recorder_.finish(world_.now()); }

 private:
  sim::World& world_;
  TimePoint end_;
  int64_t next_process_;
  HistoryRecorder recorder_;
  std::vector<std::optional<Op>> pending_;
};

}  // namespace

SimOutput run_simulation(const RunConfig& config) {
  validate(config);
  const algorithms::AlgorithmSpec& spec = *algorithms::find_algorithm(config.algorithm);
  std::unique_ptr<algorithms::LockAlgorithm> algorithm =
      spec.make(config.algorithm_params, config.param_field_prefix);

  SimOutput out;
  // Declaration order is teardown order in reverse: the World goes first
  // (its shutdown joins the fibers that use everything below it).
  std::vector<std::unique_ptr<sim::Node>> client_nodes;
  std::vector<std::unique_ptr<sim::redis::RedisNode>> servers;
  std::vector<std::unique_ptr<sim::ClientEnv>> envs;
  std::unique_ptr<sim::Network> net;
  std::unique_ptr<SimTruth> truth;
  std::unique_ptr<faults::Nemesis> nemesis;
  sim::World world(sim::WorldOptions{.seed = config.seed, .policy = config.policy});

  // Split every component's stream up front, in a fixed order, so adding a
  // draw to one component never changes another's numbers.
  net = std::make_unique<sim::Network>(world, world.rng().split("network"));
  net->set_default_link(config.link);
  for (int i = 0; i < config.redis_servers; ++i) {
    const std::string name = "redis-" + std::to_string(i + 1);
    servers.push_back(std::make_unique<sim::redis::RedisNode>(world, *net, name,
                                                              world.rng().split(name).next()));
  }
  const int clients = config.workload.clients;
  truth = std::make_unique<SimTruth>(world, TimePoint{} + config.duration, clients);
  for (int i = 0; i < clients; ++i) {
    const std::string name = "c" + std::to_string(i + 1);
    client_nodes.push_back(std::make_unique<sim::Node>(world, name));
    sim::Node& node = *client_nodes.back();
    std::vector<std::unique_ptr<RedisConnection>> conns;
    for (auto& s : servers) {
      conns.push_back(std::make_unique<sim::redis::SimRedisConnection>(world, *net, node, *s,
                                                                       config.redis_timeout));
    }
    envs.push_back(
        std::make_unique<sim::ClientEnv>(world, node, world.rng().split(name), std::move(conns)));
  }

  std::map<std::string, sim::Node*> by_name;
  for (auto& s : servers) by_name[s->node().name()] = &s->node();
  for (auto& n : client_nodes) by_name[n->name()] = n.get();
  nemesis = std::make_unique<faults::Nemesis>(world, *net, by_name);
  nemesis->install(config.faults, "--fault");

  for (int i = 0; i < clients; ++i) {
    sim::Node& node = *client_nodes[i];
    sim::ClientEnv& env = *envs[i];
    auto start = [&world, &node, &env, &algorithm, &config, &truth, i](int64_t process) {
      world.spawn(node.name(), &node, [&env, &algorithm, &config, &truth, i, process] {
        run_client(env, *algorithm, i, config.workload, *truth, process);
      });
    };
    node.on_crash = [&truth, i] { truth->client_crashed(i); };
    node.on_restart = [start, &truth] { start(truth->fresh_process()); };
    start(i);
  }

  const uint64_t switches_before = sim::SimScheduler::for_this_thread().switches();
  world.run_until(TimePoint{} + config.duration);
  out.events = world.events_executed();
  world.shutdown();
  out.errors = world.errors();
  out.scheduler_switches = sim::SimScheduler::for_this_thread().switches() - switches_before;
  out.history = truth->finish();
  out.messages_sent = net->sent();
  out.messages_dropped = net->dropped();
  for (auto& s : servers) out.redis_commands += s->commands_executed();
  out.faults = nemesis->log();
  return out;
}

}  // namespace locksim::harness
