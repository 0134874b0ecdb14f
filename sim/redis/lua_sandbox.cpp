#include "sim/redis/lua_sandbox.h"

#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "env/argv_pool.h"
#include "env/assert.h"
#include "sim/redis/lua_callbacks.h"
#include "sim/redis/lua_scripting.h"
#include "sim/redis/lua_values.h"
#include "sim/redis/sha1.h"

namespace locksim::sim::redis {
namespace {

using lua::push_lua_error;
using lua::to_std_string;

// Redis' rand48 (the classic 48-bit LCG of drand48), so math.random gives the
// same numbers as on redis-server.
constexpr uint64_t kRand48Mask = (uint64_t{1} << 48) - 1;
uint64_t rand48_seed(int32_t seed) {
  return ((static_cast<uint64_t>(static_cast<uint32_t>(seed)) << 16) | 0x330e) & kRand48Mask;
}
int32_t rand48_next(uint64_t& state) {
  state = (state * 0x5deece66dULL + 0xb) & kRand48Mask;
  return static_cast<int32_t>(state >> 17);
}

}  // namespace

// ------------------------------------------------ the library scripts call

// Redis 7.0's pcall: like Lua's, but an error table {err=...} (what
// redis.call raises) is handed to the script as its err string.
int LuaCallbacks::pcall(lua_State* L) {
  luaL_checkany(L, 1);
  const int status = lua_pcall(L, lua_gettop(L) - 1, LUA_MULTRET, 0);
  if (status != 0) {
    if (lua_istable(L, -1)) {
      lua_getfield(L, -1, "err");
      if (lua_isstring(L, -1)) {
        lua_replace(L, -2);
      } else {
        lua_pop(L, 1);
      }
    }
    lua_pushboolean(L, 0);
    lua_insert(L, -2);
    return 2;
  }
  lua_pushboolean(L, 1);
  lua_insert(L, 1);
  return lua_gettop(L);
}

int LuaCallbacks::redis_command(lua_State* L, bool raise) {
  LuaScripting* s = self(L);
  const int argc = lua_gettop(L);
  if (argc == 0) {
    push_lua_error(L, "Please specify at least one argument for this redis lib call");
    return raise ? lua_error(L) : 1;
  }
  // Into the strings of the last call's command line, so that they reuse
  // their buffers.
  std::vector<std::string>& argv = s->call_argv_;
  argv.resize(static_cast<size_t>(argc));
  for (int j = 1; j <= argc; ++j) {
    std::string& arg = argv[static_cast<size_t>(j - 1)];
    const int type = lua_type(L, j);
    if (type == LUA_TNUMBER) {
      arg = lua::number_argument(lua_tonumber(L, j));
    } else if (type == LUA_TSTRING) {
      size_t len = 0;
      const char* text = lua_tolstring(L, j, &len);
      argv_pool::overwrite(arg, std::string_view(text, len));
    } else {
      push_lua_error(L, "Lua redis lib command arguments must be strings or integers");
      return raise ? lua_error(L) : 1;
    }
  }
  Reply reply;
  if (s->runner_ == nullptr) {
    reply = Reply::error("ERR redis.call used outside of a running script");
  } else {
    // No C++ exception may cross into Lua: its C++ build catches (...) and
    // would report it as an unknown error status.
    try {
      reply = (*s->runner_)(argv);
    } catch (const std::exception& e) {
      reply = Reply::error(std::string("ERR simulated server failure: ") + e.what());
    }
  }
  // The conversion makes new objects only; it reshapes no table a script holds.
  const uint64_t alloc_calls = s->alloc_calls_;
  lua::push_reply(L, reply, 0);
  s->alloc_calls_ = alloc_calls;
  // Lua has its own copy: a bulk's room goes back for the next GET's value
  // (bulk_or_nil in commands.cpp takes it).
  if (reply.kind == Reply::Kind::kBulk) argv_pool::give_back_text(std::move(reply.text));
  if (raise && (reply.is_error() || reply.is_io_error())) return lua_error(L);
  return 1;
}

int LuaCallbacks::redis_call(lua_State* L) {
  return redis_command(L, true);
}

int LuaCallbacks::redis_pcall(lua_State* L) {
  return redis_command(L, false);
}

int LuaCallbacks::error_reply(lua_State* L) {
  if (lua_gettop(L) != 1 || lua_type(L, -1) != LUA_TSTRING) {
    push_lua_error(L, "wrong number or type of arguments");
    return 1;
  }
  std::string err = to_std_string(L, -1);
  if (err.empty() || err[0] != '-') err = "-" + err;
  push_lua_error(L, err);
  return 1;
}

int LuaCallbacks::status_reply(lua_State* L) {
  if (lua_gettop(L) != 1 || lua_type(L, -1) != LUA_TSTRING) {
    push_lua_error(L, "wrong number or type of arguments");
    return 1;
  }
  lua_newtable(L);
  lua_pushvalue(L, 1);
  lua_setfield(L, -2, "ok");
  return 1;
}

int LuaCallbacks::sha1hex(lua_State* L) {
  if (lua_gettop(L) != 1) {
    push_lua_error(L, "wrong number of arguments");
    return lua_error(L);
  }
  const std::string hex = sha1_hex(to_std_string(L, 1));
  lua_pushlstring(L, hex.data(), hex.size());
  return 1;
}

int LuaCallbacks::no_op(lua_State* /*L*/) {
  return 0;
}

int LuaCallbacks::return_true(lua_State* L) {
  lua_pushboolean(L, 1);
  return 1;
}

// Redis' redis_math_random over rand48.
int LuaCallbacks::math_random(lua_State* L) {
  LuaScripting* s = self(L);
  const lua_Number r = static_cast<lua_Number>(rand48_next(s->rand48_state_) % INT32_MAX) /
                       static_cast<lua_Number>(INT32_MAX);
  switch (lua_gettop(L)) {
    case 0:
      lua_pushnumber(L, r);
      break;
    case 1: {
      const int u = luaL_checkint(L, 1);
      luaL_argcheck(L, 1 <= u, 1, "interval is empty");
      lua_pushnumber(L, std::floor(r * u) + 1);
      break;
    }
    case 2: {
      const int l = luaL_checkint(L, 1);
      const int u = luaL_checkint(L, 2);
      luaL_argcheck(L, l <= u, 2, "interval is empty");
      lua_pushnumber(L, std::floor(r * (u - l + 1)) + l);
      break;
    }
    default:
      return luaL_error(L, "wrong number of arguments");
  }
  return 1;
}

int LuaCallbacks::math_randomseed(lua_State* L) {
  self(L)->rand48_state_ = rand48_seed(luaL_checkint(L, 1));
  return 0;
}

int LuaCallbacks::readonly_newindex(lua_State* L) {
  return luaL_error(L, "Attempt to modify a readonly table");
}

int LuaCallbacks::missing_global(lua_State* L) {
  const std::string name = lua::display_string(L, 2);
  return luaL_error(L, "Script attempted to access nonexistent global variable '%s'", name.c_str());
}

// Each stand-in runs the library's function on its own frame: an argument
// error names the function as the script called it, as before.
template <class Original>
int LuaCallbacks::raw_write(lua_State* L, Original original) {
  LuaScripting* s = self(L);
  s->proxies_maybe_written_ = true;
  return (s->raw_writers_.*original)(L);
}

int LuaCallbacks::rawset(lua_State* L) {
  return raw_write(L, &LuaScripting::RawWriters::rawset);
}

int LuaCallbacks::table_insert(lua_State* L) {
  return raw_write(L, &LuaScripting::RawWriters::insert);
}

int LuaCallbacks::table_remove(lua_State* L) {
  return raw_write(L, &LuaScripting::RawWriters::remove);
}

int LuaCallbacks::table_sort(lua_State* L) {
  return raw_write(L, &LuaScripting::RawWriters::sort);
}

// A counter or a time in ms (a fair lock's scores, its ARGV) is read without
// strtod: the library's tonumber calls it twice, and a fair lock's sweep
// spent a fifth of its time there. The same number, so the same history.
int LuaCallbacks::tonumber(lua_State* L) {
  if (lua_gettop(L) == 1 && lua_type(L, 1) == LUA_TSTRING) {
    size_t len = 0;
    const char* text = lua_tolstring(L, 1, &len);
    lua_Number n = 0;
    if (lua::plain_integer_number(std::string_view(text, len), n)) {
      lua_pushnumber(L, n);
      return 1;
    }
  }
  return lua_tocfunction(L, lua_upvalueindex(1))(L);
}

// ------------------------------------------------------ setting the state up

namespace {

void set_function(lua_State* L, const char* name, lua_CFunction f) {
  lua_pushcfunction(L, f);
  lua_setfield(L, -2, name);
}

void set_number(lua_State* L, const char* name, lua_Number v) {
  lua_pushnumber(L, v);
  lua_setfield(L, -2, name);
}

// Lua 5.1's pattern matcher recurses in C once per pattern item, out of
// reach of the instruction hook: a script matching a 100,000-item pattern
// overflowed the stack and killed locksim (exit 139). A pattern longer than
// this is an error of the script's call. Real Redis has no such bound, but
// a lock needs no pattern a thousandth this long; 4 KiB keeps the recursion
// well inside any stack a script runs on.
constexpr size_t kPatternBytesMax = 4096;

// string.find, match, gmatch and gsub: the library's (upvalue 1), once the
// pattern (argument 2) is within kPatternBytesMax.
int bounded_pattern(lua_State* L) {
  size_t len = 0;
  if (lua_type(L, 2) == LUA_TSTRING) (void)lua_tolstring(L, 2, &len);
  if (len > kPatternBytesMax) {
    return luaL_error(L, "a pattern of %d bytes: locksim's scripts allow at most %d",
                      static_cast<int>(len), static_cast<int>(kPatternBytesMax));
  }
  return lua_tocfunction(L, lua_upvalueindex(1))(L);
}

// Each of string's pattern functions behind bounded_pattern.
void bound_patterns(lua_State* L) {
  lua_getglobal(L, "string");
  for (const char* name : {"find", "match", "gmatch", "gsub"}) {
    lua_getfield(L, -1, name);
    LOCKSIM_ASSERT_MSG(lua_tocfunction(L, -1) != nullptr, "the library defines it as a C function");
    lua_pushcclosure(L, &bounded_pattern, 1);
    lua_setfield(L, -2, name);
  }
  lua_pop(L, 1);
}

// base/table/string/math, minus what Redis does not offer (file access,
// environment games, output), with Redis' pcall and math.random.
void open_libraries(lua_State* L) {
  // Lua 5.1 wants library openers called through Lua, not as plain C calls.
  const luaL_Reg libs[] = {{"", luaopen_base},
                           {LUA_TABLIBNAME, luaopen_table},
                           {LUA_STRLIBNAME, luaopen_string},
                           {LUA_MATHLIBNAME, luaopen_math}};
  for (const luaL_Reg& lib : libs) {
    lua_pushcfunction(L, lib.func);
    lua_pushstring(L, lib.name);
    lua_call(L, 1, 0);
  }
  for (const char* name :
       {"loadfile", "dofile", "print", "getfenv", "setfenv", "newproxy", "module", "require"}) {
    lua_pushnil(L);
    lua_setglobal(L, name);
  }
  lua_register(L, "pcall", &LuaCallbacks::pcall);
  lua_getglobal(L, "tonumber");  // the library's, kept as the stand-in's upvalue
  LOCKSIM_ASSERT_MSG(lua_tocfunction(L, -1) != nullptr, "the library defines it as a C function");
  lua_pushcclosure(L, &LuaCallbacks::tonumber, 1);
  lua_setglobal(L, "tonumber");

  bound_patterns(L);

  lua_getglobal(L, "math");
  set_function(L, "random", &LuaCallbacks::math_random);
  set_function(L, "randomseed", &LuaCallbacks::math_randomseed);
  lua_pop(L, 1);
}

// The library's function `name` in the table at `index`, replaced by `stand_in`.
lua_CFunction replace_function(lua_State* L, int index, const char* name, lua_CFunction stand_in) {
  if (index < 0 && index > LUA_REGISTRYINDEX) index = lua_gettop(L) + index + 1;
  lua_getfield(L, index, name);
  const lua_CFunction original = lua_tocfunction(L, -1);
  LOCKSIM_ASSERT_MSG(original != nullptr, "the library defines it as a C function");
  lua_pop(L, 1);
  lua_pushcfunction(L, stand_in);
  lua_setfield(L, index, name);
  return original;
}

// Swaps each library function that can write a table raw for its stand-in,
// which marks that a proxy may need wiping (lua_sandbox.h). Returns the
// originals in `refs`.
void replace_raw_writers(lua_State* L, SandboxRefs& refs) {
  refs.rawset = replace_function(L, LUA_GLOBALSINDEX, "rawset", &LuaCallbacks::rawset);
  lua_getglobal(L, LUA_TABLIBNAME);
  refs.table_insert = replace_function(L, -1, "insert", &LuaCallbacks::table_insert);
  refs.table_remove = replace_function(L, -1, "remove", &LuaCallbacks::table_remove);
  refs.table_sort = replace_function(L, -1, "sort", &LuaCallbacks::table_sort);
  lua_pop(L, 1);
}

// The global `redis` table, as Redis 7.0.15 fills it.
void install_redis_table(lua_State* L) {
  lua_newtable(L);
  set_function(L, "call", &LuaCallbacks::redis_call);
  set_function(L, "pcall", &LuaCallbacks::redis_pcall);
  set_function(L, "error_reply", &LuaCallbacks::error_reply);
  set_function(L, "status_reply", &LuaCallbacks::status_reply);
  set_function(L, "sha1hex", &LuaCallbacks::sha1hex);
  set_function(L, "log", &LuaCallbacks::no_op);
  set_function(L, "set_repl", &LuaCallbacks::no_op);
  set_function(L, "replicate_commands", &LuaCallbacks::return_true);
  set_number(L, "LOG_DEBUG", 0);
  set_number(L, "LOG_VERBOSE", 1);
  set_number(L, "LOG_NOTICE", 2);
  set_number(L, "LOG_WARNING", 3);
  set_number(L, "REPL_NONE", 0);
  set_number(L, "REPL_AOF", 1);
  set_number(L, "REPL_SLAVE", 2);
  set_number(L, "REPL_REPLICA", 2);
  set_number(L, "REPL_ALL", 3);
  set_number(L, "REDIS_VERSION_NUM", 0x0007000f);
  lua_pushstring(L, "7.0.15");
  lua_setfield(L, -2, "REDIS_VERSION");
  lua_setglobal(L, "redis");
}

// Replaces the table at `index` by an empty proxy whose reads fall through to
// it and whose writes fail, and records the proxy so wipe_proxy_leftovers()
// can clear anything rawset into it. Leaves the proxy on the stack.
void push_readonly_proxy(lua_State* L, int index) {
  index = index < 0 ? lua_gettop(L) + index + 1 : index;
  lua_newtable(L);           // proxy
  lua_createtable(L, 0, 3);  // its metatable
  lua_pushvalue(L, index);
  lua_setfield(L, -2, "__index");
  lua_pushcfunction(L, &LuaCallbacks::readonly_newindex);
  lua_setfield(L, -2, "__newindex");
  lua_pushboolean(L, 0);
  lua_setfield(L, -2, "__metatable");  // setmetatable() on it fails
  lua_setmetatable(L, -2);
  lua_getfield(L, LUA_REGISTRYINDEX, kLuaProxiesKey);
  lua_pushvalue(L, -2);
  lua_rawseti(L, -2, static_cast<int>(lua_objlen(L, -2) + 1));
  lua_pop(L, 1);
}

// The sandbox proper. Scripts see the globals through an empty proxy: every
// write lands in __newindex and fails, as on Redis 7's read-only globals;
// reads fall through to the real globals, whose own __index makes a missing
// name an error. Library tables get the same read-only proxy. Returns the
// reference of the real globals.
int make_globals_read_only(lua_State* L) {
  lua_newtable(L);
  lua_setfield(L, LUA_REGISTRYINDEX, kLuaProxiesKey);
  lua_pushvalue(L, LUA_GLOBALSINDEX);
  const int globals = lua_gettop(L);
  lua_pushvalue(L, globals);
  const int globals_ref = luaL_ref(L, LUA_REGISTRYINDEX);
  for (const char* name : {"string", "table", "math", "coroutine", "redis"}) {
    lua_getfield(L, globals, name);
    push_readonly_proxy(L, -1);
    lua_setfield(L, globals, name);
    lua_pop(L, 1);
  }
  lua_createtable(L, 0, 2);
  lua_pushcfunction(L, &LuaCallbacks::missing_global);
  lua_setfield(L, -2, "__index");
  lua_pushboolean(L, 0);
  lua_setfield(L, -2, "__metatable");
  lua_setmetatable(L, globals);
  push_readonly_proxy(L, globals);
  lua_pushvalue(L, -1);
  lua_setfield(L, globals, "_G");
  lua_replace(L, LUA_GLOBALSINDEX);  // chunks compiled from now on see the proxy
  lua_settop(L, 0);
  return globals_ref;
}

}  // namespace

SandboxRefs set_up_sandbox(lua_State* L) {
  LOCKSIM_ASSERT_MSG(lua_gettop(L) == 0, "the sandbox is built in a fresh state");
  SandboxRefs refs;
  open_libraries(L);
  replace_raw_writers(L, refs);
  install_redis_table(L);
  lua_pushcfunction(L, &LuaCallbacks::error_handler);
  refs.handler = luaL_ref(L, LUA_REGISTRYINDEX);
  refs.globals = make_globals_read_only(L);
  LOCKSIM_ASSERT(lua_gettop(L) == 0);
  return refs;
}

void wipe_proxy_leftovers(lua_State* L) {
  const int top = lua_gettop(L);
  lua_getfield(L, LUA_REGISTRYINDEX, kLuaProxiesKey);
  const int proxies = lua_gettop(L);
  LOCKSIM_ASSERT_MSG(lua_istable(L, proxies), "set_up_sandbox made the proxy list");
  const int count = static_cast<int>(lua_objlen(L, proxies));
  for (int i = 1; i <= count; ++i) {
    lua_rawgeti(L, proxies, i);
    const int proxy = lua_gettop(L);
    lua_pushnil(L);
    while (lua_next(L, proxy) != 0) {  // clearing fields while traversing is allowed
      lua_pop(L, 1);
      lua_pushvalue(L, -1);
      lua_pushnil(L);
      lua_rawset(L, proxy);
    }
    lua_pop(L, 1);
  }
  lua_settop(L, top);
}

}  // namespace locksim::sim::redis
