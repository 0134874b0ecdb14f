// A crash of a live client: the whole client (its work and its tasks, such
// as a watchdog) dies at once, and, when the fault has a `for`, a new life
// of it starts afterwards under a fresh Jepsen process id, as a simulated
// client node's crash and restart do (harness/simulation.cpp).
//
// Why not a process of its own: live clients are threads of one process
// (see client_freeze.h). A crash is therefore a generation: crash() ends the
// current one, and every Env call made under it (a command about to be sent
// or whose reply just came back, a clock read, the end of a sleep) throws
// ClientCrashed, which unwinds the client's thread and its tasks. The live
// runner records the crash in the history at the instant of the fault, and
// refuses any op the dying thread still tries to record. What differs from a
// dead process: a command already sent when the crash comes still runs on
// the server (as it does in the simulation, where what a node sent before
// it died still arrives), and its connection closes when that command
// returns, at most a command timeout later, where the simulation closes it
// at once (docs/how-to/live-mode.md says so).
//
// Threads: every function may be called from any thread.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>

namespace locksim::live {

// Thrown through a crashed client's stack. Deliberately not a
// std::exception: nothing on the way (an algorithm, a task's body) may
// mistake it for an error and go on.
struct ClientCrashed {};

class ClientLife {
 public:
  // Ends the current life: its Env calls throw from now on.
  void crash() {
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      crashed_ = true;
      ++generation_;
    }
    changed_.notify_all();
  }
  // Lets a new life begin (the client's thread starts it).
  void restart() {
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      crashed_ = false;
    }
    changed_.notify_all();
  }
  // The life now: an Env remembers the one it was made in.
  uint64_t generation() const {
    const std::lock_guard<std::mutex> lock(mutex_);
    return generation_;
  }
  // Throws ClientCrashed when the life `generation` is over.
  void check(uint64_t generation) const {
    if (this->generation() != generation) throw ClientCrashed{};
  }
  // Sleeps `d`, or less when life `generation` ends meanwhile (then throws
  // ClientCrashed).
  void sleep(uint64_t generation, std::chrono::nanoseconds d) const {
    std::unique_lock<std::mutex> lock(mutex_);
    if (changed_.wait_for(lock, d, [&] { return generation_ != generation; })) {
      throw ClientCrashed{};
    }
  }
  // After a crash: waits until restart() (true) or until `give_up()` holds
  // (false), which is asked every few milliseconds (the run's end).
  bool wait_restarted(const std::function<bool()>& give_up) const {
    std::unique_lock<std::mutex> lock(mutex_);
    // Bounded by give_up: the run's end comes.
    while (crashed_) {
      if (give_up()) return false;
      changed_.wait_for(lock, std::chrono::milliseconds(5));
    }
    return true;
  }

 private:
  mutable std::mutex mutex_;
  mutable std::condition_variable changed_;
  bool crashed_ = false;
  uint64_t generation_ = 0;
};

}  // namespace locksim::live
