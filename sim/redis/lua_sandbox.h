// The sandbox a Redis 7.0 script runs in, set up in a fresh Lua interpreter.
// Internal to sim/redis/ (LuaScripting calls it).
//
// What scripts get, as on redis-server 7.0: only the base, table, string and
// math libraries; no loadfile/dofile/print/getfenv/setfenv/newproxy/module/
// require; Redis' pcall; math.random/randomseed on Redis' rand48; the `redis`
// table (call, pcall, error_reply, status_reply, sha1hex, log, set_repl,
// replicate_commands and the LOG_*/REPL_* constants, REDIS_VERSION 7.0.15).
//
// How it is read-only: scripts see the globals, and each library table,
// through an empty proxy whose __newindex fails ("Attempt to modify a
// readonly table") and whose reads fall through to the real table; reading a
// missing global is an error. rawset() can still write into a proxy, so the
// proxies are recorded and wipe_proxy_leftovers() clears them after a run:
// nothing a script writes leaks into the next one.
//
// When the wipe is needed: only a raw write puts a field into a proxy (any
// other write lands in its __newindex, and a key already present got there
// by a raw write). What can write raw is rawset, table.insert, table.remove
// and table.sort (lua_rawset/lua_rawseti on their argument; nothing else in
// base/table/string/math writes a table it was given), and the error
// handler, which records where an error happened in the error value, a
// proxy for error(_G). Each of them sets the LuaScripting's
// proxies_maybe_written_, and the run wipes only then. A library function
// added to the sandbox that writes a table it is given must do the same.
#pragma once

#include <lua.hpp>

namespace locksim::sim::redis {

// What the core keeps of the sandbox: registry references (luaL_ref) to
// what every run uses, and the library functions that write raw, which the
// sandbox replaced by LuaCallbacks' stand-ins (they call these).
struct SandboxRefs {
  int handler = LUA_NOREF;  // Redis' __redis__err__handler
  int globals = LUA_NOREF;  // the real globals, behind the read-only proxy
  lua_CFunction rawset = nullptr;
  lua_CFunction table_insert = nullptr;
  lua_CFunction table_remove = nullptr;
  lua_CFunction table_sort = nullptr;
};

// Builds the sandbox in `L`, a fresh state made by LuaScripting (so its
// allocator's userdata is that LuaScripting), with an empty stack. Chunks
// compiled afterwards see the read-only globals. Leaves the stack empty.
SandboxRefs set_up_sandbox(lua_State* L);

// Clears every field a script wrote raw into a read-only proxy. Leaves the
// stack as it found it.
void wipe_proxy_leftovers(lua_State* L);

}  // namespace locksim::sim::redis
