// Scripts the simulated Redis knows by heart: the two compare-then-act
// scripts every Redis lock in the literature sends (antirez's release, "if
// GET is my token then DEL", and Redlock's extend, "... then PEXPIRE"), run
// as the same redis.call commands from C++ instead of through the Lua
// interpreter.
//
// Why: a Redlock run sends the release script to all five masters after
// every failed round, one EVAL every 6.5 simulated events, and the
// interpreter around its two redis.call commands (the VM, KEYS and ARGV, the
// reply conversions both ways, the collector) was 3,700 of its 5,220
// instructions: a third of the run (issue 30, docs/engine-speed-log.md).
//
// Contract: for a body equal, byte for byte, to one of the known texts, the
// reply and the keyspace after it are what the Lua run gives, because the
// intrinsic issues the same commands in the same order through the same
// runner and decides between them as the script's `==` does (byte
// equality; a nil GET is Lua's false, equal to no string). Where the script
// would raise (an error reply from a command, a missing KEYS[1] or ARGV
// item, an exception from the server), the intrinsic answers nothing and
// the Lua run goes ahead: it has changed nothing by then, since a GET
// writes nothing (lazy expiry aside, which the Lua run's own GET would do
// first) and a PEXPIRE refused for its argument writes nothing either.
// tests/lua_intrinsics_test.cpp holds the two paths equal over every
// reply kind; tests/redis_differential_test.cpp holds the scripts to
// redis-server.
//
// What a script could still see: the interpreter's memory, which the
// intrinsic leaves untouched, so a script returning collectgarbage("count")
// after a release reads a smaller figure than it would otherwise (and than
// redis-server, whose allocations differ anyway). The math.random stream,
// KEYS, ARGV and every global are untouched, as the Lua run leaves them.
#pragma once

#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "env/reply.h"

namespace locksim::sim::redis {

// Executes one Redis command for a script (redis.call), its reply back:
// LuaScripting::CommandRunner.
using ScriptCommandRunner = std::function<Reply(const std::vector<std::string>& argv)>;

enum class Intrinsic {
  kNone,               // run by Lua
  kCompareAndDel,      // if GET KEYS[1] == ARGV[1] then return DEL KEYS[1] else return 0
  kCompareAndPexpire,  // if GET KEYS[1] == ARGV[1] then return PEXPIRE KEYS[1] ARGV[2] else 0
};

// The intrinsic for a script body: kNone unless `body` is one of the known
// texts exactly (another spacing or quoting runs by Lua, as before).
Intrinsic intrinsic_of(const std::string& body);

// Runs `kind` (not kNone) with the EVAL's KEYS and ARGV, issuing commands
// through `runner` with `scratch` as their command line (reused, so its
// strings keep their room). Returns the script's reply, or nullopt when
// the script would raise: the caller then runs it by Lua, and nothing has
// changed meanwhile (see the contract above).
std::optional<Reply> run_intrinsic(Intrinsic kind, std::span<const std::string> keys,
                                   std::span<const std::string> args,
                                   const ScriptCommandRunner& runner,
                                   std::vector<std::string>& scratch);

}  // namespace locksim::sim::redis
