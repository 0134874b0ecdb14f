// The MySQL lock table live: each of mysql-v1, mysql-center and
// mysql-segmented runs a few seconds of real time against a real mariadbd
// started here (one thread per client), the history is checked as a
// simulated one is, and the server is gone afterwards. Also: careless holds
// past the TTL give a real violation (the checker can fail a live run), the
// libmariadb seam's error numbers, the server manager's clean-up, and Ctrl-C
// on `locksim live`.
//
// Skips (with a message) when mariadb-server is not installed, except when
// CI=true: then it fails, so a CI machine without it cannot pass by testing
// nothing.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "harness/live/live_check.h"
#include "harness/live/mariadb_connection.h"
#include "harness/live/mariadb_process.h"
#include "harness/run_result.h"
#include "locksim_binary.h"

namespace locksim::live {
namespace {

#define SKIP_WITHOUT_MARIADB()                                             \
  do {                                                                     \
    if (const std::string why = MariadbProcess::missing(); !why.empty()) { \
      const char* ci = std::getenv("CI");                                  \
      if (ci != nullptr && std::string(ci) == "true") {                    \
        FAIL() << "mariadb-server is required in CI: " << why;             \
      }                                                                    \
      GTEST_SKIP() << "mariadb-server not installed: " << why;             \
    }                                                                      \
  } while (0)

// The mariadbd processes whose parent is `parent`, with their command lines.
std::vector<std::pair<pid_t, std::string>> mariadbd_children(pid_t parent) {
  std::vector<std::pair<pid_t, std::string>> out;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string name = entry.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream stat(entry.path() / "stat");
    std::string pid, comm, state;
    pid_t ppid = 0;
    if (!(stat >> pid >> comm >> state >> ppid) || ppid != parent) continue;
    if (comm != "(mariadbd)") continue;
    std::ifstream cmd(entry.path() / "cmdline");
    std::string cmdline((std::istreambuf_iterator<char>(cmd)), std::istreambuf_iterator<char>());
    out.emplace_back(static_cast<pid_t>(std::stol(pid)), cmdline);
  }
  return out;
}

harness::RunConfig config_for(const std::string& algorithm, Duration length) {
  harness::RunConfig c;
  c.algorithm = algorithm;
  c.duration = length;
  c.workload.clients = 4;
  c.workload.hold_min = Duration::millis(10);
  c.workload.hold_max = Duration::millis(40);
  c.workload.retry_pause = Duration::millis(10);
  c.mysql.lock_wait_timeout = Duration::seconds(5);
  c.mysql.client_timeout = Duration::seconds(10);
  return c;
}

class MysqlLive : public ::testing::TestWithParam<const char*> {};

TEST_P(MysqlLive, HoldsTheLockAloneOnRealMariaDb) {
  SKIP_WITHOUT_MARIADB();
  const harness::RunResult r = run_live_and_check(config_for(GetParam(), Duration::seconds(3)));
  EXPECT_TRUE(r.errors.empty()) << (r.errors.empty() ? "" : r.errors.front());
  EXPECT_EQ(r.mutex.kind, harness::Verdict::Kind::kValid) << r.mutex.explanation;
  EXPECT_GT(r.acquisitions, 10) << "the lock really went round";
  EXPECT_EQ(r.acquisitions, r.releases_ok) << "each holder released its own row";
  // Fcount is the fence: it grows with every acquire of the one lock row.
  uint64_t last = 0;
  for (const harness::Op& op : r.history.ops) {
    if (op.type != harness::OpType::kOk || op.f != harness::OpF::kAcquire) continue;
    ASSERT_TRUE(op.fence.has_value());
    EXPECT_GT(*op.fence, last);
    last = *op.fence;
  }
  EXPECT_TRUE(mariadbd_children(::getpid()).empty()) << "the server outlived its run";
}

INSTANTIATE_TEST_SUITE_P(Versions, MysqlLive,
                         ::testing::Values("mysql-v1", "mysql-center", "mysql-segmented"),
                         [](const auto& info) {
                           std::string name = info.param;
                           for (char& c : name) c = c == '-' ? '_' : c;
                           return name;
                         });

TEST(MysqlLiveViolation, HoldsPastTheDeadlineOverlapForReal) {
  SKIP_WITHOUT_MARIADB();
  // ttl 1 s, holds of 1.5-2 s: the next contender finds the deadline past
  // and takes the row while the holder still works.
  harness::RunConfig c = config_for("mysql-center", Duration::seconds(6));
  c.workload.clients = 3;
  c.workload.hold_min = Duration::millis(1500);
  c.workload.hold_max = Duration::millis(2000);
  c.workload.retry_pause = Duration::millis(100);
  c.algorithm_params["ttl"] = "1s";
  const harness::RunResult r = run_live_and_check(c);
  EXPECT_TRUE(r.errors.empty());
  EXPECT_EQ(r.mutex.kind, harness::Verdict::Kind::kInvalid);
}

TEST(MariadbConnection, ErrorNumbersPassThroughAndALostSessionIs2013) {
  SKIP_WITHOUT_MARIADB();
  auto server = MariadbProcess::start({.lock_wait_timeout_s = 1});
  const MariadbConnection::Address at{.port = server->port()};
  MariadbConnection a(at, Duration::seconds(5)), b(at, Duration::seconds(5));
  const SqlResult parse = a.query("SELEKT 1", {});
  EXPECT_EQ(parse.error_number, 1064);
  EXPECT_EQ(parse.sqlstate, "42000");
  ASSERT_TRUE(a.query("INSERT INTO t_tag_lock (Flock_name) VALUES (?)", {"x"}).ok());
  const SqlResult dup = a.query("INSERT INTO t_tag_lock (Flock_name) VALUES (?)", {"X"});
  EXPECT_EQ(dup.error_number, 1062);
  EXPECT_EQ(dup.sqlstate, "23000");
  EXPECT_EQ(a.query("SELECT Fcount FROM t_tag_lock WHERE Flock_name = ?", {"x", "y"}).error_number,
            1064);
  // b kills a's session: a's next statement finds it gone (2013), the one
  // after connects afresh.
  ASSERT_TRUE(a.query("SELECT 1", {}).ok());
  ASSERT_TRUE(b.query("KILL " + std::to_string(a.thread_id()), {}).ok());
  const SqlResult lost = a.query("SELECT 1", {});
  EXPECT_EQ(lost.error_number, 2013);
  EXPECT_FALSE(a.connected());
  EXPECT_TRUE(a.query("SELECT 1", {}).ok());
  // A server that is gone: 2013 at once, never a throw.
  const int port = server->port();
  server.reset();
  MariadbConnection c({.port = port}, Duration::seconds(2));
  EXPECT_EQ(c.query("SELECT 1", {}).error_number, 2013);
}

TEST(MariadbProcess, StopRemovesTheServerAndItsFolder) {
  SKIP_WITHOUT_MARIADB();
  auto server = MariadbProcess::start({});
  const pid_t pid = server->pid();
  const std::string dir = server->dir();
  ASSERT_TRUE(std::filesystem::exists(dir + "/data/locksim/t_tag_lock.ibd"));
  server.reset();
  EXPECT_FALSE(std::filesystem::exists(dir));
  EXPECT_NE(::kill(pid, 0), 0) << "mariadbd still exists";
}

TEST(LocksimLive, CtrlCStopsTheServerAndRemovesItsFolder) {
  SKIP_WITHOUT_MARIADB();
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    const int null_fd = ::open("/dev/null", O_WRONLY);
    ::dup2(null_fd, STDOUT_FILENO);
    ::execl(LOCKSIM_BINARY, LOCKSIM_BINARY, "live", "--algorithm", "mysql-center", "--duration",
            "60s", "--clients", "2", static_cast<char*>(nullptr));
    ::_exit(127);
  }
  std::vector<std::pair<pid_t, std::string>> servers;
  for (int i = 0; i < 600 && servers.empty(); ++i) {  // up to 60 s on a busy machine
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    servers = mariadbd_children(child);
  }
  ASSERT_EQ(servers.size(), 1u);
  std::this_thread::sleep_for(std::chrono::seconds(1));  // let the run get going
  const std::string cmdline = servers[0].second;
  const size_t at = cmdline.find("--datadir=");
  ASSERT_NE(at, std::string::npos);
  const std::string datadir = cmdline.substr(at + 10, cmdline.find('\0', at) - at - 10);
  ASSERT_EQ(::kill(child, SIGINT), 0);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 130);
  EXPECT_NE(::kill(servers[0].first, 0), 0) << "mariadbd survived Ctrl-C";
  EXPECT_FALSE(std::filesystem::exists(std::filesystem::path(datadir).parent_path()));
}

TEST(LocksimLive, LockWaitTimeoutMustBeWholeSecondsLive) {
  const testing::Outcome o =
      testing::locksim("live --algorithm mysql-center --lock-wait-timeout 1500ms --duration 1s");
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_NE(o.err.find("--lock-wait-timeout"), std::string::npos) << o.err;
  EXPECT_EQ(testing::count_lines(o.err), 1u) << o.err;
}

}  // namespace
}  // namespace locksim::live
