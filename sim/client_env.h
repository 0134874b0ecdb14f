// The simulation's Env for one lock client: the client node's drifting clock,
// virtual sleeps, a seeded stream of its own, and its connections.
#pragma once

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
  uint64_t random() override { return rng_.next(); }
  RedisConnection& redis(size_t i) override;
  size_t redis_count() const override { return redis_.size(); }
  std::string client_name() const override { return node_.name(); }
  ZkConnection& zk() override;
  bool has_zk() const override { return zk_ != nullptr; }
  SqlConnection& sql() override;
  bool has_sql() const override { return sql_ != nullptr; }

  // Gives the client its ZooKeeper handle (the ZooKeeper backend does).
  void set_zk(std::unique_ptr<ZkConnection> zk) { zk_ = std::move(zk); }
  // Gives the client its MySQL session (the MySQL backend does); null: none.
  void set_sql(std::unique_ptr<SqlConnection> sql) { sql_ = std::move(sql); }

 private:
  World& world_;
  Node& node_;
  Rng rng_;
  std::vector<std::unique_ptr<RedisConnection>> redis_;
  std::unique_ptr<ZkConnection> zk_;
  std::unique_ptr<SqlConnection> sql_;
};

}  // namespace locksim::sim
