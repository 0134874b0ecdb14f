// The simulated Redis's hashes against a real redis-server, reply for reply
// (the differential test's rules: redis_differential_test.cpp).
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "redis_differential.h"

namespace locksim::sim::redis {
namespace {

// Hashes (HSET HGET HEXISTS HDEL HINCRBY) and TYPE, as a Redisson-like
// re-entrant lock uses them, with their errors: WRONGTYPE both ways, a bad
// increment, a field that is not an integer, overflow, a hash emptied by HDEL
// (deleted, TTL and all), and the lock's own scripts.
TEST(RedisDifferentialTest, HashCommandsAndTheirErrors) {
  const std::string acquire =
      "if (redis.call('exists', KEYS[1]) == 0) or (redis.call('hexists', KEYS[1], ARGV[2]) == 1) "
      "then redis.call('hincrby', KEYS[1], ARGV[2], 1) redis.call('pexpire', KEYS[1], ARGV[1]) "
      "return nil end return redis.call('pttl', KEYS[1])";
  const std::string release =
      "if redis.call('hexists', KEYS[1], ARGV[2]) == 0 then return nil end "
      "local n = redis.call('hincrby', KEYS[1], ARGV[2], -1) "
      "if n > 0 then redis.call('pexpire', KEYS[1], ARGV[1]) return 0 end "
      "redis.call('del', KEYS[1]) return 1";
  using differential::Argv;
  const std::vector<std::vector<Argv>> sequences = {
      {{"HINCRBY", "h", "c1", "1"},
       {"HINCRBY", "h", "c1", "1"},
       {"HGET", "h", "c1"},
       {"HEXISTS", "h", "c1"},
       {"HEXISTS", "h", "c2"},
       {"HEXISTS", "nokey", "c1"},
       {"TYPE", "h"},
       {"TYPE", "nokey"},
       {"HDEL", "h", "c1", "c2"},
       {"EXISTS", "h"},
       {"TYPE", "h"}},
      {{"HSET", "h", "f", "v", "g", "w"},
       {"HSET", "h", "f", "x"},
       {"HSET", "h", "f"},
       {"HGET", "h", "f"},
       {"HGET", "h", "nofield"},
       {"HGET", "nokey", "f"},
       {"HINCRBY", "h", "f", "1"},
       {"HINCRBY", "h", "g", "x"},
       {"HINCRBY", "h", "n", "1.5"},
       {"HINCRBY", "h", "n", "9223372036854775807"},
       {"HINCRBY", "h", "n", "1"}},
      {{"SET", "s", "v"},
       {"HINCRBY", "s", "f", "1"},
       {"HSET", "s", "f", "v"},
       {"HGET", "s", "f"},
       {"HEXISTS", "s", "f"},
       {"HDEL", "s", "f"},
       {"TYPE", "s"}},
      {{"HSET", "h", "f", "v"},
       {"GET", "h"},
       {"GETSET", "h", "v"},
       {"INCR", "h"},
       {"SET", "h", "v", "GET"},
       {"SET", "h", "v", "NX"},
       {"SETNX", "h", "v"},
       {"TYPE", "h"},
       {"SET", "h", "v"},
       {"TYPE", "h"},
       {"GET", "h"}},
      {{"HINCRBY", "h", "c1", "1"},
       {"PEXPIRE", "h", "60000"},
       {"HINCRBY", "h", "c1", "-1"},
       {"HDEL", "h", "c1"},
       {"PTTL", "h"},
       {"EXISTS", "h"}},
      {{"EVAL", acquire, "1", "lock", "60000", "c1"},
       {"EVAL", acquire, "1", "lock", "60000", "c1"},
       {"EVAL", acquire, "1", "lock", "60000", "c2"},
       {"HGET", "lock", "c1"},
       {"EVAL", release, "1", "lock", "60000", "c2"},
       {"EVAL", release, "1", "lock", "60000", "c1"},
       {"EVAL", release, "1", "lock", "60000", "c1"},
       {"EXISTS", "lock"},
       {"SET", "lock", "x"},
       {"EVAL", acquire, "1", "lock", "60000", "c1"}},
  };
  // A PTTL, and a refused acquire (the script returns the PTTL), read the
  // clock: within the differential test's PTTL tolerance (the usual rule).
  differential::compare_sequences(sequences);
}

}  // namespace
}  // namespace locksim::sim::redis
