// The scripts the simulated Redis runs as C++ (sim/redis/lua_intrinsics.h)
// against the same scripts run by Lua: two servers, one with intrinsics
// and one without, take the same commands, and every reply, the keyspace
// and its version stamp must agree after each one. Covers every kind of
// GET reply (a match, another value, nil, an expired key, WRONGTYPE), a
// refused PEXPIRE, a missing KEYS or ARGV item, and a seeded walk that
// mixes them with writes and the passing of time.
#include <gtest/gtest.h>

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "algorithms/redlock.h"
#include "algorithms/set_nx_lua.h"
#include "env/random.h"
#include "sim/redis/lua_intrinsics.h"
#include "sim/redis/server.h"
#include "tests/reply_print.h"

namespace locksim::sim::redis {
namespace {

const TimePoint kStart = TimePoint::from_ns(int64_t{1'700'000'000'000} * 1'000'000);
const std::string kRelease = algorithms::SetNxLua::kReleaseScript;
const std::string kExtend = algorithms::Redlock::kExtendScript;

// The two servers, one command at a time.
class IntrinsicsAgainstLua : public ::testing::Test {
 protected:
  IntrinsicsAgainstLua() { by_lua_.set_script_intrinsics(false); }

  // Runs `argv` on both and expects the same reply, keyspace and stamp.
  Reply both(const std::vector<std::string>& argv) {
    const Reply native = intrinsic_.execute(argv, now_);
    const Reply lua = by_lua_.execute(argv, now_);
    EXPECT_EQ(native, lua) << describe(argv) << ": " << native.to_string() << " vs "
                           << lua.to_string();
    EXPECT_TRUE(intrinsic_.keys() == by_lua_.keys()) << describe(argv);
    EXPECT_EQ(intrinsic_.keys_version(), by_lua_.keys_version()) << describe(argv);
    return native;
  }
  Reply eval(const std::string& script, std::vector<std::string> keys,
             const std::vector<std::string>& args) {
    std::vector<std::string> argv = {"EVAL", script, std::to_string(keys.size())};
    argv.insert(argv.end(), keys.begin(), keys.end());
    argv.insert(argv.end(), args.begin(), args.end());
    return both(argv);
  }
  static std::string describe(const std::vector<std::string>& argv) {
    std::string text;
    for (const std::string& a : argv) text += (text.empty() ? "" : " ") + a.substr(0, 12);
    return text;
  }

  Server intrinsic_{7};
  Server by_lua_{7};
  TimePoint now_ = kStart;
};

TEST(LuaIntrinsics, KnowTheLockClientsScriptsAndNothingElse) {
  EXPECT_EQ(intrinsic_of(kRelease), Intrinsic::kCompareAndDel);
  EXPECT_EQ(intrinsic_of(kExtend), Intrinsic::kCompareAndPexpire);
  // Another spacing is another script: Lua runs it.
  EXPECT_EQ(intrinsic_of(kRelease + " "), Intrinsic::kNone);
  EXPECT_EQ(intrinsic_of("return 1"), Intrinsic::kNone);
}

TEST_F(IntrinsicsAgainstLua, ReleaseAnswersAsLuaForEveryKindOfGet) {
  both({"SET", "k", "tok"});
  EXPECT_EQ(eval(kRelease, {"k"}, {"other"}), Reply::integer_reply(0));  // another's value
  EXPECT_EQ(eval(kRelease, {"k"}, {"tok"}), Reply::integer_reply(1));    // ours: deleted
  EXPECT_EQ(eval(kRelease, {"k"}, {"tok"}), Reply::integer_reply(0));    // nil
  both({"SET", "k", "tok", "PX", "10"});
  now_ += Duration::millis(11);  // past the expiry: Redis keeps a key through its last ms
  EXPECT_EQ(eval(kRelease, {"k"}, {"tok"}), Reply::integer_reply(0));  // lazily expired
  both({"HSET", "h", "f", "v"});
  const Reply wrong = eval(kRelease, {"h"}, {"tok"});  // WRONGTYPE: Lua's error reply
  EXPECT_TRUE(wrong.is_error()) << wrong.to_string();
  EXPECT_NE(wrong.text.find("WRONGTYPE"), std::string::npos) << wrong.text;
  // Missing KEYS[1] or ARGV[1]; extra keys and arguments, which the script ignores.
  EXPECT_TRUE(eval(kRelease, {}, {"tok"}).is_error());
  both({"SET", "k", "tok"});
  EXPECT_EQ(eval(kRelease, {"k"}, {}), Reply::integer_reply(0));
  EXPECT_EQ(eval(kRelease, {"k", "x"}, {"tok", "y"}), Reply::integer_reply(1));
  // A binary token, equal only byte for byte.
  both({"SET", "b", std::string("a\0b", 3)});
  EXPECT_EQ(eval(kRelease, {"b"}, {"a"}), Reply::integer_reply(0));
  EXPECT_EQ(eval(kRelease, {"b"}, {std::string("a\0b", 3)}), Reply::integer_reply(1));
}

TEST_F(IntrinsicsAgainstLua, ExtendAnswersAsLuaForEveryPexpire) {
  both({"SET", "k", "tok"});
  EXPECT_EQ(eval(kExtend, {"k"}, {"tok", "5000"}), Reply::integer_reply(1));
  EXPECT_EQ(eval(kExtend, {"k"}, {"other", "5000"}), Reply::integer_reply(0));
  for (const char* refused : {"abc", "", "99999999999999999999", "1.5"}) {
    const Reply r = eval(kExtend, {"k"}, {"tok", refused});  // Lua's error reply
    EXPECT_TRUE(r.is_error()) << refused << ": " << r.to_string();
  }
  EXPECT_TRUE(eval(kExtend, {"k"}, {"tok"}).is_error());                    // ARGV[2] nil
  EXPECT_EQ(eval(kExtend, {"k"}, {"tok", "-1"}), Reply::integer_reply(1));  // deletes it
  both({"EXISTS", "k"});
}

TEST_F(IntrinsicsAgainstLua, ScriptsAfterAnIntrinsicSeeWhatTheyWouldHaveSeen) {
  // An intrinsic run leaves KEYS, ARGV and the math.random stream as the
  // Lua run leaves them: a Lua script after it reads the same.
  const std::string peek = "return {KEYS[1], ARGV[1], math.random(1000000)}";
  eval(peek, {"a"}, {"1"});
  both({"SET", "k", "tok"});
  eval(kRelease, {"k"}, {"tok"});
  eval(kRelease, {"k"}, {"tok"});
  eval(peek, {"a"}, {"1"});
  eval(peek, {"z"}, {"2"});
  both({"EVALSHA", "1a2b", "0"});
}

// A seeded walk of writes, time and both scripts over three keys.
TEST_F(IntrinsicsAgainstLua, ASeededWalkAgreesAtEveryStep) {
  uint64_t state = 20261130;
  auto next = [&state] {  // splitmix64
    uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  };
  const std::vector<std::string> keys = {"a", "b", "c"};
  const std::vector<std::string> tokens = {"t1", "t2", ""};
  const std::vector<std::string> ttls = {"1", "50", "-3", "x"};
  for (int step = 0; step < 3000; ++step) {
    const std::string& key = keys[uniform_below(next, keys.size())];
    const std::string& token = tokens[uniform_below(next, tokens.size())];
    switch (uniform_below(next, 6)) {
      case 0:
        both({"SET", key, token, "PX", std::to_string(1 + uniform_below(next, 40))});
        break;
      case 1:
        both({"HSET", key, "f", token});
        break;
      case 2:
        now_ += Duration::millis(static_cast<int64_t>(uniform_below(next, 20)));
        break;
      case 3:
        eval(kRelease, {key}, {token});
        break;
      default:
        eval(kExtend, {key}, {token, ttls[uniform_below(next, ttls.size())]});
        break;
    }
    if (HasFailure()) FAIL() << "at step " << step;
  }
}

}  // namespace
}  // namespace locksim::sim::redis
