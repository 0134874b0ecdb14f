#include "harness/simulation.h"

#include <map>
#include <memory>

#include "env/assert.h"
#include "harness/backends.h"
#include "harness/exposure_monitor.h"
#include "harness/grant_watch.h"
#include "harness/lock_tracer.h"
#include "harness/profile_deployment.h"
#include "harness/settings.h"
#include "sim/backend.h"
#include "sim/client_env.h"
#include "sim/network.h"
#include "sim/node.h"
#include "sim/store_node.h"
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
      : world_(world),
        end_(end),
        clients_(clients),
        next_process_(clients),
        pending_(clients),
        believed_until_(clients) {
    LOCKSIM_ASSERT(clients >= 1);
    LOCKSIM_ASSERT_MSG(end > world.now(), "a run has a positive length");
  }

  TimePoint true_now() override { return world_.now(); }
  bool stopping() override { return world_.now() >= end_; }
  int64_t fresh_process() override {
    // Processes 0..clients-1 are the clients' first lives; fresh ones follow.
    LOCKSIM_ASSERT(next_process_ >= clients_);
    return next_process_++;
  }

  int64_t record(history::Op op, bool begin_hold, bool end_hold) override {
    LOCKSIM_ASSERT(op.client >= 0 && op.client < clients_);
    LOCKSIM_ASSERT_MSG(op.process >= 0 && op.process < next_process_,
                       "a client records only under a process id this run gave out");
    LOCKSIM_ASSERT_MSG(!(begin_hold && end_hold), "one op opens or closes a hold, not both");
    LOCKSIM_ASSERT_MSG(
        !begin_hold || (op.f == history::OpF::kAcquire && op.type == history::OpType::kOk),
        "a hold begins only at an acquire :ok");
    LOCKSIM_ASSERT_MSG(
        !end_hold || (op.f == history::OpF::kRelease && op.type == history::OpType::kInvoke),
        "a hold ends at the release's invocation");
    op.time_ns = world_.now().ns;
    const int client = op.client;
    const int64_t process = op.process;
    // An invocation is kept until its completion, for a crash to end
    // (client_crashed), in the client's slot: its strings keep their room.
    PendingOp& pending = pending_[client];
    pending.open = op.type == history::OpType::kInvoke;
    if (pending.open) pending.op = op;
    const int64_t index = recorder_.record(std::move(op));
    if (begin_hold) {
      recorder_.begin_hold(client, process, world_.now(), index);
      if (exposure_ != nullptr) exposure_->hold_began();
    }
    if (end_hold) {
      recorder_.end_hold(client, world_.now(), index, history::HeldInterval::EndReason::kRelease);
      if (exposure_ != nullptr) exposure_->hold_ended();
    }
    return index;
  }

  // The client's node crashed: whatever it was doing ends now, outcome unknown.
  void client_crashed(int client) {
    LOCKSIM_ASSERT(client >= 0 && client < clients_);
    if (pending_[client].open) {
      LOCKSIM_ASSERT(pending_[client].op.type == history::OpType::kInvoke);
      history::Op info = pending_[client].op;
      info.type = history::OpType::kInfo;
      info.detail = "client crashed";
      record(info, false, false);
    } else if (const history::HeldInterval* held = recorder_.open_hold(client)) {
      for (const history::Op& op : abandoned_release(client, held->process, "client crashed")) {
        record(op, false, false);
      }
    }
    recorder_.end_hold(client, world_.now(), -1, history::HeldInterval::EndReason::kCrash);
    if (exposure_ != nullptr) exposure_->hold_ended();
  }

  // A nemesis step, as a :nemesis :info op at the current true time.
  void record_nemesis(std::string_view f, std::vector<std::string> value, std::string_view note) {
    history::Op op = history::nemesis_op(f, std::move(value), std::string(note));
    op.time_ns = world_.now().ns;
    recorder_.record(std::move(op));
  }

  history::History finish() {
    LOCKSIM_ASSERT_MSG(world_.now() <= end_, "the World stops at the run's end");
    return recorder_.finish(world_.now());
  }

  ResourceConnection* resource(int client) override {
    LOCKSIM_ASSERT(client >= 0 && client < clients_);
    return resources_.empty() ? nullptr : resources_[client];
  }

  // The run's guarded store connections, by client (none: no store), and
  // the exposure monitor told of each hold that begins.
  void attach(std::vector<ResourceConnection*> resources, ExposureMonitor* exposure) {
    LOCKSIM_ASSERT(resources.empty() || resources.size() == static_cast<size_t>(clients_));
    resources_ = std::move(resources);
    exposure_ = exposure;
  }

  void lease_believed(int client, TimePoint until_local) override {
    LOCKSIM_ASSERT(client >= 0 && client < clients_);
    LOCKSIM_ASSERT_MSG(recorder_.open_hold(client) != nullptr, "a belief about a held lease");
    believed_until_[client] = until_local;
  }

  void lease_doubted(int client) override {
    LOCKSIM_ASSERT(client >= 0 && client < clients_);
    const history::HeldInterval* h = recorder_.open_hold(client);
    LOCKSIM_ASSERT_MSG(h != nullptr, "only a holder is told its lock may be lost");
    told_.push_back(h->acquire_index);
  }

  // The held intervals whose holder was told (lease_doubted), in the order told.
  const std::vector<int64_t>& told() const { return told_; }

  // Every client holding now, with what it believes of its lease by its own
  // clock (`clocks`: the client nodes, by client), into `out`.
  void holders(const std::vector<std::unique_ptr<sim::Node>>& clocks,
               std::vector<ExposureMonitor::Holder>& out) const {
    out.clear();
    for (int c = 0; c < clients_; ++c) {
      if (const history::HeldInterval* h = recorder_.open_hold(c)) {
        const bool believes = clocks[c]->local_now() < believed_until_[c];
        out.push_back(ExposureMonitor::Holder{c, h->acquire_index, believes});
      }
    }
  }

  // A client that believes it holds the lock now (the lowest-numbered, if
  // several do), or -1. Lets faults target "@holder".
  int current_holder() const {
    for (int c = 0; c < clients_; ++c) {
      if (recorder_.holding(c)) {
        LOCKSIM_ASSERT(c < clients_);
        return c;
      }
    }
    return -1;
  }

 private:
  sim::World& world_;
  TimePoint end_;
  int clients_;
  int64_t next_process_;
  history::HistoryRecorder recorder_;
  struct PendingOp {
    bool open = false;  // `op` is the client's invocation, not yet completed
    history::Op op;
  };
  std::vector<PendingOp> pending_;              // by client
  std::vector<ResourceConnection*> resources_;  // by client; owned by SimRun
  ExposureMonitor* exposure_ = nullptr;         // owned by SimRun
  // By client: where its own clock ends the lease it holds (lease_believed).
  std::vector<TimePoint> believed_until_;
  std::vector<int64_t> told_;
};

}  // namespace

namespace {

// Everything one run builds, in the order it must be torn down in reverse:
// the World goes first (its shutdown joins the fibers that use the rest).
struct SimRun {
  explicit SimRun(const RunConfig& config)
      : config(config), world(sim::WorldOptions{.seed = config.seed, .policy = config.policy}) {}

  const RunConfig& config;
  std::unique_ptr<algorithms::LockAlgorithm> algorithm;
  std::unique_ptr<sim::Deployment> deployment;
  std::vector<std::unique_ptr<sim::Node>> client_nodes;
  std::vector<std::unique_ptr<sim::ClientEnv>> envs;
  std::unique_ptr<sim::Network> net;
  std::unique_ptr<SimTruth> truth;
  std::unique_ptr<faults::Nemesis> nemesis;
  std::unique_ptr<sim::StoreNode> store;  // the guarded resource, if any
  std::vector<std::unique_ptr<ResourceConnection>> store_connections;
  std::unique_ptr<ExposureMonitor> exposure;
  std::unique_ptr<LockTracer> tracer;       // only when the run is explained or drawn
  std::unique_ptr<GrantWatch> grant_watch;  // for faults "on grant"
  sim::World world;
};

// The lock as it sits in the store, as the algorithm writes it: what the
// exposure monitor and the lock tracer ask the servers about.
algorithms::StoreShape store_shape(const SimRun& run) {
  return run.algorithm->store_shape(run.config.workload.resource,
                                    static_cast<size_t>(resolved_topology(run.config).masters));
}

// With `queue`, also the fair lock's queue beside it, where it has one:
// only the lock tracer wants it (the grant watch reads the servers' states
// too, and would pay for reading the queue after every event).
sim::LockProbe lock_probe(const SimRun& run, bool queue = false) {
  const algorithms::StoreShape shape = store_shape(run);
  sim::LockProbe probe{shape.key, shape.quorum, shape.value_is_deadline_ms};
  if (queue) {
    probe.queue_key = shape.queue_key;
    probe.queue_timeouts_key = shape.queue_timeouts_key;
  }
  return probe;
}

// The guarded store (workload other than none) with a connection per client,
// and the exposure monitor over the algorithm's lock.
void build_resource_and_exposure(SimRun& run, bool exposure_uses_stamp) {
  const RunConfig& config = run.config;
  std::vector<ResourceConnection*> connections;
  if (config.workload.store.workload != Workload::kNone) {
    run.store = std::make_unique<sim::StoreNode>(run.world, *run.net, config.workload.store);
    for (int i = 0; i < config.workload.clients; ++i) {
      run.store_connections.push_back(run.store->connect(*run.client_nodes[i], i));
      connections.push_back(run.store_connections.back().get());
    }
  }
  SimTruth* truth = run.truth.get();
  const std::vector<std::unique_ptr<sim::Node>>* clocks = &run.client_nodes;
  run.exposure = std::make_unique<ExposureMonitor>(
      run.world, *run.deployment, lock_probe(run),
      [truth, clocks](std::vector<ExposureMonitor::Holder>& out) { truth->holders(*clocks, out); },
      exposure_uses_stamp);
  run.truth->attach(std::move(connections), run.exposure.get());
}

// The lock tracer, after the exposure monitor: both observe every event.
void trace_the_lock(SimRun& run, bool use_stamp) {
  run.tracer =
      std::make_unique<LockTracer>(run.world, *run.deployment, lock_probe(run, true), use_stamp);
}

// Builds network, servers and clients. Every component's stream is split up
// front, in a fixed order (network, servers, clients), so adding a draw to
// one component never changes another's numbers.
void build(SimRun& run) {
  const RunConfig& config = run.config;
  sim::World& world = run.world;
  run.net = std::make_unique<sim::Network>(world, world.rng().split("network"), config.tcp);
  run.net->set_default_link(config.link);
  run.deployment = backend_of(config).make(world, *run.net, config);
  const int clients = config.workload.clients;
  run.truth = std::make_unique<SimTruth>(world, TimePoint{} + config.duration, clients);
  for (int i = 0; i < clients; ++i) {
    run.client_nodes.push_back(std::make_unique<sim::Node>(world, history::client_label(i)));
    sim::Node& node = *run.client_nodes.back();
    sim::ClientConnections conns = run.deployment->connect(node);
    run.envs.push_back(std::make_unique<sim::ClientEnv>(world, node, world.rng().split(node.name()),
                                                        std::move(conns.redis)));
    if (run.envs.back()->redis_count() > 0) {
      // A task of the client's process (Redisson's watchdog) dials the same
      // servers over connections of its own.
      sim::Deployment* deployment = run.deployment.get();
      run.envs.back()->set_connection_maker(
          [deployment, &node] { return deployment->connect(node).redis; });
    }
    run.envs.back()->set_redis_subscribers(std::move(conns.redis_subscribers));
    if (conns.zk) run.envs.back()->set_zk(std::move(conns.zk));
    run.envs.back()->set_sql(std::move(conns.sql));
  }
  LOCKSIM_ASSERT(run.envs.size() == static_cast<size_t>(clients));
}

// The nemesis, over every node a fault may name; the config's faults, then
// the profile's for this seed and deployment (returned). The grant watch
// skips looks by the backend's stamp unless `grant_watch_uses_stamp` is false.
faults::FaultSchedule install_faults(SimRun& run, bool grant_watch_uses_stamp) {
  std::map<std::string, sim::Node*> by_name;
  run.deployment->name_nodes(by_name);
  const size_t servers = by_name.size();
  faults::FaultSchedule drawn;
  if (!run.config.profile.empty()) {
    faults::DeploymentView view = deployment_view(run.config, by_name, run.deployment->roles());
    view.grants_name_clients = store_shape(run).holder_names_client;
    drawn = faults::generate_schedule(faults::parse_profile(run.config.profile, "--profile"),
                                      run.config.seed, view);
  }
  for (auto& n : run.client_nodes) by_name[n->name()] = n.get();
  const size_t stores = run.store ? 1 : 0;
  if (run.store) by_name[run.store->node().name()] = &run.store->node();
  LOCKSIM_ASSERT_MSG(by_name.size() == servers + run.client_nodes.size() + stores,
                     "node names are unique across the run");
  SimTruth* truth = run.truth.get();
  run.nemesis = std::make_unique<faults::Nemesis>(
      run.world, *run.net, by_name,
      [truth] {
        const int holder = truth->current_holder();
        return holder < 0 ? std::string() : history::client_label(holder);
      },
      [truth](std::string_view f, std::vector<std::string> value, std::string_view note) {
        truth->record_nemesis(f, std::move(value), note);
      });
  sim::Deployment* deployment = run.deployment.get();
  run.nemesis->set_primary_lookup([deployment] {
    const sim::Deployment::Roles roles = deployment->roles();
    return roles.primaries.empty() ? std::string() : roles.primaries.front();
  });
  std::vector<std::string> clients;
  for (auto& n : run.client_nodes) clients.push_back(n->name());
  run.grant_watch = std::make_unique<GrantWatch>(run.world, *run.deployment, lock_probe(run),
                                                 std::move(clients), grant_watch_uses_stamp);
  GrantWatch* watch = run.grant_watch.get();
  run.nemesis->set_grant_watch(
      [watch](std::function<void(std::string)> fired) { watch->arm(std::move(fired)); });
  run.nemesis->install(run.config.faults, run.config.fault_field_prefix());
  // Names come from the deployment itself, so an error here is a bug.
  run.nemesis->install(drawn, "--profile");
  return drawn;
}

// Each client's loop in a fiber on its node; a crashed client restarts its
// loop under a fresh process id.
void start_clients(SimRun& run) {
  for (int i = 0; i < run.config.workload.clients; ++i) {
    sim::Node& node = *run.client_nodes[i];
    sim::ClientEnv& env = *run.envs[i];
    sim::World& world = run.world;
    SimTruth& truth = *run.truth;
    algorithms::LockAlgorithm& algorithm = *run.algorithm;
    const WorkloadParams& workload = run.config.workload;
    auto start = [&world, &node, &env, &algorithm, &workload, &truth, i](int64_t process) {
      world.spawn(node.name(), &node, [&env, &algorithm, &workload, &truth, i, process] {
        run_client(env, algorithm, i, workload, truth, process);
      });
    };
    sim::Deployment& deployment = *run.deployment;
    node.on_crash = [&truth, &deployment, &node, i] {
      deployment.client_crashed(node);
      truth.client_crashed(i);
    };
    node.on_restart = [start, &truth] { start(truth.fresh_process()); };
    start(i);
  }
}

}  // namespace

SimOutput run_simulation(const PreparedRun& prepared, SimWatch watch) {
  const RunConfig& config = prepared.config();
  // A broken invariant anywhere below names the run that broke it.
  const AssertContext context("seed " + std::to_string(config.seed) +
                              "; replay: " + replay_command(config));
  SimRun run(config);
  run.algorithm = algorithms::find_algorithm(config.algorithm)
                      ->make(config.algorithm_params, config.param_field_prefix());
  build(run);
  build_resource_and_exposure(run, !watch.exposure_ignores_stamp);
  if (watch.trace_lock) trace_the_lock(run, !watch.lock_views_ignore_stamp);
  SimOutput out;
  out.profile_faults = install_faults(run, !watch.lock_views_ignore_stamp);
  start_clients(run);

  if (watch.poll) {
    sim::World& world = run.world;
    world.set_poll(kPollEveryEvents,
                   [&world, &watch] { return watch.poll(world.now(), world.events_executed()); });
  }
  run.world.run_until(TimePoint{} + config.duration);
  out.stopped = run.world.stopped();
  run.nemesis->finish();
  out.events = run.world.events_executed();
  out.exposure = run.exposure->finish(run.world.now());
  out.exposure.told = run.truth->told();
  if (run.tracer) out.lock_trace = run.tracer->finish(run.world.now());
  if (run.store) out.store_log = run.store->store().log();
  run.world.shutdown();
  LOCKSIM_ASSERT(run.world.now() <= TimePoint{} + config.duration);
  out.errors = run.world.errors();
  out.history = run.truth->finish();
  out.messages_dropped = run.net->dropped();
  const sim::BackendCounters counters = run.deployment->counters();
  out.server_commands = counters.commands;
  out.failovers = counters.failovers;
  out.backend_notes = run.deployment->notes();
  out.deadlocks = counters.deadlocks;
  return out;
}

}  // namespace locksim::harness
