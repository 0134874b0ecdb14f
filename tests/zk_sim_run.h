// The fixture of the ZooKeeper simulation tests (zk_sim_test.cpp: the
// DataTree, sessions, safety; zk_sim_faults_test.cpp: the pause boundary, the
// lost create reply, a partitioned holder): a run of the lock workload on a
// simulated ensemble, and what the tests ask of its history.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
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

namespace locksim::sim::zookeeper {

// ---------------------------------------------------------------- the ensemble in a World

// A run of the lock workload on a simulated ensemble, built by hand the way
// the runner's backend seam will: declaration order is teardown order in
// reverse, so the World (declared last) goes first.
class ZkRun : public harness::Truth {
 public:
  ZkRun(uint64_t seed, ZkParams params, int clients, Duration length)
      : length_(length), clients_(clients) {
    world_ = std::make_unique<World>(WorldOptions{.seed = seed});
    net_ = std::make_unique<Network>(*world_, world_->rng().split("network"));
    deployment_ = std::make_unique<ZkDeployment>(*world_, *net_, params);
    for (int i = 0; i < clients; ++i) {
      nodes_.push_back(std::make_unique<Node>(*world_, history::client_label(i)));
      Node& node = *nodes_.back();
      auto env = std::make_unique<ClientEnv>(*world_, node, world_->rng().split(node.name()),
                                             std::vector<std::unique_ptr<RedisConnection>>{});
      auto zk = deployment_->connect_client(node, world_->rng().split(node.name() + "/zk"));
      zk_.push_back(zk.get());
      env->set_zk(std::move(zk));
      envs_.push_back(std::move(env));
    }
  }
  ~ZkRun() override { world_->shutdown(); }

  World& world() { return *world_; }
  Network& net() { return *net_; }
  ZkDeployment& deployment() { return *deployment_; }
  Node& client(int i) { return *nodes_[i]; }
  ZkClient& zk(int i) { return *zk_[i]; }
  ClientEnv& env(int i) { return *envs_[i]; }

  // Runs the acquire/hold/release loop on every client for the run's length.
  history::History run_workload(algorithms::LockAlgorithm& algorithm,
                                const harness::WorkloadParams& params) {
    for (int i = 0; i < clients_; ++i) {
      ClientEnv* env = envs_[i].get();
      world_->spawn(nodes_[i]->name(), nodes_[i].get(), [this, env, &algorithm, &params, i] {
        harness::run_client(*env, algorithm, i, params, *this);
      });
    }
    world_->run_until(TimePoint{} + length_);
    EXPECT_TRUE(world_->errors().empty()) << world_->errors().front();
    return recorder_.finish(world_->now());
  }

  TimePoint true_now() override { return world_->now(); }
  bool stopping() override { return world_->now() >= TimePoint{} + length_; }
  int64_t fresh_process() override { return next_process_++; }
  int64_t record(history::Op op, bool begin_hold, bool end_hold) override {
    op.time_ns = world_->now().ns;
    const int64_t index = recorder_.record(op);
    if (begin_hold) recorder_.begin_hold(op.client, op.process, world_->now(), index);
    if (end_hold) {
      recorder_.end_hold(op.client, world_->now(), index,
                         history::HeldInterval::EndReason::kRelease);
    }
    return index;
  }
  int current_holder() const {
    for (int c = 0; c < clients_; ++c) {
      if (recorder_.holding(c)) return c;
    }
    return -1;
  }

 private:
  Duration length_;
  int clients_;
  int64_t next_process_ = 1000;
  history::HistoryRecorder recorder_;
  std::vector<std::unique_ptr<Node>> nodes_;
  std::vector<std::unique_ptr<ClientEnv>> envs_;
  std::vector<ZkClient*> zk_;
  std::unique_ptr<ZkDeployment> deployment_;
  std::unique_ptr<Network> net_;
  std::unique_ptr<World> world_;
};

// Two belief intervals overlapping in true time: a mutual-exclusion violation.
inline bool overlaps(const history::History& h) {
  for (size_t i = 0; i < h.held.size(); ++i) {
    for (size_t j = i + 1; j < h.held.size(); ++j) {
      if (h.held[i].client != h.held[j].client && h.held[i].start < h.held[j].end &&
          h.held[j].start < h.held[i].end) {
        return true;
      }
    }
  }
  return false;
}

inline std::unique_ptr<algorithms::LockAlgorithm> make(const std::string& name) {
  for (const auto& spec : algorithms::zk_algorithm_specs()) {
    if (spec.name == name) return spec.make({}, "params.");
  }
  return nullptr;
}

inline harness::WorkloadParams workload(int clients) {
  harness::WorkloadParams w;
  w.clients = clients;
  w.hold_min = Duration::millis(200);
  w.hold_max = Duration::millis(800);
  return w;
}

}  // namespace locksim::sim::zookeeper
