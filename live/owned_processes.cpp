#include "live/owned_processes.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <utility>

#include "env/assert.h"

namespace locksim::live {

namespace {

using std::chrono::milliseconds;
using std::chrono::steady_clock;

constexpr milliseconds kPoll{1};
// SIGKILL cannot be caught, but a process in uninterruptible sleep (a slow
// fsync) dies only when that returns: wait this long, then leave the zombie.
constexpr milliseconds kKillWait{30000};
constexpr size_t kLogTailLines = 4;
constexpr std::streamoff kLogTailBytes = 4096;

std::mutex& registry_mutex() {
  static std::mutex m;
  return m;
}

// pid -> folder to remove on interrupt ("" for none). Guarded by
// registry_mutex(). A pid is in here exactly while an OwnedProcess owns it.
std::map<pid_t, std::string>& registry() {
  static std::map<pid_t, std::string> r;
  return r;
}

// Set (under registry_mutex()) once the interrupt watcher has begun to stop
// everything; it then ends the process itself with _exit.
// The folders make_temp_dir made and remove_temp_dir has not yet removed,
// under registry_mutex(): an interrupt removes them too. A server's folder
// is not only its process's: between a crash and its restart the server
// has no process, and its folder (87 MB for MariaDB) was left in $TMPDIR.
std::set<std::string>& temp_dirs() {
  static std::set<std::string> d;
  return d;
}

bool& interrupt_taken() {
  static bool taken = false;
  return taken;
}

// The interrupt's cut and save (set_interrupt_cut, set_interrupt_save),
// called and replaced under hooks_mutex(), so an owner clearing one waits
// for a call in progress.
std::mutex& hooks_mutex() {
  static std::mutex m;
  return m;
}
std::function<void()>& interrupt_cut() {
  static std::function<void()> cut;
  return cut;
}
std::function<void(int)>& interrupt_save() {
  static std::function<void(int)> save;
  return save;
}

// The wait status of a process killed by SIGKILL.
constexpr int kKilledStatus = SIGKILL;

// An owner whose process the interrupt watcher took over waits here for the
// watcher's _exit. Why not return: it would race the watcher, removing the
// same folder at once (two remove_all on one tree each give up on the other's
// ENOENT and leave it behind) or ending the process with another exit code.
[[noreturn]] void park_until_interrupt_exits() {
  for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));  // ended by _exit
}

// Reaps `pid` if it has exited, under the registry lock so that the
// interrupt watcher and the owner never both reap it. True when it is gone:
// reaped here (*status set), or taken over by stop_all_owned (which kills
// and reaps it; *status says SIGKILL). Never returns when the interrupt
// watcher took it over.
bool reap_if_exited(pid_t pid, int* status) {
  std::unique_lock<std::mutex> lock(registry_mutex());
  const auto it = registry().find(pid);
  if (it == registry().end()) {
    if (interrupt_taken()) {
      lock.unlock();
      park_until_interrupt_exits();
    }
    *status = kKilledStatus;
    return true;
  }
  const pid_t r = ::waitpid(pid, status, WNOHANG);
  // ECHILD: SIGCHLD is ignored or the pid is not ours any more: gone either way.
  if (r == pid || (r < 0 && errno == ECHILD)) {
    registry().erase(it);
    return true;
  }
  return false;
}

// Polls reap_if_exited until the child is gone or `timeout` passed.
bool wait_gone(pid_t pid, milliseconds timeout, int* status) {
  const auto deadline = steady_clock::now() + timeout;
  for (;;) {  // bounded by the deadline
    if (reap_if_exited(pid, status)) return true;
    if (steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(kPoll);
  }
}

pid_t spawn_registered(const std::vector<std::string>& args, const std::string& log_path,
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
    // The server dies with us, also when we are killed with SIGKILL; if the
    // parent died before prctl took effect, getppid shows it.
    if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || ::getppid() != parent) ::_exit(126);
    // Blocked or ignored signals survive exec and would make the server deaf
    // to our SIGTERM (`locksim live` blocks SIGINT/SIGTERM/SIGHUP).
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    for (const int s : {SIGTERM, SIGINT, SIGHUP, SIGPIPE}) ::signal(s, SIG_DFL);
    if (::dup2(log_fd, STDOUT_FILENO) < 0 || ::dup2(log_fd, STDERR_FILENO) < 0) ::_exit(126);
    const int null_fd = ::open("/dev/null", O_RDONLY);
    if (null_fd >= 0) ::dup2(null_fd, STDIN_FILENO);
    // Other threads' sockets (a client's connection to another server) must
    // not leak into the server, or closing them would not reach the peer.
    if (::close_range(3, ~0U, 0) != 0) {
      for (int fd = 3; fd < 4096; ++fd) ::close(fd);
    }
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  ::close(log_fd);
  const bool fresh = registry().emplace(pid, dir).second;
  LOCKSIM_ASSERT_MSG(fresh, "a server process owned twice");
  return pid;
}

}  // namespace

OwnedProcess::OwnedProcess(const std::vector<std::string>& args, const std::string& log_path,
                           const std::string& dir)
    : pid_(spawn_registered(args, log_path, dir)) {
  LOCKSIM_ASSERT(pid_ > 0);
}

OwnedProcess::~OwnedProcess() {
  stop();
}

OwnedProcess::OwnedProcess(OwnedProcess&& other) noexcept : pid_(std::exchange(other.pid_, -1)) {}

OwnedProcess& OwnedProcess::operator=(OwnedProcess&& other) noexcept {
  if (this != &other) {
    stop();
    pid_ = std::exchange(other.pid_, -1);
  }
  return *this;
}

bool OwnedProcess::exited(int* status) {
  LOCKSIM_ASSERT_MSG(owned(), "exited() asked of an OwnedProcess that owns nothing");
  if (!reap_if_exited(pid_, status)) return false;
  pid_ = -1;
  return true;
}

void OwnedProcess::stop(milliseconds grace) {
  if (!owned()) return;
  int status = 0;
  bool gone = reap_if_exited(pid_, &status);
  if (!gone && grace.count() > 0) {
    ::kill(pid_, SIGTERM);
    ::kill(pid_, SIGCONT);
    gone = wait_gone(pid_, grace, &status);
  }
  if (!gone) {
    ::kill(pid_, SIGCONT);
    ::kill(pid_, SIGKILL);
    if (!wait_gone(pid_, kKillWait, &status)) {
      std::fprintf(stderr, "locksim: pid %d ignored SIGKILL for %lld ms; left unreaped\n",
                   static_cast<int>(pid_), static_cast<long long>(kKillWait.count()));
      const std::lock_guard<std::mutex> lock(registry_mutex());
      registry().erase(pid_);
    }
  }
  pid_ = -1;
}

int stop_all_owned() {
  std::map<pid_t, std::string> owned;
  std::set<std::string> dirs;
  {
    const std::lock_guard<std::mutex> lock(registry_mutex());
    owned.swap(registry());
    dirs.swap(temp_dirs());
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
  for (const std::string& dir : dirs) {  // those of servers down when it came
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
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
    {
      const std::lock_guard<std::mutex> lock(registry_mutex());
      interrupt_taken() = true;  // before the processes leave the registry
    }
    {
      const std::lock_guard<std::mutex> lock(hooks_mutex());
      if (interrupt_cut()) interrupt_cut()();
    }
    const int stopped = stop_all_owned();
    {
      const std::lock_guard<std::mutex> lock(hooks_mutex());
      if (interrupt_save()) interrupt_save()(signal);
    }
    std::fprintf(stderr, "locksim: interrupted (signal %d); stopped %d server process(es)\n",
                 signal, stopped);
    std::fflush(stderr);
    ::_exit(128 + signal);
  }).detach();
}

void set_interrupt_cut(std::function<void()> cut) {
  const std::lock_guard<std::mutex> lock(hooks_mutex());
  interrupt_cut() = std::move(cut);
}

void set_interrupt_save(std::function<void(int signal)> save) {
  const std::lock_guard<std::mutex> lock(hooks_mutex());
  interrupt_save() = std::move(save);
}

void park_if_interrupted() {
  if (interrupt_begun()) park_until_interrupt_exits();
}

bool interrupt_begun() {
  const std::lock_guard<std::mutex> lock(registry_mutex());
  return interrupt_taken();
}

int pick_free_loopback_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw std::runtime_error(std::string("socket: ") + std::strerror(errno));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof(addr);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    const std::string why = std::string("bind 127.0.0.1:0: ") + std::strerror(errno);
    ::close(fd);
    throw std::runtime_error(why);
  }
  ::close(fd);
  const int port = ntohs(addr.sin_port);
  LOCKSIM_ASSERT_MSG(port > 0, "the kernel gave port 0 for a bind to port 0");
  return port;
}

std::string temp_root() {
  const char* tmp = std::getenv("TMPDIR");
  return tmp != nullptr && *tmp != '\0' ? tmp : "/tmp";
}

std::string make_temp_dir(const std::string& prefix) {
  LOCKSIM_ASSERT(!prefix.empty() && prefix.find('/') == std::string::npos);
  std::string dir = temp_root() + "/" + prefix + "-XXXXXX";
  if (::mkdtemp(dir.data()) == nullptr) {
    throw CannotRunLive("no temporary folder: mkdtemp " + dir + ": " + std::strerror(errno) +
                        " (set TMPDIR to a writable folder)");
  }
  const std::lock_guard<std::mutex> lock(registry_mutex());
  temp_dirs().insert(dir);
  return dir;
}

void remove_temp_dir(const std::string& dir) {
  if (dir.empty()) return;
  std::unique_lock<std::mutex> lock(registry_mutex());
  if (interrupt_taken()) {  // the watcher removes it; two remove_all would race
    lock.unlock();
    park_until_interrupt_exits();
  }
  temp_dirs().erase(dir);
  std::error_code ignored;
  std::filesystem::remove_all(dir, ignored);  // under the lock: the watcher waits for it
}

std::string find_executable(const std::string& name, const std::string& fallback) {
  LOCKSIM_ASSERT(!name.empty() && name.find('/') == std::string::npos);
  const char* path = std::getenv("PATH");
  const std::string dirs = path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin";
  auto executable = [](const std::string& candidate) {
    struct stat st {};
    return ::stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
           ::access(candidate.c_str(), X_OK) == 0;
  };
  size_t begin = 0;
  // Each iteration consumes at least one character of dirs: bounded by its length.
  while (begin <= dirs.size()) {
    size_t end = dirs.find(':', begin);
    if (end == std::string::npos) end = dirs.size();
    // POSIX: an empty entry means the current directory.
    std::string candidate = end > begin ? dirs.substr(begin, end - begin) : std::string(".");
    candidate.append(1, '/').append(name);
    if (executable(candidate)) return candidate;
    begin = end + 1;
  }
  return !fallback.empty() && executable(fallback) ? fallback : "";
}

std::string log_tail(const std::string& path, const std::vector<std::string>& noise) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "(no log)";
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  in.seekg(size > kLogTailBytes ? size - kLogTailBytes : 0);
  std::stringstream buffer;
  buffer << in.rdbuf();
  std::vector<std::string> lines;
  std::string line;
  while (std::getline(buffer, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const bool is_noise = std::any_of(noise.begin(), noise.end(), [&line](const std::string& n) {
      return line.compare(0, n.size(), n) == 0;
    });
    if (!line.empty() && !is_noise) lines.push_back(line);
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

}  // namespace locksim::live
