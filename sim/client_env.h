// The simulation's Env for one lock client: the client node's drifting clock,
// virtual sleeps, a seeded stream of its own, and its connections.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "env/env.h"
#include "sim/node.h"
#include "sim/rng.h"
#include "sim/world.h"

namespace locksim::sim {

class ClientEnv : public Env {
 public:
  ClientEnv(World& world, Node& node, Rng rng, std::vector<std::unique_ptr<RedisConnection>> redis);

  TimePoint now() override { return node_.local_now(); }
  void sleep(Duration d) override { world_.sleep(d); }
  // Woken at the request (its fiber runs then, on the requesting context's
  // next switch), so a cancelled task frees its runner at once.
  bool sleep_unless_stopped(Duration d, TaskStop& stop) override;
  uint64_t random() override { return rng_.next(); }
  RedisConnection& redis(size_t i) override;
  size_t redis_count() const override { return redis_.size(); }
  // The pub/sub connections set_redis_subscribers gave (one per server).
  RedisSubscriber& redis_subscriber(size_t i) override;
  bool has_redis_subscriber() const override { return !subscribers_.empty(); }
  std::string client_name() const override { return node_.name(); }
  ZkConnection& zk() override;
  bool has_zk() const override { return zk_ != nullptr; }
  SqlConnection& sql() override;
  bool has_sql() const override { return sql_ != nullptr; }

  // Runs `body` on a task fiber of the client's node (paused and crashed with
  // it), with a task Env whose Redis connections the connection maker made.
  // Task fibers are pooled: a task that returned leaves its fiber and Env to
  // the next one, so a client that locks a thousand times makes a handful.
  // Precondition: a connection maker is set (else std::logic_error).
  void start_task(const std::string& name, std::function<void(Env& task)> body) override;

  // Makes the Redis connections of a task's Env (the deployment's connect()
  // for this client's node). None: the Env cannot start tasks.
  using ConnectionMaker = std::function<std::vector<std::unique_ptr<RedisConnection>>()>;
  void set_connection_maker(ConnectionMaker maker) { connection_maker_ = std::move(maker); }

  // Gives the client its pub/sub connections, one per Redis connection in
  // the same order (the Redis backend does); empty: none.
  void set_redis_subscribers(std::vector<std::unique_ptr<RedisSubscriber>> subscribers);
  // Gives the client its ZooKeeper handle (the ZooKeeper backend does).
  void set_zk(std::unique_ptr<ZkConnection> zk) { zk_ = std::move(zk); }
  // Gives the client its MySQL session (the MySQL backend does); null: none.
  void set_sql(std::unique_ptr<SqlConnection> sql) { sql_ = std::move(sql); }

 private:
  World& world_;
  Node& node_;
  Rng rng_;
  std::vector<std::unique_ptr<RedisConnection>> redis_;
  std::vector<std::unique_ptr<RedisSubscriber>> subscribers_;
  std::unique_ptr<ZkConnection> zk_;
  std::unique_ptr<SqlConnection> sql_;

  // One pooled task fiber and its Env. Idle: alive, no job, blocked on
  // `idle`. A crash of the node ends the fiber (alive = false); the next
  // task that takes this runner starts a fresh fiber over the same Env.
  struct TaskRunner {
    std::unique_ptr<ClientEnv> env;
    std::function<void(Env&)> job;  // set from start_task until the fiber takes it
    Waiter idle;
    bool alive = false;
    bool busy = false;  // a job is handed over or running
  };
  void run_tasks(TaskRunner& runner);
  ConnectionMaker connection_maker_;
  // Split off a copy of the client's stream, so that making it draws nothing
  // from the client's own (an algorithm without tasks sees the same numbers).
  Rng task_rng_;
  std::vector<std::unique_ptr<TaskRunner>> runners_;  // creation order: the pick is deterministic
};

}  // namespace locksim::sim
