// The timing rules of zk_timing_rules.h, held against a real three-server
// ZooKeeper 3.8 ensemble on loopback and its C client, and against the
// simulation (zk_timing_sim.h): the same script, the same checks.
//
// The C client cannot be paused or silenced from inside this process (its
// I/O thread is its own), so each client the rules need silent or frozen
// runs in a forked child, forked before this process opens any handle of
// its own: a session is silenced by its process exiting unclosed (the
// kernel closes the socket; the session lives on until the leader expires
// it), and frozen by SIGSTOP, as a GC pause or a stopped process is. Every
// child reports what it saw, with CLOCK_MONOTONIC times, on a pipe.
// zoo_deterministic_conn_order(1) makes the C client take its server list
// in order, as the simulated clients' start_list_at does: followers first,
// the leader (asked with the `srvr` command) last.
//
// Skips (with a message) when zookeeper is not installed, except when CI=true.
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zookeeper/zookeeper.h>

#include <chrono>
#include <cstdio>
#include <functional>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "live/zk_connection_live.h"
#include "live/zk_process.h"
#include "real_servers.h"
#include "tests/zk_timing_rules.h"
#include "tests/zk_timing_sim.h"

namespace locksim::zk_timing {
namespace {

int64_t mono_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void sleep_until_ns(int64_t t_ns) {
  const int64_t left = t_ns - mono_ns();
  if (left > 0) std::this_thread::sleep_for(std::chrono::nanoseconds(left));
}

// ---------------------------------------------------------------- children

// A forked child: `out` is what it writes to us, `in` what we write to it.
struct Child {
  pid_t pid = -1;
  int out = -1;
  int in = -1;
  std::string buffered;
};

// Forks a child that runs `body(out_fd, in_fd)` and exits without running
// any of this process's destructors (it holds copies of them).
Child fork_child(const std::function<void(int, int)>& body) {
  int to_parent[2];
  int to_child[2];
  if (pipe(to_parent) != 0 || pipe(to_child) != 0) return {};
  const pid_t pid = fork();
  if (pid == 0) {
    close(to_parent[0]);
    close(to_child[1]);
    body(to_parent[1], to_child[0]);
    _exit(0);
  }
  close(to_parent[1]);
  close(to_child[0]);
  return Child{pid, to_parent[0], to_child[1], ""};
}

void write_line(int fd, const std::string& line) {
  const std::string text = line + "\n";
  [[maybe_unused]] const ssize_t n = write(fd, text.data(), text.size());
}

// The child's next line within `wait_ms`, or "" (it closed the pipe, or the
// wait ran out). Each poll waits for the rest of the bound.
std::string read_line(Child& c, int64_t wait_ms) {
  const int64_t deadline = mono_ns() + wait_ms * kMs;
  while (c.buffered.find('\n') == std::string::npos) {
    const int64_t left_ms = (deadline - mono_ns()) / kMs;
    pollfd p{c.out, POLLIN, 0};
    if (left_ms <= 0 || poll(&p, 1, static_cast<int>(left_ms)) <= 0) return "";
    char buf[256];
    const ssize_t n = read(c.out, buf, sizeof buf);
    if (n <= 0) return "";
    c.buffered.append(buf, static_cast<size_t>(n));
  }
  const size_t end = c.buffered.find('\n');
  std::string line = c.buffered.substr(0, end);
  c.buffered.erase(0, end + 1);
  return line;
}

// "<tag> <number>" -> number, or -1.
int64_t number_after(const std::string& line, const std::string& tag) {
  if (line.rfind(tag + " ", 0) != 0) return -1;
  return std::stoll(line.substr(tag.size() + 1));
}

void reap(Child& c) {
  close(c.out);
  close(c.in);
  kill(c.pid, SIGKILL);
  waitpid(c.pid, nullptr, 0);
}

// Rule 1's child: connects, creates its node, touches it at `at_ns` and
// exits without closing the session (the process ends here).
void silenced_session(const std::string& hosts, int i, int64_t at_ns, int out) {
  live::ZkConnectionLive z(hosts, Duration::millis(kSessionMs));
  if (z.connect() != ZkError::kOk) return;
  write_line(out, "C " + std::to_string(mono_ns()));
  z.create("/phase-" + std::to_string(i), "", {.ephemeral = true});
  sleep_until_ns(at_ns);
  z.exists("/phase-" + std::to_string(i), false);
  write_line(out, "L " + std::to_string(mono_ns()));
  _exit(0);  // here, with `z` unclosed: its destructor would close the session
}

// Rule 2's child: on "go", connects; twice touches its session, says "R"
// (the parent stops it now), and reports its session events until connected.
void paused_client(const std::string& hosts, int out, int in) {
  char go = 0;
  if (read(in, &go, 1) != 1) return;
  live::ZkConnectionLive z(hosts, Duration::millis(kSessionMs));
  if (z.connect() != ZkError::kOk) return;
  z.create("/pause", "", {.ephemeral = true});
  while (z.next_event(Duration::zero())) {
  }
  for (int round = 0; round < 2; ++round) {
    z.exists("/pause", false);
    write_line(out, "R 0");
    // Each wait ends with an event or its bound.
    for (int events = 0; events < 8; ++events) {
      const auto e = z.next_event(Duration::seconds(10));
      if (!e) return;
      if (e->type != ZkEventType::kSession) continue;
      write_line(out, std::string(to_string(e->state)) + " " + std::to_string(mono_ns()));
      if (e->state != ZkSessionState::kConnecting) break;
    }
  }
}

// ---------------------------------------------------------------- the real ensemble

// "Mode: leader" from the `srvr` command on `port`.
bool is_leader(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::string reply;
  if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 && write(fd, "srvr", 4) == 4) {
    char buf[512];
    for (ssize_t n; (n = read(fd, buf, sizeof buf)) > 0;) reply.append(buf, static_cast<size_t>(n));
  }
  close(fd);
  return reply.find("Mode: leader") != std::string::npos;
}

struct RealRecords {
  PhaseRecord phase;
  std::vector<PauseRecord> pauses;
  CrashRecord crash;
};

// Rule 1's observer side: watches every node, then times each deletion.
void observe_phase(live::ZkConnectionLive& obs, std::vector<Child>& kids, PhaseRecord& r) {
  for (size_t i = 0; i < kids.size(); ++i) {
    const int64_t c = number_after(read_line(kids[i], 10'000), "C");
    if (i == 0) r.connected_ns = c;
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // the creates are in
  for (int i = 0; i < kSilencedSessions; ++i) {
    EXPECT_EQ(obs.exists("/phase-" + std::to_string(i), true).error, ZkError::kOk) << i;
  }
  // Each wait ends with an event or its bound. The children's "L" lines
  // wait in their pipes meanwhile, so each deletion is timed as it comes.
  for (int seen = 0; seen < kSilencedSessions;) {
    const auto e = obs.next_event(Duration::seconds(10));
    if (!e) break;
    if (e->type != ZkEventType::kDeleted) continue;
    r.expired_ns[static_cast<size_t>(e->path.back() - '0')] = mono_ns();
    ++seen;
  }
  for (size_t i = 0; i < kids.size(); ++i) {
    r.last_ns[i] = number_after(read_line(kids[i], 10'000), "L");
  }
}

// Rule 2's parent side: stop the child at each "R", resume it after the
// pause, and time its events from the resume.
std::vector<PauseRecord> pause_child(Child& kid) {
  std::vector<PauseRecord> out;
  write_line(kid.in, "g");
  for (int round = 0; round < 2; ++round) {
    if (read_line(kid, 10'000).empty()) break;
    kill(kid.pid, SIGSTOP);
    std::this_thread::sleep_for(std::chrono::milliseconds(kPauseMs));
    const int64_t resume_ns = mono_ns();
    kill(kid.pid, SIGCONT);
    PauseRecord p;
    for (std::string line; !(line = read_line(kid, 10'000)).empty();) {
      if (const int64_t t = number_after(line, "connecting"); t >= 0) {
        p.to_connecting_ns = t - resume_ns;
        continue;
      }
      if (const int64_t t = number_after(line, "connected"); t >= 0)
        p.to_connected_ns = t - resume_ns;
      break;
    }
    out.push_back(p);
  }
  return out;
}

// Rule 3: kill the first server of the list under `obs`, then connect anew.
CrashRecord crash_first(live::ZkConnectionLive& obs, const std::string& hosts, pid_t victim) {
  CrashRecord r;
  while (obs.next_event(Duration::zero())) {
  }
  const int64_t kill_ns = mono_ns();
  kill(victim, SIGKILL);
  // Each wait ends with an event or its bound.
  for (int events = 0; events < 8; ++events) {
    const auto e = obs.next_event(Duration::seconds(5));
    if (!e) break;
    if (e->type == ZkEventType::kSession && e->state == ZkSessionState::kConnecting) {
      r.to_connecting_ns = mono_ns() - kill_ns;
      break;
    }
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  live::ZkConnectionLive fresh(hosts, Duration::millis(kSessionMs));
  const int64_t start_ns = mono_ns();
  r.fresh_connect_error = to_string(fresh.connect());
  r.fresh_connect_ns = mono_ns() - start_ns;
  return r;
}

RealRecords record_real(live::ZkEnsembleProcess& zk) {
  // The list: both followers, then the leader (whose crash would mean an
  // election, another rule).
  const std::vector<int>& ports = zk.client_ports();
  std::vector<size_t> order;
  for (size_t i = 0; i < ports.size(); ++i) {
    if (!is_leader(ports[i])) order.push_back(i);
  }
  for (size_t i = 0; i < ports.size(); ++i) {
    if (is_leader(ports[i])) order.push_back(i);
  }
  EXPECT_EQ(order.size(), ports.size()) << "one leader";
  std::string hosts;
  for (size_t i : order)
    hosts += (hosts.empty() ? "" : ",") + ("127.0.0.1:" + std::to_string(ports[i]));
  zoo_deterministic_conn_order(1);
  RealRecords r;
  r.phase.last_ns.assign(kSilencedSessions, -1);
  r.phase.expired_ns.assign(kSilencedSessions, -1);
  // Every child is forked before this process opens a handle of its own.
  const int64_t base_ns = mono_ns() + 3000 * kMs;
  std::vector<Child> kids;
  for (int i = 0; i < kSilencedSessions; ++i) {
    const int64_t at_ns = base_ns + i * kTickMs * kMs / kSilencedSessions;
    kids.push_back(
        fork_child([&hosts, i, at_ns](int out, int) { silenced_session(hosts, i, at_ns, out); }));
  }
  Child pauser = fork_child([&hosts](int out, int in) { paused_client(hosts, out, in); });
  {
    live::ZkConnectionLive obs(hosts, Duration::millis(kSessionMs));
    EXPECT_EQ(obs.connect(), ZkError::kOk);
    observe_phase(obs, kids, r.phase);
    r.pauses = pause_child(pauser);
    r.crash = crash_first(obs, hosts, zk.pids()[order[0]]);
  }
  for (Child& k : kids) reap(k);
  reap(pauser);
  return r;
}

void print(const RealRecords& r) {
  std::cerr << "  real: phase of the expiry grid after the first connect: "
            << phase_of(r.phase.expired_ns[0] - r.phase.connected_ns) / kMs << " ms\n";
  for (size_t i = 0; i < r.phase.expired_ns.size(); ++i) {
    std::cerr << "  real: session " << i << " expired "
              << (r.phase.expired_ns[i] - r.phase.last_ns[i]) / kMs
              << " ms after its last packet, at phase " << phase_of(r.phase.expired_ns[i]) / kMs
              << " ms of CLOCK_MONOTONIC\n";
  }
  for (size_t i = 0; i < r.pauses.size(); ++i) {
    std::cerr << "  real: pause " << i << ": connecting after "
              << r.pauses[i].to_connecting_ns / 1000 << " us, connected after "
              << r.pauses[i].to_connected_ns / 1000 << " us\n";
  }
  std::cerr << "  real: crash heard after " << r.crash.to_connecting_ns / 1000
            << " us; a fresh connect past the dead server took " << r.crash.fresh_connect_ns / 1000
            << " us (" << r.crash.fresh_connect_error << ")\n";
}

// One measurement of a real ensemble (a fresh one: rule 3 kills a server).
void measure_real_once() {
  std::unique_ptr<live::ZkEnsembleProcess> zk;
  try {
    zk = live::ZkEnsembleProcess::start({.servers = 3, .tick_ms = static_cast<int>(kTickMs)});
  } catch (const std::exception& e) {
    FAIL() << "cannot start zookeeper: " << e.what();
  }
  const RealRecords r = record_real(*zk);
  print(r);  // ctest shows it only when the test fails
  expect_one_grid(r.phase, "real");
  expect_pause_rule(r.pauses, "real");
  expect_crash_rule(r.crash, "real");
}

// The rules hold against a real JVM and C client within tens of
// milliseconds, and a CI machine shared with other jobs can starve a
// process for a second or more (seen: a loopback connect 1.5 s late). So a
// measurement that misses is repeated on a fresh ensemble, up to
// kRealAttempts times, and the test fails only if every one misses: a rule
// the real server does not follow misses every time. Each missed attempt's
// failures are printed, and the last attempt's are the test's.
constexpr int kRealAttempts = 3;

TEST(ZkDifferentialTiming, RealZooKeeperFollowsTheTimingRules) {
  LOCKSIM_SKIP_WITHOUT("zookeeper", live::ZkEnsembleProcess::missing());
  // The C client's connection errors (a killed server, silenced sessions)
  // go to a file, so that a failure's own message is what a CI log shows.
  std::FILE* zk_log = std::tmpfile();
  if (zk_log != nullptr) zoo_set_log_stream(zk_log);
  bool held = false;
  for (int attempt = 1; attempt < kRealAttempts; ++attempt) {
    ::testing::TestPartResultArray missed;
    {
      const ::testing::ScopedFakeTestPartResultReporter capture(&missed);
      measure_real_once();
    }
    held = missed.size() == 0;
    if (held) break;
    std::cerr << "  real: attempt " << attempt << " of " << kRealAttempts << " missed:\n";
    for (int i = 0; i < missed.size(); ++i) std::cerr << missed.GetTestPartResult(i) << "\n";
  }
  if (!held) measure_real_once();  // the last attempt: its failures are the test's
  zoo_set_log_stream(nullptr);
  if (zk_log != nullptr) std::fclose(zk_log);
}

// ---------------------------------------------------------------- the simulation

TEST(ZkDifferentialTiming, SimulationExpiresOnOneGrid) {
  expect_one_grid(record_phase_sim(1), "sim");
}

// Rule 1's other half: the grid's phase is the server's, drawn from the
// seed, not tied to when the client connected. Over 12 seeds the phase
// after the first connect lands in at least three of the tick's quarters.
TEST(ZkDifferentialTiming, SimulationTickPhaseIsDrawnFromTheSeed) {
  std::vector<bool> quarters(4, false);
  for (uint64_t seed = 1; seed <= 12; ++seed) {
    const PhaseRecord r = record_phase_sim(seed);
    ASSERT_GE(r.expired_ns[0], 0) << "seed " << seed;
    quarters[static_cast<size_t>(phase_of(r.expired_ns[0] - r.connected_ns) * 4 /
                                 (kTickMs * kMs))] = true;
  }
  EXPECT_GE(std::count(quarters.begin(), quarters.end(), true), 3);
}

TEST(ZkDifferentialTiming, SimulationReconnectsAfterAPauseAsTheCClientDoes) {
  expect_pause_rule(record_pause_sim(1), "sim");
}

TEST(ZkDifferentialTiming, SimulationHearsOfACrashedServerAtOnce) {
  expect_crash_rule(record_crash_sim(1), "sim");
}

}  // namespace
}  // namespace locksim::zk_timing
