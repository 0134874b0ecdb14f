// A hand-cranked Env for stepping lock algorithms against simulated Redis
// servers: every clock reading, sleep and lost reply is the test's choice, so
// each step of each algorithm can be checked on its own. Shared by the
// per-algorithm tests (naive_setnx_test.cpp, getset_timestamp_test.cpp,
// redlock_test.cpp, set_nx_lua_test.cpp).
//
// Each client's connection to server i is three layers, outermost first:
//   ObservedConnection     records the command, runs the test's
//                          before_command hook, lets `latency` pass;
//   FaultyRedisConnection  (env/) the faults: down, lost replies, failed
//                          commands — the same wrapper live mode can use;
//   ServerConnection       executes on sim::redis::Server i at true time.
// So a command to a down server is still recorded and still costs its
// latency, as a request that times out does.
//
// Everything here runs on the test's thread, without fibers: no sleep blocks,
// it only moves the cluster's true time on.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "env/env.h"
#include "env/faulty_redis_connection.h"
#include "sim/redis/server.h"
#include "sim/rng.h"

namespace locksim::algorithms {

using Argv = std::vector<std::string>;

inline constexpr const char* kKey = "lock:resource";

// True time and the Redis servers, shared by every client of a test. Servers
// read true time: their clocks are perfect unless a test says otherwise.
struct Cluster {
  explicit Cluster(size_t n_servers) {
    for (size_t i = 0; i < n_servers; ++i) {
      servers.push_back(std::make_unique<sim::redis::Server>(1000 + i));
    }
  }
  // A plausible unix time, so timestamps look like the ones real clients write.
  TimePoint true_now = TimePoint::from_ns(1'700'000'000'000'000'000);
  std::vector<std::unique_ptr<sim::redis::Server>> servers;

  // Runs a command on server i directly, as another party would.
  Reply run(size_t i, const Argv& argv) { return servers[i]->execute(argv, true_now); }
  Reply get(size_t i) { return run(i, {"GET", kKey}); }
  int64_t pttl(size_t i) { return run(i, {"PTTL", kKey}).integer; }
};

// The innermost layer: server i of the cluster, at the cluster's true time.
class ServerConnection : public RedisConnection {
 public:
  ServerConnection(Cluster& cluster, size_t index) : cluster_(cluster), index_(index) {}

  Reply command(Argv argv) override {
    return cluster_.servers.at(index_)->execute(argv, cluster_.true_now);
  }
  std::string server_name() const override { return "redis-" + std::to_string(index_ + 1); }

 private:
  Cluster& cluster_;
  size_t index_;
};

class FakeEnv;

// The outermost layer: what the test observes and times (see the top).
class ObservedConnection : public RedisConnectionWrapper {
 public:
  ObservedConnection(FakeEnv& env, Cluster& cluster, size_t index, RedisConnection& inner)
      : RedisConnectionWrapper(inner), env_(env), cluster_(cluster), index_(index) {}

  Reply command(Argv argv) override;  // defined after FakeEnv

  Duration latency = Duration::zero();  // true time each command takes
  std::vector<Argv> sent;               // every command, answered or not

 private:
  FakeEnv& env_;
  Cluster& cluster_;
  size_t index_;
};

// One client's connection to one server, its three layers wired together.
struct ClientConnection {
  ClientConnection(FakeEnv& env, Cluster& cluster, size_t index)
      : server(cluster, index), faults(server), observed(env, cluster, index, faults) {}
  ServerConnection server;
  FaultyRedisConnection faults;
  ObservedConnection observed;
};

class FakeEnv : public Env {
 public:
  FakeEnv(Cluster& cluster, std::string name, uint64_t seed = 1)
      : cluster_(cluster), name_(std::move(name)), rng_state_(seed) {
    for (size_t i = 0; i < cluster.servers.size(); ++i) {
      connections_.push_back(std::make_unique<ClientConnection>(*this, cluster, i));
    }
  }

  TimePoint now() override { return cluster_.true_now + clock_offset; }
  void sleep(Duration d) override {
    EXPECT_GE(d, Duration::zero());
    sleeps.push_back(d);
    cluster_.true_now += d;
  }
  uint64_t random() override { return sim::splitmix64(rng_state_); }
  RedisConnection& redis(size_t i) override { return connections_.at(i)->observed; }
  size_t redis_count() const override { return connections_.size(); }
  std::string client_name() const override { return name_; }

  // What connection i sent, and its latency.
  ObservedConnection& conn(size_t i) { return connections_.at(i)->observed; }
  // The faults of connection i.
  FaultyRedisConnection& faults(size_t i) { return connections_.at(i)->faults; }

  Duration slept() const {
    Duration total;
    for (Duration d : sleeps) total += d;
    return total;
  }

  Duration clock_offset = Duration::zero();  // client clock minus true time
  std::vector<Duration> sleeps;
  // Runs before each command reaches the server (or fails): a hook to step
  // the clock or let another client act at exactly that point.
  std::function<void(size_t server, const Argv& argv)> before_command;

 private:
  Cluster& cluster_;
  std::string name_;
  uint64_t rng_state_;
  std::vector<std::unique_ptr<ClientConnection>> connections_;
};

inline Reply ObservedConnection::command(Argv argv) {
  sent.push_back(argv);
  if (env_.before_command) env_.before_command(index_, argv);
  cluster_.true_now += latency;
  return RedisConnectionWrapper::command(std::move(argv));
}

// The command names in `sent`, in order.
inline std::vector<std::string> names(const std::vector<Argv>& sent) {
  std::vector<std::string> out;
  for (const Argv& a : sent) out.push_back(a[0]);
  return out;
}

}  // namespace locksim::algorithms
