#include "live/mysql_live_env.h"

#include <chrono>
#include <stdexcept>
#include <thread>

#include "env/assert.h"

namespace locksim::live {

namespace {

template <typename Clock>
int64_t clock_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch())
      .count();
}

}  // namespace

MysqlLiveEnv::MysqlLiveEnv(int client, const MariadbConnection::Address& address, Duration timeout,
                           uint64_t seed)
    : client_(client),
      rng_(sim::Rng(seed).split("live/c" + std::to_string(client))),
      wall_at_start_ns_(clock_ns<std::chrono::system_clock>()),
      steady_at_start_ns_(clock_ns<std::chrono::steady_clock>()),
      sql_(address, timeout, "mysql-1") {
  LOCKSIM_ASSERT(client >= 0);
}

TimePoint MysqlLiveEnv::now() {
  const TimePoint t = TimePoint::from_ns(wall_at_start_ns_ + clock_ns<std::chrono::steady_clock>() -
                                         steady_at_start_ns_);
  // The header promises a clock that never goes back: steady_clock is
  // monotone and this Env belongs to one thread.
  LOCKSIM_ASSERT_MSG(t >= last_now_, "the live MySQL client's clock went back");
  last_now_ = t;
  return t;
}

void MysqlLiveEnv::sleep(Duration d) {
  LOCKSIM_ASSERT_MSG(d.ns >= 0, "a sleep is never negative");
  if (d.ns > 0) std::this_thread::sleep_for(std::chrono::nanoseconds(d.ns));
}

RedisConnection& MysqlLiveEnv::redis(size_t) {
  throw std::logic_error("a MySQL client has no Redis connection");
}

}  // namespace locksim::live
