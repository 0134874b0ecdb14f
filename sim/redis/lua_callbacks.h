// The C functions LuaScripting registers into its Lua interpreter. Internal
// to sim/redis/.
//
// They are the static members of one struct because LuaScripting befriends
// it: each reaches the LuaScripting that owns its interpreter through the
// allocator's userdata (lua_newstate was given `this`), and reads or updates
// its per-run state. Each is defined beside its concept:
//   lua_scripting.cpp  the core: memory accounting, the instruction limit,
//                      panics, and the error handler every run goes through;
//   lua_sandbox.cpp    what scripts can call: redis.*, pcall, math.random,
//                      and the read-only guards of the sandbox.
// None of them yields; none lets a C++ exception cross into Lua (the C++
// build of Lua would report it as an unknown error), except panic, which Lua
// calls only outside any protected call.
#pragma once

#include <lua.hpp>

#include <cstddef>

namespace locksim::sim::redis {

class LuaScripting;

// The registry key of the read-only proxies (lua_sandbox.cpp), which
// wipe_proxy_leftovers() clears.
inline constexpr char kLuaProxiesKey[] = "locksim.proxies";

struct LuaCallbacks {
  // The LuaScripting that owns L. Never null.
  static LuaScripting* self(lua_State* L);

  // --- lua_scripting.cpp: the core.
  // lua_Alloc: counts the bytes in use, and while a script runs refuses to
  // grow past the memory limit (Lua then raises "not enough memory"). Counts
  // its calls too (LuaScripting::set_array).
  static void* alloc(void* ud, void* ptr, size_t osize, size_t nsize);
  // An error outside any pcall: a bug in locksim, thrown as runtime_error.
  static int panic(lua_State* L);
  // The count hook: enforces the instruction limit.
  static void hook(lua_State* L, lua_Debug* ar);
  // Redis' __redis__err__handler: any error becomes {err=..., source, line}.
  static int error_handler(lua_State* L);

  // --- lua_sandbox.cpp: the library scripts see.
  static int pcall(lua_State* L);  // Redis 7.0's pcall
  static int redis_call(lua_State* L);
  static int redis_pcall(lua_State* L);
  static int error_reply(lua_State* L);
  static int status_reply(lua_State* L);
  static int sha1hex(lua_State* L);
  static int no_op(lua_State* L);        // redis.log, redis.set_repl
  static int return_true(lua_State* L);  // redis.replicate_commands
  static int math_random(lua_State* L);
  static int math_randomseed(lua_State* L);
  static int readonly_newindex(lua_State* L);
  static int missing_global(lua_State* L);
  // rawset, table.insert, table.remove and table.sort: the library's own,
  // called in the same frame (so their errors read the same), after marking
  // that a read-only proxy may have been written (see lua_sandbox.h).
  static int rawset(lua_State* L);
  static int table_insert(lua_State* L);
  static int table_remove(lua_State* L);
  static int table_sort(lua_State* L);
  // tonumber: the library's own (its C closure's upvalue), called in the
  // same frame, except for a lone string argument lua::plain_integer_number
  // reads, answered without strtod (which the library calls twice).
  static int tonumber(lua_State* L);

 private:
  // redis.call (raise) and redis.pcall (return {err=...}).
  static int redis_command(lua_State* L, bool raise);
  // The four raw writers' one body: mark, then call the library's own
  // function (the LuaScripting::RawWriters member `original` names).
  template <class Original>
  static int raw_write(lua_State* L, Original original);
};

}  // namespace locksim::sim::redis
