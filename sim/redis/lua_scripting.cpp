#include "sim/redis/lua_scripting.h"

#include <lua.hpp>

#include <cassert>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include "sim/redis/sha1.h"

namespace locksim::sim::redis {
namespace {

// Registry keys.
constexpr char kGlobalsKey[] = "locksim.globals";  // the real globals table behind the proxy
constexpr char kProxiesKey[] = "locksim.proxies";  // read-only proxies, wiped after each run
constexpr char kHandlerKey[] =
    "locksim.handler";  // the error handler (Redis' __redis__err__handler)

// The instruction hook fires every this many VM instructions.
constexpr int kHookEveryInstructions = 1000;
// Bounds the recursion when a script returns nested (or self-referencing) tables.
constexpr int kMaxReplyDepth = 100;
// Bounds the array part read from a returned table.
constexpr int64_t kMaxReplyElements = int64_t{1} << 24;

// Redis never puts CR or LF inside an error or status line (it would break RESP).
std::string map_newlines(std::string s) {
  for (char& c : s) {
    if (c == '\r' || c == '\n') c = ' ';
  }
  return s;
}

std::string trim_newlines(const std::string& s) {
  size_t begin = 0;
  size_t end = s.size();
  while (begin < end && (s[begin] == '\r' || s[begin] == '\n')) ++begin;
  while (end > begin && (s[end - 1] == '\r' || s[end - 1] == '\n')) --end;
  return s.substr(begin, end - begin);
}

// Redis' luaPushErrorBuff: "-CODE msg" keeps CODE, a plain "msg" gets "ERR";
// the result is "CODE msg", the text Lua error tables carry.
std::string lua_error_text(const std::string& err_buffer) {
  std::string code = "ERR";
  std::string msg;
  if (!err_buffer.empty() && err_buffer[0] == '-') {
    const size_t space = err_buffer.find(' ');
    if (space == std::string::npos) {
      msg = err_buffer.substr(1);
    } else {
      code = err_buffer.substr(1, space - 1);
      msg = err_buffer.substr(space + 1);
    }
  } else {
    msg = err_buffer;
  }
  return code + " " + trim_newlines(msg);
}

// Pushes {err=text} with text already in "CODE msg" form.
void push_error_table(lua_State* L, const std::string& text) {
  lua_newtable(L);
  lua_pushlstring(L, text.data(), text.size());
  lua_setfield(L, -2, "err");
}

// luaPushError(lua, raw): a plain message gets the ERR code.
void push_lua_error(lua_State* L, const std::string& raw) {
  push_error_table(L, lua_error_text(raw));
}

// What a C cast of an out-of-range double gives on x86-64 (and so what Redis
// replies for `return 1e20` or `return 0/0`), without the undefined behaviour.
int64_t lua_number_to_integer(lua_Number d) {
  if (!(d >= -9223372036854775808.0 && d < 9223372036854775808.0)) return INT64_MIN;
  return static_cast<int64_t>(d);
}

// Redis 7.0 turns number arguments of redis.call into strings with %.17g
// (not Lua's %.14g), so 0.1 becomes "0.10000000000000001".
std::string number_argument(lua_Number d) {
  char buf[64];
  const int n = std::snprintf(buf, sizeof(buf), "%.17g", static_cast<double>(d));
  assert(n > 0 && n < static_cast<int>(sizeof(buf)));
  return std::string(buf, static_cast<size_t>(n));
}

std::string to_std_string(lua_State* L, int index) {
  size_t len = 0;
  const char* s = lua_tolstring(L, index, &len);
  return s ? std::string(s, len) : std::string();
}

// Lua's tostring() for the error handler's "ERR " .. tostring(err).
std::string display_string(lua_State* L, int index) {
  switch (lua_type(L, index)) {
    case LUA_TNUMBER:
    case LUA_TSTRING:
      return to_std_string(L, index);
    case LUA_TBOOLEAN:
      return lua_toboolean(L, index) ? "true" : "false";
    case LUA_TNIL:
      return "nil";
    default: {
      char buf[64];
      std::snprintf(buf, sizeof(buf), "%s: %p", luaL_typename(L, index), lua_topointer(L, index));
      return buf;
    }
  }
}

// Redis' luaReplyToRedisReply for the value on top of the stack (left there).
Reply to_reply(lua_State* L, int depth) {
  if (depth > kMaxReplyDepth || !lua_checkstack(L, 4)) {
    return Reply::error("ERR reached lua stack limit");
  }
  switch (lua_type(L, -1)) {
    case LUA_TSTRING:
      return Reply::bulk(to_std_string(L, -1));
    case LUA_TBOOLEAN:
      return lua_toboolean(L, -1) ? Reply::integer_reply(1) : Reply::nil();
    case LUA_TNUMBER:
      return Reply::integer_reply(lua_number_to_integer(lua_tonumber(L, -1)));
    case LUA_TTABLE: {
      lua_pushstring(L, "err");
      lua_rawget(L, -2);
      if (lua_type(L, -1) == LUA_TSTRING) {
        // addReplyErrorFormat("-%s", msg): trimmed, newlines mapped, and the
        // leading '-' means the text is sent as is, without an ERR code.
        std::string s = map_newlines(trim_newlines("-" + to_std_string(L, -1)));
        lua_pop(L, 1);
        assert(!s.empty() && s[0] == '-');
        return Reply::error(s.substr(1));
      }
      lua_pop(L, 1);
      lua_pushstring(L, "ok");
      lua_rawget(L, -2);
      if (lua_type(L, -1) == LUA_TSTRING) {
        std::string s = map_newlines(to_std_string(L, -1));
        lua_pop(L, 1);
        return Reply::status(std::move(s));
      }
      lua_pop(L, 1);
      std::vector<Reply> elements;
      for (int64_t j = 1; j <= kMaxReplyElements; ++j) {
        lua_rawgeti(L, -1, static_cast<int>(j));
        if (lua_isnil(L, -1)) {
          lua_pop(L, 1);
          break;
        }
        elements.push_back(to_reply(L, depth + 1));
        lua_pop(L, 1);
      }
      return Reply::array(std::move(elements));
    }
    default:
      return Reply::nil();
  }
}

// Redis' redisProtocolToLuaType: the reply of redis.call as a Lua value.
void push_reply(lua_State* L, const Reply& reply, int depth) {
  luaL_checkstack(L, 4, "reply nested too deeply");
  switch (reply.kind) {
    case Reply::Kind::kStatus:
      lua_newtable(L);
      lua_pushlstring(L, reply.text.data(), reply.text.size());
      lua_setfield(L, -2, "ok");
      return;
    case Reply::Kind::kError:
    case Reply::Kind::kIoError:
      push_lua_error(L, "-" + reply.text);
      return;
    case Reply::Kind::kInteger:
      lua_pushnumber(L, static_cast<lua_Number>(reply.integer));
      return;
    case Reply::Kind::kBulk:
      lua_pushlstring(L, reply.text.data(), reply.text.size());
      return;
    case Reply::Kind::kNil:
      lua_pushboolean(L, 0);
      return;
    case Reply::Kind::kArray:
      lua_createtable(L, static_cast<int>(reply.elements.size()), 0);
      for (size_t i = 0; i < reply.elements.size(); ++i) {
        push_reply(L, reply.elements[i], depth + 1);
        lua_rawseti(L, -2, static_cast<int>(i + 1));
      }
      return;
  }
}

// The reply for a script that failed with an error table {err, source, line}
// (what the error handler made of it), as luaCallFunction formats it.
Reply error_reply_from_table(lua_State* L, const std::string& sha) {
  assert(lua_istable(L, -1));
  lua_getfield(L, -1, "err");
  // error({}) crashes redis-server 7.0.15 (NULL message); we answer instead.
  std::string msg =
      lua_isstring(L, -1) ? to_std_string(L, -1) : "ERR script raised an error without a message";
  lua_pop(L, 1);
  lua_getfield(L, -1, "source");
  const bool has_source = lua_isstring(L, -1) != 0;
  const std::string source = to_std_string(L, -1);
  lua_pop(L, 1);
  lua_getfield(L, -1, "line");
  const bool has_line = lua_isstring(L, -1) != 0;
  const std::string line = to_std_string(L, -1);
  lua_pop(L, 1);
  if (has_source && has_line) msg += " script: " + sha + ", on " + source + ":" + line + ".";
  return Reply::error(map_newlines(msg));
}

void push_string_array(lua_State* L, const std::vector<std::string>& items) {
  lua_createtable(L, static_cast<int>(items.size()), 0);
  for (size_t i = 0; i < items.size(); ++i) {
    lua_pushlstring(L, items[i].data(), items[i].size());
    lua_rawseti(L, -2, static_cast<int>(i + 1));
  }
}

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

// The C functions registered into Lua. They reach their LuaScripting through
// the allocator's userdata, which lua_newstate was given.
struct LuaCallbacks {
  static LuaScripting* self(lua_State* L) {
    void* ud = nullptr;
    lua_getallocf(L, &ud);
    assert(ud != nullptr);
    return static_cast<LuaScripting*>(ud);
  }

  static void* alloc(void* ud, void* ptr, size_t osize, size_t nsize) {
    auto* s = static_cast<LuaScripting*>(ud);
    if (nsize == 0) {
      std::free(ptr);
      assert(s->memory_used_bytes_ >= osize);
      s->memory_used_bytes_ -= osize;
      return nullptr;
    }
    if (nsize > osize && s->in_script_ &&
        s->memory_used_bytes_ + (nsize - osize) > s->memory_limit_bytes_) {
      return nullptr;  // Lua raises "not enough memory"
    }
    void* p = std::realloc(ptr, nsize);
    if (p == nullptr) return nullptr;
    s->memory_used_bytes_ = s->memory_used_bytes_ - osize + nsize;
    return p;
  }

  static int panic(lua_State* L) {
    throw std::runtime_error("unprotected Lua error in the simulated Redis: " +
                             to_std_string(L, -1));
  }

  // Counts instructions; past the limit, raises an error at every instruction
  // so that no pcall in the script can swallow it for long.
  static void hook(lua_State* L, lua_Debug* /*ar*/) {
    LuaScripting* s = self(L);
    if (!s->killed_) {
      s->instructions_ += kHookEveryInstructions;
      if (s->instructions_ < s->instruction_limit_) return;
      s->killed_ = true;
      lua_sethook(L, &hook, LUA_MASKCOUNT, 1);
    }
    luaL_error(L, "Script exceeded the instruction limit");
  }

  // Redis' __redis__err__handler: turns any error into a table {err=...} and
  // records where in the script it happened (skipping one C frame, such as
  // error() or redis.call itself).
  static int error_handler(lua_State* L) {
    lua_Debug ar{};
    bool have_frame = false;
    if (lua_getstack(L, 1, &ar) && lua_getinfo(L, "Sl", &ar)) {
      have_frame = true;
      if (std::strcmp(ar.what, "C") == 0) {
        have_frame = lua_getstack(L, 2, &ar) && lua_getinfo(L, "Sl", &ar);
      }
    }
    if (!lua_istable(L, 1)) {
      const std::string text = "ERR " + display_string(L, 1);
      lua_settop(L, 0);
      push_error_table(L, text);
    } else {
      lua_settop(L, 1);
    }
    if (have_frame) {
      lua_pushstring(L, "source");
      lua_pushstring(L, ar.source);
      lua_rawset(L, 1);
      lua_pushstring(L, "line");
      lua_pushinteger(L, ar.currentline);
      lua_rawset(L, 1);
    }
    return 1;
  }

  // Redis 7.0's pcall: like Lua's, but an error table {err=...} (what
  // redis.call raises) is handed to the script as its err string.
  static int pcall(lua_State* L) {
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

  static int redis_command(lua_State* L, bool raise) {
    LuaScripting* s = self(L);
    const int argc = lua_gettop(L);
    if (argc == 0) {
      push_lua_error(L, "Please specify at least one argument for this redis lib call");
      return raise ? lua_error(L) : 1;
    }
    std::vector<std::string> argv;
    argv.reserve(static_cast<size_t>(argc));
    for (int j = 1; j <= argc; ++j) {
      if (lua_type(L, j) == LUA_TNUMBER) {
        argv.push_back(number_argument(lua_tonumber(L, j)));
      } else if (lua_type(L, j) == LUA_TSTRING) {
        argv.push_back(to_std_string(L, j));
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
    push_reply(L, reply, 0);
    if (raise && (reply.is_error() || reply.is_io_error())) return lua_error(L);
    return 1;
  }
  static int redis_call(lua_State* L) { return redis_command(L, true); }
  static int redis_pcall(lua_State* L) { return redis_command(L, false); }

  static int error_reply(lua_State* L) {
    if (lua_gettop(L) != 1 || lua_type(L, -1) != LUA_TSTRING) {
      push_lua_error(L, "wrong number or type of arguments");
      return 1;
    }
    std::string err = to_std_string(L, -1);
    if (err.empty() || err[0] != '-') err = "-" + err;
    push_lua_error(L, err);
    return 1;
  }

  static int status_reply(lua_State* L) {
    if (lua_gettop(L) != 1 || lua_type(L, -1) != LUA_TSTRING) {
      push_lua_error(L, "wrong number or type of arguments");
      return 1;
    }
    lua_newtable(L);
    lua_pushvalue(L, 1);
    lua_setfield(L, -2, "ok");
    return 1;
  }

  static int sha1hex(lua_State* L) {
    if (lua_gettop(L) != 1) {
      push_lua_error(L, "wrong number of arguments");
      return lua_error(L);
    }
    const std::string hex = sha1_hex(to_std_string(L, 1));
    lua_pushlstring(L, hex.data(), hex.size());
    return 1;
  }

  static int no_op(lua_State* /*L*/) { return 0; }
  static int return_true(lua_State* L) {
    lua_pushboolean(L, 1);
    return 1;
  }

  // Redis' redis_math_random over rand48.
  static int math_random(lua_State* L) {
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

  static int math_randomseed(lua_State* L) {
    self(L)->rand48_state_ = rand48_seed(luaL_checkint(L, 1));
    return 0;
  }

  static int readonly_newindex(lua_State* L) {
    return luaL_error(L, "Attempt to modify a readonly table");
  }

  static int missing_global(lua_State* L) {
    const std::string name = display_string(L, 2);
    return luaL_error(L, "Script attempted to access nonexistent global variable '%s'",
                      name.c_str());
  }
};

namespace {

// Replaces the table at `index` by an empty proxy whose reads fall through to
// it and whose writes fail, and records the proxy so run() can wipe anything
// rawset into it. Leaves the proxy on the stack.
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
  lua_getfield(L, LUA_REGISTRYINDEX, kProxiesKey);
  lua_pushvalue(L, -2);
  lua_rawseti(L, -2, static_cast<int>(lua_objlen(L, -2) + 1));
  lua_pop(L, 1);
}

void set_function(lua_State* L, const char* name, lua_CFunction f) {
  lua_pushcfunction(L, f);
  lua_setfield(L, -2, name);
}

void set_number(lua_State* L, const char* name, lua_Number v) {
  lua_pushnumber(L, v);
  lua_setfield(L, -2, name);
}

}  // namespace

LuaScripting::LuaScripting() = default;

LuaScripting::~LuaScripting() {
  close();
}

void LuaScripting::close() {
  if (lua_ != nullptr) lua_close(lua_);
  lua_ = nullptr;
  assert(memory_used_bytes_ == 0);
}

lua_State* LuaScripting::state() {
  if (lua_ != nullptr) return lua_;
  lua_State* L = lua_newstate(&LuaCallbacks::alloc, this);
  if (L == nullptr) throw std::runtime_error("cannot create the Lua interpreter");
  lua_atpanic(L, &LuaCallbacks::panic);

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
  // What Redis does not offer (file access, environment games, output).
  for (const char* name :
       {"loadfile", "dofile", "print", "getfenv", "setfenv", "newproxy", "module", "require"}) {
    lua_pushnil(L);
    lua_setglobal(L, name);
  }
  lua_register(L, "pcall", &LuaCallbacks::pcall);

  lua_getglobal(L, "math");
  set_function(L, "random", &LuaCallbacks::math_random);
  set_function(L, "randomseed", &LuaCallbacks::math_randomseed);
  lua_pop(L, 1);

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

  lua_pushcfunction(L, &LuaCallbacks::error_handler);
  lua_setfield(L, LUA_REGISTRYINDEX, kHandlerKey);
  lua_newtable(L);
  lua_setfield(L, LUA_REGISTRYINDEX, kProxiesKey);

  // The sandbox. Scripts see the globals through an empty proxy: every write
  // lands in __newindex and fails, as on Redis 7's read-only globals; reads
  // fall through to the real globals, whose own __index makes a missing name
  // an error. Library tables get the same read-only proxy.
  lua_pushvalue(L, LUA_GLOBALSINDEX);
  const int globals = lua_gettop(L);
  lua_pushvalue(L, globals);
  lua_setfield(L, LUA_REGISTRYINDEX, kGlobalsKey);
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

  lua_ = L;
  return L;
}

LuaScripting::LoadResult LuaScripting::load(const std::string& body) {
  std::string sha = sha1_hex(body);
  if (exists(sha)) return {sha, std::nullopt};
  lua_State* L = state();
  if (luaL_loadbuffer(L, body.data(), body.size(), "@user_script") != 0) {
    std::string msg = to_std_string(L, -1);
    lua_pop(L, 1);
    return {sha, Reply::error(map_newlines("ERR Error compiling script (new function): " + msg))};
  }
  lua_setfield(L, LUA_REGISTRYINDEX, ("f_" + sha).c_str());
  bodies_.emplace(sha, body);
  return {sha, std::nullopt};
}

Reply LuaScripting::run(const std::string& sha, const std::vector<std::string>& keys,
                        const std::vector<std::string>& args, const CommandRunner& runner) {
  assert(exists(sha));
  assert(runner_ == nullptr && "scripts do not nest");
  lua_State* L = state();
  const int base = lua_gettop(L);

  lua_getfield(L, LUA_REGISTRYINDEX, kGlobalsKey);
  lua_pushstring(L, "KEYS");
  push_string_array(L, keys);
  lua_rawset(L, -3);
  lua_pushstring(L, "ARGV");
  push_string_array(L, args);
  lua_rawset(L, -3);
  lua_pop(L, 1);

  runner_ = &runner;
  instructions_ = 0;
  killed_ = false;
  in_script_ = true;
  lua_sethook(L, &LuaCallbacks::hook, LUA_MASKCOUNT, kHookEveryInstructions);

  lua_getfield(L, LUA_REGISTRYINDEX, kHandlerKey);
  lua_getfield(L, LUA_REGISTRYINDEX, ("f_" + sha).c_str());
  assert(lua_isfunction(L, -1));
  const int status = lua_pcall(L, 0, 1, base + 1);

  lua_sethook(L, nullptr, 0, 0);
  in_script_ = false;
  runner_ = nullptr;

  Reply reply;
  if (killed_) {
    reply = Reply::error("ERR Script killed by the simulated Redis after " +
                         std::to_string(instruction_limit_) +
                         " Lua instructions (runaway script; a real server would stay BUSY)"
                         " script: " +
                         sha);
  } else if (status == 0) {
    reply = to_reply(L, 0);
  } else if (status == LUA_ERRRUN && lua_istable(L, -1)) {
    reply = error_reply_from_table(L, sha);
  } else {
    const std::string msg = lua_isstring(L, -1) ? to_std_string(L, -1) : "execution failure";
    reply =
        Reply::error(map_newlines("ERR Error running script " + sha + ", " + msg.substr(0, 100)));
  }
  lua_settop(L, base);

  // Wipe whatever rawset() left in the read-only proxies.
  lua_getfield(L, LUA_REGISTRYINDEX, kProxiesKey);
  const int proxies = lua_gettop(L);
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
  lua_settop(L, base);
  return reply;
}

void LuaScripting::flush() {
  close();
  bodies_.clear();
}

void LuaScripting::restart() {
  flush();
  rand48_state_ = kRand48InitialState;
}

}  // namespace locksim::sim::redis
