// What the differential tests of the simulated Redis share
// (redis_differential_test.cpp, redis_hash_differential_test.cpp): how a
// reply is printed and compared, with the only tolerances allowed, and the
// real clock both servers are given.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "env/reply.h"
#include "env/time.h"
#include "live/redis_process.h"

namespace locksim {
inline void PrintTo(const Reply& reply, std::ostream* os) {
  *os << reply.to_string();
}
}  // namespace locksim

namespace locksim::sim::redis::differential {

enum class Tolerance { kExact, kPttl, kTtl };

inline int64_t wall_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

inline TimePoint wall_now() {
  return TimePoint::from_ns(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                std::chrono::system_clock::now().time_since_epoch())
                                .count());
}

inline bool replies_match(const Reply& real, const Reply& sim, Tolerance tolerance) {
  if (real == sim) return true;
  if (tolerance == Tolerance::kExact) return false;
  if (real.kind != Reply::Kind::kInteger || sim.kind != Reply::Kind::kInteger) return false;
  if (real.integer < 0 || sim.integer < 0) return false;  // -1 / -2 are exact answers
  const int64_t slack = tolerance == Tolerance::kPttl ? 50 : 1;
  return std::llabs(real.integer - sim.integer) <= slack;
}

inline std::string show(const std::vector<std::string>& argv) {
  std::string out;
  for (const auto& a : argv) {
    std::string shown = a;
    for (char& c : shown) {
      if (c == '\n') c = ' ';
    }
    out += (out.empty() ? "" : " ") + ("'" + shown + "'");
  }
  return out;
}

// A real redis-server 7.0 for the test, or nullptr with `why` set: the test
// fails with it (CI and scripts/setup install the Debian package redis-server).
inline std::unique_ptr<live::RedisProcess> start_real_redis(std::string& why) {
  try {
    return live::RedisProcess::start();
  } catch (const std::exception& e) {
    why = std::string(
              "the differential test needs a real redis-server 7.0 on $PATH (Debian "
              "package redis-server; scripts/setup installs it): ") +
          e.what();
    return nullptr;
  }
}

}  // namespace locksim::sim::redis::differential
