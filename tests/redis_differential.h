// What the differential tests of the simulated Redis share
// (redis_differential_test.cpp, redis_hash_differential_test.cpp,
// redis_list_zset_differential_test.cpp, redisson_differential_test.cpp):
// how a reply is printed and compared, with the only tolerances allowed, the
// real clock both servers are given, and the loop that runs sequences of
// commands on both.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <thread>
#include <vector>

#include "env/reply.h"
#include "env/time.h"
#include "live/hiredis_connection.h"
#include "live/redis_process.h"
#include "sim/redis/server.h"
#include "tests/reply_print.h"

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

using Argv = std::vector<std::string>;

// Whether a reply reads the clock (a remaining TTL), and so gets the PTTL
// tolerance. The usual rule: PTTL, or a script answering a positive integer.
using ReadsTtl = std::function<bool(const Argv& argv, const Reply& real)>;
inline bool usual_reads_ttl(const Argv& argv, const Reply& real) {
  return argv[0] == "PTTL" || (argv[0] == "EVAL" && real.integer > 0);
}

// Runs each sequence on a fresh keyspace of a real redis-server and of the
// simulated server and compares every reply. A step {"SLEEP", ms} is not a
// command: both sides wait that long of real time. A clock-reading reply
// that is an array (a script answering {PTTL, ...}) has its first element
// compared with the PTTL tolerance and the rest exactly.
inline void compare_sequences(const std::vector<std::vector<Argv>>& sequences,
                              const ReadsTtl& reads_ttl = usual_reads_ttl) {
  std::string why;
  const std::unique_ptr<live::RedisProcess> process = start_real_redis(why);
  ASSERT_NE(process, nullptr) << why;
  live::HiredisConnection real("127.0.0.1", process->port(), Duration::seconds(5), "real-redis");
  Server sim(1);
  for (const auto& sequence : sequences) {
    ASSERT_TRUE(real.command({"FLUSHALL"}).is_ok());
    sim.restore({});
    for (const Argv& argv : sequence) {
      if (argv.size() == 2 && argv[0] == "SLEEP") {
        std::this_thread::sleep_for(std::chrono::milliseconds(std::stoi(argv[1])));
        continue;
      }
      SCOPED_TRACE(show(argv));
      const Reply real_reply = real.command(argv);
      const Reply sim_reply = sim.execute(argv, wall_now());
      ASSERT_FALSE(real_reply.is_io_error()) << real_reply.text;
      const bool ttl = reads_ttl(argv, real_reply);
      const auto arrays = [&](const Reply& r) {
        return r.kind == Reply::Kind::kArray && r.elements.size() == real_reply.elements.size() &&
               !r.elements.empty();
      };
      if (ttl && arrays(real_reply) && arrays(sim_reply)) {
        EXPECT_TRUE(replies_match(real_reply.elements[0], sim_reply.elements[0], Tolerance::kPttl));
        for (size_t i = 1; i < real_reply.elements.size(); ++i)
          EXPECT_EQ(real_reply.elements[i], sim_reply.elements[i]);
        continue;
      }
      EXPECT_TRUE(replies_match(real_reply, sim_reply, ttl ? Tolerance::kPttl : Tolerance::kExact))
          << "real: " << real_reply.to_string() << "\nsim:  " << sim_reply.to_string();
    }
  }
}

}  // namespace locksim::sim::redis::differential
