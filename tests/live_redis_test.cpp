// Live mode end to end: a real redis-server started by the harness, the
// hiredis connection in front of it, and the set-nx-lua lock run by real
// threads for a few seconds of real time.
//
// These tests FAIL (never skip) when redis-server is missing: a CI machine
// without it would otherwise report green while testing nothing of live mode.
#include <gtest/gtest.h>

#include <signal.h>
#include <algorithm>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include "algorithms/set_nx_lua.h"
#include "checkers/mutex_checker.h"
#include "env/parse.h"
#include "harness/backends.h"
#include "harness/prepared_run.h"
#include "harness/workload.h"
#include "history/history.h"
#include "live/hiredis_connection.h"
#include "live/live_backend.h"
#include "live/live_env.h"
#include "live/live_run.h"
#include "live/live_runner.h"
#include "live/redis_process.h"
#include "live/redis_servers.h"
#include "real_servers.h"
#include "tests/reply_print.h"

namespace locksim::live {
namespace {

constexpr Duration kTimeout = Duration::millis(1000);

// Starts a server or fails the test with the reason (binary missing, startup
// log tail). The unique_ptr stops the server however the test ends.
std::unique_ptr<RedisProcess> start_server(const RedisProcess::Options& options = {}) {
  try {
    return RedisProcess::start(options);
  } catch (const std::exception& e) {
    ADD_FAILURE() << "cannot start redis-server: " << e.what();
    return nullptr;
  }
}

bool process_alive(pid_t pid) {
  return ::kill(pid, 0) == 0;
}

TEST(RedisProcess, StartsOnLoopbackAndCleansUp) {
  auto server = start_server();
  ASSERT_NE(server, nullptr);
  const pid_t pid = server->pid();
  const std::string dir = server->dir();
  EXPECT_GT(server->port(), 0);
  EXPECT_GT(pid, 0);
  EXPECT_TRUE(process_alive(pid));
  EXPECT_TRUE(std::filesystem::exists(dir + "/redis.log"));

  HiredisConnection c("127.0.0.1", server->port(), kTimeout);
  // No persistence unless asked: a restart must start empty.
  const Reply aof = c.command({"CONFIG", "GET", "appendonly"});
  ASSERT_EQ(aof.kind, Reply::Kind::kArray) << aof.to_string();
  ASSERT_EQ(aof.elements.size(), 2u);
  EXPECT_EQ(aof.elements[1].text, "no");
  const Reply save = c.command({"CONFIG", "GET", "save"});
  ASSERT_EQ(save.elements.size(), 2u) << save.to_string();
  EXPECT_EQ(save.elements[1].text, "");

  server.reset();
  // Reaped (not even a zombie is left) and its directory gone.
  const int kill_result = ::kill(pid, 0);
  const int kill_errno = errno;
  EXPECT_EQ(kill_result, -1);
  EXPECT_EQ(kill_errno, ESRCH);
  EXPECT_FALSE(std::filesystem::exists(dir));
}

TEST(RedisProcess, AppendFsyncTurnsTheAofOn) {
  RedisProcess::Options options;
  options.appendfsync = "always";
  options.extra_args = "--maxmemory-policy noeviction --save \"\"";
  auto server = start_server(options);
  ASSERT_NE(server, nullptr);
  HiredisConnection c("127.0.0.1", server->port(), kTimeout);
  const Reply fsync = c.command({"CONFIG", "GET", "appendfsync"});
  ASSERT_EQ(fsync.elements.size(), 2u) << fsync.to_string();
  EXPECT_EQ(fsync.elements[1].text, "always");
  const Reply policy = c.command({"CONFIG", "GET", "maxmemory-policy"});
  ASSERT_EQ(policy.elements.size(), 2u) << policy.to_string();
  EXPECT_EQ(policy.elements[1].text, "noeviction");
}

TEST(RedisProcess, RejectsABadFsyncPolicy) {
  RedisProcess::Options options;
  options.appendfsync = "sometimes";
  EXPECT_THROW(RedisProcess::start(options), std::runtime_error);
}

TEST(RedisProcess, ReportsAServerThatWillNotStart) {
  RedisProcess::Options options;
  options.extra_args = "--no-such-option 1";
  try {
    RedisProcess::start(options);
    ADD_FAILURE() << "started with a bad option";
  } catch (const std::runtime_error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("during startup"), std::string::npos) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos) << "not one line: " << what;
  }
}

TEST(HiredisConnection, SpeaksRealRedis) {
  auto server = start_server();
  ASSERT_NE(server, nullptr);
  HiredisConnection c("127.0.0.1", server->port(), kTimeout, "redis-1");
  EXPECT_EQ(c.server_name(), "redis-1");

  EXPECT_TRUE(c.command({"SET", "lock", "tok-a", "NX", "PX", "2000"}).is_ok());
  EXPECT_TRUE(c.command({"SET", "lock", "tok-b", "NX", "PX", "2000"}).is_nil());
  EXPECT_EQ(c.command({"GET", "lock"}), Reply::bulk("tok-a"));
  const Reply pttl = c.command({"PTTL", "lock"});
  ASSERT_EQ(pttl.kind, Reply::Kind::kInteger) << pttl.to_string();
  EXPECT_GT(pttl.integer, 0);
  EXPECT_LE(pttl.integer, 2000);
  EXPECT_TRUE(c.command({"GET", "missing"}).is_nil());

  // The release script: compare-and-delete.
  const std::string script = algorithms::SetNxLua::kReleaseScript;
  EXPECT_TRUE(c.command({"EVAL", script, "1", "lock", "tok-b"}).is_integer(0));
  EXPECT_TRUE(c.command({"EVAL", script, "1", "lock", "tok-a"}).is_integer(1));
  EXPECT_TRUE(c.command({"EXISTS", "lock"}).is_integer(0));

  // Nested arrays and mixed element types.
  EXPECT_EQ(c.command({"EVAL", "return {1, 'two', {3}}", "0"}),
            Reply::array({Reply::integer_reply(1), Reply::bulk("two"),
                          Reply::array({Reply::integer_reply(3)})}));
  EXPECT_EQ(c.command({"EVAL", "return redis.status_reply('FINE')", "0"}), Reply::status("FINE"));

  // Binary-safe both ways: NUL, CR LF and high bytes survive.
  const std::string binary("a\0b\r\n\xff", 6);
  EXPECT_TRUE(c.command({"SET", binary, binary}).is_ok());
  EXPECT_EQ(c.command({"GET", binary}), Reply::bulk(binary));

  // A server error is a reply, not a transport failure; the link stays up.
  const Reply unknown = c.command({"NOSUCHCOMMAND"});
  EXPECT_TRUE(unknown.is_error()) << unknown.to_string();
  EXPECT_EQ(unknown.text.rfind("ERR", 0), 0u) << unknown.text;
  EXPECT_TRUE(c.connected());
  EXPECT_EQ(c.command({"INCR", "n"}), Reply::integer_reply(1));
}

TEST(HiredisConnection, StoppedServerIsAnIoErrorNotAThrow) {
  auto server = start_server();
  ASSERT_NE(server, nullptr);
  HiredisConnection c("127.0.0.1", server->port(), kTimeout);
  ASSERT_EQ(c.command({"PING"}), Reply::status("PONG"));

  server.reset();
  const Reply broken = c.command({"SET", "k", "v"});
  EXPECT_TRUE(broken.is_io_error()) << broken.to_string();
  EXPECT_FALSE(c.connected());
  // The next command tries one fresh connect, which is refused.
  const auto t0 = std::chrono::steady_clock::now();
  const Reply refused = c.command({"PING"});
  EXPECT_TRUE(refused.is_io_error()) << refused.to_string();
  EXPECT_NE(refused.text.find("connect"), std::string::npos) << refused.text;
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(2));
}

TEST(HiredisConnection, PausedServerTimesOutThenRecovers) {
  auto server = start_server();
  ASSERT_NE(server, nullptr);
  HiredisConnection c("127.0.0.1", server->port(), Duration::millis(200));
  ASSERT_EQ(c.command({"PING"}), Reply::status("PONG"));

  ASSERT_EQ(::kill(server->pid(), SIGSTOP), 0);
  const auto t0 = std::chrono::steady_clock::now();
  const Reply timed_out = c.command({"SET", "k", "v"});
  const auto waited = std::chrono::steady_clock::now() - t0;
  ASSERT_EQ(::kill(server->pid(), SIGCONT), 0);
  EXPECT_TRUE(timed_out.is_io_error()) << timed_out.to_string();
  EXPECT_NE(timed_out.text.find("timeout"), std::string::npos) << timed_out.text;
  EXPECT_GE(waited, std::chrono::milliseconds(150));
  EXPECT_LT(waited, std::chrono::seconds(2));

  // Reconnects lazily; the timed-out SET was applied after SIGCONT (its
  // outcome was unknown to us, not lost), which is exactly why it is :info.
  EXPECT_EQ(c.command({"PING"}), Reply::status("PONG"));
  EXPECT_EQ(c.command({"GET", "k"}), Reply::bulk("v"));
}

TEST(LiveEnv, NamesSeedsAndClock) {
  const std::vector<ServerAddress> servers = {{"127.0.0.1", 1}, {"127.0.0.1", 2}};
  LiveEnv a(2, servers, kTimeout, 42);
  LiveEnv same(2, servers, kTimeout, 42);
  LiveEnv other_client(3, servers, kTimeout, 42);
  LiveEnv other_seed(2, servers, kTimeout, 43);
  // As the history names client index 2 (c1 is index 0): a token's prefix
  // must name its holder, as in the simulation (it said "c2").
  EXPECT_EQ(a.client_name(), "c3");
  ASSERT_EQ(a.redis_count(), 2u);
  EXPECT_EQ(a.redis(0).server_name(), "redis-1");
  EXPECT_EQ(a.redis(1).server_name(), "redis-2");

  const uint64_t first = a.random();
  EXPECT_EQ(first, same.random());
  EXPECT_NE(first, other_client.random());
  EXPECT_NE(first, other_seed.random());

  const TimePoint t0 = a.now();
  a.sleep(Duration::millis(20));
  EXPECT_GE(a.now() - t0, Duration::millis(20));
}

// Every completion follows an :invoke of the same process and f; a process
// never invokes twice without completing, nor again after :info; indices are
// dense and time never goes back. Returns "" or the first problem.
std::string check_well_formed(const history::History& h, int clients) {
  std::map<int64_t, std::optional<history::Op>> pending;  // by process
  std::set<int64_t> retired;                              // processes that ended in :info
  std::map<int, std::set<int64_t>> processes_of;          // by client
  for (size_t i = 0; i < h.ops.size(); ++i) {
    const history::Op& op = h.ops[i];
    const std::string at = "op " + std::to_string(i) + ": ";
    if (op.index != static_cast<int64_t>(i)) return at + "index " + std::to_string(op.index);
    if (i > 0 && op.time_ns < h.ops[i - 1].time_ns) return at + "time goes back";
    if (op.client < 0 || op.client >= clients) return at + "bad client";
    processes_of[op.client].insert(op.process);
    auto& open = pending[op.process];
    if (op.type == history::OpType::kInvoke) {
      if (retired.count(op.process) != 0) return at + "invoke after :info on the same process";
      if (open.has_value()) return at + "second invoke without completion";
      open = op;
      continue;
    }
    if (!open.has_value()) return at + "completion without invoke";
    if (open->f != op.f || open->client != op.client) return at + "completion does not match";
    open.reset();
    if (op.type == history::OpType::kInfo) retired.insert(op.process);
  }
  // Process ids never move between clients, and client i starts as process i.
  std::set<int64_t> seen;
  for (const auto& [client, ids] : processes_of) {
    if (ids.count(client) == 0)
      return "client " + std::to_string(client) + " never ran as process " + std::to_string(client);
    for (int64_t id : ids) {
      if (!seen.insert(id).second) return "process " + std::to_string(id) + " used by two clients";
    }
  }
  return "";
}

TEST(LiveRun, SetNxLuaFourClientsKeepMutualExclusion) {
  auto server = start_server();
  ASSERT_NE(server, nullptr);

  algorithms::SetNxLua::Params lock;
  lock.ttl = Duration::seconds(2);
  lock.retry.max_attempts = 50;
  lock.retry.retry_min = Duration::millis(5);
  lock.retry.retry_max = Duration::millis(20);
  algorithms::SetNxLua algorithm(lock);

  harness::WorkloadParams workload;
  workload.clients = 4;
  workload.hold_min = Duration::millis(20);
  workload.hold_max = Duration::millis(60);
  workload.retry_pause = Duration::millis(10);
  // A holder rests 30 ms after its release, longer than a waiter's longest
  // retry pause (20 ms): without it, the client that just released asks
  // again at once and can win every hand-over, which a busy CI machine once
  // made it do for the whole run (one client of four ever acquired).
  workload.idle_min = Duration::millis(30);
  workload.idle_max = Duration::millis(30);
  workload.resource = "locksim:live-test";

  std::vector<std::string> errors;
  LiveOptions options;
  options.errors = &errors;
  const auto t0 = std::chrono::steady_clock::now();
  const history::History history = run_live(algorithm, workload, {{"127.0.0.1", server->port()}},
                                            Duration::seconds(3), /*seed=*/7, options);
  const auto elapsed = std::chrono::steady_clock::now() - t0;

  EXPECT_TRUE(errors.empty()) << errors.front();
  EXPECT_GE(elapsed, std::chrono::seconds(3));
  // Clients stop at the end. The bound catches a client that never stops, not
  // a slow one: a busy CI machine once took this run past an earlier 10 s.
  EXPECT_LT(elapsed, std::chrono::seconds(60));
  // The history ends at the run's length, as a simulated one does.
  EXPECT_EQ(history.run_length, Duration::seconds(3));

  EXPECT_EQ(check_well_formed(history, workload.clients), "");

  int64_t acquired = 0;
  std::set<int> clients_that_acquired;
  for (const history::Op& op : history.ops) {
    if (op.f == history::OpF::kAcquire && op.type == history::OpType::kOk) {
      ++acquired;
      clients_that_acquired.insert(op.client);
      // The token names its holder, as the history does.
      EXPECT_EQ(op.token.rfind(history::client_label(op.client) + ":", 0), 0u) << op.token;
    }
    // Nothing is faulted here, so nothing should be unknown.
    EXPECT_NE(op.type, history::OpType::kInfo) << "op " << op.index << ": " << op.detail;
  }
  // ~3 s of 20-60 ms holds: dozens of hand-overs; a handful is the floor.
  EXPECT_GE(acquired, 5);
  EXPECT_GE(clients_that_acquired.size(), 2u);
  EXPECT_EQ(history.held.size(), static_cast<size_t>(acquired));

  const checkers::Verdict verdict = checkers::check_mutex(history);
  EXPECT_EQ(verdict.kind, checkers::Verdict::Kind::kValid) << verdict.explanation;

  // A hold open at the run's end is not given back (the simulation's run
  // ends the same way): its key is still there, within its 2 s TTL.
  const bool open_at_end =
      std::any_of(history.held.begin(), history.held.end(), [](const history::HeldInterval& h) {
        return h.end_reason == history::HeldInterval::EndReason::kRunEnd;
      });
  HiredisConnection c("127.0.0.1", server->port(), kTimeout);
  if (open_at_end) {
    EXPECT_TRUE(c.command({"EXISTS", workload.resource}).is_integer(1));
  }
}

// Ctrl-C on a live Redis run: redis-server gone, its AOF folder removed
// (the parent-death signal alone would leave the folder in /tmp).
TEST(LocksimLive, CtrlCStopsRedisAndRemovesItsFolder) {
  testing::expect_ctrl_c_cleans_up(
      {"--algorithm", "redlock", "--masters", "3", "--duration", "60s", "--clients", "2"},
      "redis-server", 3);
}

// `locksim live` works for every algorithm the registry lists: each backend
// a run can use has exactly one live side, joined by name.
TEST(LiveBackends, EveryBackendHasOneLiveSide) {
  for (const harness::BackendSpec& b : harness::all_backends()) {
    int sides = 0;
    for (const LiveBackend& l : live_backends()) sides += l.name == b.name ? 1 : 0;
    EXPECT_EQ(sides, 1) << b.name;
  }
  EXPECT_EQ(live_backends().size(), harness::all_backends().size());
}

// What a backend cannot do live is refused with the setting's name before any
// server starts (the refusal must not depend on redis-server being installed).
TEST(LiveBackends, RefusesWhatTheRealServerCannotDoBeforeStartingIt) {
  harness::RunConfig config;
  config.algorithm = "set-nx-lua";
  config.redis.replicas = RedisServers::kReplicasMax + 1;  // more than the machine holds
  const harness::PreparedRun run = harness::prepare_run(config);
  try {
    (void)run_live_and_check(run);
    ADD_FAILURE() << "expected a ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("--replicas"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace locksim::live
