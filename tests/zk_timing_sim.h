// The simulated side of the differential timing test
// (zk_differential_timing_test.cpp): the scripts of zk_timing_rules.h run
// on a simulated three-server ensemble, recorded in true time.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sim/network.h"
#include "sim/world.h"
#include "sim/zookeeper/deployment.h"
#include "tests/zk_timing_rules.h"

namespace locksim::zk_timing {

// Three servers, as the real ensemble of the test; clients added at setup.
// The back-off is the C client's T/60, so the two worlds are alike.
class SimEnsemble {
 public:
  explicit SimEnsemble(uint64_t seed) {
    world_ = std::make_unique<sim::World>(sim::WorldOptions{.seed = seed});
    net_ = std::make_unique<sim::Network>(*world_, world_->rng().split("network"));
    sim::zookeeper::ZkParams p;
    p.servers = 3;
    p.tick = Duration::millis(kTickMs);
    p.session_timeout = Duration::millis(kSessionMs);
    p.reconnect_pause = Duration::millis(kBackoffMs);
    deployment_ = std::make_unique<sim::zookeeper::ZkDeployment>(*world_, *net_, p);
  }
  ~SimEnsemble() { world_->shutdown(); }

  sim::World& world() { return *world_; }
  sim::Node& server_node(int id) { return deployment_->ensemble().server(id).node(); }
  sim::Node& node(size_t i) { return *nodes_[i]; }
  sim::zookeeper::ZkClient& client(size_t i) { return *clients_[i]; }

  // A client process on its own node; returns its index.
  size_t add_client(const std::string& name) {
    nodes_.push_back(std::make_unique<sim::Node>(*world_, name));
    clients_.push_back(
        deployment_->connect_client(*nodes_.back(), world_->rng().split(name + "/zk")));
    return clients_.size() - 1;
  }

  // Runs fiber `body` on client i's node.
  void spawn(size_t i, std::function<void()> body) {
    world_->spawn(nodes_[i]->name(), nodes_[i].get(), std::move(body));
  }

  void run_for(Duration d) {
    world_->run_until(world_->now() + d);
    EXPECT_TRUE(world_->errors().empty()) << world_->errors().front();
  }

  int64_t now_ns() const { return world_->now().ns; }

  // Crashes client i's process: the handle dies with it, unclosed.
  void crash_client(size_t i) {
    nodes_[i]->crash();
    clients_[i]->on_process_crash();
  }

 private:
  // Declaration order is teardown order reversed: the World goes first.
  std::vector<std::unique_ptr<sim::zookeeper::ZkClient>> clients_;
  std::vector<std::unique_ptr<sim::Node>> nodes_;
  std::unique_ptr<sim::zookeeper::ZkDeployment> deployment_;
  std::unique_ptr<sim::Network> net_;
  std::unique_ptr<sim::World> world_;
};

inline std::string phase_path(int i) {
  return "/phase-" + std::to_string(i);
}

// Rule 1: each session creates its node, touches it at its offset into a
// tick, and its process dies; an observer watches the nodes go.
inline PhaseRecord record_phase_sim(uint64_t seed) {
  SimEnsemble e(seed);
  PhaseRecord r;
  r.last_ns.assign(kSilencedSessions, -1);
  r.expired_ns.assign(kSilencedSessions, -1);
  for (int i = 0; i < kSilencedSessions; ++i) {
    const size_t c = e.add_client("s" + std::to_string(i));
    e.spawn(c, [&e, &r, c, i] {
      EXPECT_EQ(e.client(c).connect(), ZkError::kOk);
      if (i == 0) r.connected_ns = e.now_ns();
      e.client(c).create(phase_path(i), "", {.ephemeral = true});
      const int64_t at_ns = 1000 * kMs + i * kTickMs * kMs / kSilencedSessions;
      e.world().sleep(Duration{std::max<int64_t>(at_ns - e.now_ns(), 0)});
      e.client(c).exists(phase_path(i), false);
      r.last_ns[static_cast<size_t>(i)] = e.now_ns();
      e.world().after(Duration::zero(), [&e, c] { e.crash_client(c); });
      e.world().sleep(Duration::seconds(3600));
    });
  }
  const size_t o = e.add_client("observer");
  e.spawn(o, [&e, &r, o] {
    EXPECT_EQ(e.client(o).connect(), ZkError::kOk);
    e.world().sleep(Duration::millis(1500));
    for (int i = 0; i < kSilencedSessions; ++i) {
      EXPECT_EQ(e.client(o).exists(phase_path(i), true).error, ZkError::kOk);
    }
    // Each wait ends with an event or its bound; the deletions are all in.
    for (int seen = 0; seen < kSilencedSessions;) {
      const auto ev = e.client(o).next_event(Duration::seconds(10));
      if (!ev) break;
      if (ev->type != ZkEventType::kDeleted) continue;
      r.expired_ns[static_cast<size_t>(ev->path.back() - '0')] = e.now_ns();
      ++seen;
    }
  });
  e.run_for(Duration::seconds(15));
  return r;
}

// Waits for client c's session events after a resume at *resume_ns.
inline PauseRecord await_reconnect(SimEnsemble& e, size_t c, const int64_t* resume_ns) {
  PauseRecord p;
  // Each wait ends with an event or its bound: CONNECTING, then the outcome.
  for (int events = 0; events < 8; ++events) {
    const auto ev = e.client(c).next_event(Duration::seconds(10));
    if (!ev) break;
    if (ev->type != ZkEventType::kSession) continue;
    if (ev->state == ZkSessionState::kConnecting) p.to_connecting_ns = e.now_ns() - *resume_ns;
    if (ev->state == ZkSessionState::kConnected) {
      p.to_connected_ns = e.now_ns() - *resume_ns;
      break;
    }
    if (ev->state == ZkSessionState::kExpired) break;
  }
  return p;
}

// Rule 2: the client touches its session and is paused at once for
// kPauseMs, twice; each resume is measured.
inline std::vector<PauseRecord> record_pause_sim(uint64_t seed) {
  SimEnsemble e(seed);
  std::vector<PauseRecord> out;
  const size_t c = e.add_client("p");
  e.client(c).start_list_at(1);
  int64_t resume_ns = -1;
  e.spawn(c, [&e, &out, &resume_ns, c] {
    EXPECT_EQ(e.client(c).connect(), ZkError::kOk);
    e.client(c).create("/pause", "", {.ephemeral = true});
    while (e.client(c).next_event(Duration::zero())) {
    }
    for (int round = 0; round < 2; ++round) {
      e.client(c).exists("/pause", false);
      e.world().after(Duration::zero(), [&e, &resume_ns, c] {
        e.node(c).pause();
        e.world().after(Duration::millis(kPauseMs), [&e, &resume_ns, c] {
          resume_ns = e.now_ns();
          e.node(c).resume();
        });
      });
      out.push_back(await_reconnect(e, c, &resume_ns));
    }
  });
  e.run_for(Duration::seconds(20));
  return out;
}

// Rule 3: zk-1 (a follower; the first leader is the highest id) crashes
// under a client connected to it; then a fresh client starts its list there.
inline CrashRecord record_crash_sim(uint64_t seed) {
  SimEnsemble e(seed);
  CrashRecord r;
  const size_t o = e.add_client("o");
  const size_t f = e.add_client("f");
  e.client(o).start_list_at(1);
  e.client(f).start_list_at(1);
  int64_t crash_ns = -1;
  e.world().at(TimePoint{} + Duration::seconds(1), [&e, &crash_ns] {
    crash_ns = e.now_ns();
    e.server_node(1).crash();
  });
  e.spawn(o, [&e, &r, &crash_ns, o] {
    EXPECT_EQ(e.client(o).connect(), ZkError::kOk);
    EXPECT_EQ(e.client(o).server_id(), 1);
    while (e.client(o).next_event(Duration::zero())) {  // the connect's own
    }
    // Each wait ends with an event or its bound.
    for (int events = 0; events < 8; ++events) {
      const auto ev = e.client(o).next_event(Duration::seconds(5));
      if (!ev) break;
      if (ev->type == ZkEventType::kSession && ev->state == ZkSessionState::kConnecting) {
        r.to_connecting_ns = e.now_ns() - crash_ns;
        break;
      }
    }
  });
  e.spawn(f, [&e, &r, f] {
    e.world().sleep(Duration::millis(1500));
    const int64_t start_ns = e.now_ns();
    r.fresh_connect_error = to_string(e.client(f).connect());
    r.fresh_connect_ns = e.now_ns() - start_ns;
  });
  e.run_for(Duration::seconds(5));
  return r;
}

}  // namespace locksim::zk_timing
