#include "harness/live/owned_processes.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "env/assert.h"

namespace locksim::live {

namespace {

std::mutex& registry_mutex() {
  static std::mutex m;
  return m;
}

// pid -> folder to remove ("" for none). Guarded by registry_mutex().
std::map<pid_t, std::string>& registry() {
  static std::map<pid_t, std::string> r;
  return r;
}

}  // namespace

pid_t spawn_owned(const std::vector<std::string>& args, const std::string& log_path,
                  const std::string& dir) {
  LOCKSIM_ASSERT(!args.empty() && !args[0].empty());
  // Everything the child needs is prepared before fork: in a multi-threaded
  // parent only async-signal-safe calls are allowed between fork and exec.
  std::vector<char*> argv;
  argv.reserve(args.size() + 1);
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  const int log_fd = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (log_fd < 0) throw std::runtime_error("cannot open " + log_path + ": " + std::strerror(errno));
  const pid_t parent = ::getpid();
  // Registered under the lock before an interrupt could look for it.
  const std::lock_guard<std::mutex> lock(registry_mutex());
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(log_fd);
    throw std::runtime_error(std::string("fork failed: ") + std::strerror(errno));
  }
  if (pid == 0) {
    if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || ::getppid() != parent) ::_exit(126);
    // The blocked signals of `locksim live` would survive exec and make the
    // server deaf to them.
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    if (::dup2(log_fd, STDOUT_FILENO) < 0 || ::dup2(log_fd, STDERR_FILENO) < 0) ::_exit(126);
    const int null_fd = ::open("/dev/null", O_RDONLY);
    if (null_fd >= 0) ::dup2(null_fd, STDIN_FILENO);
    // Client sockets of other threads must not leak into the server.
    if (::close_range(3, ~0U, 0) != 0) {
      for (int fd = 3; fd < 4096; ++fd) ::close(fd);
    }
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  ::close(log_fd);
  registry()[pid] = dir;
  return pid;
}

void disown(pid_t pid) {
  const std::lock_guard<std::mutex> lock(registry_mutex());
  registry().erase(pid);
}

int stop_all_owned() {
  std::map<pid_t, std::string> owned;
  {
    const std::lock_guard<std::mutex> lock(registry_mutex());
    owned.swap(registry());
  }
  for (const auto& [pid, dir] : owned) {
    ::kill(pid, SIGCONT);
    ::kill(pid, SIGKILL);
  }
  for (const auto& [pid, dir] : owned) {
    int status = 0;
    ::waitpid(pid, &status, 0);
    std::error_code ec;
    if (!dir.empty()) std::filesystem::remove_all(dir, ec);
  }
  return static_cast<int>(owned.size());
}

void stop_owned_on_interrupt() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGHUP);
  const int rc = ::pthread_sigmask(SIG_BLOCK, &set, nullptr);
  LOCKSIM_ASSERT_MSG(rc == 0, "pthread_sigmask cannot fail with a valid set");
  std::thread([set] {
    int signal = 0;
    if (::sigwait(&set, &signal) != 0) return;
    const int stopped = stop_all_owned();
    std::fprintf(stderr, "locksim: interrupted (signal %d); stopped %d server process(es)\n",
                 signal, stopped);
    std::fflush(stderr);
    ::_exit(128 + signal);
  }).detach();
}

}  // namespace locksim::live
