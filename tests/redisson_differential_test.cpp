// Redisson's RLock scripts (algorithms/redisson_lock.h) on the simulated
// Redis against a real redis-server, reply for reply (the differential
// test's rules: redis_differential_test.cpp): acquire, re-entry, a refusal
// with the PTTL, the watchdog's renewal, release with its unlock latch
// answering a retried release, PUBLISH from a script, and the errors a key
// of another type gives.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "algorithms/redisson_lock.h"
#include "live/hiredis_connection.h"
#include "live/redis_process.h"
#include "redis_differential.h"
#include "sim/redis/server.h"

namespace locksim::sim::redis {
namespace {

using algorithms::RedissonLock;
using differential::replies_match;
using differential::show;
using differential::Tolerance;
using differential::wall_now;
using Argv = std::vector<std::string>;

Argv acquire(const std::string& field) {
  return {"EVAL", RedissonLock::kAcquireScript, "1", "lock", "30000", field};
}

Argv fenced_acquire(const std::string& field) {
  return {"EVAL", RedissonLock::kFencedAcquireScript, "2",
          "lock", RedissonLock::token_key("lock"),    "30000",
          field};
}

Argv renew(const std::string& field) {
  return {"EVAL", RedissonLock::kRenewScript, "1", "lock", "30000", field};
}

Argv release(const std::string& field, const std::string& request) {
  return {"EVAL",
          RedissonLock::kReleaseScript,
          "3",
          "lock",
          RedissonLock::channel("lock"),
          RedissonLock::latch_key("lock", request),
          "0",
          "30000",
          field,
          "5000"};
}

// Each sequence starts from an empty server on both sides.
std::vector<std::vector<Argv>> sequences() {
  return {
      // Acquire, re-enter, refuse another, renew, release twice (the count).
      {acquire("c1:a"),
       acquire("c1:a"),
       {"HGET", "lock", "c1:a"},
       acquire("c2:b"),
       renew("c1:a"),
       renew("c2:b"),
       {"PTTL", "lock"},
       release("c2:b", "r1"),
       release("c1:a", "r2"),
       {"HGET", "lock", "c1:a"},
       release("c1:a", "r3"),
       {"EXISTS", "lock"},
       renew("c1:a"),
       acquire("c2:b")},
      // A retried release answers from its latch, even after the lock moved on.
      {acquire("c1:a"),
       release("c1:a", "r1"),
       release("c1:a", "r1"),
       {"GET", RedissonLock::latch_key("lock", "r1")},
       acquire("c2:b"),
       release("c1:a", "r1"),
       release("c1:a", "r2"),
       {"HEXISTS", "lock", "c2:b"}},
      // RFencedLock: a token per grant (re-entry included), {PTTL, -1} refused.
      {fenced_acquire("c1:a"),
       fenced_acquire("c1:a"),
       fenced_acquire("c2:b"),
       {"GET", RedissonLock::token_key("lock")},
       release("c1:a", "r1"),
       release("c1:a", "r2"),
       fenced_acquire("c2:b"),
       {"SET", RedissonLock::token_key("lock"), "x"},
       release("c2:b", "r3"),
       fenced_acquire("c2:b")},
      // A key of another type under the lock's name: the scripts' errors.
      {{"SET", "lock", "x"}, acquire("c1:a"), renew("c1:a"), release("c1:a", "r1")},
      // A latch that is not a number (someone else's key): tonumber gives nil.
      {acquire("c1:a"),
       {"SET", RedissonLock::latch_key("lock", "r1"), "garbage"},
       release("c1:a", "r1"),
       {"EXISTS", "lock"}},
  };
}

TEST(RedissonDifferentialTest, ScriptsReplyAsOnRedisServer) {
  std::string why;
  const std::unique_ptr<live::RedisProcess> process = differential::start_real_redis(why);
  ASSERT_NE(process, nullptr) << why;
  live::HiredisConnection real("127.0.0.1", process->port(), Duration::seconds(5), "real-redis");
  Server sim(1);
  for (const auto& sequence : sequences()) {
    ASSERT_TRUE(real.command({"FLUSHALL"}).is_ok());
    sim.restore({});
    for (const Argv& argv : sequence) {
      SCOPED_TRACE(show(argv));
      const Reply real_reply = real.command(argv);
      const Reply sim_reply = sim.execute(argv, wall_now());
      // PTTL, and a refused acquire (the script answers the PTTL), read the
      // clock: within the PTTL tolerance.
      const bool refused_fenced = real_reply.kind == Reply::Kind::kArray &&
                                  real_reply.elements.size() == 2 &&
                                  real_reply.elements[0].integer > 1;
      const bool reads_ttl = argv[0] == "PTTL" || (argv[0] == "EVAL" && real_reply.integer > 1);
      if (refused_fenced && sim_reply.kind == Reply::Kind::kArray &&
          sim_reply.elements.size() == 2) {
        EXPECT_TRUE(replies_match(real_reply.elements[0], sim_reply.elements[0], Tolerance::kPttl));
        EXPECT_EQ(real_reply.elements[1], sim_reply.elements[1]);
        continue;
      }
      EXPECT_TRUE(
          replies_match(real_reply, sim_reply, reads_ttl ? Tolerance::kPttl : Tolerance::kExact))
          << "real: " << real_reply.to_string() << "\nsim:  " << sim_reply.to_string();
    }
  }
}

}  // namespace
}  // namespace locksim::sim::redis
