// EVAL's engine: runs Redis Lua scripts on an embedded Lua 5.1, as Redis 7.0 does.
//
// What it reproduces, because lock algorithms depend on it:
//  - the script cache keyed by the SHA-1 hex of the body (EVALSHA, SCRIPT LOAD);
//  - the conversions between Redis replies and Lua values in both directions,
//    and the exact error texts redis-server 7.0 produces (checked by
//    tests/redis_differential_test.cpp);
//  - the sandbox: only base/table/string/math, no loadfile/dofile/print, globals
//    read-only, reading an undefined global is an error;
//  - math.random/math.randomseed on Redis' own rand48 generator. Redis 7.0
//    does NOT reseed it per script (6.x did, for verbatim script replication;
//    7.0 replicates effects): one stream per server process, starting from
//    rand48's default state, carried across scripts and SCRIPT FLUSH. We do
//    the same, so script results match redis-server and stay deterministic.
//
// What it adds, because a simulation must never hang: a script is stopped
// after a bounded number of Lua instructions and a bounded amount of memory
// (the real server would go BUSY instead). Scripts run to completion on the
// caller's stack: they cannot yield, so they are atomic by construction.
//
// Not reproduced: the cjson/cmsgpack/bit/struct libraries, redis.setresp
// (RESP3), SCRIPT KILL of a running script, and a read-only protection of
// library tables that survives rawset (rawset leftovers are wiped after the
// script that made them instead, so nothing leaks between scripts).
//
// Where it lives: this file and lua_scripting.cpp are the core (the cache,
// one run, its limits); lua_sandbox.* builds the sandbox; lua_values.* turns
// Lua values into replies and back; lua_callbacks.h names the C functions
// registered into Lua.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "env/reply.h"
#include "sim/redis/lua_intrinsics.h"

struct lua_State;

namespace locksim::sim::redis {

class LuaScripting {
 public:
  // Executes one Redis command on behalf of redis.call/redis.pcall. Returns
  // the reply; an error reply is raised (call) or returned as {err=...} (pcall).
  using CommandRunner = ScriptCommandRunner;

  // Stops runaway scripts; plenty for any lock script (they run < 1000).
  static constexpr uint64_t kDefaultInstructionLimit = 50'000'000;
  // Caps the Lua heap, so string.rep(...) cannot exhaust the host.
  static constexpr size_t kDefaultMemoryLimitBytes = size_t{256} << 20;

  LuaScripting();
  ~LuaScripting();
  LuaScripting(const LuaScripting&) = delete;
  LuaScripting& operator=(const LuaScripting&) = delete;

  // Compiles `body` and caches it under its SHA-1 hex (a no-op when already
  // cached). Returns the sha, or the compile-error reply Redis gives. `sha`
  // refers to storage of this LuaScripting: valid until the next load(),
  // flush() or restart() (copy it to keep it longer).
  struct LoadResult {
    const std::string& sha;
    std::optional<Reply> error;
  };
  LoadResult load(const std::string& body);

  // `sha` must be lowercase hex.
  bool exists(const std::string& sha) const { return function_refs_.count(sha) != 0; }

  // Runs a cached script with the given KEYS and ARGV. `sha` must exist.
  // KEYS and ARGV are views into the EVAL's arguments: no copy per call.
  Reply run(const std::string& sha, std::span<const std::string> keys,
            std::span<const std::string> args, const CommandRunner& runner);

  // SCRIPT FLUSH: forgets every script and restarts the interpreter, as Redis
  // does. The math.random stream goes on (it is process state in Redis).
  void flush();

  // A server restart: flush() and the math.random stream back to its start.
  void restart();

  // The cached script bodies by sha, e.g. to replicate EVALSHA as EVAL.
  const std::map<std::string, std::string>& scripts() const { return bodies_; }

  void set_instruction_limit(uint64_t limit) { instruction_limit_ = limit; }

  // Whether the scripts known by heart run as C++ (lua_intrinsics.h): on
  // by default; off, every script runs by Lua, which is how
  // tests/lua_intrinsics_test.cpp holds the two equal.
  void set_intrinsics(bool on) { intrinsics_ = on; }

 private:
  friend struct LuaCallbacks;  // the C functions registered into Lua (lua_callbacks.h)

  // KEYS or ARGV: the table the real globals hold under that name, and how
  // set_array() last filled it.
  struct LuaArray {
    int name_ref = 0;   // registry reference of the string "KEYS" or "ARGV"
    int table_ref = 0;  // registry reference of the table the globals hold under it
    int size = -1;      // how many items set_array() put in it; -1: none yet
  };

  lua_State* state();  // creates the interpreter (and its sandbox) on first use
  void close();
  // Has `which` (keys_ or argv_) name a table holding `items` at 1..n, as a
  // table made afresh for them would: the last run's when it can.
  void set_array(LuaArray& which, std::span<const std::string> items);
  // The reply for the run that just ended with lua_pcall `status`, its
  // result or error on top of the stack (left there).
  Reply script_reply(const std::string& sha, int status);

  // The SHA-1 hex of `body`, from the memo when it holds the body.
  const std::string& sha_of(const std::string& body);

  lua_State* lua_ = nullptr;
  std::map<std::string, std::string> bodies_;  // sha -> body, sorted: order never leaks
  // A cached script: the registry reference (luaL_ref) of its compiled
  // function in lua_, and whether its body is one known by heart.
  struct Compiled {
    int ref = 0;
    Intrinsic intrinsic = Intrinsic::kNone;
  };
  // sha -> its compiled script: the same keys as bodies_ (close() clears
  // it, flush() both).
  std::map<std::string, Compiled, std::less<>> function_refs_;
  bool intrinsics_ = true;
  // The last bodies hashed: a lock runs two or three scripts over and over,
  // and hashing each EVAL's body was a tenth of a Redis run. A memo hit or
  // miss changes only the cost, never a reply.
  struct ShaMemo {
    std::string body;
    std::string sha;  // empty: the entry is unused
  };
  static constexpr size_t kShaMemoEntries = 4;
  std::array<ShaMemo, kShaMemoEntries> sha_memo_;
  size_t sha_memo_next_ = 0;  // the entry a miss replaces (round robin)
  uint64_t instruction_limit_ = kDefaultInstructionLimit;

  // Per-run state, valid only while run() executes.
  const CommandRunner* runner_ = nullptr;
  uint64_t instructions_ = 0;
  bool killed_ = false;
  bool in_script_ = false;  // the memory limit applies only while a script runs
  // Redis' redisLrand48 state (48 bits), from rand48's default seed.
  static constexpr uint64_t kRand48InitialState = 0x1234abcd330eULL;
  uint64_t rand48_state_ = kRand48InitialState;

  size_t memory_used_bytes_ = 0;
  size_t memory_limit_bytes_ = kDefaultMemoryLimitBytes;

  // What every run reaches, as registry references (luaL_ref) taken when
  // the state is built: an integer index, where a string key would be
  // hashed and interned on every run. Valid while lua_ is.
  int handler_ref_ = 0;  // Redis' __redis__err__handler
  int globals_ref_ = 0;  // the real globals, behind the read-only proxy
  LuaArray keys_;
  LuaArray argv_;
  // Calls of LuaCallbacks::alloc, but for those of redis.call's reply
  // conversion, and their count when the current script started.
  uint64_t alloc_calls_ = 0;
  uint64_t alloc_calls_at_start_ = 0;
  // The last script called the allocator: it may have reshaped KEYS or
  // ARGV, which are then made afresh (set_array()).
  bool arrays_maybe_reshaped_ = true;
  // Set when a script may have written a read-only proxy past its
  // __newindex (see lua_sandbox.h): only then has wipe_proxy_leftovers()
  // anything to do.
  bool proxies_maybe_written_ = false;
  // The library's own rawset, table.insert, table.remove and table.sort,
  // which LuaCallbacks' stand-ins call.
  using LuaCFunction = int (*)(lua_State*);
  struct RawWriters {
    LuaCFunction rawset = nullptr;
    LuaCFunction insert = nullptr;
    LuaCFunction remove = nullptr;
    LuaCFunction sort = nullptr;
  };
  RawWriters raw_writers_;
  // redis.call's command line, reused call after call so that its strings
  // keep their buffers. Scripts do not nest (EVAL is noscript), and nothing
  // reads it after the command ran.
  std::vector<std::string> call_argv_;
};

}  // namespace locksim::sim::redis
