#include "live/mariadb_process.h"

#include <signal.h>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <thread>
#include <vector>

#include "env/assert.h"
#include "live/mariadb_connection.h"
#include "live/owned_processes.h"

namespace locksim::live {

namespace {

namespace fs = std::filesystem;
using std::chrono::steady_clock;

// Found on PATH as redis-server is, else at Debian's paths (/usr/sbin is on
// root's PATH only): docs/how-to/live-mode.md.
std::string mariadbd_binary() {
  return find_executable("mariadbd", "/usr/sbin/mariadbd");
}
std::string install_db_binary() {
  return find_executable("mariadb-install-db", "/usr/bin/mariadb-install-db");
}
// A busy 2-core CI machine: generous bounds, each with its reason.
constexpr std::chrono::seconds kInstallTimeout{180};  // bootstrap: seconds when idle
constexpr std::chrono::seconds kStartupTimeout{30};   // a start: ~0.5 s when idle
constexpr std::chrono::milliseconds kPoll{10};
// A picked free port can be taken before mariadbd binds it: retry a few.
constexpr int kPortAttemptsMax = 5;

// InnoDB options the template and every server share (the redo log's size is
// fixed when the template is made).
std::vector<std::string> innodb_args() {
  return {"--innodb-log-file-size=4M", "--innodb-buffer-pool-size=16M", "--innodb-use-native-aio=0",
          "--innodb-temp-data-file-path=ibtmp1:1M:autoextend"};
}

bool am_root() {
  return ::geteuid() == 0;
}

// Waits for `process` to exit within `timeout`; kills it if it does not.
// Returns its wait status, or -1 on timeout.
int wait_exit(OwnedProcess& process, std::chrono::seconds timeout) {
  const auto deadline = steady_clock::now() + timeout;
  for (;;) {  // bounded by the deadline
    int status = 0;
    if (process.exited(&status)) return status;
    if (steady_clock::now() > deadline) {
      process.stop();
      return -1;
    }
    std::this_thread::sleep_for(kPoll * 5);
  }
}

// The template data directory for this mariadbd binary and user, made on
// first use: "<TMPDIR>/locksim-mariadb-<uid>-<size>-<mtime>/data".
std::string template_datadir() {
  struct stat st {};
  if (::stat(mariadbd_binary().c_str(), &st) != 0)
    throw std::runtime_error("MariadbProcess: cannot stat mariadbd");
  const std::string base = temp_root() + "/locksim-mariadb-" + std::to_string(::geteuid()) + "-" +
                           std::to_string(st.st_size) + "-" + std::to_string(st.st_mtime);
  if (fs::exists(base + "/ready")) return base + "/data";
  std::string scratch = base + ".tmp-XXXXXX";
  if (::mkdtemp(scratch.data()) == nullptr) {
    throw CannotRunLive("no temporary folder: mkdtemp " + scratch + ": " + std::strerror(errno) +
                        " (set TMPDIR to a writable folder)");
  }
  std::vector<std::string> args = {install_db_binary(), "--no-defaults",
                                   "--datadir=" + scratch + "/data",
                                   "--auth-root-authentication-method=normal", "--skip-test-db"};
  if (am_root()) args.push_back("--user=root");
  for (const std::string& a : innodb_args()) args.push_back(a);
  OwnedProcess install(args, scratch + "/install.log", scratch);
  const int status = wait_exit(install, kInstallTimeout);
  if (status == -1 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    const std::string why = log_tail(scratch + "/install.log");
    std::error_code ec;
    fs::remove_all(scratch, ec);
    throw std::runtime_error("MariadbProcess: mariadb-install-db failed: " + why);
  }
  std::ofstream(scratch + "/ready") << "made by mariadb-install-db\n";
  // Atomic: another process that built one at the same time wins, and ours goes.
  if (::rename(scratch.c_str(), base.c_str()) != 0) {
    std::error_code ec;
    fs::remove_all(scratch, ec);
  }
  if (!fs::exists(base + "/ready")) throw std::runtime_error("MariadbProcess: no template");
  return base + "/data";
}

std::vector<std::string> server_args(const std::string& dir, int port,
                                     const MariadbProcess::Options& o) {
  std::vector<std::string> args = {
      mariadbd_binary(), "--no-defaults", "--datadir=" + dir + "/data",
      "--port=" + std::to_string(port), "--bind-address=127.0.0.1",
      "--socket=" + dir + "/mysqld.sock", "--pid-file=" + dir + "/mysqld.pid",
      "--log-error=" + dir + "/error.log", "--skip-grant-tables", "--skip-name-resolve",
      "--skip-log-bin",
      // Small caches: the defaults (128 MB key cache, 128 MB Aria page cache,
      // 16 MB log buffer) are memset at start-up and cost most of its CPU.
      "--key-buffer-size=1M", "--aria-pagecache-buffer-size=1M", "--innodb-log-buffer-size=2M",
      "--innodb-buffer-pool-load-at-startup=0", "--innodb-buffer-pool-dump-at-shutdown=0",
      "--open-files-limit=1024", "--max-connections=1000",
      "--innodb-lock-wait-timeout=" + std::to_string(o.lock_wait_timeout_s),
      "--innodb-flush-log-at-trx-commit=" + std::to_string(o.flush_log_at_trx_commit),
      "--transaction-isolation=" + o.transaction_isolation};
  for (const std::string& a : innodb_args()) args.push_back(a);
  if (am_root()) args.push_back("--user=root");
  return args;
}

// Polls until the server accepts a session: true. False when it exited (a
// port lost to a race; reaped); throws when it neither answered nor exited in
// time.
bool wait_ready(OwnedProcess& server, int port, const std::string& dir) {
  const auto deadline = steady_clock::now() + kStartupTimeout;
  MariadbConnection probe({.host = "127.0.0.1", .port = port, .database = "", .user = "root"},
                          Duration::seconds(1), "probe");
  for (;;) {
    if (probe.query("SELECT 1", {}).ok()) return true;
    int status = 0;
    if (server.exited(&status)) return false;
    if (steady_clock::now() > deadline) {
      throw std::runtime_error("MariadbProcess: mariadbd did not answer within 30 s: " +
                               log_tail(dir + "/error.log"));
    }
    std::this_thread::sleep_for(kPoll);
  }
}

void create_schema(int port) {
  MariadbConnection c({.host = "127.0.0.1", .port = port, .database = "", .user = "root"},
                      Duration::seconds(30), "setup");
  for (const char* sql :
       {"CREATE DATABASE locksim", "USE locksim", MariadbProcess::create_table_sql()}) {
    const SqlResult r = c.query(sql, {});
    if (!r.ok()) {
      throw std::runtime_error(std::string("MariadbProcess: ") + sql + ": " + r.message);
    }
  }
}

}  // namespace

const char* MariadbProcess::create_table_sql() {
  return "CREATE TABLE t_tag_lock (\n"
         "  Findex INT NOT NULL AUTO_INCREMENT,\n"
         "  Flock_name VARCHAR(128) NOT NULL DEFAULT '',\n"
         "  Fcount INT NOT NULL DEFAULT 0,\n"
         "  Fdeadline DATETIME NOT NULL DEFAULT '1970-01-01 00:00:00',\n"
         "  Fdesc VARCHAR(255) NOT NULL DEFAULT '',\n"
         "  Fcreate_time DATETIME NOT NULL DEFAULT '1970-01-01 00:00:00',\n"
         "  Fmodify_time DATETIME NOT NULL DEFAULT '1970-01-01 00:00:00',\n"
         "  Fstatus TINYINT NOT NULL DEFAULT 1,\n"
         "  PRIMARY KEY (Findex), UNIQUE KEY uniq_Flock_name (Flock_name),\n"
         "  KEY idx_Fmodify_time (Fmodify_time)\n"
         ") ENGINE=InnoDB";
}

std::string MariadbProcess::missing() {
  if (mariadbd_binary().empty()) {
    return "mariadbd not found on PATH nor at /usr/sbin/mariadbd (apt-get install mariadb-server)";
  }
  if (install_db_binary().empty()) {
    return "mariadb-install-db not found on PATH nor at /usr/bin/mariadb-install-db (apt-get "
           "install mariadb-server)";
  }
  return "";
}

std::unique_ptr<MariadbProcess> MariadbProcess::start(const Options& options) {
  if (const std::string why = missing(); !why.empty()) throw CannotRunLive(why);
  if (options.lock_wait_timeout_s < 1) {
    throw std::invalid_argument("MariadbProcess: lock_wait_timeout_s must be >= 1");
  }
  const std::string tmpl = template_datadir();
  std::unique_ptr<MariadbProcess> p(new MariadbProcess());
  p->options_ = options;
  p->dir_ = make_temp_dir("locksim-mariadb");
  const std::string& dir = p->dir_;
  for (int attempt = 1; attempt <= kPortAttemptsMax; ++attempt) {
    std::error_code ec;
    fs::remove_all(dir + "/data", ec);
    fs::copy(tmpl, dir + "/data", fs::copy_options::recursive);
    p->port_ = pick_free_loopback_port();
    p->server_ = OwnedProcess(server_args(dir, p->port_, options), dir + "/server.log", dir);
    if (wait_ready(p->server_, p->port_, dir)) {
      create_schema(p->port_);
      return p;
    }
    LOCKSIM_ASSERT(!p->server_.owned());
  }
  throw std::runtime_error("MariadbProcess: mariadbd exited at start-up " +
                           std::to_string(kPortAttemptsMax) +
                           " times: " + log_tail(dir + "/error.log"));
}

void MariadbProcess::crash() {
  server_.stop();  // no grace: SIGKILL
}

void MariadbProcess::restart() {
  LOCKSIM_ASSERT_MSG(!server_.owned(), "restart() of a running mariadbd");
  server_ = OwnedProcess(server_args(dir_, port_, options_), dir_ + "/server.log", dir_);
  if (!wait_ready(server_, port_, dir_)) {
    throw std::runtime_error("MariadbProcess: mariadbd exited on restart: " +
                             log_tail(dir_ + "/error.log"));
  }
}

void MariadbProcess::pause() {
  if (server_.owned()) (void)::kill(server_.pid(), SIGSTOP);
}

void MariadbProcess::resume() {
  if (server_.owned()) (void)::kill(server_.pid(), SIGCONT);
}

MariadbProcess::~MariadbProcess() {
  server_.stop();
  remove_temp_dir(dir_);
}

}  // namespace locksim::live
