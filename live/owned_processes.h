// The server processes a live run or test started (redis-server, mariadbd,
// ZooKeeper's JVMs), each owned by exactly one OwnedProcess and known
// process-wide, so that an interrupt (Ctrl-C, SIGTERM from CI) stops them
// and removes their folders instead of leaving them to the parent-death
// signal and /tmp.
//
// Why one owner per pid: exactly one party may signal and reap a child; a
// second one (a copy, a double stop, the interrupt watcher racing the owner)
// would kill or reap a stranger once the kernel reuses the pid. So every
// reap goes through the registry under its lock, and a pid the interrupt
// watcher has taken over is never waited for by its former owner again.
//
// Why a registry and a watcher thread rather than a signal handler: killing,
// reaping and removing a folder are not async-signal-safe, and the clients'
// threads may be deep in a blocking read. So `locksim live` blocks the
// signals in every thread (before it starts any) and one watcher thread
// waits for them with sigwait, then does the cleanup as ordinary code and
// exits with 128 + the signal (130 for SIGINT).
//
// Threads: every function is safe to call from any thread; one OwnedProcess
// is used by one thread at a time.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace locksim::live {

class OwnedProcess {
 public:
  // Owns nothing.
  OwnedProcess() = default;

  // Forks and execs args[0] with `args`, stdout and stderr to `log_path`,
  // stdin from /dev/null, an empty signal mask, default dispositions, no
  // inherited descriptors, and SIGKILL as its parent-death signal (it dies
  // with the calling thread, not the process: start servers from a thread
  // that outlives them). `dir` is the folder an interrupt removes with it
  // ("" for none; several processes may name the same folder). Throws
  // std::runtime_error when it cannot open the log or fork.
  OwnedProcess(const std::vector<std::string>& args, const std::string& log_path,
               const std::string& dir);

  // stop(): SIGKILL at once, reaped. Never throws.
  ~OwnedProcess();
  OwnedProcess(OwnedProcess&& other) noexcept;
  OwnedProcess& operator=(OwnedProcess&& other) noexcept;  // stops what it owned first
  OwnedProcess(const OwnedProcess&) = delete;
  OwnedProcess& operator=(const OwnedProcess&) = delete;

  // The child's pid while it is owned and not yet reaped; -1 otherwise.
  pid_t pid() const { return pid_; }
  bool owned() const { return pid_ > 0; }

  // Whether the child has exited: then it is reaped, *status is its wait
  // status, and this object owns nothing. False while it runs. Requires owned().
  bool exited(int* status);

  // Stops the child: with a `grace` > 0, SIGTERM (and SIGCONT, since a
  // paused server handles SIGTERM only once continued) and up to `grace` for
  // it to exit; then SIGKILL. Reaps it; owns nothing afterwards. Never
  // throws; nothing to do when nothing is owned.
  void stop(std::chrono::milliseconds grace = std::chrono::milliseconds(0));

 private:
  pid_t pid_ = -1;
};

// SIGCONT + SIGKILL to every owned process, reaps them, removes their
// folders, forgets them (their OwnedProcess objects then own nothing of
// consequence: stopping them is a no-op). Returns how many there were.
// Never throws.
int stop_all_owned();

// Blocks SIGINT, SIGTERM and SIGHUP in the calling thread (and so in every
// thread it starts later) and starts the watcher that, on one of them,
// runs the interrupt cut, stop_all_owned()s, runs the interrupt save, says
// so on stderr and _exits with 128 + signal. From
// then on a thread that stops or polls one of those processes through its
// OwnedProcess waits for that _exit instead of returning.
// Call once, from main, before any other thread exists.
void stop_owned_on_interrupt();

// What the interrupt watcher does before its _exit, so that an interrupt
// loses nothing that is done (docs/how-to/live-mode.md): `cut` runs before
// it stops the servers (the live run in progress records nothing after it,
// so the servers' deaths are not recorded as the clients' failures), `save`
// after (the command writes what is done, marked interrupted). Each is set
// by one owner and cleared (nullptr) before what it refers to goes; clearing
// waits for a call in progress. Neither may throw; what save writes must be
// written atomically (it may race nothing but the process's end).
void set_interrupt_cut(std::function<void()> cut);
void set_interrupt_save(std::function<void(int signal)> save);

// Once the interrupt watcher has begun, the calling thread waits for its
// _exit (a command that finishes meanwhile must not exit with its own code
// or write over what the watcher saves); otherwise returns at once.
void park_if_interrupted();
// Whether the interrupt watcher has begun: a client library's log has
// nothing to say then about the servers the watcher is killing.
bool interrupt_begun();

// What every server manager needs around its process.

// The machine cannot run live mode: a server binary missing, no temporary
// folder. Not a bug of locksim: `locksim` says "cannot run live: <what>"
// (exit 3, docs/reference/cli.md), not "internal error".
struct CannotRunLive : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The executable `name`: the first on $PATH (as a shell finds it), else
// `fallback` (Debian's path, for a binary in /usr/sbin, which a non-root
// PATH often lacks) when it is executable, else "".
std::string find_executable(const std::string& name, const std::string& fallback = "");

// A loopback port free right now; the caller retries with a fresh one if its
// server then fails to bind it. Throws std::runtime_error (socket errors).
int pick_free_loopback_port();

// $TMPDIR, or /tmp when it is unset or empty.
std::string temp_root();

// A fresh private folder "<temp_root()>/<prefix>-XXXXXX". Throws
// CannotRunLive naming the path when it cannot be made.
// Until remove_temp_dir, an interrupt (stop_all_owned) removes it too, so
// it goes with the run even while none of its processes runs (a crashed
// server waiting for its restart).
std::string make_temp_dir(const std::string& prefix);

// Removes a folder make_temp_dir made, and forgets it. Never throws; never
// returns once the interrupt watcher has begun (it removes the folder).
void remove_temp_dir(const std::string& dir);

// The last few non-empty lines of a log, joined by " | " on one line, for
// one-line error messages: "(no log)" or "(empty log)" when there are none.
// Lines that begin with one of `noise` (a JVM's logging notices) are left out.
std::string log_tail(const std::string& path, const std::vector<std::string>& noise = {});

}  // namespace locksim::live
