// A script's tonumber (sim/redis/lua_sandbox.cpp) reads a plain integer
// without strtod and hands anything else to Lua's own tonumber. Both must
// give exactly the number Lua 5.1 gives (luaO_str2d: strtod, then only
// spaces), bit for bit, or a fair lock's scores, and so a history, change.
// Held here against strtod itself and against the library's tonumber in a
// plain interpreter.
#include <gtest/gtest.h>

#include <lua.hpp>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "sim/redis/lua_values.h"
#include "sim/redis/server.h"
#include "sim/rng.h"

namespace locksim::sim::redis {
namespace {

uint64_t bits_of(double d) {
  uint64_t b = 0;
  std::memcpy(&b, &d, sizeof b);
  return b;
}

// What luaO_str2d reads for a text strtod takes whole.
double strtod_of(const std::string& s) {
  char* end = nullptr;
  const double d = std::strtod(s.c_str(), &end);
  EXPECT_EQ(end, s.c_str() + s.size()) << s;
  return d;
}

TEST(LuaTonumber, APlainIntegerIsStrtodsNumberBitForBit) {
  std::vector<std::string> texts = {"0",
                                    "-0",
                                    "7",
                                    "-7",
                                    "007",
                                    "-007",
                                    "10",
                                    "1700000123456",
                                    "-1700000123456",
                                    "999999999999999",
                                    "-999999999999999",
                                    "100000000000000"};
  Rng rng(7);
  for (int i = 0; i < 10'000; ++i) {
    std::string s = rng.chance(0.3) ? "-" : "";
    const uint64_t digits = 1 + rng.below(15);
    for (uint64_t d = 0; d < digits; ++d) s += static_cast<char>('0' + rng.below(10));
    texts.push_back(s);
  }
  for (const std::string& s : texts) {
    lua_Number n = 1;
    ASSERT_TRUE(lua::plain_integer_number(s, n)) << s;
    EXPECT_EQ(bits_of(n), bits_of(strtod_of(s))) << s;
  }
}

TEST(LuaTonumber, AnythingElseIsLeftToTheLibrary) {
  for (const std::string s : {"", "-", "--1", "+1", " 1", "1 ", "1.0", "1e3", "0x10", "1-", "a",
                              "1234567890123456", "-1234567890123456", "12a", "1\n"}) {
    lua_Number n = 1;
    EXPECT_FALSE(lua::plain_integer_number(s, n)) << "'" << s << "'";
  }
}

// The library's own tonumber, in a plain interpreter: "%.17g" of the
// number, "nil", or the error's text.
std::string library_tonumber(const std::string& arg) {
  lua_State* L = luaL_newstate();
  for (const lua_CFunction open : {luaopen_base, luaopen_string}) {
    lua_pushcfunction(L, open);
    lua_call(L, 0, 0);
  }
  const std::string chunk =
      "local n = tonumber(...) if n == nil then return 'nil' end "
      "return string.format('%.17g', n)";
  EXPECT_EQ(luaL_loadstring(L, chunk.c_str()), 0);
  lua_pushlstring(L, arg.data(), arg.size());
  const int status = lua_pcall(L, 1, 1, 0);
  std::string out = lua_tostring(L, -1);
  lua_close(L);
  return status == 0 ? out : "error: " + out;
}

TEST(LuaTonumber, AScriptReadsWhatTheLibraryReads) {
  Server server(42);
  const std::string script =
      "local n = tonumber(ARGV[1]) if n == nil then return 'nil' end "
      "return string.format('%.17g', n)";
  for (const std::string arg : {"0", "-0", "42", "-42", "1700000123456", "999999999999999",
                                "9999999999999999", "12345678901234567890", " 5", "5 ", "+5", "1.5",
                                "-2.25e3", "0x1F", "nope", "", "-", "1e400"}) {
    const Reply r = server.execute({"EVAL", script, "0", arg}, TimePoint{});
    EXPECT_EQ(r.text, library_tonumber(arg)) << "'" << arg << "'";
  }
  // Its errors are the library's, named as the script called it.
  const Reply none = server.execute({"EVAL", "return tonumber()", "0"}, TimePoint{});
  EXPECT_NE(none.text.find("bad argument #1 to 'tonumber' (value expected)"), std::string::npos)
      << none.text;
}

}  // namespace
}  // namespace locksim::sim::redis
