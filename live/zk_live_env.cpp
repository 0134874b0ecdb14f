#include "live/zk_live_env.h"

#include <chrono>
#include <stdexcept>
#include <thread>

#include "env/assert.h"
#include "live/client_freeze.h"
#include "live/run_end.h"

namespace locksim::live {

ZkLiveEnv::ZkLiveEnv(int client, const std::string& hosts, Duration session_timeout, uint64_t seed)
    : client_(client),
      rng_(sim::Rng(seed).split("live/c" + std::to_string(client))),
      zk_(hosts, session_timeout) {}

TimePoint ZkLiveEnv::now() {
  const auto since_epoch = std::chrono::steady_clock::now().time_since_epoch();
  return TimePoint::from_ns(
      std::chrono::duration_cast<std::chrono::nanoseconds>(since_epoch).count());
}

void ZkLiveEnv::sleep(Duration d) {
  LOCKSIM_ASSERT_MSG(d.ns >= 0, "a sleep is never negative");
  const RunEndCut cut = cut_at_run_end(std::chrono::nanoseconds(d.ns));  // live/run_end.h
  if (cut.d.count() > 0) std::this_thread::sleep_for(cut.d);
  if (cut.run_ends) throw ClientAbandoned{};
}

RedisConnection& ZkLiveEnv::redis(size_t) {
  throw std::logic_error("a ZooKeeper client has no Redis connection");
}

}  // namespace locksim::live
