// Conversions between Lua values and Redis replies, as Redis 7.0's scripting
// engine does them (luaReplyToRedisReply, redisProtocolToLuaType and the
// error-text helpers around them). Internal to sim/redis/: LuaScripting
// (lua_scripting.cpp) and the sandbox's library functions (lua_sandbox.cpp)
// share them.
//
// Why these are exact: lock scripts compare and return values through them,
// and tests/redis_differential_test.cpp checks every reply and error text
// against redis-server 7.0 byte for byte.
//
// Every function here works on the stack of `L` and never yields. Those that
// push leave exactly one value on top; those that read leave the stack as
// they found it, unless they say otherwise.
#pragma once

#include <lua.hpp>

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "env/reply.h"

namespace locksim::sim::redis::lua {

// Bounds the recursion when a script returns nested (or self-referencing)
// tables, so a cyclic table cannot overflow the host's stack.
inline constexpr int kReplyDepthMax = 100;
// Bounds the array part read from a returned table.
inline constexpr int64_t kReplyElementsMax = int64_t{1} << 24;

// Redis never puts CR or LF inside an error or status line (it would break
// RESP): each becomes a space.
std::string map_newlines(std::string s);

// `s` without leading and trailing CR/LF characters.
std::string trim_newlines(const std::string& s);

// Redis' luaPushErrorBuff: "-CODE msg" keeps CODE, a plain "msg" gets "ERR";
// the result is "CODE msg", the text Lua error tables carry.
std::string lua_error_text(const std::string& err_buffer);

// Pushes {err=text} with text already in "CODE msg" form.
void push_error_table(lua_State* L, const std::string& text);

// luaPushError(lua, raw): pushes {err=...}; a plain message gets the ERR code.
void push_lua_error(lua_State* L, const std::string& raw);

// What a C cast of an out-of-range double gives on x86-64 (and so what Redis
// replies for `return 1e20` or `return 0/0`), without the undefined behaviour.
int64_t lua_number_to_integer(lua_Number d);

// A number argument of redis.call as Redis 7.0 sends it: %.17g, not Lua's
// %.14g, so 0.1 becomes "0.10000000000000001".
std::string number_argument(lua_Number d);

// Lua 5.1's conversion of `text` to a number (luaO_str2d: strtod, then only
// spaces), for what counters and times in milliseconds look like: an
// optional '-' and 1 to 15 digits, below 2^53, so the double is exact and
// strtod's. false for any other text (the caller asks strtod): leading or
// trailing spaces, '+', a point, an exponent, hex, 16 digits or more.
bool plain_integer_number(std::string_view text, lua_Number& out);

// The string (or number, as Lua converts it) at `index`; "" for other types.
// Note: like lua_tolstring, it turns a number at `index` into a string in place.
std::string to_std_string(lua_State* L, int index);

// Lua's tostring() of the value at `index`, for the error handler's
// "ERR " .. tostring(err).
std::string display_string(lua_State* L, int index);

// Redis' luaReplyToRedisReply for the value on top of the stack (left there).
// `depth` is the nesting level of that value, 0 for the script's result.
Reply to_reply(lua_State* L, int depth);

// Redis' redisProtocolToLuaType: pushes `reply` as the Lua value redis.call
// returns (an error reply becomes {err=...}). Raises a Lua error if the
// reply is nested deeper than the Lua stack can hold.
void push_reply(lua_State* L, const Reply& reply, int depth);

// The reply for a script that failed with the error table {err, source, line}
// on top of the stack (what the error handler made of the error), formatted
// as luaCallFunction does; `sha` names the script. Precondition: a table is
// on top of the stack.
Reply error_reply_from_table(lua_State* L, const std::string& sha);

// Pushes `items` as a Lua array (KEYS, ARGV).
void push_string_array(lua_State* L, std::span<const std::string> items);

}  // namespace locksim::sim::redis::lua
