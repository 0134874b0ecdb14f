#include "harness/live/redis_process.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <set>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <vector>

#include "env/assert.h"
#include "harness/live/hiredis_connection.h"

namespace locksim::live {

namespace {

using std::chrono::milliseconds;
using std::chrono::steady_clock;

// A port picked free can be taken by someone else before the server binds it;
// a few fresh ports make that race practically irrelevant.
constexpr int kMaxPortAttempts = 5;
constexpr milliseconds kStartupTimeout{5000};
constexpr milliseconds kStopGrace{2000};
constexpr milliseconds kPollInterval{10};
constexpr Duration kPingTimeout = Duration::millis(200);
constexpr size_t kLogTailLines = 4;
constexpr size_t kLogTailBytes = 4096;

std::string errno_text(const char* what) {
  return std::string(what) + ": " + std::strerror(errno);
}

// The first executable `name` on $PATH, or "" if there is none.
std::string find_on_path(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::string dirs = path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin";
  size_t begin = 0;
  // Each iteration consumes at least one character of dirs: bounded by its length.
  while (begin <= dirs.size()) {
    size_t end = dirs.find(':', begin);
    if (end == std::string::npos) end = dirs.size();
    std::string dir = dirs.substr(begin, end - begin);
    if (dir.empty()) dir = ".";  // POSIX: an empty entry means the current directory
    const std::string candidate = dir + "/" + name;
    struct stat st {};
    if (::stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
        ::access(candidate.c_str(), X_OK) == 0) {
      return candidate;
    }
    begin = end + 1;
  }
  return "";
}

// Asks the kernel for a free loopback port. The port is free only now; the
// caller retries with a fresh one if the server then fails to bind it.
int pick_free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw std::runtime_error(errno_text("RedisProcess: socket"));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof(addr);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    const std::string why = errno_text("RedisProcess: bind 127.0.0.1:0");
    ::close(fd);
    throw std::runtime_error(why);
  }
  ::close(fd);
  const int port = ntohs(addr.sin_port);
  LOCKSIM_ASSERT_MSG(port > 0, "the kernel gave port 0 for a bind to port 0");
  return port;
}

// Splits on whitespace; "..." groups (and may be empty, as in --save "").
std::vector<std::string> split_args(const std::string& s) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < s.size()) {  // every branch advances i
    if (std::isspace(static_cast<unsigned char>(s[i])) != 0) {
      ++i;
      continue;
    }
    std::string token;
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i])) == 0) {
      if (s[i] == '"') {
        const size_t close = s.find('"', i + 1);
        if (close == std::string::npos) {
          throw std::runtime_error("RedisProcess: unterminated quote in extra_args: " + s);
        }
        token += s.substr(i + 1, close - i - 1);
        i = close + 1;
      } else {
        token += s[i++];
      }
    }
    out.push_back(std::move(token));
  }
  return out;
}

// The last few lines of the server's log, on one line, for error messages.
std::string log_tail(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "(no log)";
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  const std::streamoff start = size > static_cast<std::streamoff>(kLogTailBytes)
                                   ? size - static_cast<std::streamoff>(kLogTailBytes)
                                   : 0;
  in.seekg(start);
  std::stringstream buffer;
  buffer << in.rdbuf();
  std::vector<std::string> lines;
  std::string line;
  while (std::getline(buffer, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (!line.empty()) lines.push_back(line);
  }
  if (lines.empty()) return "(empty log)";
  std::string out;
  const size_t first = lines.size() > kLogTailLines ? lines.size() - kLogTailLines : 0;
  for (size_t k = first; k < lines.size(); ++k) {
    if (!out.empty()) out += " | ";
    out += lines[k];
  }
  return out;
}

std::string describe_status(int status) {
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return "killed by signal " + std::to_string(WTERMSIG(status));
  return "stopped";
}

// fork + exec with the log as stdout and stderr. Everything the child needs is
// prepared before fork: in a multi-threaded parent only async-signal-safe
// calls are allowed between fork and exec.
pid_t spawn(const std::vector<std::string>& args, const std::string& log_path) {
  LOCKSIM_ASSERT(!args.empty() && !args[0].empty());
  std::vector<char*> argv;
  argv.reserve(args.size() + 1);
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);

  const int log_fd = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (log_fd < 0) throw std::runtime_error(errno_text(("RedisProcess: open " + log_path).c_str()));
  const pid_t parent = ::getpid();

  const pid_t pid = ::fork();
  if (pid < 0) {
    const std::string why = errno_text("RedisProcess: fork");
    ::close(log_fd);
    throw std::runtime_error(why);
  }
  if (pid == 0) {
    // The server must die with us, also when we are killed with SIGKILL.
    // If the parent already died before prctl took effect, getppid shows it.
    if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || ::getppid() != parent) ::_exit(126);
    // The forking thread's blocked signals and ignored SIGTERM/SIGINT would
    // survive exec and make the server unstoppable by our SIGTERM.
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::signal(SIGTERM, SIG_DFL);
    ::signal(SIGINT, SIG_DFL);
    ::signal(SIGPIPE, SIG_DFL);
    if (::dup2(log_fd, STDOUT_FILENO) < 0 || ::dup2(log_fd, STDERR_FILENO) < 0) ::_exit(126);
    const int null_fd = ::open("/dev/null", O_RDONLY);
    if (null_fd >= 0) ::dup2(null_fd, STDIN_FILENO);
    // Other threads' sockets (say, a client's connection to another server)
    // must not leak into the server, or closing them would not reach the peer.
    if (::close_range(3, ~0U, 0) != 0) {
      for (int fd = 3; fd < 4096; ++fd) ::close(fd);
    }
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  ::close(log_fd);
  return pid;
}

// Whether the child has exited; reaps it if so (status set).
bool reaped(pid_t pid, int* status) {
  const pid_t r = ::waitpid(pid, status, WNOHANG);
  // ECHILD: someone else reaped it (or SIGCHLD is ignored); it is gone either way.
  return r == pid || (r < 0 && errno == ECHILD);
}

void stop_process(pid_t pid) {
  if (pid <= 0) return;
  int status = 0;
  if (reaped(pid, &status)) return;
  ::kill(pid, SIGTERM);
  // A paused server (SIGSTOP fault) handles SIGTERM only once continued.
  ::kill(pid, SIGCONT);
  const auto deadline = steady_clock::now() + kStopGrace;
  while (steady_clock::now() < deadline) {  // bounded by kStopGrace
    if (reaped(pid, &status)) return;
    std::this_thread::sleep_for(kPollInterval);
  }
  ::kill(pid, SIGKILL);
  // SIGKILL cannot be caught: the child dies promptly. EINTR is the only
  // reason to go round again, bounded anyway.
  for (int attempt = 0; attempt < 100; ++attempt) {
    if (::waitpid(pid, &status, 0) == pid || errno != EINTR) return;
  }
}

bool answers_ping(int port) {
  HiredisConnection c("127.0.0.1", port, kPingTimeout, "redis-startup");
  const Reply r = c.command({"PING"});
  // Before it has loaded its AOF the server answers -LOADING: not ready yet.
  return r.kind == Reply::Kind::kStatus && r.text == "PONG";
}

std::string find_redis_server() {
  std::string binary = find_on_path("redis-server");
  if (binary.empty()) {
    throw std::runtime_error("redis-server not found on PATH (scripts/setup installs it)");
  }
  return binary;
}

void check_appendfsync(const std::string& fsync) {
  if (!fsync.empty() && fsync != "always" && fsync != "everysec" && fsync != "no") {
    throw std::runtime_error(
        "RedisProcess: appendfsync must be \"\", always, everysec or no, not " + fsync);
  }
}

// A fresh private directory under $TMPDIR (or /tmp) for the AOF and the log.
std::string make_temp_dir() {
  const char* tmp = std::getenv("TMPDIR");
  std::string dir_template =
      std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/locksim-redis-XXXXXX";
  if (::mkdtemp(dir_template.data()) == nullptr) {
    throw std::runtime_error(errno_text(("RedisProcess: mkdtemp " + dir_template).c_str()));
  }
  return dir_template;
}

// The command line: loopback only, no RDB snapshots, the AOF as asked, then
// the caller's extra arguments (last, so they override).
std::vector<std::string> server_args(const std::string& binary, int port, const std::string& dir,
                                     const std::string& fsync,
                                     const std::vector<std::string>& extra) {
  // clang-format off
  std::vector<std::string> args = {binary,
      "--port", std::to_string(port),
      "--bind", "127.0.0.1",
      "--protected-mode", "no",
      "--daemonize", "no",
      "--dir", dir,
      "--save", ""};
  // clang-format on
  if (fsync.empty()) {
    args.insert(args.end(), {"--appendonly", "no"});
  } else {
    args.insert(args.end(), {"--appendonly", "yes", "--appendfsync", fsync});
  }
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

// Every child pid some RedisProcess owns. Process ownership is the live
// layer's safety rule: exactly one owner signals and reaps each server, so a
// second owner (a copy, a double stop) would kill or reap a stranger once
// the kernel reuses the pid.
std::mutex owned_mutex;
std::set<pid_t> owned_pids;  // guarded by owned_mutex

void claim(pid_t pid) {
  LOCKSIM_ASSERT(pid > 0);
  const std::lock_guard<std::mutex> lock(owned_mutex);
  LOCKSIM_ASSERT_MSG(owned_pids.insert(pid).second, "a server process owned twice");
}

void release_claim(pid_t pid) {
  const std::lock_guard<std::mutex> lock(owned_mutex);
  LOCKSIM_ASSERT_MSG(owned_pids.erase(pid) == 1, "a server process released by a non-owner");
}

}  // namespace

std::unique_ptr<RedisProcess> RedisProcess::start(const Options& options) {
  const std::string binary = find_redis_server();
  check_appendfsync(options.appendfsync);
  const std::vector<std::string> extra = split_args(options.extra_args);

  // Owns the dir (and later the child) from here on, so every throw below
  // cleans up through the destructor.
  std::unique_ptr<RedisProcess> process(new RedisProcess(-1, 0, ""));
  process->dir_ = make_temp_dir();

  std::string last_failure;
  for (int attempt = 0; attempt < kMaxPortAttempts; ++attempt) {
    const int port = pick_free_port();
    const std::vector<std::string> args =
        server_args(binary, port, process->dir_, options.appendfsync, extra);
    if (process->launch(args, port, &last_failure)) {
      LOCKSIM_ASSERT(process->pid_ > 0 && process->port_ == port && !process->dir_.empty());
      return process;
    }
    LOCKSIM_ASSERT(process->pid_ == -1 && !last_failure.empty());
    // Only a lost race for the port is worth another try; anything else
    // (a bad argument, a broken install) fails the same way every time.
    if (last_failure.find("Address already in use") == std::string::npos) break;
  }
  throw std::runtime_error(last_failure);
}

bool RedisProcess::launch(const std::vector<std::string>& args, int port, std::string* failure) {
  LOCKSIM_ASSERT_MSG(pid_ == -1, "a RedisProcess launched twice");
  const std::string log_path = dir_ + "/redis.log";
  port_ = port;
  pid_ = spawn(args, log_path);
  claim(pid_);

  const auto deadline = steady_clock::now() + kStartupTimeout;
  int status = 0;
  while (steady_clock::now() < deadline) {  // bounded by kStartupTimeout
    if (reaped(pid_, &status)) {
      disown();
      *failure = "redis-server " + describe_status(status) + " during startup on port " +
                 std::to_string(port) + ": " + log_tail(log_path);
      return false;
    }
    if (answers_ping(port)) return true;
    std::this_thread::sleep_for(kPollInterval);
  }
  stop_process(pid_);
  disown();
  throw std::runtime_error("redis-server did not answer PING within " +
                           std::to_string(kStartupTimeout.count()) + " ms on port " +
                           std::to_string(port) + ": " + log_tail(log_path));
}

void RedisProcess::disown() {
  release_claim(pid_);
  pid_ = -1;
}

RedisProcess::~RedisProcess() {
  if (pid_ > 0) {
    stop_process(pid_);
    disown();
  }
  if (!dir_.empty()) {
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }
}

}  // namespace locksim::live
