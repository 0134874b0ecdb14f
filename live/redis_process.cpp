#include "live/redis_process.h"

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <thread>
#include <vector>

#include "env/assert.h"
#include "live/hiredis_connection.h"
#include "live/owned_processes.h"

namespace locksim::live {

namespace {

using std::chrono::milliseconds;
using std::chrono::steady_clock;

// A port picked free can be taken by someone else before the server binds it;
// a few fresh ports make that race practically irrelevant.
constexpr int kPortAttemptsMax = 5;
constexpr milliseconds kStartupTimeout{5000};
constexpr milliseconds kStopGrace{2000};
constexpr milliseconds kPollInterval{10};
constexpr Duration kPingTimeout = Duration::millis(200);

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

std::string describe_status(int status) {
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return "killed by signal " + std::to_string(WTERMSIG(status));
  return "stopped";
}

bool answers_ping(int port) {
  HiredisConnection c("127.0.0.1", port, kPingTimeout, "redis-startup");
  const Reply r = c.command({"PING"});
  // Before it has loaded its AOF the server answers -LOADING: not ready yet.
  return r.kind == Reply::Kind::kStatus && r.text == "PONG";
}

std::string find_redis_server() {
  std::string binary = find_executable("redis-server");
  if (binary.empty()) {
    throw CannotRunLive("redis-server not found on PATH (scripts/setup installs it)");
  }
  return binary;
}

// Sentinel: Debian's redis-sentinel, else redis-server in Sentinel mode.
std::vector<std::string> find_sentinel() {
  if (std::string binary = find_executable("redis-sentinel"); !binary.empty()) return {binary};
  return {find_redis_server(), "--sentinel"};
}

// Sentinel's command line: its configuration file first (it must be a
// writable file: Sentinel records what it learns there), loopback only.
std::vector<std::string> sentinel_args(const std::vector<std::string>& binary, int port,
                                       const std::string& dir, const std::string& config) {
  std::vector<std::string> args = {binary[0], config};
  args.insert(args.end(), binary.begin() + 1, binary.end());
  // clang-format off
  args.insert(args.end(), {
      "--port", std::to_string(port),
      "--bind", "127.0.0.1",
      "--protected-mode", "no",
      "--daemonize", "no",
      "--dir", dir});
  // clang-format on
  return args;
}

void check_appendfsync(const std::string& fsync) {
  if (!fsync.empty() && fsync != "always" && fsync != "everysec" && fsync != "no") {
    throw std::runtime_error(
        "RedisProcess: appendfsync must be \"\", always, everysec or no, not " + fsync);
  }
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

}  // namespace

std::unique_ptr<RedisProcess> RedisProcess::start(const Options& options) {
  const bool sentinel = !options.sentinel_config.empty();
  const std::vector<std::string> binary =
      sentinel ? find_sentinel() : std::vector<std::string>{find_redis_server()};
  check_appendfsync(options.appendfsync);
  if (!options.clock.empty() && options.clock != "shim") {
    throw std::runtime_error("RedisProcess: clock must be \"\" or shim, not " + options.clock);
  }
  const std::vector<std::string> extra = split_args(options.extra_args);

  // Owns the dir (and later the child) from here on, so every throw below
  // cleans up through the destructor.
  std::unique_ptr<RedisProcess> process(new RedisProcess());
  process->dir_ = make_temp_dir(sentinel ? "locksim-sentinel" : "locksim-redis");
  const std::string config_path = process->dir_ + "/sentinel.conf";
  if (sentinel) {
    std::ofstream config(config_path);
    config << options.sentinel_config;
    if (!config.flush()) throw std::runtime_error("RedisProcess: cannot write " + config_path);
  }
  if (options.clock == "shim")
    process->clock_ = std::make_unique<ClockControl>(process->dir_ + "/clock");

  std::string last_failure;
  for (int attempt = 0; attempt < kPortAttemptsMax; ++attempt) {
    const int port = pick_free_loopback_port();
    std::vector<std::string> args =
        sentinel ? sentinel_args(binary, port, process->dir_, config_path)
                 : server_args(binary[0], port, process->dir_, options.appendfsync, extra);
    if (sentinel) args.insert(args.end(), extra.begin(), extra.end());
    if (process->clock_) {
      // env(1) execs the server in its place: the pid stays the server's.
      args.insert(args.begin(), {"/usr/bin/env", "LD_PRELOAD=" + clock_shim_library(),
                                 std::string(kClockFileEnv) + "=" + process->clock_->path()});
    }
    if (process->launch(args, port, &last_failure)) {
      LOCKSIM_ASSERT(process->server_.owned() && process->port_ == port);
      return process;
    }
    LOCKSIM_ASSERT(!process->server_.owned() && !last_failure.empty());
    // Only a lost race for the port is worth another try; anything else
    // (a bad argument, a broken install) fails the same way every time.
    if (last_failure.find("Address already in use") == std::string::npos) break;
  }
  throw std::runtime_error(last_failure);
}

bool RedisProcess::launch(const std::vector<std::string>& args, int port, std::string* failure) {
  LOCKSIM_ASSERT_MSG(!server_.owned(), "a RedisProcess launched twice");
  const std::string log_path = dir_ + "/redis.log";
  port_ = port;
  args_ = args;
  server_ = OwnedProcess(args, log_path, dir_);

  const auto deadline = steady_clock::now() + kStartupTimeout;
  int status = 0;
  while (steady_clock::now() < deadline) {  // bounded by kStartupTimeout
    if (server_.exited(&status)) {
      *failure = "redis-server " + describe_status(status) + " during startup on port " +
                 std::to_string(port) + ": " + log_tail(log_path);
      return false;
    }
    if (answers_ping(port)) return true;
    std::this_thread::sleep_for(kPollInterval);
  }
  server_.stop(kStopGrace);
  throw std::runtime_error("redis-server did not answer PING within " +
                           std::to_string(kStartupTimeout.count()) + " ms on port " +
                           std::to_string(port) + ": " + log_tail(log_path));
}

void RedisProcess::crash() {
  server_.stop();  // no grace: SIGKILL
  LOCKSIM_ASSERT(!server_.owned());
}

void RedisProcess::restart() {
  LOCKSIM_ASSERT_MSG(!server_.owned(), "restart() of a running server");
  LOCKSIM_ASSERT(!args_.empty() && port_ > 0);
  std::string failure;
  if (!launch(args_, port_, &failure)) throw std::runtime_error(failure);
  LOCKSIM_ASSERT(server_.owned());
}

void RedisProcess::pause() {
  if (server_.owned()) (void)::kill(server_.pid(), SIGSTOP);
}

void RedisProcess::resume() {
  if (server_.owned()) (void)::kill(server_.pid(), SIGCONT);
}

RedisProcess::~RedisProcess() {
  server_.stop(kStopGrace);
  remove_temp_dir(dir_);
}

}  // namespace locksim::live
