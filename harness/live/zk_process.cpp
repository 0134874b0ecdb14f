#include "harness/live/zk_process.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace locksim::live {

namespace {

constexpr const char* kJava = "/usr/bin/java";
constexpr const char* kJar = "/usr/share/java/zookeeper.jar";
constexpr const char* kConfDir = "/etc/zookeeper/conf";
// A JVM and an election on a busy 2-core machine: generous.
constexpr std::chrono::seconds kStartupTimeout{60};
constexpr std::chrono::milliseconds kPoll{100};

int pick_free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw std::runtime_error("ZkEnsembleProcess: socket failed");
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    ::close(fd);
    throw std::runtime_error("ZkEnsembleProcess: bind 127.0.0.1:0 failed");
  }
  ::close(fd);
  return ntohs(addr.sin_port);
}

pid_t spawn(const std::vector<std::string>& args, const std::string& log_path) {
  std::vector<char*> argv;
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  const int log_fd = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (log_fd < 0) throw std::runtime_error("ZkEnsembleProcess: cannot open " + log_path);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(log_fd);
    throw std::runtime_error("ZkEnsembleProcess: fork failed");
  }
  if (pid == 0) {
    // Only async-signal-safe calls until exec.
    if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || ::getppid() != parent) ::_exit(126);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    if (::dup2(log_fd, STDOUT_FILENO) < 0 || ::dup2(log_fd, STDERR_FILENO) < 0) ::_exit(126);
    const int null_fd = ::open("/dev/null", O_RDONLY);
    if (null_fd >= 0) ::dup2(null_fd, STDIN_FILENO);
    ::close_range(3, ~0U, 0);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  ::close(log_fd);
  return pid;
}

// Sends a four-letter word and returns the answer ("" on any failure).
std::string four_letter(int port, const char* word) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return "";
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  timeval tv{1, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  std::string out;
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
      ::send(fd, word, std::strlen(word), MSG_NOSIGNAL) ==
          static_cast<ssize_t>(std::strlen(word))) {
    char buf[1024];
    for (int i = 0; i < 64; ++i) {  // bounded: the server closes after answering
      const ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
      if (n <= 0) break;
      out.append(buf, static_cast<size_t>(n));
    }
  }
  ::close(fd);
  return out;
}

std::string tail(const std::string& path) {
  std::ifstream in(path);
  std::string line, last;
  while (std::getline(in, line)) {
    if (!line.empty()) last = line;
  }
  return last.empty() ? "(empty log)" : last;
}

}  // namespace

std::string ZkEnsembleProcess::missing() {
  if (::access(kJava, X_OK) != 0)
    return std::string(kJava) + " not found (apt-get install zookeeper)";
  if (::access(kJar, R_OK) != 0)
    return std::string(kJar) + " not found (apt-get install zookeeper)";
  return "";
}

std::unique_ptr<ZkEnsembleProcess> ZkEnsembleProcess::start(const Options& options) {
  if (options.servers != 1 && options.servers != 3) {
    throw std::invalid_argument("ZkEnsembleProcess: servers must be 1 or 3");
  }
  if (const std::string why = missing(); !why.empty()) throw std::runtime_error(why);
  std::unique_ptr<ZkEnsembleProcess> e(new ZkEnsembleProcess());
  char tmpl[] = "/tmp/locksim-zk-XXXXXX";
  if (::mkdtemp(tmpl) == nullptr) throw std::runtime_error("ZkEnsembleProcess: mkdtemp failed");
  e->dir_ = tmpl;
  const int n = options.servers;
  std::vector<int> quorum_ports, election_ports;
  for (int i = 0; i < n; ++i) {
    e->ports_.push_back(pick_free_port());
    quorum_ports.push_back(pick_free_port());
    election_ports.push_back(pick_free_port());
  }
  for (int i = 0; i < n; ++i) {
    const std::string sdir = e->dir_ + "/zk-" + std::to_string(i + 1);
    std::filesystem::create_directories(sdir + "/data");
    std::ofstream cfg(sdir + "/zoo.cfg");
    cfg << "tickTime=" << options.tick_ms << "\ninitLimit=50\nsyncLimit=5\n"
        << "dataDir=" << sdir << "/data\nclientPort=" << e->ports_[i]
        << "\nclientPortAddress=127.0.0.1\nadmin.enableServer=false\n"
        << "4lw.commands.whitelist=srvr,ruok\n";
    if (n > 1) {
      for (int j = 0; j < n; ++j) {
        cfg << "server." << j + 1 << "=127.0.0.1:" << quorum_ports[j] << ":" << election_ports[j]
            << "\n";
      }
      std::ofstream(sdir + "/data/myid") << i + 1 << "\n";
    }
    cfg.close();
    e->pids_.push_back(
        spawn({kJava, "-Xmx128m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
               "-Dzookeeper.log.dir=" + sdir, "-cp", std::string(kJar) + ":" + kConfDir,
               "org.apache.zookeeper.server.quorum.QuorumPeerMain", sdir + "/zoo.cfg"},
              sdir + "/server.log"));
  }
  const auto deadline = std::chrono::steady_clock::now() + kStartupTimeout;
  // Ready when every server reports a mode (standalone, leader or follower).
  for (;;) {
    int ready = 0;
    for (int port : e->ports_)
      ready += four_letter(port, "srvr").find("Mode:") != std::string::npos;
    if (ready == n) return e;
    for (pid_t pid : e->pids_) {
      int status = 0;
      if (::waitpid(pid, &status, WNOHANG) == pid) {
        throw std::runtime_error("ZkEnsembleProcess: a server exited at startup: " +
                                 tail(e->dir_ + "/zk-1/server.log"));
      }
    }
    if (std::chrono::steady_clock::now() > deadline) {
      throw std::runtime_error("ZkEnsembleProcess: no quorum within 60 s: " +
                               tail(e->dir_ + "/zk-1/server.log"));
    }
    std::this_thread::sleep_for(kPoll);
  }
}

std::string ZkEnsembleProcess::hosts() const {
  std::string out;
  for (int port : ports_)
    out += (out.empty() ? "" : ",") + std::string("127.0.0.1:") + std::to_string(port);
  return out;
}

ZkEnsembleProcess::~ZkEnsembleProcess() {
  for (pid_t pid : pids_) {
    ::kill(pid, SIGCONT);
    ::kill(pid, SIGKILL);
  }
  for (pid_t pid : pids_) {
    int status = 0;
    ::waitpid(pid, &status, 0);
  }
  std::error_code ec;
  if (!dir_.empty()) std::filesystem::remove_all(dir_, ec);
}

}  // namespace locksim::live
