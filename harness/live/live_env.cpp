#include "harness/live/live_env.h"

#include <cassert>
#include <chrono>
#include <thread>

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
  connections_.reserve(servers.size());
  for (size_t i = 0; i < servers.size(); ++i) {
    connections_.push_back(std::make_unique<HiredisConnection>(
        servers[i].first, servers[i].second, command_timeout, "redis-" + std::to_string(i + 1)));
  }
}

TimePoint LiveEnv::now() {
  const auto since_epoch = std::chrono::steady_clock::now().time_since_epoch();
  return TimePoint::from_ns(
      std::chrono::duration_cast<std::chrono::nanoseconds>(since_epoch).count());
}

void LiveEnv::sleep(Duration d) {
  assert(d.ns >= 0);
  if (d.ns > 0) std::this_thread::sleep_for(std::chrono::nanoseconds(d.ns));
}

RedisConnection& LiveEnv::redis(size_t i) {
  assert(i < connections_.size());
  return *connections_[i];
}

}  // namespace locksim::live
