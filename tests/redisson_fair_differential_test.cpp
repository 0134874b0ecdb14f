// RedissonFairLock's scripts (algorithms/redisson_fair_lock.h) on the
// simulated Redis against a real redis-server, reply for reply (the
// differential test's rules: redis_differential_test.cpp): joining the
// queue, the remaining wait, the head's grant and the shift behind it, the
// purge by a caller's clock, cancel, release with its latch and its message
// to the head, and the errors a key of another type gives.
//
// The scripts compare timeouts with the caller's clock, an argument, so
// most replies here are exact: a holder written with HSET has no expiry
// (PTTL -1), which keeps the server's clock out of the waiters' timeouts.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "algorithms/redisson_fair_lock.h"
#include "algorithms/redisson_lock.h"
#include "redis_differential.h"
#include "tests/real_servers.h"

namespace locksim::sim::redis {
namespace {

using algorithms::RedissonFairLock;
using algorithms::RedissonLock;
using differential::Argv;

constexpr int64_t kNow = 1'700'000'000'000;  // the callers' clock, ms
constexpr int64_t kWait = 300'000;           // the thread wait time, ms

const std::string kQueue = RedissonFairLock::queue_key("lock");
const std::string kTimeouts = RedissonFairLock::timeout_key("lock");

Argv acquire(const std::string& field, int64_t now = kNow) {
  return {"EVAL",
          RedissonFairLock::acquire_script(),
          "3",
          "lock",
          kQueue,
          kTimeouts,
          "30000",
          field,
          std::to_string(kWait),
          std::to_string(now)};
}

Argv cancel(const std::string& field) {
  return {"EVAL",
          RedissonFairLock::cancel_script(),
          "2",
          kQueue,
          kTimeouts,
          field,
          std::to_string(kWait)};
}

Argv release(const std::string& field, const std::string& request, int64_t now = kNow) {
  return {"EVAL",
          RedissonFairLock::release_script(),
          "5",
          "lock",
          kQueue,
          kTimeouts,
          RedissonLock::channel("lock"),
          RedissonLock::latch_key("lock", request),
          "0",
          "30000",
          field,
          std::to_string(now),
          "5000"};
}

const Argv kQueued = {"LRANGE", kQueue, "0", "-1"};
const Argv kScores = {"ZRANGE", kTimeouts, "0", "-1", "WITHSCORES"};
const Argv kHolder = {"HSET", "lock", "holder", "1"};  // no expiry: PTTL -1

// Each sequence starts from an empty server on both sides.
std::vector<std::vector<Argv>> sequences() {
  return {
      // A free lock is granted at once; re-entry; a refusal with the PTTL
      // (the score it writes holds the PTTL: not compared).
      {acquire("c1"), acquire("c1"), {"HGET", "lock", "c1"}, acquire("c2"), kQueued},
      // Waiters queue in order, one wait time apart; the head is granted and
      // the one behind moves up by a wait time; a waiter not at the head
      // waits even when the lock is free.
      {kHolder,
       acquire("c1"),
       acquire("c2"),
       acquire("c2"),
       kQueued,
       kScores,
       {"DEL", "lock"},
       acquire("c2"),
       acquire("c1"),
       kQueued,
       kScores,
       {"HGET", "lock", "c1"},
       release("c1", "r1"),
       acquire("c2"),
       kQueued,
       kScores},
      // A caller whose clock is one wait time ahead purges the head, a live
      // waiter; one far ahead purges everyone and, the lock free, takes it.
      {kHolder,
       acquire("c1"),
       acquire("c2"),
       acquire("c3", kNow + kWait),
       kQueued,
       kScores,
       {"DEL", "lock"},
       acquire("c4", kNow + 10 * kWait),
       kQueued,
       kScores,
       {"HEXISTS", "lock", "c4"}},
      // Cancel: those behind move up by a wait time, those ahead do not; a
      // field not queued changes nothing.
      {kHolder, acquire("c1"), acquire("c2"), acquire("c3"), cancel("c2"), kQueued, kScores,
       cancel("c9"), cancel("c1"), kScores},
      // Release: re-entry counts down; a release when the hash is gone
      // answers 1 (and wakes the head); one by a stranger answers nil; a
      // retried release answers from its latch; a release purges first.
      {acquire("c1"),
       acquire("c1"),
       acquire("c2"),
       release("c1", "r1"),
       release("c2", "r2"),
       release("c1", "r3"),
       release("c1", "r3"),
       {"GET", RedissonLock::latch_key("lock", "r3")},
       release("c1", "r4"),
       kQueued,
       release("c1", "r5", kNow + 3 * kWait),
       kQueued,
       kScores},
      // Keys of another type under the lock's, the queue's or the set's
      // name: the scripts' errors.
      {{"SET", "lock", "x"}, acquire("c1"), release("c1", "r1")},
      {{"SET", kQueue, "x"}, acquire("c1"), cancel("c1"), release("c1", "r1")},
      {kHolder, {"SET", kTimeouts, "x"}, acquire("c1"), cancel("c1")},
  };
}

TEST(RedissonFairDifferentialTest, ScriptsReplyAsOnRedisServer) {
  LOCKSIM_SKIP_WITHOUT("redis-server", std::system("redis-server --version >/dev/null 2>&1") == 0
                                           ? ""
                                           : "redis-server is not on $PATH");
  // PTTL, and a refused acquire that answers a wait from a PTTL: within the
  // PTTL tolerance. The 0 and 1 of cancel and release are exact.
  differential::compare_sequences(sequences(), [](const Argv& argv, const Reply& real) {
    return argv[0] == "PTTL" || (argv[0] == "EVAL" && real.integer > 1);
  });
}

}  // namespace
}  // namespace locksim::sim::redis
