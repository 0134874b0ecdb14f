#include "live/zk_process.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <thread>

#include "env/assert.h"

namespace locksim::live {

namespace {

// Found on PATH as redis-server is, else at Debian's path
// (docs/how-to/live-mode.md).
std::string java_binary() {
  return find_executable("java", "/usr/bin/java");
}
constexpr const char* kJar = "/usr/share/java/zookeeper.jar";
constexpr const char* kConfDir = "/etc/zookeeper/conf";
// A JVM and an election on a busy 2-core machine: generous.
constexpr std::chrono::seconds kStartupTimeout{60};
constexpr std::chrono::milliseconds kPoll{100};

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

// Every server's loopback ports, by server.
struct Ports {
  std::vector<int> client, quorum, election;
};

// Server i's folder `sdir`: its zoo.cfg, its data directory and (in an
// ensemble) its myid.
void write_server_config(const std::string& sdir, const ZkEnsembleProcess::Options& options,
                         const Ports& ports, int i) {
  std::filesystem::create_directories(sdir + "/data");
  std::ofstream cfg(sdir + "/zoo.cfg");
  cfg << "tickTime=" << options.tick_ms << "\ninitLimit=50\nsyncLimit=5\n"
      << "dataDir=" << sdir << "/data\nclientPort=" << ports.client[i]
      << "\nclientPortAddress=127.0.0.1\nadmin.enableServer=false\n"
      << "4lw.commands.whitelist=srvr,ruok\n";
  const int n = options.servers;
  if (n > 1) {
    for (int j = 0; j < n; ++j) {
      cfg << "server." << j + 1 << "=127.0.0.1:" << ports.quorum[j] << ":" << ports.election[j]
          << "\n";
    }
    std::ofstream(sdir + "/data/myid") << i + 1 << "\n";
  }
  if (!cfg.flush()) throw std::runtime_error("ZkEnsembleProcess: cannot write " + sdir);
}

}  // namespace

std::string ZkEnsembleProcess::missing() {
  if (java_binary().empty())
    return "java not found on PATH nor at /usr/bin/java (apt-get install zookeeper)";
  if (::access(kJar, R_OK) != 0)
    return std::string(kJar) + " not found (apt-get install zookeeper)";
  return "";
}

std::unique_ptr<ZkEnsembleProcess> ZkEnsembleProcess::start(const Options& options) {
  if (options.servers != 1 && options.servers != 3) {
    throw std::invalid_argument("ZkEnsembleProcess: servers must be 1 or 3");
  }
  if (const std::string why = missing(); !why.empty()) throw CannotRunLive(why);
  std::unique_ptr<ZkEnsembleProcess> e(new ZkEnsembleProcess());
  e->options_ = options;
  e->dir_ = make_temp_dir("locksim-zk");
  const int n = options.servers;
  Ports ports;
  for (int i = 0; i < n; ++i) {
    e->ports_.push_back(pick_free_loopback_port());
    ports.quorum.push_back(pick_free_loopback_port());
    ports.election.push_back(pick_free_loopback_port());
  }
  ports.client = e->ports_;
  e->servers_.reserve(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    const std::string sdir = e->dir_ + "/zk-" + std::to_string(i + 1);
    write_server_config(sdir, options, ports, i);
    std::vector<std::string> args = {
        java_binary(), "-Xmx128m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
        // No /tmp/hsperfdata_USER/PID, which a
        // killed JVM leaves behind, outside $TMPDIR.
        "-XX:-UsePerfData", "-Dzookeeper.log.dir=" + sdir, "-cp",
        std::string(kJar) + ":" + kConfDir, "org.apache.zookeeper.server.quorum.QuorumPeerMain",
        sdir + "/zoo.cfg"};
    if (options.clock_shim) {
      e->clocks_.push_back(std::make_unique<ClockControl>(sdir + "/clock"));
      // env(1) execs the JVM in its place: the pid stays the server's.
      args.insert(args.begin(), {"/usr/bin/env", "LD_PRELOAD=" + clock_shim_library(),
                                 std::string(kClockFileEnv) + "=" + e->clocks_.back()->path()});
    }
    e->args_.push_back(std::move(args));
    e->servers_.emplace_back(e->args_.back(), sdir + "/server.log", e->dir_);
  }
  e->wait_until_ready();
  return e;
}

void ZkEnsembleProcess::wait_until_ready() {
  const auto deadline = std::chrono::steady_clock::now() + kStartupTimeout;
  // Ready when every server reports a mode (standalone, leader or follower).
  for (;;) {  // bounded by the deadline
    size_t ready = 0;
    for (int port : ports_) ready += four_letter(port, "srvr").find("Mode:") != std::string::npos;
    if (ready == ports_.size()) return;
    for (size_t i = 0; i < servers_.size(); ++i) {
      int status = 0;
      if (servers_[i].exited(&status)) {
        throw std::runtime_error("ZkEnsembleProcess: server " + std::to_string(i + 1) +
                                 " exited at startup: " +
                                 log_tail(dir_ + "/zk-" + std::to_string(i + 1) + "/server.log"));
      }
    }
    if (std::chrono::steady_clock::now() > deadline) throw std::runtime_error(no_quorum());
    std::this_thread::sleep_for(kPoll);
  }
}

// Why the ensemble is not serving, in one line: what each server answers
// (`srvr`), its limits in ticks, and its log without the JVM's SLF4J
// notices (Debian's jar logs nothing else without a binding, so those
// notices are all a log holds and never the cause).
std::string ZkEnsembleProcess::no_quorum() const {
  std::string out = "ZooKeeper: no quorum within " + std::to_string(kStartupTimeout.count()) +
                    " s (tickTime " + std::to_string(options_.tick_ms) +
                    " ms: a follower must connect within initLimit 50 ticks and keep in sync "
                    "within syncLimit 5 ticks);";
  for (size_t i = 0; i < ports_.size(); ++i) {
    std::string answer = four_letter(ports_[i], "srvr");
    answer = answer.substr(0, answer.find('\n'));
    const std::string log =
        log_tail(dir_ + "/zk-" + std::to_string(i + 1) + "/server.log", {"SLF4J:"});
    out += " zk-" + std::to_string(i + 1) + ": " + (answer.empty() ? "no answer" : answer) +
           ", log: " + log + ";";
  }
  out.pop_back();
  return out;
}

std::string ZkEnsembleProcess::hosts() const {
  std::string out;
  for (int port : ports_)
    out += (out.empty() ? "" : ",") + std::string("127.0.0.1:") + std::to_string(port);
  return out;
}

void ZkEnsembleProcess::crash(size_t i) {
  servers_.at(i).stop();
}

void ZkEnsembleProcess::restart(size_t i) {
  LOCKSIM_ASSERT_MSG(!servers_.at(i).owned(), "restart() of a running ZooKeeper server");
  // A log of its own per start: the one before the crash stays readable.
  const std::string sdir = dir_ + "/zk-" + std::to_string(i + 1);
  servers_[i] = OwnedProcess(args_.at(i), sdir + "/server-restarted.log", dir_);
}

void ZkEnsembleProcess::pause(size_t i) {
  if (servers_.at(i).owned()) (void)::kill(servers_[i].pid(), SIGSTOP);
}

void ZkEnsembleProcess::resume(size_t i) {
  if (servers_.at(i).owned()) (void)::kill(servers_[i].pid(), SIGCONT);
}

std::vector<pid_t> ZkEnsembleProcess::pids() const {
  std::vector<pid_t> out;
  for (const OwnedProcess& s : servers_) out.push_back(s.pid());
  return out;
}

ZkEnsembleProcess::~ZkEnsembleProcess() {
  servers_.clear();  // each stops, reaped, before the folder goes
  remove_temp_dir(dir_);
}

}  // namespace locksim::live
