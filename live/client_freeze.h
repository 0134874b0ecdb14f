// A GC pause of a live client: the whole client (its work, its background
// tasks such as a watchdog, its reads) stops and stays stopped until resumed,
// as a stop-the-world pause or SIGSTOP stops a process.
//
// Why not SIGSTOP: live clients are threads of one process (the harness's),
// so a signal would stop them all and the recorder with them. Instead every
// Env call of a paused client blocks at its boundary: before a command is
// sent and after its reply comes back, before a clock read, at the end of a
// sleep (a timer that was due during the pause fires at its end). Between
// two Env calls a client runs only a few microseconds of its own logic, so
// it stops within that of the pause, and nothing it does between calls can
// be observed by anyone else. What differs from a frozen process: a command
// whose reply is late may still time out during the pause (hiredis's
// timeout runs in the kernel); the client sees that only at resume.
// docs/how-to/live-mode.md ("Faults on real servers") says so.
//
// Threads: every function may be called from any thread.
#pragma once

#include <condition_variable>
#include <mutex>

namespace locksim::live {

// Thrown at the run's end through a client's thread: out of a freeze that
// was abandoned, out of a sleep the run's end cut (live/run_end.h), out of
// a record after the end (live/live_runner.cpp). The client's thread ends
// where it stands and records nothing more.
// Not a std::exception, as ClientCrashed (client_life.h).
struct ClientAbandoned {};

class ClientFreeze {
 public:
  void pause() {
    const std::lock_guard<std::mutex> lock(mutex_);
    paused_ = true;
  }
  void resume() {
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      paused_ = false;
    }
    changed_.notify_all();
  }
  // Ends the freeze for good: every wait, now and later, throws
  // ClientAbandoned. At the run's end: the simulation cancels every client
  // there, so a paused or hung one never takes another step.
  void abandon() {
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      abandoned_ = true;
    }
    changed_.notify_all();
  }
  // Returns at once unless paused; then when resumed. Throws
  // ClientAbandoned once abandoned.
  void wait_while_paused() {
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait(lock, [this] { return !paused_ || abandoned_; });
    if (abandoned_) throw ClientAbandoned{};
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  bool paused_ = false;
  bool abandoned_ = false;
};

}  // namespace locksim::live
