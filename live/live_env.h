// The live Env: the process clock, real sleeps and real Redis servers.
//
// The same algorithm code that runs in the simulation runs here against
// redis-server processes. Live code is exempt from the determinism rule (it
// reads steady_clock and sleeps for real), but randomness still comes from the
// run's seed, so the draws a client makes are the same from run to run even
// though the interleaving is not.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "env/env.h"
#include "env/faulty_redis_connection.h"
#include "history/history.h"
#include "live/client_clock.h"
#include "live/client_freeze.h"
#include "live/client_life.h"
#include "live/group_connection.h"
#include "live/hiredis_connection.h"
#include "live/hiredis_subscriber.h"
#include "sim/rng.h"

namespace locksim::live {

// One server to connect to: host and port.
using ServerAddress = std::pair<std::string, int>;

// A client's way to groups with replicas (live/group_connection.h): the
// shared view of who leads each group, and the client's port for each member.
struct GroupRoutes {
  std::shared_ptr<const SentinelView> view;
  std::vector<MemberPorts> ports;  // by group, as the view's groups
};

class LiveEnv : public Env {
 public:
  // Client `client` (0-based) of a run seeded with `seed`. One connection and
  // one pub/sub connection per server, named "redis-1", "redis-2", ... in the
  // order given; none connects before its first use. `command_timeout` bounds each connect and each
  // command (a stopped server becomes an io_error after that long).
  LiveEnv(int client, const std::vector<ServerAddress>& servers, Duration command_timeout,
          uint64_t seed);
  // The same over groups with replicas: connection i follows group i's
  // published master (GroupConnection, GroupSubscriber).
  LiveEnv(int client, GroupRoutes routes, Duration command_timeout, uint64_t seed);
  // Stops the client's tasks (their sleeps end at once) and joins them.
  ~LiveEnv() override;
  LiveEnv(const LiveEnv&) = delete;
  LiveEnv& operator=(const LiveEnv&) = delete;

  // steady_clock, as nanoseconds since its (arbitrary) epoch. Never jumps,
  // unless set_clock() gave it a faulted clock.
  TimePoint now() override;
  void sleep(Duration d) override;
  uint64_t random() override { return rng_.next(); }
  RedisConnection& redis(size_t i) override;
  size_t redis_count() const override { return connections_.size(); }
  // A hiredis pub/sub connection per server, beside the command connection.
  RedisSubscriber& redis_subscriber(size_t i) override;
  bool has_redis_subscriber() const override { return true; }
  // As the history names it (c1 for client 0): a token names its holder.
  std::string client_name() const override { return history::client_label(client_); }
  // From now on, this client (and every task it starts later) stops at each
  // Env call while `freeze` is paused (live/client_freeze.h). Call before
  // the client's first step.
  void set_freeze(std::shared_ptr<ClientFreeze> freeze);
  // From now on now() reads `clock`'s skew on top of the steady clock (its
  // tasks' too): clock faults on this client. It may then step back.
  void set_clock(std::shared_ptr<ClientClock> clock);
  // From now on this client's work (not the tasks it starts: a watchdog
  // goes on) stops at each Env call while `hang` is paused: the hang fault.
  void set_hang(std::shared_ptr<ClientFreeze> hang);
  // From now on every Env call of this client and its tasks throws
  // ClientCrashed once `life` is crashed (live/client_life.h), and a sleep
  // ends early for it. Call before the client's first step, with set_freeze.
  void set_life(std::shared_ptr<ClientLife> life);

  // A thread of its own, with a LiveEnv of its own (its own connections and
  // stream); its sleeps end early, with an exception that ends the task,
  // when this Env is destroyed.
  void start_task(const std::string& name, std::function<void(Env& task)> body) override;

 private:
  // Shared by a client's Env and its tasks' Envs: set once, on destruction.
  struct TaskStop {
    std::mutex mutex;
    std::condition_variable changed;
    bool stopped = false;
  };
  struct Task {
    std::thread thread;
    std::shared_ptr<std::atomic<bool>> done;
  };
  LiveEnv(int client, const std::vector<ServerAddress>& servers,
          std::shared_ptr<const GroupRoutes> routes, Duration command_timeout, sim::Rng rng,
          std::shared_ptr<TaskStop> stop);
  // Wraps the connections behind the freeze and the life (whichever is set).
  void wrap_connections();

  int client_;
  std::vector<ServerAddress> servers_;
  std::shared_ptr<const GroupRoutes> routes_;  // set: servers_ is empty
  Duration command_timeout_;
  sim::Rng rng_;
  std::shared_ptr<TaskStop> stop_;  // a task's Env: its client's; a client's: its own
  std::vector<Task> tasks_;
  TimePoint last_now_{};  // the last now() reading: it never goes back
  std::vector<std::unique_ptr<RedisConnection>> connections_;
  std::vector<std::unique_ptr<RedisSubscriber>> subscribers_;  // one per connection
  // With a freeze or a life: what redis() and redis_subscriber() hand out instead.
  std::shared_ptr<ClientFreeze> freeze_;
  std::shared_ptr<ClientFreeze> hang_;  // this Env's only, never its tasks'
  std::shared_ptr<ClientLife> life_;
  uint64_t life_generation_ = 0;  // the life this Env was made in
  std::shared_ptr<ClientClock> clock_;
  std::vector<std::unique_ptr<RedisConnection>> frozen_connections_;
  std::vector<std::unique_ptr<RedisSubscriber>> frozen_subscribers_;
};

}  // namespace locksim::live
