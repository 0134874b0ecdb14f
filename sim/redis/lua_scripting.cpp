// The scripting core: the interpreter's life cycle, the script cache, and one
// run of a script with its limits (instructions and memory). The sandbox the
// scripts see is built in lua_sandbox.cpp; values cross between Lua and
// replies in lua_values.cpp.
#include "sim/redis/lua_scripting.h"

#include <lua.hpp>

#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include "env/assert.h"
#include "sim/redis/lua_callbacks.h"
#include "sim/redis/lua_sandbox.h"
#include "sim/redis/lua_values.h"
#include "sim/redis/sha1.h"
#include "sim/world.h"

namespace locksim::sim::redis {
namespace {

// The instruction hook fires every this many VM instructions: often enough
// to stop a runaway script promptly, rarely enough to cost nothing.
constexpr int kHookEveryInstructions = 1000;

// A script past this many instructions (a few milliseconds) has made its
// event a long one: the World polls after it (World::poll_after_this_event),
// so a Ctrl-C is heard within one such script, not 2^16 of them.
constexpr uint64_t kLongScriptInstructions = 1'000'000;

}  // namespace

// ---------------------------------------------- callbacks: the core's part

LuaScripting* LuaCallbacks::self(lua_State* L) {
  void* ud = nullptr;
  lua_getallocf(L, &ud);
  LOCKSIM_ASSERT_MSG(ud != nullptr, "LuaScripting::state() gives the allocator `this`");
  return static_cast<LuaScripting*>(ud);
}

void* LuaCallbacks::alloc(void* ud, void* ptr, size_t osize, size_t nsize) {
  auto* s = static_cast<LuaScripting*>(ud);
  ++s->alloc_calls_;
  if (nsize == 0) {
    std::free(ptr);
    LOCKSIM_ASSERT_MSG(s->memory_used_bytes_ >= osize, "Lua frees only what it allocated");
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

int LuaCallbacks::panic(lua_State* L) {
  throw std::runtime_error("unprotected Lua error in the simulated Redis: " +
                           lua::to_std_string(L, -1));
}

// Counts instructions; past the limit, raises an error at every instruction
// so that no pcall in the script can swallow it for long.
void LuaCallbacks::hook(lua_State* L, lua_Debug* /*ar*/) {
  LuaScripting* s = self(L);
  LOCKSIM_ASSERT_MSG(s->in_script_, "the hook is set only while a script runs");
  if (!s->killed_) {
    s->instructions_ += kHookEveryInstructions;
    if (s->instructions_ < s->instruction_limit_) return;
    s->killed_ = true;
    lua_sethook(L, &hook, LUA_MASKCOUNT, 1);
  }
  luaL_error(L, "Script exceeded the instruction limit");
}

// Turns any error into a table {err=...} and records where in the script it
// happened (skipping one C frame, such as error() or redis.call itself).
int LuaCallbacks::error_handler(lua_State* L) {
  lua_Debug ar{};
  bool have_frame = false;
  if (lua_getstack(L, 1, &ar) && lua_getinfo(L, "Sl", &ar)) {
    have_frame = true;
    if (std::strcmp(ar.what, "C") == 0) {
      have_frame = lua_getstack(L, 2, &ar) && lua_getinfo(L, "Sl", &ar);
    }
  }
  if (!lua_istable(L, 1)) {
    const std::string text = "ERR " + lua::display_string(L, 1);
    lua_settop(L, 0);
    lua::push_error_table(L, text);
  } else {
    lua_settop(L, 1);
    // The script's own table, which may be a read-only proxy (error(_G)):
    // the rawsets below write it.
    self(L)->proxies_maybe_written_ = true;
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

// ------------------------------------------------------------ LuaScripting

LuaScripting::LuaScripting() = default;

LuaScripting::~LuaScripting() {
  close();
}

void LuaScripting::close() {
  LOCKSIM_ASSERT_MSG(!in_script_, "the interpreter is never closed under a running script");
  if (lua_ != nullptr) lua_close(lua_);
  lua_ = nullptr;
  function_refs_.clear();
  LOCKSIM_ASSERT_MSG(memory_used_bytes_ == 0, "lua_close frees every byte Lua allocated");
}

lua_State* LuaScripting::state() {
  if (lua_ != nullptr) return lua_;
  lua_State* L = lua_newstate(&LuaCallbacks::alloc, this);
  if (L == nullptr) throw std::runtime_error("cannot create the Lua interpreter");
  lua_atpanic(L, &LuaCallbacks::panic);
  const SandboxRefs refs = set_up_sandbox(L);
  handler_ref_ = refs.handler;
  globals_ref_ = refs.globals;
  raw_writers_ = {refs.rawset, refs.table_insert, refs.table_remove, refs.table_sort};
  proxies_maybe_written_ = false;
  for (auto [array, name] : {std::pair{&keys_, "KEYS"}, std::pair{&argv_, "ARGV"}}) {
    lua_pushstring(L, name);
    array->name_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    lua_pushboolean(L, 0);  // a placeholder: luaL_ref gives no reference of its own to nil
    array->table_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    array->size = -1;
  }
  LOCKSIM_ASSERT(lua_gettop(L) == 0);
  lua_ = L;
  return L;
}

const std::string& LuaScripting::sha_of(const std::string& body) {
  for (const ShaMemo& m : sha_memo_) {
    if (!m.sha.empty() && m.body == body) return m.sha;
  }
  ShaMemo& m = sha_memo_[sha_memo_next_];
  sha_memo_next_ = (sha_memo_next_ + 1) % kShaMemoEntries;
  m.body = body;
  m.sha = sha1_hex(body);
  return m.sha;
}

LuaScripting::LoadResult LuaScripting::load(const std::string& body) {
  const std::string& sha = sha_of(body);
  const auto cached = function_refs_.find(sha);
  if (cached != function_refs_.end()) return {cached->first, std::nullopt};
  lua_State* L = state();
  if (luaL_loadbuffer(L, body.data(), body.size(), "@user_script") != 0) {
    std::string msg = lua::to_std_string(L, -1);
    lua_pop(L, 1);
    return {sha,
            Reply::error(lua::map_newlines("ERR Error compiling script (new function): " + msg))};
  }
  const int ref = luaL_ref(L, LUA_REGISTRYINDEX);
  bodies_.emplace(sha, body);
  return {function_refs_.emplace(sha, Compiled{ref, intrinsic_of(body)}).first->first,
          std::nullopt};
}

// KEYS and ARGV. A script must see each as a table made afresh for its run:
// the items at 1..n, nothing else, no metatable, and a fresh table's layout
// (the sizes of its array and hash parts), which decides where keys the
// script adds go and so the order pairs() visits them in. Making the two
// tables on every EVAL, and collecting them, was 6 % of a Redlock run's
// instructions, so the last run's table is refilled instead when it still
// has that layout: it was made for n items, n items come now, it has no
// metatable, and nothing reshaped it since. A Lua 5.1 table changes its
// layout only by a rehash (ltable.c's resize), and a rehash always
// allocates or frees; so if the last script never called the allocator
// (not counting redis.call's reply conversion, which makes new objects
// only), no table was reshaped. The script may still have written the
// slots 1..n (KEYS[1] = 'x', ARGV[2] = nil), which changes no layout, and
// the refill writes all of them. Any other case gets a table made afresh,
// as before.
//
// One difference a script could see: the table is the same object from run
// to run. A script that smuggled a reference to it out of its run would see
// later runs' items through that reference; the only writable tables that
// outlive a run are the string metatable and the string library behind its
// __index (getmetatable('')), which the sandbox does not guard.
void LuaScripting::set_array(LuaArray& which, std::span<const std::string> items) {
  lua_State* L = lua_;
  const int n = static_cast<int>(items.size());
  if (!arrays_maybe_reshaped_ && which.size == n) {
    lua_rawgeti(L, LUA_REGISTRYINDEX, which.table_ref);
    if (lua_getmetatable(L, -1) == 0) {
      for (int i = 1; i <= n; ++i) {
        const std::string& item = items[static_cast<size_t>(i - 1)];
        // An item the slot already holds (a script's key, run after run)
        // is left there, so it is not interned again.
        lua_rawgeti(L, -1, i);
        size_t len = 0;
        const char* held = lua_type(L, -1) == LUA_TSTRING ? lua_tolstring(L, -1, &len) : nullptr;
        const bool same =
            held != nullptr && len == item.size() && std::memcmp(held, item.data(), len) == 0;
        lua_pop(L, 1);
        if (same) continue;
        lua_pushlstring(L, item.data(), item.size());
        lua_rawseti(L, -2, i);
      }
      lua_pop(L, 1);
      return;
    }
    lua_pop(L, 2);  // the table and its metatable
  }
  lua_rawgeti(L, LUA_REGISTRYINDEX, globals_ref_);
  lua_rawgeti(L, LUA_REGISTRYINDEX, which.name_ref);
  lua::push_string_array(L, items);
  lua_pushvalue(L, -1);
  lua_rawseti(L, LUA_REGISTRYINDEX, which.table_ref);
  lua_rawset(L, -3);  // globals[name] = the new table
  lua_pop(L, 1);
  which.size = n;
}

Reply LuaScripting::run(const std::string& sha, std::span<const std::string> keys,
                        std::span<const std::string> args, const CommandRunner& runner) {
  const auto function = function_refs_.find(sha);
  LOCKSIM_ASSERT_MSG(function != function_refs_.end(), "run() takes a sha that load() cached");
  LOCKSIM_ASSERT_MSG(runner_ == nullptr && !in_script_, "scripts do not nest");
  if (intrinsics_ && function->second.intrinsic != Intrinsic::kNone) {
    std::optional<Reply> reply =
        run_intrinsic(function->second.intrinsic, keys, args, runner, call_argv_);
    if (reply) return std::move(*reply);
  }
  lua_State* L = state();
  const int base = lua_gettop(L);

  // KEYS and ARGV are written into the real globals, behind the read-only proxy.
  set_array(keys_, keys);
  set_array(argv_, args);

  alloc_calls_at_start_ = alloc_calls_;
  runner_ = &runner;
  instructions_ = 0;
  killed_ = false;
  in_script_ = true;
  lua_sethook(L, &LuaCallbacks::hook, LUA_MASKCOUNT, kHookEveryInstructions);

  lua_rawgeti(L, LUA_REGISTRYINDEX, handler_ref_);
  lua_rawgeti(L, LUA_REGISTRYINDEX, function->second.ref);
  LOCKSIM_ASSERT_MSG(lua_isfunction(L, -1), "load() stored the compiled script");
  const int status = lua_pcall(L, 0, 1, base + 1);

  lua_sethook(L, nullptr, 0, 0);
  in_script_ = false;
  runner_ = nullptr;
  if (instructions_ >= kLongScriptInstructions) {
    if (World* world = World::of_this_thread()) world->poll_after_this_event();
  }
  arrays_maybe_reshaped_ = alloc_calls_ != alloc_calls_at_start_;  // see set_array()

  const Reply reply = script_reply(sha, status);
  lua_settop(L, base);
  if (proxies_maybe_written_) {
    wipe_proxy_leftovers(L);
    proxies_maybe_written_ = false;
  }
  LOCKSIM_ASSERT(lua_gettop(L) == base);
  return reply;
}

Reply LuaScripting::script_reply(const std::string& sha, int status) {
  lua_State* L = lua_;
  if (killed_) {
    return Reply::error("ERR Script killed by the simulated Redis after " +
                        std::to_string(instruction_limit_) +
                        " Lua instructions (runaway script; a real server would stay BUSY)"
                        " script: " +
                        sha);
  }
  if (status == 0) return lua::to_reply(L, 0);
  if (status == LUA_ERRRUN && lua_istable(L, -1)) return lua::error_reply_from_table(L, sha);
  const std::string msg = lua_isstring(L, -1) ? lua::to_std_string(L, -1) : "execution failure";
  return Reply::error(
      lua::map_newlines("ERR Error running script " + sha + ", " + msg.substr(0, 100)));
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
