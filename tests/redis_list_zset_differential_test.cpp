// The simulated Redis's lists, sorted sets, PUBLISH and WAIT against a real
// redis-server 7.0, reply for reply, error replies included (the
// differential test's rules: redis_differential_test.cpp). Scores are the
// delicate part: Redis 7.0 prints them with "%.17g" ("0.10000000000000001",
// "1e+20", "inf"), and the sequences below hold the simulator to every form.
//
// A step {"SLEEP", ms} is not a command: both sides wait that long of real
// time, so a key with a short PEXPIRE really expires in between.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "redis_differential.h"

namespace locksim::sim::redis {
namespace {

using differential::Argv;
using differential::compare_sequences;

// RPUSH LPOP LINDEX LREM LLEN LRANGE: normal use, missing keys, counts and
// indexes out of range or not numbers, wrong arity, emptying (the key goes).
TEST(RedisListZsetDifferentialTest, ListCommandsAndTheirErrors) {
  compare_sequences({
      {{"RPUSH", "l", "a", "b", "c"},
       {"RPUSH", "l", "d"},
       {"LLEN", "l"},
       {"LRANGE", "l", "0", "-1"},
       {"LRANGE", "l", "1", "2"},
       {"LRANGE", "l", "-2", "100"},
       {"LRANGE", "l", "3", "1"},
       {"LRANGE", "l", "-100", "-50"},
       {"LRANGE", "l", "-9223372036854775808", "9223372036854775807"},
       {"LINDEX", "l", "0"},
       {"LINDEX", "l", "-1"},
       {"LINDEX", "l", "4"},
       {"LINDEX", "l", "-5"},
       {"LPOP", "l"},
       {"LPOP", "l", "2"},
       {"LPOP", "l", "0"},
       {"LPOP", "l", "5"},
       {"EXISTS", "l"},
       {"TYPE", "l"},
       {"LPOP", "l"},
       {"LPOP", "l", "0"},
       {"LPOP", "l", "3"}},
      {{"RPUSH", "l", "a", "b", "a", "c", "a", "b"},
       {"LREM", "l", "2", "a"},
       {"LRANGE", "l", "0", "-1"},
       {"LREM", "l", "-1", "b"},
       {"LRANGE", "l", "0", "-1"},
       {"LREM", "l", "0", "nothing"},
       {"LREM", "l", "-9223372036854775808", "a"},
       {"LRANGE", "l", "0", "-1"},
       {"LREM", "l", "0", "b"},
       {"LREM", "l", "0", "c"},
       {"EXISTS", "l"},
       {"LREM", "missing", "0", "a"},
       {"LLEN", "missing"},
       {"LRANGE", "missing", "0", "-1"},
       {"LINDEX", "missing", "0"}},
      {{"RPUSH", "l", "a"},
       {"LPOP", "l", "-1"},
       {"LPOP", "l", "x"},
       {"LPOP", "l", "1.5"},
       {"LPOP", "l", "99999999999999999999"},
       {"LPOP", "l", "1", "2"},
       {"LPOP", "missing", "-1"},
       {"LINDEX", "l", "x"},
       {"LINDEX", "missing", "x"},
       {"LINDEX", "l", "99999999999999999999"},
       {"LREM", "l", "x", "a"},
       {"LREM", "missing", "x", "a"},
       {"LRANGE", "l", "x", "1"},
       {"LRANGE", "missing", "0", "y"},
       {"RPUSH", "l"},
       {"LPOP"},
       {"LINDEX", "l"},
       {"LREM", "l", "0"},
       {"LLEN"},
       {"LRANGE", "l", "0"},
       {"rpush", "L2", "x"},
       {"Lrange", "L2", "0", "-1"}},
  });
}

// ZADD ZINCRBY ZSCORE ZREM ZCARD ZRANGE, with every score form Redis prints
// differently, ties ordered by member, NaN results, emptying.
TEST(RedisListZsetDifferentialTest, SortedSetCommandsAndScoreFormatting) {
  compare_sequences({
      {{"ZADD", "z", "1", "a", "2", "b", "1.5", "c"},
       {"ZADD", "z", "1e20", "d", "3.0", "e", "-0", "f", "0.1", "g", "1e-5", "h"},
       {"ZADD", "z", "123456789012345678", "i", "inf", "j", "-inf", "k", "+1.5", "l"},
       {"ZADD", "z", "0x10", "m", ".5", "n", "5.", "o", "-INF", "p", "1e-320", "q"},
       {"ZADD", "z", "5e15", "r", "1e17", "s", "1e16", "t", "12345.678", "u", "1E3", "v"},
       {"ZRANGE", "z", "0", "-1", "WITHSCORES"},
       {"ZSCORE", "z", "f"},
       {"ZSCORE", "z", "g"},
       {"ZSCORE", "z", "j"},
       {"ZSCORE", "z", "nomember"},
       {"ZSCORE", "missing", "a"},
       {"ZCARD", "z"},
       {"ZCARD", "missing"},
       {"ZRANGE", "z", "0", "2"},
       {"ZRANGE", "z", "-3", "-1", "withscores"},
       {"ZRANGE", "z", "0", "1", "REV", "WITHSCORES"},
       {"ZRANGE", "z", "2", "5", "rev"},
       {"ZRANGE", "z", "5", "2"},
       {"ZRANGE", "z", "100", "200"},
       {"ZRANGE", "z", "0", "1", "withscores", "withscores"},
       {"ZRANGE", "missing", "0", "-1"}},
      {{"ZADD", "z", "1", "a", "1", "b", "1", "c", "0", "d", "2", "aa", "1", ""},
       {"ZRANGE", "z", "0", "-1", "WITHSCORES"},
       {"ZRANGE", "z", "0", "-1", "REV"},
       {"ZINCRBY", "z", "2.5", "c"},
       {"ZINCRBY", "z", "0.1", "d"},
       {"ZINCRBY", "z", "0.2", "d"},
       {"ZINCRBY", "z", "-0.30000000000000004", "d"},
       {"ZINCRBY", "z", "1", "new"},
       {"ZINCRBY", "missing2", "3", "m"},
       {"ZINCRBY", "z", "1e308", "aa"},
       {"ZINCRBY", "z", "1e308", "aa"},
       {"ZINCRBY", "z", "-inf", "aa"},
       {"ZSCORE", "z", "aa"},
       {"ZINCRBY", "z", "abc", "c"},
       {"ZINCRBY", "z", "nx", "c"},
       {"ZINCRBY", "z", "1", "c", "2"},
       {"ZREM", "z", "a", "b", "nope"},
       {"ZREM", "missing", "a"},
       {"ZCARD", "z"},
       {"ZREM", "z", "c", "d", "aa", "new", "", "never"},
       {"EXISTS", "z"},
       {"TYPE", "missing2"}},
  });
}

// ZADD's options (alone and combined, on present, missing and new members)
// and every argument error of the sorted-set commands, in Redis's order.
TEST(RedisListZsetDifferentialTest, ZaddOptionsAndSortedSetErrors) {
  compare_sequences({
      {{"ZADD", "z", "NX", "5", "a", "6", "new"},
       {"ZADD", "z", "NX", "7", "a"},
       {"ZADD", "z", "XX", "8", "a", "9", "new2"},
       {"ZADD", "z", "CH", "8", "a", "8", "b", "2", "b2"},
       {"ZADD", "z", "INCR", "1", "a"},
       {"ZADD", "z", "NX", "INCR", "1", "a"},
       {"ZADD", "z", "XX", "INCR", "1", "nope"},
       {"ZADD", "z", "GT", "1", "a"},
       {"ZADD", "z", "GT", "CH", "100", "a"},
       {"ZADD", "z", "LT", "CH", "100", "a"},
       {"ZADD", "z", "LT", "XX", "INCR", "-1", "a"},
       {"ZADD", "z", "GT", "5", "newgt"},
       {"ZADD", "z", "ch", "xx", "100", "a", "1", "zz"},
       {"ZADD", "z", "INCR", "inf", "j"},
       {"ZADD", "z", "INCR", "-inf", "j"},
       {"ZADD", "z", "INCR", "-0", "negzero"},
       {"ZSCORE", "z", "negzero"},
       {"ZADD", "xxmissing", "XX", "1", "a"},
       {"ZADD", "xxmissing", "XX", "INCR", "1", "a"},
       {"EXISTS", "xxmissing"},
       {"ZRANGE", "z", "0", "-1", "WITHSCORES"}},
      {{"ZADD", "z", "1", "a"},
       {"ZADD", "z", "abc", "a"},
       {"ZADD", "z", "nan", "a"},
       {"ZADD", "z", "1 ", "a"},
       {"ZADD", "z", " 1", "a"},
       {"ZADD", "z", "", "a"},
       {"ZADD", "z", "1e999", "a"},
       {"ZADD", "z", "1e-400", "a"},
       {"ZADD", "z", "1_000", "a"},
       {"ZADD", "z", "1", "a", "2"},
       {"ZADD", "z", "1", "ok", "x", "bad"},
       {"ZSCORE", "z", "ok"},
       {"ZADD", "z", "NX", "XX", "1", "a"},
       {"ZADD", "z", "GT", "LT", "1", "a"},
       {"ZADD", "z", "NX", "GT", "1", "a"},
       {"ZADD", "z", "INCR", "1", "a", "2", "b"},
       {"ZADD", "z", "NX"},
       {"ZADD", "z", "NX", "1"},
       {"ZADD", "z", "1"},
       {"ZSCORE", "z"},
       {"ZREM", "z"},
       {"ZCARD"},
       {"ZRANGE", "z", "0"},
       {"ZRANGE", "z", "x", "1"},
       {"ZRANGE", "missing", "x", "1"},
       {"ZRANGE", "z", "0", "1", "foo"},
       {"ZRANGE", "z", "0", "1", "rev", "rev"},
       {"ZRANGE", "z", "0", "1", "limit", "0", "1"},
       {"ZRANGE", "z", "0", "1", "limit", "0"},
       {"ZRANGE", "z", "0", "1", "limit", "x", "1"},
       {"ZRANGE", "z", "0", "-1", "bylex", "withscores"},
       {"ZCARD", "z"}},
  });
}

// WRONGTYPE both ways between strings, hashes, lists and sorted sets, and
// the argument errors that come before the type check.
TEST(RedisListZsetDifferentialTest, WrongTypeBothWays) {
  compare_sequences({
      {{"SET", "s", "v"},
       {"RPUSH", "s", "a"},
       {"LPOP", "s"},
       {"LPOP", "s", "0"},
       {"LPOP", "s", "x"},
       {"LINDEX", "s", "0"},
       {"LINDEX", "s", "x"},
       {"LREM", "s", "0", "a"},
       {"LREM", "s", "x", "a"},
       {"LLEN", "s"},
       {"LRANGE", "s", "0", "1"},
       {"LRANGE", "s", "x", "1"},
       {"ZADD", "s", "1", "a"},
       {"ZADD", "s", "x", "a"},
       {"ZADD", "s", "XX", "1", "a"},
       {"ZSCORE", "s", "a"},
       {"ZREM", "s", "a"},
       {"ZCARD", "s"},
       {"ZINCRBY", "s", "1", "a"},
       {"ZINCRBY", "s", "x", "a"},
       {"ZRANGE", "s", "0", "1"},
       {"ZRANGE", "s", "x", "1"},
       {"GET", "s"}},
      {{"RPUSH", "l", "a"},
       {"ZADD", "z", "1", "a"},
       {"HSET", "h", "f", "v"},
       {"GET", "l"},
       {"GET", "z"},
       {"SET", "l", "v", "GET"},
       {"GETSET", "z", "v"},
       {"INCR", "l"},
       {"INCR", "z"},
       {"HGET", "l", "f"},
       {"HSET", "z", "f", "v"},
       {"HINCRBY", "l", "f", "1"},
       {"RPUSH", "z", "a"},
       {"RPUSH", "h", "a"},
       {"LLEN", "h"},
       {"ZADD", "l", "1", "a"},
       {"ZSCORE", "h", "f"},
       {"ZRANGE", "l", "0", "-1"},
       {"TYPE", "l"},
       {"TYPE", "z"},
       {"TYPE", "h"},
       {"SET", "l", "now-a-string"},
       {"TYPE", "l"},
       {"GET", "l"},
       {"SETNX", "z", "v"},
       {"DEL", "z", "h", "l"},
       {"EXISTS", "z", "h", "l"}},
  });
}

// A list and a sorted set under PEXPIRE: alive up to the deadline, then gone
// for every command (lazy expiry), so RPUSH and ZADD start new keys.
TEST(RedisListZsetDifferentialTest, ExpiryOfListAndSortedSetKeys) {
  compare_sequences({
      {{"RPUSH", "l", "a", "b"},
       {"ZADD", "z", "1", "a"},
       {"PEXPIRE", "l", "60"},
       {"PEXPIRE", "z", "60"},
       {"LLEN", "l"},
       {"ZCARD", "z"},
       {"LPOP", "l"},
       {"EXISTS", "l"},
       {"SLEEP", "120"},
       {"LLEN", "l"},
       {"LRANGE", "l", "0", "-1"},
       {"LINDEX", "l", "0"},
       {"LPOP", "l", "2"},
       {"ZSCORE", "z", "a"},
       {"ZRANGE", "z", "0", "-1"},
       {"EXISTS", "l", "z"},
       {"TYPE", "l"},
       {"RPUSH", "l", "c"},
       {"PTTL", "l"},
       {"ZADD", "z", "2", "b"},
       {"ZRANGE", "z", "0", "-1", "WITHSCORES"},
       {"PTTL", "z"}},
      {{"RPUSH", "l", "a"},
       {"PEXPIRE", "l", "60000"},
       {"RPUSH", "l", "b"},
       {"PTTL", "l"},
       {"LPOP", "l", "2"},
       {"PTTL", "l"},
       {"RPUSH", "l", "c"},
       {"PTTL", "l"}},
  });
}

// PUBLISH with nobody subscribed, and WAIT on a server without replicas:
// their replies and argument errors (WAIT's blocking is RedisNode's, tested
// in redis_pubsub_wait_test against the simulated replication).
TEST(RedisListZsetDifferentialTest, PublishAndWaitWithoutReplicas) {
  compare_sequences({
      {{"PUBLISH", "ch", "msg"},
       {"PUBLISH", "ch"},
       {"PUBLISH", "ch", "a", "b"},
       {"WAIT", "0", "0"},
       {"WAIT", "-1", "10"},
       {"WAIT", "1", "10"},
       {"WAIT", "x", "10"},
       {"WAIT", "99999999999999999999", "1"},
       {"WAIT", "1", "x"},
       {"WAIT", "1", "1.5"},
       {"WAIT", "1", "-1"},
       {"WAIT", "1", "-0"},
       {"WAIT"},
       {"WAIT", "1"},
       {"EVAL", "return redis.call('publish', 'ch', 'm')", "0"},
       {"EVAL", "return redis.call('wait', 0, 0)", "0"},
       {"EVAL", "return redis.pcall('wait', 0, 0)", "0"}},
  });
}

// What scripts see of the new replies (Redis's conversions): a missing key
// is false (nil, or a null array with a count), scores are strings, ranges
// are tables; and a Lua number as a score argument goes as "%.17g".
TEST(RedisListZsetDifferentialTest, ScriptsSeeListAndSortedSetReplies) {
  const std::string types =
      "return {type(redis.call('lpop', KEYS[1])), type(redis.call('lpop', KEYS[1], 2)), "
      "type(redis.call('lindex', KEYS[1], 0)), type(redis.call('zscore', KEYS[2], 'm')), "
      "type(redis.call('zrange', KEYS[2], 0, -1)), type(redis.call('llen', KEYS[1]))}";
  const std::string numbers =
      "redis.call('zadd', KEYS[1], 0.1, 'a', -5000, 'b', 1e20, 'c', 2^53 + 1, 'd') "
      "redis.call('zincrby', KEYS[1], -tonumber(ARGV[1]), 'a') "
      "local s = redis.call('zscore', KEYS[1], 'a') "
      "return {s, tonumber(s) * 2, redis.call('zrange', KEYS[1], 0, -1, 'withscores')}";
  const std::string lists =
      "redis.call('rpush', KEYS[1], 'x', 'y', 1.5, 7) "
      "local all = redis.call('lrange', KEYS[1], 0, -1) "
      "local first = redis.call('lpop', KEYS[1]) "
      "return {#all, first, redis.call('lpop', KEYS[1], 10), redis.call('lpop', KEYS[1]), "
      "redis.call('exists', KEYS[1])}";
  compare_sequences({
      {{"EVAL", types, "2", "l", "z"},
       {"RPUSH", "l", "a"},
       {"ZADD", "z", "1", "m"},
       {"EVAL", types, "2", "l", "z"},
       {"EVAL", numbers, "1", "n", "2.5"},
       {"EVAL", lists, "1", "q"},
       {"SET", "s", "v"},
       {"EVAL", "return redis.call('rpush', KEYS[1], 'a')", "1", "s"},
       {"EVAL", "return redis.pcall('zadd', KEYS[1], 'abc', 'a')", "1", "z"},
       {"EVAL", "return redis.call('zadd', KEYS[1], 1)", "1", "z"}},
  });
}

// Redisson's RedissonFairLock (3.x): acquire, the queue of waiters with
// their deadlines, and release with its PUBLISH to the next waiter.
// KEYS: lock, queue, timeout set, channel prefix. Acquire ARGV: lease ms,
// thread id, thread wait ms, current time ms (the client's; fixed here so
// both servers compute the same deadlines). Release ARGV: unlock message,
// lease ms, thread id, current time ms.
constexpr char kFairAcquire[] =
    "while true do local firstThreadId2 = redis.call('lindex', KEYS[2], 0); "
    "if firstThreadId2 == false then break; end; "
    "local timeout = tonumber(redis.call('zscore', KEYS[3], firstThreadId2)); "
    "if timeout <= tonumber(ARGV[4]) then redis.call('zrem', KEYS[3], firstThreadId2); "
    "redis.call('lpop', KEYS[2]); else break; end; end; "
    "if (redis.call('exists', KEYS[1]) == 0) and ((redis.call('exists', KEYS[2]) == 0) "
    "or (redis.call('lindex', KEYS[2], 0) == ARGV[2])) then "
    "redis.call('lpop', KEYS[2]); redis.call('zrem', KEYS[3], ARGV[2]); "
    "local keys = redis.call('zrange', KEYS[3], 0, -1); "
    "for i = 1, #keys, 1 do redis.call('zincrby', KEYS[3], -tonumber(ARGV[3]), keys[i]); end; "
    "redis.call('hset', KEYS[1], ARGV[2], 1); redis.call('pexpire', KEYS[1], ARGV[1]); "
    "return nil; end; "
    "if redis.call('hexists', KEYS[1], ARGV[2]) == 1 then "
    "redis.call('hincrby', KEYS[1], ARGV[2], 1); redis.call('pexpire', KEYS[1], ARGV[1]); "
    "return nil; end; "
    "local timeout = redis.call('zscore', KEYS[3], ARGV[2]); "
    "if timeout ~= false then return timeout - tonumber(ARGV[3]) - tonumber(ARGV[4]); end; "
    "local lastThreadId = redis.call('lindex', KEYS[2], -1); local ttl; "
    "if lastThreadId ~= false and lastThreadId ~= ARGV[2] then "
    "ttl = tonumber(redis.call('zscore', KEYS[3], lastThreadId)) - tonumber(ARGV[4]); "
    "else ttl = redis.call('pttl', KEYS[1]); end; "
    "local timeout = ttl + tonumber(ARGV[3]) + tonumber(ARGV[4]); "
    "if redis.call('zadd', KEYS[3], timeout, ARGV[2]) == 1 then "
    "redis.call('rpush', KEYS[2], ARGV[2]); end; return ttl;";
constexpr char kFairRelease[] =
    "while true do local firstThreadId2 = redis.call('lindex', KEYS[2], 0); "
    "if firstThreadId2 == false then break; end; "
    "local timeout = tonumber(redis.call('zscore', KEYS[3], firstThreadId2)); "
    "if timeout <= tonumber(ARGV[4]) then redis.call('zrem', KEYS[3], firstThreadId2); "
    "redis.call('lpop', KEYS[2]); else break; end; end; "
    "if (redis.call('exists', KEYS[1]) == 0) then "
    "local nextThreadId = redis.call('lindex', KEYS[2], 0); "
    "if nextThreadId ~= false then "
    "redis.call('publish', KEYS[4] .. ':' .. nextThreadId, ARGV[1]); end; return 1; end; "
    "if (redis.call('hexists', KEYS[1], ARGV[3]) == 0) then return nil; end; "
    "local counter = redis.call('hincrby', KEYS[1], ARGV[3], -1); "
    "if (counter > 0) then redis.call('pexpire', KEYS[1], ARGV[2]); return 0; "
    "else redis.call('del', KEYS[1]); local nextThreadId = redis.call('lindex', KEYS[2], 0); "
    "if nextThreadId ~= false then "
    "redis.call('publish', KEYS[4] .. ':' .. nextThreadId, ARGV[1]); end; return 1; end; "
    "return nil;";

TEST(RedisListZsetDifferentialTest, RedissonFairLockScripts) {
  const Argv keys = {"4", "lock", "redisson_lock_queue:{lock}", "redisson_lock_timeout:{lock}",
                     "redisson_lock__channel:{lock}"};
  auto acquire = [&](const std::string& thread, const std::string& now_ms) {
    Argv argv = {"EVAL", kFairAcquire};
    argv.insert(argv.end(), keys.begin(), keys.end());
    argv.insert(argv.end(), {"30000", thread, "5000", now_ms});
    return argv;
  };
  auto release = [&](const std::string& thread, const std::string& now_ms) {
    Argv argv = {"EVAL", kFairRelease};
    argv.insert(argv.end(), keys.begin(), keys.end());
    argv.insert(argv.end(), {"0", "30000", thread, now_ms});
    return argv;
  };
  const std::string queue = "redisson_lock_queue:{lock}";
  const std::string timeouts = "redisson_lock_timeout:{lock}";
  compare_sequences({
      {acquire("t1", "1000"),
       acquire("t1", "1000"),  // re-entrant
       acquire("t2", "1000"),  // queued behind t1: returns the lock's PTTL
       acquire("t3", "1000"),  // queued behind t2: t2's deadline - now
       acquire("t3", "1000"),  // already queued: its deadline - wait - now
       {"LRANGE", queue, "0", "-1"},
       // Members only: each score is a PTTL read plus constants, and the two
       // servers read their clocks a few ms apart under load (the replies
       // above that return those scores minus `now` get the PTTL tolerance).
       {"ZRANGE", timeouts, "0", "-1"},
       release("t2", "1000"),  // not the holder
       release("t1", "1000"),  // re-entrant count 2 -> 1
       release("t1", "1000"),  // frees it: PUBLISH to t2 (nobody listens)
       acquire("t3", "1000"),  // t2 is first in line
       acquire("t2", "1000"),  // t2 takes it; t3's deadline moves down by the wait
       {"LRANGE", queue, "0", "-1"},
       {"ZRANGE", timeouts, "0", "-1"},
       {"HGET", "lock", "t2"}},
      {acquire("t1", "1000"),
       acquire("t2", "1000"),
       acquire("t3", "1000"),
       {"DEL", "lock"},
       // Far in the future: every waiter's deadline has passed, so the
       // loop pops them all and the queue and the set are deleted.
       acquire("t4", "999999999999"),
       {"EXISTS", queue, timeouts},
       {"HGET", "lock", "t4"},
       release("t4", "999999999999"),
       release("t4", "999999999999"),
       {"EXISTS", "lock"}},
  });
}

}  // namespace
}  // namespace locksim::sim::redis
