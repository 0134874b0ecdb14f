// A real redis-server, started on loopback for one test or live run, and
// stopped when its owner goes away.
//
// Why the harness starts its own servers: a live run must own every process
// it touches (it will SIGSTOP, kill -9 and restart them), must not collide
// with a system redis on 6379 or with other runs in parallel, and must leave
// nothing behind, also when the test crashes or the run is interrupted. So
// each server gets a free port, its own temp dir (for the AOF and the log)
// and is an OwnedProcess (owned_processes.h): a parent-death signal, and a
// SIGINT to `locksim live` stops it and removes its dir.
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "live/clock_control.h"
#include "live/owned_processes.h"

namespace locksim::live {

class RedisProcess {
 public:
  struct Options {
    // "" = no persistence at all; "always", "everysec" or "no" turn the AOF on
    // with that fsync policy (what a crash-restart fault may or may not lose).
    // (No "= \"\"" initializer: a nested struct with member initializers
    // cannot be the `= {}` default argument of its enclosing class in g++.)
    std::string appendfsync;
    // "shim": start the server under the clock shim (live/clock_shim/), so
    // clock() can jump and drift its wall clock; "": the real clock. (A
    // string for the reason above: a bool member would need an initializer.)
    std::string clock;
    // More server arguments, split on whitespace; a double-quoted token may
    // hold spaces or be empty (`--save ""`). Appended last, so they override.
    std::string extra_args;
    // Non-empty: run redis-sentinel instead (Debian's package; failing that,
    // `redis-server --sentinel`, the same binary) with this text as its
    // configuration file (`sentinel monitor ...` lines), which Sentinel
    // rewrites as it learns and reloads on restart(). appendfsync and clock
    // do not apply to it.
    std::string sentinel_config;
  };

  // Starts `redis-server` (or Sentinel, above) on 127.0.0.1 on a free port
  // and returns once it answers PING. Throws std::runtime_error with a one-line reason (the
  // binary is missing, it did not come up within ~5 s: with the log's tail).
  //
  // The server gets SIGKILL when the thread that called start() exits
  // (PR_SET_PDEATHSIG follows the creating thread, not the process), so call
  // it from a thread that outlives the server, such as the test's main thread.
  static std::unique_ptr<RedisProcess> start(const Options& options = {});

  int port() const { return port_; }
  pid_t pid() const { return server_.pid(); }

  // A live run's faults (live/live_nemesis.h). Each may be called from any
  // one thread at a time; the process restarted by restart() gets SIGKILL
  // when *that* thread exits (PR_SET_PDEATHSIG), so restart from a thread
  // that outlives the run.
  //
  // SIGKILL, reaped: what the server had not written to its AOF is lost,
  // as in a machine's crash. The folder (and the AOF) stays. No-op when down.
  void crash();
  // Starts the server again on the same port, folder and arguments, and
  // returns once it answers PING (after loading its AOF). Throws
  // std::runtime_error when it will not come up (the port taken meanwhile).
  // Precondition: down (crash() ran).
  void restart();
  bool running() const { return server_.owned(); }
  // Arguments every later restart() adds (REPLICAOF, an announced port set
  // by command after the start): a restarted server comes back configured.
  void add_restart_args(const std::vector<std::string>& more) {
    args_.insert(args_.end(), more.begin(), more.end());
  }
  // The shimmed wall clock's control: null unless started with clock_shim.
  ClockControl* clock() const { return clock_.get(); }
  // SIGSTOP / SIGCONT: a paused server keeps its sockets; the kernel accepts
  // and buffers for it, and nothing is answered until it is continued.
  void pause();
  void resume();
  // The server's working directory (AOF, log file "redis.log"); removed with it.
  const std::string& dir() const { return dir_; }

  // SIGTERM (and SIGCONT, in case a fault left it stopped), waits up to ~2 s,
  // then SIGKILL; reaps the child and removes the temp dir. Never throws.
  ~RedisProcess();

  RedisProcess(const RedisProcess&) = delete;
  RedisProcess& operator=(const RedisProcess&) = delete;

 private:
  RedisProcess() = default;

  // Spawns the server with `args` on `port` and waits until it answers PING:
  // true once it does. False, with *failure set and no child left, when it
  // exited during startup (a port lost to a race, a bad argument); throws
  // std::runtime_error when it neither answered nor exited in time.
  bool launch(const std::vector<std::string>& args, int port, std::string* failure);

  OwnedProcess server_;            // owns nothing until launched, and after a failed launch
  std::vector<std::string> args_;  // of the last launch: what restart() runs again
  std::unique_ptr<ClockControl> clock_;
  int port_ = 0;
  std::string dir_;
};

}  // namespace locksim::live
