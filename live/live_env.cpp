#include "live/live_env.h"

#include <chrono>
#include <thread>

#include "env/assert.h"

namespace locksim::live {

namespace {

// Each client's stream is split off the run's root by name, as in the
// simulation, so client 3's draws do not depend on how many clients there are.
sim::Rng client_rng(uint64_t seed, int client) {
  sim::Rng root(seed);
  return root.split("live/c" + std::to_string(client));
}

}  // namespace

LiveEnv::LiveEnv(int client, const std::vector<ServerAddress>& servers, Duration command_timeout,
                 uint64_t seed)
    : client_(client), rng_(client_rng(seed, client)) {
  LOCKSIM_ASSERT(client >= 0);
  connections_.reserve(servers.size());
  for (size_t i = 0; i < servers.size(); ++i) {
    connections_.push_back(std::make_unique<HiredisConnection>(
        servers[i].first, servers[i].second, command_timeout, "redis-" + std::to_string(i + 1)));
  }
  // Connection i is server i: algorithms address servers by index.
  LOCKSIM_ASSERT(connections_.size() == servers.size());
}

TimePoint LiveEnv::now() {
  const auto since_epoch = std::chrono::steady_clock::now().time_since_epoch();
  const TimePoint t =
      TimePoint::from_ns(std::chrono::duration_cast<std::chrono::nanoseconds>(since_epoch).count());
  // The header promises a clock that never jumps: steady_clock is monotone,
  // and this Env belongs to one thread, so its readings never go back.
  LOCKSIM_ASSERT_MSG(t >= last_now_, "steady_clock went back");
  last_now_ = t;
  return t;
}

void LiveEnv::sleep(Duration d) {
  LOCKSIM_ASSERT_MSG(d >= Duration::zero(), "an algorithm slept a negative time");
  if (d.ns > 0) std::this_thread::sleep_for(std::chrono::nanoseconds(d.ns));
}

RedisConnection& LiveEnv::redis(size_t i) {
  LOCKSIM_ASSERT_MSG(i < connections_.size(), "Env::redis(i) past redis_count()");
  return *connections_[i];
}

}  // namespace locksim::live
