// Unit tests of the simulated Redis server's semantics (sim/redis/): expiry on
// the server's own clock, string commands and their errors, EVAL and the Lua
// sandbox, the script cache, active expiry, SHA-1. Byte-for-byte fidelity to
// redis-server is checked separately by redis_differential_test.
#include <gtest/gtest.h>

#include <cctype>
#include <ostream>
#include <string>
#include <vector>

#include "sim/redis/server.h"
#include "sim/redis/sha1.h"
#include "tests/reply_print.h"

namespace locksim::sim::redis {
namespace {

const TimePoint kStart = TimePoint::from_ns(int64_t{1'700'000'000'000} * 1'000'000);
constexpr char kCompareAndDelete[] =
    "if redis.call(\"get\",KEYS[1]) == ARGV[1] then return redis.call(\"del\",KEYS[1]) else "
    "return 0 end";

class RedisServerTest : public ::testing::Test {
 protected:
  Reply run(const std::vector<std::string>& argv) { return server_.execute(argv, now_); }
  Reply eval(const std::string& script, const std::vector<std::string>& keys = {},
             const std::vector<std::string>& args = {}) {
    std::vector<std::string> argv = {"EVAL", script, std::to_string(keys.size())};
    argv.insert(argv.end(), keys.begin(), keys.end());
    argv.insert(argv.end(), args.begin(), args.end());
    return run(argv);
  }
  void advance(Duration d) { now_ += d; }

  Server server_{42};
  TimePoint now_ = kStart;
};

Reply I(int64_t v) {
  return Reply::integer_reply(v);
}
Reply B(std::string s) {
  return Reply::bulk(std::move(s));
}
Reply E(std::string s) {
  return Reply::error(std::move(s));
}
Reply A(std::vector<Reply> e) {
  return Reply::array(std::move(e));
}
const Reply kNil = Reply::nil();
const Reply kOk = Reply::ok();

TEST_F(RedisServerTest, SetNxPxAndExpiryJudgedByNow) {
  EXPECT_EQ(run({"SET", "lock", "a", "NX", "PX", "1000"}), kOk);
  EXPECT_EQ(run({"SET", "lock", "b", "NX", "PX", "1000"}), kNil);
  EXPECT_EQ(run({"GET", "lock"}), B("a"));
  EXPECT_EQ(run({"PTTL", "lock"}), I(1000));
  EXPECT_EQ(run({"TTL", "lock"}), I(1));
  advance(Duration::millis(1000));
  // Redis keeps a key alive while now == expire time.
  EXPECT_EQ(run({"PTTL", "lock"}), I(0));
  advance(Duration::millis(1));
  EXPECT_EQ(run({"GET", "lock"}), kNil);
  EXPECT_EQ(run({"PTTL", "lock"}), I(-2));
  EXPECT_EQ(run({"TTL", "lock"}), I(-2));
  EXPECT_EQ(run({"SET", "lock", "b", "NX", "PX", "1000"}), kOk);
  EXPECT_EQ(server_.dbsize(), 1u);
}

TEST_F(RedisServerTest, ExpiryIsAbsoluteOnTheServerClock) {
  EXPECT_EQ(run({"SET", "k", "v", "PX", "30000"}), kOk);
  const auto& entry = server_.keys().at("k");
  ASSERT_TRUE(entry.expire_at_ms.has_value());
  EXPECT_EQ(*entry.expire_at_ms, kStart.to_ms() + 30000);
  // A forward clock jump on the server expires the key early, as it would on Redis.
  now_ = kStart + Duration::seconds(20);
  EXPECT_EQ(run({"GET", "k"}), B("v"));
  now_ = kStart + Duration::seconds(31);
  EXPECT_EQ(run({"GET", "k"}), kNil);
  // A backward jump extends a lease.
  now_ = kStart;
  EXPECT_EQ(run({"SET", "k", "v", "PX", "1000"}), kOk);
  now_ = kStart - Duration::seconds(10);
  EXPECT_EQ(run({"PTTL", "k"}), I(11000));
}

TEST_F(RedisServerTest, TtlRoundsLikeRedis) {
  run({"SET", "k", "v", "PX", "1499"});
  EXPECT_EQ(run({"TTL", "k"}), I(1));
  run({"SET", "k", "v", "PX", "1500"});
  EXPECT_EQ(run({"TTL", "k"}), I(2));
  run({"SET", "k", "v"});
  EXPECT_EQ(run({"TTL", "k"}), I(-1));
  EXPECT_EQ(run({"PTTL", "k"}), I(-1));
  // Sub-millisecond time is truncated, as Redis' mstime() does.
  now_ += Duration::micros(999);
  run({"SET", "k", "v", "PX", "10"});
  EXPECT_EQ(run({"PTTL", "k"}), I(10));
}

TEST_F(RedisServerTest, SetOptionsAndErrors) {
  EXPECT_EQ(run({"SET", "k", "v", "XX"}), kNil);
  EXPECT_EQ(run({"set", "k", "v", "nx", "ex", "10"}), kOk);
  EXPECT_EQ(run({"SET", "k", "w", "KEEPTTL", "GET"}), B("v"));
  EXPECT_EQ(run({"PTTL", "k"}), I(10000));
  EXPECT_EQ(run({"SET", "k", "x", "GET"}), B("w"));
  EXPECT_EQ(run({"PTTL", "k"}), I(-1));
  EXPECT_EQ(run({"SET", "k", "y", "NX", "GET"}), B("x"));  // not set, old value returned
  EXPECT_EQ(run({"GET", "k"}), B("x"));
  EXPECT_EQ(run({"SET", "k", "y", "EX", "10", "EX", "20"}), kOk);
  EXPECT_EQ(run({"TTL", "k"}), I(20));
  EXPECT_EQ(run({"SET", "k", "v", "PXAT", std::to_string(kStart.to_ms() + 5)}), kOk);
  EXPECT_EQ(run({"PTTL", "k"}), I(5));
  EXPECT_EQ(run({"SET", "k", "v", "NX", "XX"}), E("ERR syntax error"));
  EXPECT_EQ(run({"SET", "k", "v", "PX"}), E("ERR syntax error"));
  EXPECT_EQ(run({"SET", "k", "v", "PX", "10", "EX", "10"}), E("ERR syntax error"));
  EXPECT_EQ(run({"SET", "k", "v", "KEEPTTL", "PX", "10"}), E("ERR syntax error"));
  EXPECT_EQ(run({"SET", "k", "v", "FOO"}), E("ERR syntax error"));
  EXPECT_EQ(run({"SET", "k", "v", "PX", "0"}), E("ERR invalid expire time in 'set' command"));
  EXPECT_EQ(run({"SET", "k", "v", "EX", "-5"}), E("ERR invalid expire time in 'set' command"));
  EXPECT_EQ(run({"SET", "k", "v", "EX", "9999999999999999"}),
            E("ERR invalid expire time in 'set' command"));
  EXPECT_EQ(run({"SET", "k", "v", "PX", "1.5"}), E("ERR value is not an integer or out of range"));
  EXPECT_EQ(run({"SET", "k"}), E("ERR wrong number of arguments for 'set' command"));
}

TEST_F(RedisServerTest, GetsetExpireOnMissingAndExpiredKeys) {
  EXPECT_EQ(run({"GETSET", "k", "v"}), kNil);
  EXPECT_EQ(run({"GETSET", "k", "w"}), B("v"));
  EXPECT_EQ(run({"EXPIRE", "missing", "10"}), I(0));
  EXPECT_EQ(run({"PEXPIRE", "k", "100"}), I(1));
  advance(Duration::millis(101));
  EXPECT_EQ(run({"EXPIRE", "k", "10"}), I(0));  // expired: treated as missing
  EXPECT_EQ(run({"GETSET", "k", "x"}), kNil);   // and GETSET sees no old value
  EXPECT_EQ(run({"PTTL", "k"}), I(-1));
  EXPECT_EQ(run({"PEXPIRE", "k", "0"}), I(1));  // non-positive deletes at once
  EXPECT_EQ(run({"EXISTS", "k"}), I(0));
  run({"SET", "k", "v"});
  EXPECT_EQ(run({"EXPIRE", "k", "-1"}), I(1));
  EXPECT_EQ(run({"GET", "k"}), kNil);
  EXPECT_EQ(run({"EXPIRE", "k", "abc"}), E("ERR value is not an integer or out of range"));
}

TEST_F(RedisServerTest, ExpireOptions) {
  run({"SET", "k", "v"});
  EXPECT_EQ(run({"PEXPIRE", "k", "1000", "XX"}), I(0));
  EXPECT_EQ(run({"PEXPIRE", "k", "1000", "GT"}), I(0));  // no TTL counts as infinite
  EXPECT_EQ(run({"PEXPIRE", "k", "1000", "NX"}), I(1));
  EXPECT_EQ(run({"PEXPIRE", "k", "500", "GT"}), I(0));
  EXPECT_EQ(run({"PEXPIRE", "k", "2000", "gt"}), I(1));
  EXPECT_EQ(run({"PEXPIRE", "k", "3000", "LT"}), I(0));
  EXPECT_EQ(run({"PEXPIRE", "k", "1500", "LT"}), I(1));
  EXPECT_EQ(run({"PTTL", "k"}), I(1500));
  EXPECT_EQ(run({"PEXPIRE", "k", "1", "NX", "XX"}),
            E("ERR NX and XX, GT or LT options at the same time are not compatible"));
  EXPECT_EQ(run({"PEXPIRE", "k", "1", "GT", "LT"}),
            E("ERR GT and LT options at the same time are not compatible"));
  EXPECT_EQ(run({"EXPIRE", "k", "1", "foo"}), E("ERR Unsupported option foo"));
  EXPECT_EQ(run({"EXPIRE", "k", "9999999999999999"}),
            E("ERR invalid expire time in 'expire' command"));
  EXPECT_EQ(run({"PERSIST", "k"}), I(1));
  EXPECT_EQ(run({"PTTL", "k"}), I(-1));
}

TEST_F(RedisServerTest, DelExistsMultiKey) {
  run({"SET", "a", "1"});
  run({"SET", "b", "2"});
  EXPECT_EQ(run({"EXISTS", "a", "a", "b", "c"}), I(3));
  EXPECT_EQ(run({"DEL", "a", "a", "c"}), I(1));
  EXPECT_EQ(run({"DEL"}), E("ERR wrong number of arguments for 'del' command"));
}

TEST_F(RedisServerTest, IncrErrorsAndOverflow) {
  EXPECT_EQ(run({"INCR", "n"}), I(1));
  EXPECT_EQ(run({"INCR", "n"}), I(2));
  for (const char* bad : {"abc", "", " 1", "+1", "01", "-0", "1.5", "99999999999999999999"}) {
    run({"SET", "n", bad});
    EXPECT_EQ(run({"INCR", "n"}), E("ERR value is not an integer or out of range")) << bad;
  }
  run({"SET", "n", "9223372036854775807"});
  EXPECT_EQ(run({"INCR", "n"}), E("ERR increment or decrement would overflow"));
  run({"SET", "n", "-9223372036854775808"});
  EXPECT_EQ(run({"INCR", "n"}), I(-9223372036854775807));
  // INCR keeps the TTL.
  run({"SET", "n", "5", "PX", "1000"});
  EXPECT_EQ(run({"INCR", "n"}), I(6));
  EXPECT_EQ(run({"PTTL", "n"}), I(1000));
}

TEST_F(RedisServerTest, ArityAndUnknownCommands) {
  EXPECT_EQ(run({"GET"}), E("ERR wrong number of arguments for 'get' command"));
  EXPECT_EQ(run({"GeT", "a", "b"}), E("ERR wrong number of arguments for 'get' command"));
  EXPECT_EQ(run({"SETNX", "a"}), E("ERR wrong number of arguments for 'setnx' command"));
  EXPECT_EQ(run({"PING", "a", "b"}), E("ERR wrong number of arguments for 'ping' command"));
  EXPECT_EQ(run({"FOO", "a", "b"}),
            E("ERR unknown command 'FOO', with args beginning with: 'a' 'b' "));
  EXPECT_EQ(run({"foo"}), E("ERR unknown command 'foo', with args beginning with: "));
  // Names are matched whole, in any letter case.
  EXPECT_EQ(run({"gEtSeT", "a", "1"}), kNil);
  EXPECT_EQ(run({"PexpireAT", "missing", "1"}), I(0));
  EXPECT_EQ(run({"gets", "a"}), E("ERR unknown command 'gets', with args beginning with: 'a' "));
  EXPECT_EQ(run({"ge", "a"}), E("ERR unknown command 'ge', with args beginning with: 'a' "));
  EXPECT_EQ(run({"get ", "a"}), E("ERR unknown command 'get ', with args beginning with: 'a' "));
  EXPECT_EQ(run({""}), E("ERR unknown command '', with args beginning with: "));
  EXPECT_EQ(run({"PING"}), Reply::status("PONG"));
  EXPECT_EQ(run({"PING", "hi"}), B("hi"));
  EXPECT_EQ(run({"SCRIPT"}), E("ERR wrong number of arguments for 'script' command"));
  EXPECT_EQ(run({"SCRIPT", "LOAD"}), E("ERR wrong number of arguments for 'script|load' command"));
  EXPECT_EQ(run({"SCRIPT", "Foo"}), E("ERR unknown subcommand 'Foo'. Try SCRIPT HELP."));
}

TEST_F(RedisServerTest, EvalCompareAndDelete) {
  run({"SET", "lock", "me", "PX", "1000"});
  EXPECT_EQ(eval(kCompareAndDelete, {"lock"}, {"other"}), I(0));
  EXPECT_EQ(run({"GET", "lock"}), B("me"));
  EXPECT_EQ(eval(kCompareAndDelete, {"lock"}, {"me"}), I(1));
  EXPECT_EQ(run({"GET", "lock"}), kNil);
  // Expiry inside a script is judged by the command's `now`.
  run({"SET", "lock", "me", "PX", "10"});
  advance(Duration::millis(11));
  EXPECT_EQ(eval(kCompareAndDelete, {"lock"}, {"me"}), I(0));
}

TEST_F(RedisServerTest, EvalNumkeysValidation) {
  EXPECT_EQ(run({"EVAL", "return 1", "2", "a"}),
            E("ERR Number of keys can't be greater than number of args"));
  EXPECT_EQ(run({"EVAL", "return 1", "-1"}), E("ERR Number of keys can't be negative"));
  EXPECT_EQ(run({"EVAL", "return 1", "x"}), E("ERR value is not an integer or out of range"));
  EXPECT_EQ(eval("return {KEYS[1], ARGV[1], #KEYS, #ARGV}", {"k"}, {"a", "b"}),
            A({B("k"), B("a"), I(1), I(2)}));
}

TEST_F(RedisServerTest, LuaToRedisConversions) {
  EXPECT_EQ(eval("return 3.7"), I(3));
  EXPECT_EQ(eval("return -3.7"), I(-3));
  EXPECT_EQ(eval("return 1e20"), I(INT64_MIN));
  EXPECT_EQ(eval("return 'x'"), B("x"));
  EXPECT_EQ(eval("return true"), I(1));
  EXPECT_EQ(eval("return false"), kNil);
  EXPECT_EQ(eval("return nil"), kNil);
  EXPECT_EQ(eval("return {1, 'a', {2}, nil, 3}"), A({I(1), B("a"), A({I(2)})}));
  EXPECT_EQ(eval("return {ok='fine'}"), Reply::status("fine"));
  EXPECT_EQ(eval("return {err='MY boom'}"), E("MY boom"));
  EXPECT_EQ(eval("return {err='boom'}"), E("boom"));
  EXPECT_EQ(eval("return redis.error_reply('boom')"), E("ERR boom"));
  EXPECT_EQ(eval("return redis.error_reply('MY boom')"), E("MY boom"));
  EXPECT_EQ(eval("return redis.status_reply('FINE')"), Reply::status("FINE"));
  EXPECT_EQ(eval("return {1, {err='e'}, true, false, 2}"), A({I(1), E("e"), I(1), kNil, I(2)}));
  EXPECT_EQ(eval("local t = {} t[1] = t return t").kind, Reply::Kind::kArray);  // bounded
}

TEST_F(RedisServerTest, RedisToLuaConversions) {
  run({"SET", "s", "abc"});
  EXPECT_EQ(eval("return type(redis.call('get', 'nokey'))"), B("boolean"));
  EXPECT_EQ(eval("return redis.call('get', 'nokey') == false"), I(1));
  EXPECT_EQ(eval("return redis.call('ping').ok"), B("PONG"));
  EXPECT_EQ(eval("return redis.call('ping')"), Reply::status("PONG"));
  EXPECT_EQ(eval("return type(redis.call('incr', 'n'))"), B("number"));
  EXPECT_EQ(eval("return redis.pcall('incr', 's').err"),
            B("ERR value is not an integer or out of range"));
  EXPECT_EQ(eval("return redis.call('set', 'f', 0.1)"), kOk);
  EXPECT_EQ(run({"GET", "f"}), B("0.10000000000000001"));  // %.17g, as Redis 7.0
  const std::string bad_arg = "return redis.call('set', 'f', {})";
  EXPECT_EQ(eval(bad_arg),
            E("ERR Lua redis lib command arguments must be strings or integers script: " +
              sha1_hex(bad_arg) + ", on @user_script:1."));
}

TEST_F(RedisServerTest, ScriptErrors) {
  run({"SET", "s", "abc"});
  const std::string script = "return redis.call('incr','s')";
  EXPECT_EQ(eval(script), E("ERR value is not an integer or out of range script: " +
                            sha1_hex(script) + ", on @user_script:1."));
  EXPECT_EQ(eval("return redis.pcall('incr','s')"),
            E("ERR value is not an integer or out of range"));
  const std::string raise = "\nerror('x')";
  EXPECT_EQ(eval(raise),
            E("ERR user_script:2: x script: " + sha1_hex(raise) + ", on @user_script:2."));
  EXPECT_EQ(eval("return redis.call('nosuch')")
                .text.rfind("ERR Unknown Redis command called from script script: ", 0),
            0u);
  EXPECT_EQ(eval("return redis.pcall('get')"),
            E("ERR Wrong number of args calling Redis command from script"));
  EXPECT_EQ(eval("return redis.pcall('eval', 'return 1', '0')"),
            E("ERR This Redis command is not allowed from script"));
  EXPECT_EQ(eval("return redis.pcall()"),
            E("ERR Please specify at least one argument for this redis lib call"));
  // Lua's pcall hands redis.call's error to the script as a string.
  EXPECT_EQ(eval("local ok, e = pcall(redis.call, 'incr', 's') return {tostring(ok), e}"),
            A({B("false"), B("ERR value is not an integer or out of range")}));
  EXPECT_EQ(eval("return syntax error here"),
            E("ERR Error compiling script (new function): user_script:1: '<eof>' expected near "
              "'error'"));
  // Writes before an error stay, as on Redis (no rollback).
  EXPECT_EQ(eval("redis.call('set','w','1') error('late')").kind, Reply::Kind::kError);
  EXPECT_EQ(run({"GET", "w"}), B("1"));
}

TEST_F(RedisServerTest, SandboxHidesOsIoAndLoadfile) {
  for (const char* name : {"os", "io", "loadfile", "dofile", "print", "require", "debug"}) {
    const std::string script = std::string("return ") + name;
    EXPECT_EQ(eval(script), E(std::string("ERR user_script:1: Script attempted to access "
                                          "nonexistent global variable '") +
                              name + "' script: " + sha1_hex(script) + ", on @user_script:1."))
        << name;
  }
  const std::string assign = "x = 5";
  EXPECT_EQ(eval(assign), E("ERR user_script:1: Attempt to modify a readonly table script: " +
                            sha1_hex(assign) + ", on @user_script:1."));
  EXPECT_EQ(eval("string.rep = nil").kind, Reply::Kind::kError);
  EXPECT_EQ(eval("return string.rep('ab', 2)"), B("abab"));
  // rawset leftovers do not leak into the next script.
  eval("rawset(_G, 'leak', 1)");
  EXPECT_EQ(eval("return leak").kind, Reply::Kind::kError);
  EXPECT_EQ(eval("return type(loadstring)"), B("function"));
  EXPECT_EQ(eval("return table.concat({'a','b'}, ',')"), B("a,b"));
  EXPECT_EQ(eval("return math.floor(2.5)"), I(2));
}

// What one script sees of KEYS and ARGV: #, every pair in pairs() order, the metatable.
constexpr char kDescribeKeysAndArgv[] =
    "local function d(t) local p = {} for k, v in pairs(t) do "
    "p[#p + 1] = tostring(k) .. '=' .. tostring(v) end "
    "return #t .. ':' .. table.concat(p, ',') .. ':' .. tostring(getmetatable(t)) end "
    "return {d(KEYS), d(ARGV)}";

// The reply a server that never ran a script gives: KEYS and ARGV made afresh.
Reply first_run_reply(const std::string& script, const std::vector<std::string>& keys,
                      const std::vector<std::string>& args) {
  Server fresh(42);
  std::vector<std::string> argv = {"EVAL", script, std::to_string(keys.size())};
  argv.insert(argv.end(), keys.begin(), keys.end());
  argv.insert(argv.end(), args.begin(), args.end());
  return fresh.execute(argv, kStart);
}

TEST_F(RedisServerTest, KeysAndArgvLookMadeAfreshEveryRun) {
  // Each step: a script that may change KEYS or ARGV (all but the last
  // allocate nothing, so the tables may be kept), then one that looks.
  const std::vector<std::string> touch = {
      "return 1",
      "KEYS[1] = 'k' ARGV[2] = nil return 1",
      "KEYS[1] = nil ARGV[1] = 5 return 1",
      "setmetatable(KEYS, getmetatable('')) setmetatable(ARGV, ARGV) return 1",
      "KEYS.junk = 1 KEYS.junk = nil table.insert(ARGV, 'more') return 1",
  };
  const std::vector<std::vector<std::string>> sizes = {{}, {"k1"}, {"k1", "k2", "k3"}};
  for (const std::string& script : touch) {
    for (const auto& keys : sizes) {
      for (const auto& args : sizes) {
        eval(script, keys, args);
        std::vector<std::string> other_args = args;
        for (std::string& a : other_args) a += "'";
        EXPECT_EQ(eval(kDescribeKeysAndArgv, keys, other_args),
                  first_run_reply(kDescribeKeysAndArgv, keys, other_args))
            << script << " with " << keys.size() << " keys, " << args.size() << " args";
      }
    }
  }
  EXPECT_EQ(eval(kDescribeKeysAndArgv, {"a", "b"}, {"c"}), A({B("2:1=a,2=b:nil"), B("1:1=c:nil")}));
  EXPECT_EQ(eval("return {KEYS[1], ARGV[1]}", {std::string("a\0b", 3)}, {""}),
            A({B(std::string("a\0b", 3)), B("")}));
  EXPECT_EQ(eval("return {KEYS[1], ARGV[1]}", {std::string("a\0c", 3)}, {"x"}),
            A({B(std::string("a\0c", 3)), B("x")}));
}

TEST_F(RedisServerTest, WhatAScriptDidToKeysDoesNotShapeTheNextOnes) {
  // Keys a script adds and removes leave a hash part behind in the table
  // they went into; where the next script's new keys land in it, and so
  // pairs()' order, must be as in a table made afresh.
  const std::string grow_and_clear =
      "KEYS.q=1 KEYS[7]=1 KEYS[9]=1 KEYS[12]=1 KEYS.z=1 KEYS.p=1 "
      "KEYS.q=nil KEYS[7]=nil KEYS[9]=nil KEYS[12]=nil KEYS.z=nil KEYS.p=nil return 1";
  const std::string insert_and_list =
      "KEYS.w=1 KEYS.s=1 KEYS.r=1 KEYS[3]=1 KEYS.q=1 local o = {} "
      "for k in pairs(KEYS) do o[#o + 1] = tostring(k) end return table.concat(o, ',')";
  const Reply expected = first_run_reply(insert_and_list, {"k"}, {"a"});
  for (int round = 0; round < 3; ++round) {
    eval("return 1", {"k"}, {"a"});
    eval(grow_and_clear, {"k"}, {"a"});
    EXPECT_EQ(eval(insert_and_list, {"k"}, {"a"}), expected) << round;
  }
}

TEST_F(RedisServerTest, RawWritesIntoReadOnlyTablesAreWiped) {
  // Every way a script can write past a read-only table's __newindex.
  EXPECT_EQ(eval("table.insert(string, 'x') return string[1]"), B("x"));
  EXPECT_EQ(eval("return string[1]"), kNil);
  EXPECT_EQ(eval("table.insert(redis, 'b') table.insert(redis, 'a') table.sort(redis) "
                 "return {redis[1], redis[2]}"),
            A({B("a"), B("b")}));
  EXPECT_EQ(eval("return #redis"), I(0));
  EXPECT_EQ(eval("rawset(math, 1, 'x') rawset(math, 2, 'y') table.remove(math, 1) return math[1]"),
            B("y"));
  EXPECT_EQ(eval("return #math"), I(0));
  EXPECT_EQ(eval("rawset(table, 'insert', 5) return type(table.insert)"), B("number"));
  EXPECT_EQ(eval("return type(table.insert)"), B("function"));
  // The error handler records where an error happened in the error value.
  EXPECT_EQ(eval("error(string)").kind, Reply::Kind::kError);
  // An error value whose missing fields raise (the guarded globals) is read
  // raw: an error reply, not a crash of the server, which answers on.
  EXPECT_EQ(eval("error(_G)").kind, Reply::Kind::kError);
  EXPECT_EQ(eval("error(setmetatable({}, {__index = function() error('no') end}))").kind,
            Reply::Kind::kError);
  EXPECT_EQ(eval("return 7"), I(7));
  EXPECT_EQ(eval("return tostring(rawget(string, 'source'))"), B("nil"));
  // The library functions behave and fail as before they were wrapped.
  const std::string misuse[][2] = {{"rawset(1, 2, 3)", "rawset"},
                                   {"table.insert(1, 2)", "insert"},
                                   {"table.remove(1)", "remove"},
                                   {"table.sort(1)", "sort"}};
  for (const auto& [script, name] : misuse) {
    EXPECT_EQ(eval(script), E("ERR user_script:1: bad argument #1 to '" + name +
                              "' (table expected, got number) script: " + sha1_hex(script) +
                              ", on @user_script:1."));
  }
  EXPECT_EQ(eval("local ok, e = pcall(rawset, nil) return e"),
            B("bad argument #1 to '?' (table expected, got nil)"));
  EXPECT_EQ(eval("local t = {} rawset(t, 'a', 1) table.insert(t, 'x') table.insert(t, 1, 'y') "
                 "table.sort(t, function(a, b) return a > b end) "
                 "return {t.a, t[1], t[2], table.remove(t), #t}"),
            A({I(1), B("y"), B("x"), B("x"), I(1)}));
}

TEST_F(RedisServerTest, MathRandomFollowsRedis7) {
  // The values a fresh redis-server 7.0.15 returns: one rand48 stream per
  // server, not reseeded per script, surviving SCRIPT FLUSH.
  EXPECT_EQ(eval("return {math.random(1000000), math.random(1000000)}"), A({I(396465), I(840486)}));
  EXPECT_EQ(run({"SCRIPT", "FLUSH"}), kOk);
  EXPECT_EQ(eval("return math.random(1000000)"), I(353337));
  EXPECT_EQ(eval("math.randomseed(7); return math.random(1000000)"), I(266445));
  EXPECT_EQ(eval("math.randomseed(0) return math.random()*1000000"), I(170828));
  EXPECT_EQ(eval("return {math.random(10), math.random(5,8)}").elements.size(), 2u);
  EXPECT_EQ(eval("return math.random(0)").kind, Reply::Kind::kError);
  // A restart starts the stream over.
  server_.flush_all();
  EXPECT_EQ(eval("return math.random(1000000)"), I(396465));
}

TEST_F(RedisServerTest, InfiniteLoopIsStopped) {
  server_.set_script_instruction_limit(1'000'000);
  const Reply r = eval("local i = 0 while true do i = i + 1 end");
  ASSERT_TRUE(r.is_error());
  EXPECT_NE(r.text.find("Script killed"), std::string::npos) << r.text;
  // Even a script that keeps catching the error is stopped.
  const Reply r2 = eval("while true do pcall(function() while true do end end) end");
  ASSERT_TRUE(r2.is_error());
  EXPECT_NE(r2.text.find("Script killed"), std::string::npos) << r2.text;
  // The server is still usable.
  EXPECT_EQ(eval("return 1"), I(1));
  EXPECT_EQ(eval("return string.len(string.rep('x', 1000000))"), I(1000000));
}

TEST_F(RedisServerTest, EvalshaAndScriptCommands) {
  const std::string sha = sha1_hex("return 1");
  EXPECT_EQ(run({"EVALSHA", sha, "0"}), E("NOSCRIPT No matching script. Please use EVAL."));
  EXPECT_EQ(run({"EVALSHA", "short", "0"}), E("NOSCRIPT No matching script. Please use EVAL."));
  EXPECT_EQ(run({"SCRIPT", "LOAD", "return 1"}), B(sha));
  EXPECT_EQ(run({"SCRIPT", "EXISTS", sha, "nope"}), A({I(1), I(0)}));
  std::string upper = sha;
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  EXPECT_EQ(run({"EVALSHA", upper, "0"}), I(1));
  EXPECT_EQ(run({"SCRIPT", "FLUSH"}), kOk);
  EXPECT_EQ(run({"EVALSHA", sha, "0"}), E("NOSCRIPT No matching script. Please use EVAL."));
  EXPECT_EQ(run({"EVAL", "return 1", "0"}), I(1));  // EVAL caches too
  EXPECT_EQ(run({"EVALSHA", sha, "0"}), I(1));
  EXPECT_EQ(run({"SCRIPT", "FLUSH", "bad"}), E("ERR SCRIPT FLUSH only support SYNC|ASYNC option"));
  EXPECT_EQ(run({"SCRIPT", "LOAD", "bad code here"}),
            E("ERR Error compiling script (new function): user_script:1: '=' expected near "
              "'code'"));
  EXPECT_EQ(server_.scripts().count(sha), 1u);
}

TEST_F(RedisServerTest, RestoreKeepsScriptsFlushAllDropsThem) {
  run({"SET", "k", "v", "PX", "100"});
  run({"SCRIPT", "LOAD", "return 2"});
  auto snapshot = server_.keys();
  server_.flush_all();
  EXPECT_EQ(server_.dbsize(), 0u);
  EXPECT_TRUE(server_.scripts().empty());
  server_.restore(snapshot);
  EXPECT_EQ(run({"PTTL", "k"}), I(100));
  run({"SCRIPT", "LOAD", "return 2"});
  server_.restore({});
  EXPECT_EQ(server_.scripts().size(), 1u);
}

TEST(RedisActiveExpireTest, DeletesExpiredKeysDeterministically) {
  auto fill = [](Server& s) {
    for (int i = 0; i < 200; ++i) {
      const std::string px = i % 4 == 0 ? "100000" : "10";
      s.execute({"SET", "k" + std::to_string(i), "v", "PX", px}, kStart);
    }
    for (int i = 0; i < 50; ++i) s.execute({"SET", "p" + std::to_string(i), "v"}, kStart);
  };
  Server a(7), b(7);
  fill(a);
  fill(b);
  const TimePoint later = kStart + Duration::millis(20);
  const auto deleted_a = a.active_expire(later);
  const auto deleted_b = b.active_expire(later);
  EXPECT_EQ(deleted_a, deleted_b);
  EXPECT_FALSE(deleted_a.empty());
  EXPECT_LE(deleted_a.size(), 20u * 16u);
  for (const auto& key : deleted_a) EXPECT_EQ(a.keys().count(key), 0u);
  // Repeated cycles converge: only live keys remain.
  for (int round = 0; round < 100; ++round) a.active_expire(later);
  EXPECT_EQ(a.dbsize(), 50u + 50u);
  // Nothing live is ever deleted.
  EXPECT_TRUE(a.active_expire(kStart).empty());
}

// Keyspace::version, which the exposure monitor's stamp sums: every change
// moves it, a read does not (a waiting client's SET NX that finds the lock
// taken must not make the monitor ask the servers again).
TEST(RedisKeysVersionTest, ChangesMoveItReadsDoNot) {
  Server s(1);
  EXPECT_EQ(s.execute({"SET", "lock", "a", "NX", "PX", "1000"}, kStart), kOk);
  uint64_t v = s.keys_version();
  for (const std::vector<std::string>& read : std::vector<std::vector<std::string>>{
           {"SET", "lock", "b", "NX", "PX", "1000"},
           {"SETNX", "lock", "b"},
           {"GET", "lock"},
           {"PTTL", "lock"},
           {"TTL", "lock"},
           {"EXISTS", "lock", "other"},
           {"TYPE", "lock"},
           {"GET", "other"},
           {"SET", "other", "x", "XX"},
           {"PEXPIRE", "other", "100"},
           {"DEL", "other"},
           {"EVAL", "return redis.call('get', KEYS[1])", "1", "lock"}}) {
    s.execute(read, kStart);
    EXPECT_EQ(s.keys_version(), v) << read[0];
  }
  const auto moves = [&](const std::vector<std::string>& argv, TimePoint at) {
    s.execute(argv, at);
    const bool moved = s.keys_version() != v;
    v = s.keys_version();
    return moved;
  };
  EXPECT_TRUE(moves({"PEXPIRE", "lock", "2000"}, kStart));
  EXPECT_TRUE(moves({"SET", "n", "1"}, kStart));
  EXPECT_TRUE(moves({"INCR", "n"}, kStart));
  EXPECT_TRUE(moves({"HSET", "h", "f", "1"}, kStart));
  EXPECT_TRUE(moves({"HINCRBY", "h", "f", "1"}, kStart));
  EXPECT_TRUE(moves({"EVAL", "return redis.call('del', KEYS[1])", "1", "n"}, kStart));
  // Lazy expiry deletes the key a read finds dead: a change.
  EXPECT_TRUE(moves({"GET", "lock"}, kStart + Duration::seconds(3)));
  EXPECT_EQ(s.keys().count("lock"), 0u);
  EXPECT_FALSE(moves({"GET", "lock"}, kStart + Duration::seconds(3)));
}

TEST(Sha1Test, Vectors) {
  EXPECT_EQ(sha1_hex(""), "da39a3ee5e6b4b0d3255bfef95601890afd80709");
  EXPECT_EQ(sha1_hex("abc"), "a9993e364706816aba3e25717850c26c9cd0d89d");
  EXPECT_EQ(sha1_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "84983e441c3bd26ebaae4aa1f95129e5e54670f1");
  EXPECT_EQ(sha1_hex(std::string(1000000, 'a')), "34aa973cd4c4daa4f61eeb2bdbad27316534016f");
  EXPECT_EQ(sha1_hex("return 1"), "e0e1f9fabfc9d4800c877a703b823ac0578ff8db");  // from redis-server
  // Lengths around the padding boundary.
  EXPECT_EQ(sha1_hex(std::string(55, 'a')), "c1c8bbdc22796e28c0e15163d20899b65621d65a");
  EXPECT_EQ(sha1_hex(std::string(56, 'a')), "c2db330f6083854c99d4b5bfb6e8f29f201be699");
  EXPECT_EQ(sha1_hex(std::string(64, 'a')), "0098ba824b5c16427bd7a1122a5a442a25ec644d");
}

}  // namespace
}  // namespace locksim::sim::redis
