// Keeps SIGPIPE from killing the process while one hiredis call writes to a
// socket the server may have closed (hiredis_connection.cpp and
// hiredis_subscriber.cpp both write through hiredis).
#pragma once

#include <signal.h>

#include <cerrno>
#include <ctime>

namespace locksim::live {

// Writing to a socket the server has closed raises SIGPIPE, whose default
// action kills the whole test or run. hiredis 0.14 uses plain write(), so keep
// SIGPIPE blocked in this thread for the duration of one command and swallow
// one it caused; the failed write then surfaces as EPIPE, i.e. an io_error.
// Per thread and per call, so the process's own SIGPIPE behaviour (e.g. the
// CLI piped into `head`) is left alone.
class SigpipeGuard {
 public:
  SigpipeGuard() {
    sigemptyset(&pipe_set_);
    sigaddset(&pipe_set_, SIGPIPE);
    sigset_t pending;
    sigemptyset(&pending);
    sigpending(&pending);
    was_pending_ = sigismember(&pending, SIGPIPE) == 1;
    pthread_sigmask(SIG_BLOCK, &pipe_set_, &old_mask_);
  }
  ~SigpipeGuard() {
    if (!was_pending_) {
      sigset_t pending;
      sigemptyset(&pending);
      sigpending(&pending);
      if (sigismember(&pending, SIGPIPE) == 1) {
        const timespec zero{0, 0};
        const int saved_errno = errno;
        sigtimedwait(&pipe_set_, nullptr, &zero);
        errno = saved_errno;
      }
    }
    pthread_sigmask(SIG_SETMASK, &old_mask_, nullptr);
  }
  SigpipeGuard(const SigpipeGuard&) = delete;
  SigpipeGuard& operator=(const SigpipeGuard&) = delete;

 private:
  sigset_t pipe_set_;
  sigset_t old_mask_;
  bool was_pending_ = false;
};

}  // namespace locksim::live
