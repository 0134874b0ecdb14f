// The fidelity test of the simulated Redis (sim/redis/server.h): a seeded
// random stream of commands goes to a real redis-server 7.0 and to the
// simulated Server, and every pair of replies must be equal, byte for byte.
//
// Time: this is a test, so it uses the real clock. The simulated server gets
// `now` = system_clock read right before each command is sent; the real server
// reads the same clock a moment later. Keys are given short PX values and the
// test sleeps between commands, so keys really expire in between.
//
// Tolerances, and only these: remaining-TTL replies (PTTL within 50 ms, TTL
// within 1 s); and a command issued within a few ms of some key's expiry
// instant (or an EXPIRE GT/LT comparing two deadlines taken a ms apart) may
// legitimately see the other side of that instant. Such a mismatch is counted,
// the simulated keyspace is re-synced from the real server, and the run goes on.
#include <gtest/gtest.h>

#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <ostream>
#include <string>
#include <thread>
#include <vector>

#include "algorithms/redlock.h"
#include "algorithms/set_nx_lua.h"
#include "live/hiredis_connection.h"
#include "live/redis_process.h"
#include "redis_differential.h"
#include "sim/redis/server.h"
#include "sim/redis/sha1.h"
#include "sim/rng.h"

namespace locksim::sim::redis {
namespace {

using differential::replies_match;
using differential::show;
using differential::Tolerance;
using differential::wall_ms;
using differential::wall_now;

constexpr int kSeeds = 5;
constexpr int kCommandsPerSeed = 250;
constexpr int kFailuresPerSeedMax = 5;
// Window around a key's expiry instant in which both outcomes are legitimate:
// our clock read precedes the server's by the round trip and scheduling noise.
constexpr int64_t kAmbiguousBeforeMs = 2;
constexpr int64_t kAmbiguousAfterMs = 15;

const std::vector<std::string> kKeys = {"lock", "k1", "k2", "n", "s"};
const std::vector<std::string> kValues = {
    "a", "b", "owner-1", "1", "42", "-7", "x y", "", "9223372036854775807", "abc"};

// The lock scripts of the algorithms under test, plus scripts that exercise
// conversions and error paths.
const std::vector<std::string> kScripts = {
    // 0: release (compare-and-delete)
    "if redis.call(\"get\",KEYS[1]) == ARGV[1] then return redis.call(\"del\",KEYS[1]) else "
    "return 0 end",
    // 1: extend (compare-and-pexpire)
    "if redis.call(\"get\",KEYS[1]) == ARGV[1] then return redis.call(\"pexpire\",KEYS[1],"
    "ARGV[2]) else return 0 end",
    // 2: acquire
    "return redis.call(\"set\",KEYS[1],ARGV[1],\"NX\",\"PX\",ARGV[2])",
    // 3: acquire with a fencing token (may hit a non-integer counter: error with location)
    "local ok = redis.call('set', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2])\n"
    "if ok then return redis.call('incr', KEYS[2]) end\nreturn false",
    // 4: conversions
    "return {1, 'two', 3.99, -2.5, true, false, {ok='fine'}, {err='E bad'}, {'x', {7}}}",
    // 5: pcall keeps going after an error
    "local r = redis.pcall('incr', KEYS[1])\nif type(r) == 'table' then return {'err', r.err} "
    "end\nreturn {'ok', r}",
    // 6: an error from redis.call aborts the script
    "redis.call('set', KEYS[1], ARGV[1])\nreturn redis.call('incr', KEYS[1])",
    // 7: Lua runtime error
    "local t = nil\nreturn t.x",
    // 8: the sandbox
    "return os.time()",
    // 9: bad redis.call uses
    "return redis.pcall('get')",
    // 10: types of replies inside Lua
    "return {type(redis.call('get', KEYS[1])), type(redis.call('ping')), "
    "type(redis.call('exists', KEYS[1]))}",
    // 11: status and error helpers
    "if ARGV[1] == 'a' then return redis.status_reply('FINE') end\n"
    "return redis.error_reply('MY failure')",
    // 12: math.random (one stream per server in Redis 7.0)
    "return {math.random(1000), math.floor(math.random() * 1000), math.random(3, 9)}",
    // 13: math.randomseed
    "math.randomseed(tonumber(ARGV[1]) or 3)\nreturn math.random(100000)",
    // 14: redis.call with a number argument (%.17g) and error()
    "redis.call('set', KEYS[1], 0.1)\nif ARGV[1] == 'b' then error('boom') end\n"
    "return redis.call('get', KEYS[1])",
    // 15: the remaining TTL, as a lock client reads it
    "return redis.call('pttl', KEYS[1])",
    // 16: compile error
    "return this is not lua",
    // 17: writing a global
    "counter = 1 return counter",
};

struct Step {
  std::vector<std::string> argv;
  Tolerance tolerance = Tolerance::kExact;
  bool compares_deadlines = false;  // EXPIRE GT/LT
};

class CommandGenerator {
 public:
  explicit CommandGenerator(uint64_t seed) : rng_(seed) {}

  Step next() {
    Step s;
    switch (rng_.below(24)) {
      case 0:
      case 1:
      case 2: {  // SET with a random combination of options
        s.argv = {name("SET"), key(), value()};
        if (rng_.chance(0.5)) s.argv.push_back(pick({"NX", "XX", "nx"}));
        if (rng_.chance(0.7)) {
          switch (rng_.below(5)) {
            case 0:
              s.argv.insert(s.argv.end(), {"EX", std::to_string(rng_.between(1, 2))});
              break;
            case 1:
              s.argv.insert(s.argv.end(),
                            {"PXAT", std::to_string(wall_ms() + rng_.between(-500, 300))});
              break;
            default:
              s.argv.insert(s.argv.end(), {"PX", px()});
              break;
          }
        }
        if (rng_.chance(0.2)) s.argv.push_back("GET");
        if (rng_.chance(0.1)) s.argv.push_back("KEEPTTL");
        break;
      }
      case 3:
        s.argv = {name("SETNX"), key(), value()};
        break;
      case 4:
      case 5:
        s.argv = {name("GET"), key()};
        break;
      case 6:
        s.argv = {name("GETSET"), key(), value()};
        break;
      case 7: {
        s.argv = {name("DEL"), key()};
        if (rng_.chance(0.3)) s.argv.push_back(key());
        break;
      }
      case 8:
        s.argv = {name("EXISTS"), key(), key()};
        break;
      case 9: {
        const bool seconds = rng_.chance(0.3);
        s.argv = {name(seconds ? "EXPIRE" : "PEXPIRE"), key(),
                  seconds ? pick({"1", "2", "0", "-1", "abc"})
                          : pick({"40", "120", "250", "0", "-5", "1.5"})};
        if (rng_.chance(0.3)) {
          s.argv.push_back(pick({"NX", "XX", "GT", "LT", "gt"}));
          s.compares_deadlines =
              s.argv.back() == "GT" || s.argv.back() == "LT" || s.argv.back() == "gt";
        }
        break;
      }
      case 10:
      case 11:
        s.argv = {name("PTTL"), key()};
        s.tolerance = Tolerance::kPttl;
        break;
      case 12:
        s.argv = {name("TTL"), key()};
        s.tolerance = Tolerance::kTtl;
        break;
      case 13:
        s.argv = {name("INCR"), rng_.chance(0.7) ? "n" : key()};
        break;
      case 14:
      case 15:
      case 16: {  // EVAL of a script
        const size_t i = rng_.below(kScripts.size());
        s = eval_step(i, {"EVAL", kScripts[i]});
        break;
      }
      case 17: {  // EVALSHA: loaded or not
        const size_t i = rng_.below(kScripts.size());
        s = eval_step(i, {"EVALSHA", sha1_of(i)});
        break;
      }
      case 18: {
        const size_t i = rng_.below(kScripts.size());
        s.argv = {"SCRIPT", pick({"LOAD", "load"}), kScripts[i]};
        break;
      }
      case 19: {
        s.argv = {"SCRIPT", "EXISTS", sha1_of(rng_.below(kScripts.size())),
                  sha1_of(rng_.below(kScripts.size()))};
        if (rng_.chance(0.05)) s.argv = {"SCRIPT", "FLUSH"};
        break;
      }
      case 20: {
        s.argv = {name("PING")};
        if (rng_.chance(0.5)) s.argv.push_back(value());
        break;
      }
      case 21: {  // wrong arity
        static const std::vector<std::vector<std::string>> kForms = {
            {"GET"},         {"SET", "k1"},        {"EXPIRE", "k1"}, {"PING", "a", "b"},
            {"SETNX", "k1"}, {"GETSET", "k1"},     {"INCR"},         {"TTL", "a", "b"},
            {"PTTL"},        {"EVAL", "return 1"}, {"DEL"},          {"EXISTS"},
            {"SCRIPT"},      {"SCRIPT", "LOAD"},   {"EVALSHA", "x"}};
        s.argv = kForms[rng_.below(kForms.size())];
        break;
      }
      case 22: {  // syntax and value errors
        static const std::vector<std::vector<std::string>> kForms = {
            {"SET", "k1", "v", "NX", "XX"},
            {"SET", "k1", "v", "PX"},
            {"SET", "k1", "v", "EX", "0"},
            {"SET", "k1", "v", "PX", "abc"},
            {"SET", "k1", "v", "KEEPTTL", "PX", "10"},
            {"SET", "k1", "v", "PX", "-1"},
            {"SET", "k1", "v", "PX", "10", "EX", "10"},
            {"EXPIRE", "k1", "10", "NX", "XX"},
            {"EXPIRE", "k1", "10", "FOO"},
            {"PEXPIRE", "k1", "1", "GT", "LT"},
            {"FOO", "a", "b"},
            {"foo"},
            {"EVAL", "return 1", "-1"},
            {"EVAL", "return 1", "2", "a"},
            {"EVAL", "return 1", "x"},
            {"SCRIPT", "FOO"},
            {"SCRIPT", "FLUSH", "maybe"},
            {"EVALSHA", "nope", "0"},
            {"SET", "k1", "v", "EX", "99999999999999999"}};
        s.argv = kForms[rng_.below(kForms.size())];
        break;
      }
      default: {  // the lock protocol itself: acquire, then release or extend
        s = eval_step(rng_.below(3), {"EVAL", kScripts[rng_.below(3)]});
        break;
      }
    }
    return s;
  }

  // Real time between commands, so that short leases expire.
  void maybe_sleep() {
    if (rng_.chance(0.25)) {
      std::this_thread::sleep_for(std::chrono::milliseconds(rng_.between(0, 120)));
    }
  }

 private:
  Step eval_step(size_t script, std::vector<std::string> head) {
    Step s;
    s.argv = std::move(head);
    // Scripts 3 uses two keys; 0..2 and the rest one.
    const bool two_keys = kScripts[script].find("KEYS[2]") != std::string::npos;
    s.argv.push_back(two_keys ? "2" : "1");
    s.argv.push_back(key());
    if (two_keys) s.argv.push_back("n");
    s.argv.push_back(pick({"a", "b", "owner-1", "5"}));
    s.argv.push_back(px());
    if (script == 15) s.tolerance = Tolerance::kPttl;
    return s;
  }

  static std::string sha1_of(size_t script) { return sha1_hex(kScripts[script]); }

  std::string key() { return kKeys[rng_.below(kKeys.size())]; }
  std::string value() { return kValues[rng_.below(kValues.size())]; }
  std::string px() { return std::to_string(rng_.between(20, 300)); }
  std::string pick(std::initializer_list<const char*> options) {
    const size_t i = rng_.below(options.size());
    return *(options.begin() + i);
  }
  // Command names in varying case: Redis does not care, neither may we.
  std::string name(const std::string& upper) {
    switch (rng_.below(3)) {
      case 0:
        return upper;
      case 1: {
        std::string lower = upper;
        for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        return lower;
      }
      default: {
        std::string mixed = upper;
        for (size_t i = 1; i < mixed.size(); i += 2) {
          mixed[i] = static_cast<char>(std::tolower(static_cast<unsigned char>(mixed[i])));
        }
        return mixed;
      }
    }
  }

  Rng rng_;
};

// Rebuilds the simulated keyspace from the real server's (GET + PTTL per key).
void resync(live::HiredisConnection& real, Server& sim) {
  std::map<std::string, Entry> keys;
  for (const std::string& key : kKeys) {
    const Reply value = real.command({"GET", key});
    const int64_t read_ms = wall_ms();
    const Reply ttl = real.command({"PTTL", key});
    if (value.kind != Reply::Kind::kBulk || ttl.kind != Reply::Kind::kInteger) continue;
    if (ttl.integer == -2) continue;  // expired between the two reads
    Entry entry{value.text, std::nullopt};
    if (ttl.integer >= 0) entry.expire_at_ms = read_ms + ttl.integer;
    keys.emplace(key, std::move(entry));
  }
  sim.restore(std::move(keys));
}

// Whether the outcome of the next command may depend on which side of some
// key's expiry instant the two clock reads fall.
bool near_an_expiry(const Server& sim, int64_t now_ms) {
  for (const auto& [key, entry] : sim.keys()) {
    if (entry.expire_at_ms && *entry.expire_at_ms >= now_ms - kAmbiguousBeforeMs &&
        *entry.expire_at_ms <= now_ms + kAmbiguousAfterMs) {
      return true;
    }
  }
  return false;
}

// Whether the command names a key whose lease has lapsed but that is still
// stored, i.e. whether it exercises lazy expiry.
bool touches_expired_key(const Server& sim, const std::vector<std::string>& argv, int64_t now_ms) {
  for (size_t i = 1; i < argv.size(); ++i) {
    auto it = sim.keys().find(argv[i]);
    if (it != sim.keys().end() && Keyspace::is_expired(it->second, now_ms)) return true;
  }
  return false;
}

TEST(RedisDifferentialTest, SimulatedServerAnswersLikeRedisServer) {
  std::string why;
  const std::unique_ptr<live::RedisProcess> process = differential::start_real_redis(why);
  ASSERT_NE(process, nullptr) << why;
  live::HiredisConnection real("127.0.0.1", process->port(), Duration::seconds(5), "real-redis");
  const Reply info = real.command({"PING"});
  ASSERT_EQ(info, Reply::status("PONG")) << "the real server does not answer";

  // One simulated server for all seeds, like the one real process: Lua's
  // math.random stream is per process in Redis 7.0, and both must see the same
  // scripts in the same order to stay in step.
  Server sim(1);
  int total_tolerated = 0;
  int total_commands = 0;
  std::map<Reply::Kind, int> kinds_seen;  // coverage: every reply shape must occur
  int touched_expired = 0;                // coverage: commands that met a lapsed lease
  for (int seed = 1; seed <= kSeeds; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    ASSERT_TRUE(real.command({"FLUSHALL"}).is_ok());
    ASSERT_TRUE(real.command({"SCRIPT", "FLUSH"}).is_ok());
    sim.restore({});
    sim.execute({"SCRIPT", "FLUSH"}, wall_now());

    CommandGenerator generator(static_cast<uint64_t>(seed) * 7919);
    int failures = 0;
    for (int i = 0; i < kCommandsPerSeed && failures < kFailuresPerSeedMax; ++i) {
      generator.maybe_sleep();
      const Step step = generator.next();
      const TimePoint now = wall_now();
      const bool ambiguous = step.compares_deadlines || near_an_expiry(sim, now.to_ms());
      touched_expired += touches_expired_key(sim, step.argv, now.to_ms()) ? 1 : 0;
      const Reply real_reply = real.command(step.argv);
      const Reply sim_reply = sim.execute(step.argv, now);
      ++total_commands;
      ++kinds_seen[real_reply.kind];
      ASSERT_FALSE(real_reply.is_io_error()) << real_reply.text << " on " << show(step.argv);
      if (replies_match(real_reply, sim_reply, step.tolerance)) continue;
      if (ambiguous) {
        ++total_tolerated;
        resync(real, sim);
        continue;
      }
      ++failures;
      ADD_FAILURE() << "step " << i << ": " << show(step.argv)
                    << "\n  real: " << real_reply.to_string()
                    << "\n  sim:  " << sim_reply.to_string();
      resync(real, sim);
    }
  }
  // The tolerance must stay the exception, or the test would prove nothing.
  EXPECT_LE(total_tolerated, total_commands / 20)
      << total_tolerated << " of " << total_commands << " commands fell in an expiry window";
  EXPECT_GE(touched_expired, 20) << "too few commands met an expired key";
  for (Reply::Kind kind : {Reply::Kind::kStatus, Reply::Kind::kError, Reply::Kind::kInteger,
                           Reply::Kind::kBulk, Reply::Kind::kNil, Reply::Kind::kArray}) {
    EXPECT_GT(kinds_seen[kind], 0) << "no reply of kind " << static_cast<int>(kind);
  }
  std::printf(
      "differential: %d commands, %d met an expired key, %d timing-ambiguous mismatches "
      "tolerated\n",
      total_commands, touched_expired, total_tolerated);
}

// Every command the four lock algorithms send, exactly as they send it, on a
// missing key, a live key and an expired (not yet collected) key: the cases
// where a simulator is most tempted to be approximately right.
TEST(RedisDifferentialTest, EveryLockCommandOnMissingLiveAndExpiredKeys) {
  std::string why;
  const std::unique_ptr<live::RedisProcess> process = differential::start_real_redis(why);
  ASSERT_NE(process, nullptr) << why;
  live::HiredisConnection real("127.0.0.1", process->port(), Duration::seconds(5), "real-redis");
  Server sim(1);
  const std::string k = "locksim:lock";
  const std::string token = "c1:00000000deadbeef";
  const std::vector<std::vector<std::string>> commands = {
      {"SET", k, token, "NX", "PX", "10000"},
      {"SETNX", k, token},
      {"EXPIRE", k, "10"},
      {"PEXPIRE", k, "10000"},
      {"GET", k},
      {"GETSET", k, "1700000012345"},
      {"DEL", k},
      {"EXISTS", k},
      {"EVAL", algorithms::SetNxLua::kReleaseScript, "1", k, token},
      {"EVAL", algorithms::SetNxLua::kReleaseScript, "1", k, "someone-else"},
      {"EVAL", algorithms::Redlock::kExtendScript, "1", k, token, "10000"},
      {"TTL", k},
  };
  enum class State { kMissing, kLive, kExpired };
  for (State state : {State::kMissing, State::kLive, State::kExpired}) {
    for (const auto& argv : commands) {
      SCOPED_TRACE(show(argv) + " on a " +
                   (state == State::kMissing ? "missing"
                    : state == State::kLive  ? "live"
                                             : "expired") +
                   " key");
      ASSERT_TRUE(real.command({"FLUSHALL"}).is_ok());
      sim.restore({});
      if (state != State::kMissing) {
        const std::vector<std::string> set = {"SET", k, token, "PX",
                                              state == State::kLive ? "60000" : "30"};
        const TimePoint t = wall_now();
        ASSERT_TRUE(real.command(set).is_ok());
        ASSERT_TRUE(sim.execute(set, t).is_ok());
        // Past the 30 ms expiry, but well before Redis's active expiry is
        // sure to have collected the key: lazy expiry is what gets tested.
        if (state == State::kExpired) std::this_thread::sleep_for(std::chrono::milliseconds(60));
      }
      const TimePoint now = wall_now();
      const Reply real_reply = real.command(argv);
      const Reply sim_reply = sim.execute(argv, now);
      const Tolerance tolerance = argv[0] == "TTL" ? Tolerance::kTtl : Tolerance::kExact;
      EXPECT_TRUE(replies_match(real_reply, sim_reply, tolerance))
          << "real: " << real_reply.to_string() << "\nsim:  " << sim_reply.to_string();
      // The state after the command must agree too.
      EXPECT_EQ(real.command({"GET", k}), sim.execute({"GET", k}, wall_now()));
    }
  }
}

}  // namespace
}  // namespace locksim::sim::redis
