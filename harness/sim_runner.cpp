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
      : world_(world), end_(end), clients_(clients), next_process_(clients), pending_(clients) {}

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

  // A nemesis step, as a :nemesis :info op at the current true time.
  void record_nemesis(std::string_view f, std::vector<std::string> value, std::string_view note) {
    Op op = nemesis_op(f, std::move(value), std::string(note));
    op.time_ns = world_.now().ns;
    recorder_.record(std::move(op));
  }

  History finish() { return recorder_.finish(world_.now()); }

  // A client that believes it holds the lock now (the lowest-numbered, if
  // several do), or -1. Lets faults target "@holder".
  int current_holder() const {
    for (int c = 0; c < clients_; ++c) {
      if (recorder_.holding(c)) return c;
    }
    return -1;
  }

 private:
  sim::World& world_;
  TimePoint end_;
  int clients_;
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
  std::vector<std::unique_ptr<sim::redis::ReplicaGroup>> groups;
  std::unique_ptr<sim::Node> sentinel;
  std::vector<std::unique_ptr<sim::ClientEnv>> envs;
  std::unique_ptr<sim::Network> net;
  std::unique_ptr<SimTruth> truth;
  std::unique_ptr<faults::Nemesis> nemesis;
  sim::World world(sim::WorldOptions{.seed = config.seed, .policy = config.policy});

  // Split every component's stream up front, in a fixed order, so adding a
  // draw to one component never changes another's numbers.
  net = std::make_unique<sim::Network>(world, world.rng().split("network"));
  net->set_default_link(config.link);
  const sim::redis::Topology topology = resolved_topology(config);
  if (topology.failover) sentinel = std::make_unique<sim::Node>(world, "sentinel");
  for (int g = 0; g < topology.masters; ++g) {
    const std::string group_name = "redis-" + std::to_string(g + 1);
    std::vector<sim::redis::RedisNode*> members;
    for (int r = 0; r <= topology.replicas; ++r) {
      const std::string name = r == 0 ? group_name : group_name + "-r" + std::to_string(r);
      servers.push_back(std::make_unique<sim::redis::RedisNode>(
          world, *net, name, world.rng().split(name).next(), topology));
      members.push_back(servers.back().get());
    }
    groups.push_back(std::make_unique<sim::redis::ReplicaGroup>(world, *net, group_name, members,
                                                                sentinel.get(), topology));
  }
  const int clients = config.workload.clients;
  truth = std::make_unique<SimTruth>(world, TimePoint{} + config.duration, clients);
  for (int i = 0; i < clients; ++i) {
    client_nodes.push_back(std::make_unique<sim::Node>(world, client_label(i)));
    sim::Node& node = *client_nodes.back();
    std::vector<std::unique_ptr<RedisConnection>> conns;
    for (auto& g : groups) {
      conns.push_back(
          std::make_unique<sim::redis::GroupConnection>(world, *net, node, *g, topology.timeout));
    }
    envs.push_back(std::make_unique<sim::ClientEnv>(world, node, world.rng().split(node.name()),
                                                    std::move(conns)));
  }

  std::map<std::string, sim::Node*> by_name;
  for (auto& s : servers) by_name[s->node().name()] = &s->node();
  for (auto& n : client_nodes) by_name[n->name()] = n.get();
  if (sentinel) by_name[sentinel->name()] = sentinel.get();
  nemesis = std::make_unique<faults::Nemesis>(
      world, *net, by_name,
      [&truth] {
        const int holder = truth->current_holder();
        return holder < 0 ? std::string() : client_label(holder);
      },
      [&truth](std::string_view f, std::vector<std::string> value, std::string_view note) {
        truth->record_nemesis(f, std::move(value), note);
      });
  nemesis->install(config.faults, config.fault_field_prefix);

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
  for (auto& g : groups) out.failovers += g->failovers();
  return out;
}

}  // namespace locksim::harness
