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
#include "redis_differential.h"

namespace locksim::sim::redis {
namespace {

using algorithms::RedissonLock;
using differential::Argv;

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
  // PTTL, and a refused acquire (the script answers the PTTL, alone or first
  // of RFencedLock's pair), read the clock: within the PTTL tolerance. The
  // 0 and 1 of renewal and release are exact.
  differential::compare_sequences(sequences(), [](const Argv& argv, const Reply& real) {
    const bool pair = real.kind == Reply::Kind::kArray && !real.elements.empty();
    return argv[0] == "PTTL" ||
           (argv[0] == "EVAL" && (real.integer > 1 || (pair && real.elements[0].integer > 1)));
  });
}

}  // namespace
}  // namespace locksim::sim::redis
