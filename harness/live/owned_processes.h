// The server processes a live run started, known process-wide, so that an
// interrupt (Ctrl-C, SIGTERM from CI) stops them and removes their folders
// instead of leaving them to the parent-death signal and /tmp.
//
// Why a registry and a watcher thread rather than a signal handler: killing,
// reaping and removing a folder are not async-signal-safe, and the clients'
// threads may be deep in a blocking read. So `locksim live` blocks the
// signals in every thread (before it starts any) and one watcher thread
// waits for them with sigwait, then does the cleanup as ordinary code and
// exits with 128 + the signal (130 for SIGINT).
//
// Threads: every function is safe to call from any thread.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace locksim::live {

// Forks and execs args[0] with `args`, stdout and stderr to `log_path`,
// stdin from /dev/null, an empty signal mask, no inherited descriptors, and
// SIGKILL as its parent-death signal (it dies with the calling thread). The
// child is registered as owned, with `dir` to remove when an interrupt stops
// it ("" for none). Throws std::runtime_error when it cannot fork or open
// the log.
pid_t spawn_owned(const std::vector<std::string>& args, const std::string& log_path,
                  const std::string& dir);

// The owner reaped `pid` (and will remove its folder itself): forget it.
void disown(pid_t pid);

// SIGCONT + SIGKILL to every owned process, reaps them, removes their
// folders, forgets them. Returns how many there were. Never throws.
int stop_all_owned();

// Blocks SIGINT, SIGTERM and SIGHUP in the calling thread (and so in every
// thread it starts later) and starts the watcher that, on one of them,
// stop_all_owned()s, says so on stderr and _exits with 128 + signal.
// Call once, from main, before any other thread exists.
void stop_owned_on_interrupt();

}  // namespace locksim::live
