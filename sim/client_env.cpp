#include "sim/client_env.h"

#include <cassert>

namespace locksim::sim {

ClientEnv::ClientEnv(World& world, Node& node, Rng rng,
                     std::vector<std::unique_ptr<RedisConnection>> redis)
    : world_(world), node_(node), rng_(rng), redis_(std::move(redis)) {}

RedisConnection& ClientEnv::redis(size_t i) {
  assert(i < redis_.size());
  return *redis_[i];
}

ZkConnection& ClientEnv::zk() {
  if (zk_ == nullptr) return Env::zk();  // throws: no ZooKeeper in this run
  return *zk_;
}

SqlConnection& ClientEnv::sql() {
  if (sql_ == nullptr) return Env::sql();  // throws: no MySQL in this run
  return *sql_;
}

}  // namespace locksim::sim
