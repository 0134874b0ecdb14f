#include "sim/client_env.h"

#include "env/assert.h"

namespace locksim::sim {

ClientEnv::ClientEnv(World& world, Node& node, Rng rng,
                     std::vector<std::unique_ptr<RedisConnection>> redis)
    : world_(world), node_(node), rng_(rng), redis_(std::move(redis)) {
  for (const auto& connection : redis_) LOCKSIM_ASSERT(connection != nullptr);
}

RedisConnection& ClientEnv::redis(size_t i) {
  LOCKSIM_ASSERT_MSG(i < redis_.size(), "Env::redis(i) past redis_count()");
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
