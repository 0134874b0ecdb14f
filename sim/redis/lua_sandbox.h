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
// proxies are recorded and wipe_proxy_leftovers() clears them after each run:
// nothing a script writes leaks into the next one.
#pragma once

#include <lua.hpp>

namespace locksim::sim::redis {

// Builds the sandbox in `L`, a fresh state made by LuaScripting (so its
// allocator's userdata is that LuaScripting), with an empty stack. Chunks
// compiled afterwards see the read-only globals. Leaves the stack empty.
void set_up_sandbox(lua_State* L);

// Clears every field a script rawset() into a read-only proxy. Leaves the
// stack as it found it.
void wipe_proxy_leftovers(lua_State* L);

}  // namespace locksim::sim::redis
