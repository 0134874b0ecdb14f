// Faults on real servers (issue 25): each kind against a real redis-server,
// showing the effect a scenario relies on. A crash without persistence
// loses the key and with appendfsync always keeps it; a cut relay holds a SET
// and delivers it after the heal, and its OK reaches a client without a
// timeout; a paused server answers nothing until it is continued; and a
// scenario gives the same verdict in the simulation and live (locksim agree).
//
// These tests need redis-server: they skip with the reason on a user's
// machine without it, and fail in CI (real_servers.h).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <future>
#include <iterator>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "env/parse.h"
#include "faults/fault_schedule.h"
#include "harness/scenario.h"
#include "harness/time_scale.h"
#include "live/hiredis_connection.h"
#include "live/live_nemesis.h"
#include "live/mariadb_process.h"
#include "live/redis_process.h"
#include "live/redis_servers.h"
#include "live/tcp_relay.h"
#include "live/zk_process.h"
#include "locksim_binary.h"
#include "real_servers.h"

namespace locksim::live {
namespace {

using std::chrono::milliseconds;

// A command timeout far above any wait here: "without a timeout" as far as
// these tests can tell.
constexpr Duration kPatient = Duration::seconds(20);

std::string redis_missing() {
  try {
    (void)RedisProcess::start();
    return "";
  } catch (const std::exception& e) {
    return e.what();
  }
}

Reply get(int port, const std::string& key) {
  HiredisConnection c("127.0.0.1", port, kPatient);
  return c.command({"GET", key});
}

TEST(LiveFaults, ACrashWithoutPersistenceLosesTheKeyAndAppendfsyncAlwaysKeepsIt) {
  LOCKSIM_SKIP_WITHOUT("redis-server", redis_missing());
  for (const std::string fsync : {"", "always"}) {
    SCOPED_TRACE("appendfsync '" + fsync + "'");
    RedisProcess::Options options;
    options.appendfsync = fsync;
    const std::unique_ptr<RedisProcess> server = RedisProcess::start(options);
    HiredisConnection c("127.0.0.1", server->port(), kPatient);
    ASSERT_TRUE(c.command({"SET", "lock", "c1"}).is_ok());
    const int port = server->port();
    server->crash();
    EXPECT_FALSE(server->running());
    EXPECT_TRUE(get(port, "lock").is_io_error()) << "nobody listens while it is down";
    server->restart();
    ASSERT_TRUE(server->running());
    EXPECT_EQ(server->port(), port) << "the same port, so clients find it again";
    const Reply after = get(port, "lock");
    if (fsync.empty()) {
      EXPECT_TRUE(after.is_nil()) << after.to_string();
    } else {
      EXPECT_EQ(after.text, "c1") << after.to_string();
    }
  }
}

TEST(LiveFaults, APausedServerAnswersNothingUntilContinued) {
  LOCKSIM_SKIP_WITHOUT("redis-server", redis_missing());
  const std::unique_ptr<RedisProcess> server = RedisProcess::start();
  server->pause();
  HiredisConnection impatient("127.0.0.1", server->port(), Duration::millis(200));
  EXPECT_TRUE(impatient.command({"PING"}).is_io_error());
  HiredisConnection patient("127.0.0.1", server->port(), kPatient);
  std::future<Reply> ping =
      std::async(std::launch::async, [&] { return patient.command({"PING"}); });
  EXPECT_EQ(ping.wait_for(milliseconds(300)), std::future_status::timeout);
  server->resume();
  EXPECT_TRUE(ping.get().text == "PONG");
}

TEST(LiveFaults, ACutRelayHoldsASetAndDeliversItAfterTheHeal) {
  LOCKSIM_SKIP_WITHOUT("redis-server", redis_missing());
  const std::unique_ptr<RedisProcess> server = RedisProcess::start();
  TcpRelay relay(server->port());
  HiredisConnection c("127.0.0.1", relay.port(), kPatient);
  ASSERT_TRUE(c.command({"SET", "lock", "old"}).is_ok()) << "the relay relays";
  relay.cut(true, true);
  std::future<Reply> set = std::async(std::launch::async, [&] {
    return c.command({"SET", "lock", "new"});
  });
  EXPECT_EQ(set.wait_for(milliseconds(500)), std::future_status::timeout);
  EXPECT_EQ(get(server->port(), "lock").text, "old") << "the SET is held, not delivered";
  relay.heal();
  EXPECT_TRUE(set.get().is_ok()) << "its OK arrives after the heal";
  EXPECT_EQ(get(server->port(), "lock").text, "new");
  EXPECT_EQ(relay.accepted(), 1);
}

// A one-way cut of the replies: the server executes the SET at once, and the
// client hears of it only after the heal (a late grant, live).
TEST(LiveFaults, AOneWayCutHoldsOnlyTheReply) {
  LOCKSIM_SKIP_WITHOUT("redis-server", redis_missing());
  const std::unique_ptr<RedisProcess> server = RedisProcess::start();
  TcpRelay relay(server->port());
  HiredisConnection c("127.0.0.1", relay.port(), kPatient);
  ASSERT_TRUE(c.command({"PING"}).text == "PONG");
  relay.cut(false, true);
  std::future<Reply> set = std::async(std::launch::async, [&] {
    return c.command({"SET", "lock", "c1"});
  });
  std::this_thread::sleep_for(milliseconds(300));
  EXPECT_EQ(get(server->port(), "lock").text, "c1") << "executed while its reply is held";
  EXPECT_EQ(set.wait_for(milliseconds(0)), std::future_status::timeout);
  relay.heal();
  EXPECT_TRUE(set.get().is_ok());
}

TEST(LiveFaults, ADelayHoldsEachChunkAndAResetBreaksTheConnection) {
  LOCKSIM_SKIP_WITHOUT("redis-server", redis_missing());
  const std::unique_ptr<RedisProcess> server = RedisProcess::start();
  TcpRelay relay(server->port());
  HiredisConnection c("127.0.0.1", relay.port(), kPatient);
  ASSERT_TRUE(c.command({"PING"}).text == "PONG");
  relay.set_delay(milliseconds(150));
  const auto before = std::chrono::steady_clock::now();
  ASSERT_TRUE(c.command({"PING"}).text == "PONG");
  // Both ways: at least twice the delay (a lower bound only: a slow machine
  // may take longer, never shorter).
  EXPECT_GE(std::chrono::steady_clock::now() - before, milliseconds(300));
  relay.set_delay(milliseconds(0));
  relay.reset();
  std::this_thread::sleep_for(milliseconds(50));
  EXPECT_TRUE(c.command({"PING"}).is_io_error()) << "the relay reset the connection";
  EXPECT_TRUE(c.command({"PING"}).text == "PONG") << "a new connection goes through";
}

// A link's latency (network.latency_base, live): each chunk waits it both
// ways, and a new connection's first request also waits the handshake's
// round trip, so the first reply comes back 4 latencies after the connect,
// as in the simulation (dial, then the request and its reply).
TEST(LiveFaults, ALinkLatencyHoldsEachChunkAndANewConnectionsHandshake) {
  LOCKSIM_SKIP_WITHOUT("redis-server", redis_missing());
  const std::unique_ptr<RedisProcess> server = RedisProcess::start();
  TcpRelay relay(server->port());
  relay.set_lag(milliseconds(50), milliseconds(50));
  relay.set_handshake(milliseconds(100));
  HiredisConnection c("127.0.0.1", relay.port(), kPatient);
  auto timed_ping = [&c] {
    const auto before = std::chrono::steady_clock::now();
    EXPECT_EQ(c.command({"PING"}).text, "PONG");
    return std::chrono::steady_clock::now() - before;
  };
  // Lower bounds only: a slow machine may take longer, never shorter.
  EXPECT_GE(timed_ping(), milliseconds(200)) << "handshake, request, reply";
  const auto second = timed_ping();
  EXPECT_GE(second, milliseconds(100)) << "request and reply";
  EXPECT_LT(second, milliseconds(200)) << "the handshake is once per connection";
}

// The clock shim moves redis-server's key expiry: a key with 10 s left is
// gone after a 20 s jump of the server's wall clock, and one with 2 s left
// goes about twice as fast under a +900000 ppm drift. (Redis reads the wall
// clock for expiry: if it ever moved to the monotonic clock, this fails.)
TEST(LiveFaults, TheClockShimMovesRedisKeyExpiry) {
  LOCKSIM_SKIP_WITHOUT("redis-server", redis_missing());
  RedisProcess::Options options;
  options.clock = "shim";
  const std::unique_ptr<RedisProcess> server = RedisProcess::start(options);
  ASSERT_NE(server->clock(), nullptr);
  HiredisConnection c("127.0.0.1", server->port(), kPatient);
  ASSERT_TRUE(c.command({"SET", "lock", "c1", "PX", "10000"}).is_ok());
  EXPECT_EQ(c.command({"GET", "lock"}).text, "c1") << "a shim at rest changes nothing";
  server->clock()->jump(Duration::seconds(20));
  EXPECT_TRUE(c.command({"GET", "lock"}).is_nil()) << "expired by the jump";
  ASSERT_TRUE(c.command({"SET", "lock", "c2", "PX", "2000"}).is_ok());
  server->clock()->set_drift(900'000);
  std::this_thread::sleep_for(milliseconds(1300));  // 2.47 s of the server's clock
  EXPECT_TRUE(c.command({"GET", "lock"}).is_nil()) << "expired early by the drift";
}

// locksim agree on a short scenario: a crash of a master without persistence
// while a client holds; both sides find the violation.
TEST(LocksimAgree, ARestartWithoutPersistenceBreaksTheLockInBoth) {
  LOCKSIM_SKIP_WITHOUT("redis-server", redis_missing());
  const testing::ScratchDir dir("locksim-agree-test-");
  const std::filesystem::path scenario = dir.write("restart.json", R"({"name": "restart",
    "expect": "violation", "algorithm": "set-nx-lua", "params": {"ttl": "10s"}, "seed": 1,
    "duration": "5s", "workload": {"clients": 3, "hold": "2s..3s"},
    "redis": {"persistence": "none"}, "faults": ["crash redis-1 at 500ms for 300ms"]})");
  const std::filesystem::path out = dir.path() / "out";
  const testing::Outcome r =
      testing::locksim("agree --scenario " + scenario.string() + " --out " + out.string());
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("verdict             violation             violation"), std::string::npos)
      << r.out;
  EXPECT_TRUE(std::filesystem::exists(out / "agree.json"));
  EXPECT_NE(testing::slurp(out / "live" / "history.edn").find(":crash"), std::string::npos)
      << "the live history records the fault as a nemesis op";
  // A client's GC pause past the TTL: both find the paused holder overlapped.
  const std::filesystem::path pause = dir.write("pause.json", R"({"name": "pause",
    "expect": "violation", "algorithm": "set-nx-lua", "params": {"ttl": "1s"}, "seed": 1,
    "duration": "5s", "workload": {"clients": 3, "hold": "300ms..500ms"},
    "faults": ["pause @holder at 1s for 2s"]})");
  const testing::Outcome paused = testing::locksim("agree --scenario " + pause.string());
  EXPECT_EQ(paused.exit_code, 0) << paused.out << paused.err;
  EXPECT_NE(paused.out.find("verdict             violation             violation"),
            std::string::npos)
      << paused.out;
  // What live cannot express is refused with exit 2, before anything runs.
  const testing::Outcome refused = testing::locksim("agree --scenario mysql-center-failover");
  EXPECT_EQ(refused.exit_code, 2) << refused.out << refused.err;
  EXPECT_NE(refused.err.find("simulation-only"), std::string::npos) << refused.err;
  // So is a story its file says live cannot reproduce (a race at 0 s that
  // only the simulation's jitter decides), with the file's reason.
  const testing::Outcome race = testing::locksim("agree --scenario redisson-fair-skewed-clock");
  EXPECT_EQ(race.exit_code, 2) << race.out << race.err;
  EXPECT_NE(race.err.find("not_live: its stuck lock needs c3 to win"), std::string::npos)
      << race.err;
}

// The bounded subset CI runs (issue 25): `agree --all --only` over shipped
// scenarios at a fifth of their time, at least one per backend (Redis,
// MySQL, ZooKeeper) and per fault kind live applies that a shipped scenario
// uses: a server's crash and restart (set-nx-lua-restart-no-fsync,
// zk-curator-leader-failover), a client's pause (set-nx-lua-gc-pause), a
// partition (naive-setnx-partition-late-delete), a one-way partition of a
// link with a latency, aimed at the first grant's reply in flight
// (set-nx-lua-one-way-partition), a delay (mysql-center-slow-link), a
// server's clock (set-nx-lua-clock-jump), a client's clock
// (mysql-center-clock-skew), client crashes (naive-setnx-crash-between,
// mysql-center-client-crash) and a hang (redisson-hung-holder); each gives
// the same verdict in both, and the report (agree.json, .md, .html) has a
// row for each, a ZooKeeper client fault among them listed with why live
// cannot express it. Sentinel's failover and a server's pause are the tests
// above and below, on scenarios of their own. (A fifth keeps MySQL's lock
// wait timeout in whole seconds.)
constexpr const char* kSubset[] = {"mysql-center-client-crash",
                                   "mysql-center-clock-skew",
                                   "mysql-center-slow-link",
                                   "naive-setnx-crash-between",
                                   "naive-setnx-partition-late-delete",
                                   "redisson-hung-holder",
                                   "set-nx-lua-clock-jump",
                                   "set-nx-lua-gc-pause",
                                   "set-nx-lua-one-way-partition",
                                   "set-nx-lua-restart-no-fsync",
                                   "zk-curator-gc-pause",
                                   "zk-curator-leader-failover"};

TEST(LocksimAgree, ABoundedSubsetAgreesPerBackendAndFaultKind) {
  LOCKSIM_SKIP_WITHOUT("redis-server", redis_missing());
  LOCKSIM_SKIP_WITHOUT("mariadbd", MariadbProcess::missing());
  LOCKSIM_SKIP_WITHOUT("zookeeper", ZkEnsembleProcess::missing());
  const testing::ScratchDir dir("locksim-agree-subset-");
  const std::filesystem::path out = dir.path() / "out";
  std::string only;
  for (const char* name : kSubset) only += (only.empty() ? "" : ",") + std::string(name);
  const testing::Outcome r =
      testing::locksim("agree --all --time-scale 0.2 --only " + only + " --out " + out.string());
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto report = nlohmann::json::parse(testing::slurp(out / "agree.json"));
  ASSERT_EQ(report["scenarios"].size(), std::size(kSubset)) << r.out;
  const std::string html = testing::slurp(out / "agree.html");
  const std::string md = testing::slurp(out / "agree.md");
  for (const auto& row : report["scenarios"]) {
    const std::string name = row["scenario"].get<std::string>();
    EXPECT_NE(html.find("<tr data-scenario=\"" + name + "\">"), std::string::npos) << name;
    EXPECT_NE(md.find("`" + name + "`"), std::string::npos) << name;
    if (name == "zk-curator-gc-pause") {
      EXPECT_FALSE(row["expressible"].get<bool>());
      EXPECT_NE(row["why"].get<std::string>().find("pause @holder"), std::string::npos);
      continue;
    }
    ASSERT_TRUE(row["expressible"].get<bool>()) << name << ": " << row.dump();
    EXPECT_TRUE(row["agree"].get<bool>()) << name << ": " << row.dump();
  }
  // A client crash live: its op in flight ends :info, worded as the
  // simulation words it, and the client comes back under a fresh process.
  const std::filesystem::path crash = out / "naive-setnx-crash-between" / "live";
  const std::string history = testing::slurp(crash / "history.edn");
  EXPECT_NE(history.find(":f :crash"), std::string::npos) << "the crash is a nemesis op";
  EXPECT_NE(history.find(":type :info, :f :acquire"), std::string::npos);
  EXPECT_NE(testing::slurp(crash / "history.jsonl").find("client crashed"), std::string::npos);
  EXPECT_NE(history.find(":f :restart"), std::string::npos);
  EXPECT_NE(history.find(":process 3"), std::string::npos) << "a new life, a fresh process";
  // --only takes shipped names only: a typo is bad input, before anything runs.
  const testing::Outcome typo = testing::locksim("agree --all --only set-nx-lua-gc-paws --out " +
                                                 (dir.path() / "x").string());
  EXPECT_EQ(typo.exit_code, 2) << typo.out << typo.err;
  EXPECT_NE(typo.err.find("--only"), std::string::npos) << typo.err;
}

// Polls `done` every 20 ms for up to `limit`: whether it came true.
bool eventually(const std::function<bool()>& done, milliseconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!done()) {  // bounded by the deadline
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(milliseconds(20));
  }
  return true;
}

// Issue 25's acceptance point: real redis-sentinel promotes the replica after
// the master is SIGKILLed, the clients' view follows it, and the write the
// replica had applied is on the new master.
TEST(LiveFailover, SentinelPromotesTheReplicaAfterTheMasterIsKilled) {
  LOCKSIM_SKIP_WITHOUT("redis-server", redis_missing());
  sim::redis::Topology topology;
  topology.masters = 1;
  topology.replicas = 1;
  topology.failover = true;
  topology.down_after = Duration::millis(500);
  topology.discovery_delay = Duration::millis(100);
  topology.replication_lag = Duration::zero();
  const std::unique_ptr<RedisServers> servers =
      RedisServers::start(topology, {}, Duration::seconds(30));
  ASSERT_TRUE(servers->has_sentinel());
  const std::shared_ptr<const SentinelView> view = servers->view();
  HiredisConnection master("127.0.0.1", servers->port("redis-1"), kPatient);
  ASSERT_TRUE(master.command({"SET", "lock", "c1"}).is_ok());
  HiredisConnection replica("127.0.0.1", servers->port("redis-1-r1"), kPatient);
  ASSERT_TRUE(eventually(
      [&] {
        return replica.command({"GET", "lock"}).text == "c1";
      },
      milliseconds(2000)))
      << "the replica follows its master through its relay";
  EXPECT_EQ(view->published_primary(0), "redis-1");
  EXPECT_TRUE(eventually([&] { return view->replicas_listed(0) == 1; }, milliseconds(2000)));

  LiveTargets targets;
  servers->add_targets(targets);
  ASSERT_TRUE(targets.primary);
  targets.servers.at("redis-1").crash();  // SIGKILL
  // down_after plus Sentinel's ping period and its random start (up to 1 s
  // each), plus the discovery delay: a few seconds on a busy machine.
  ASSERT_TRUE(
      eventually([&] { return view->published_primary(0) == "redis-1-r1"; }, milliseconds(15000)))
      << "Sentinel names the replica master";
  EXPECT_EQ(targets.primary(), "redis-1-r1") << "@primary follows Sentinel";
  // Sentinel kills the promoted replica's client connections (CLIENT KILL):
  // ask on a fresh one.
  HiredisConnection promoted("127.0.0.1", servers->port("redis-1-r1"), kPatient);
  const Reply role = promoted.command({"ROLE"});
  ASSERT_EQ(role.kind, Reply::Kind::kArray) << role.to_string();
  EXPECT_EQ(role.elements.at(0).text, "master");
  EXPECT_EQ(promoted.command({"GET", "lock"}).text, "c1");
  EXPECT_EQ(view->failovers(), 1);
  EXPECT_TRUE(eventually([&] { return view->replicas_listed(0) == 0; }, milliseconds(5000)))
      << "the dead old master is listed as a replica Sentinel cannot reach";
}

// A replica's link through its relay: the replication lag holds a write, and
// the master's crash loses what the link still held (its output buffer died
// with it), so the replica never sees it.
TEST(LiveFailover, AWriteStillInTheLagDiesWithTheMaster) {
  LOCKSIM_SKIP_WITHOUT("redis-server", redis_missing());
  sim::redis::Topology topology;
  topology.masters = 1;
  topology.replicas = 1;
  topology.replication_lag = Duration::millis(300);
  const std::unique_ptr<RedisServers> servers =
      RedisServers::start(topology, {}, Duration::seconds(30));
  EXPECT_FALSE(servers->has_sentinel());
  HiredisConnection master("127.0.0.1", servers->port("redis-1"), kPatient);
  HiredisConnection replica("127.0.0.1", servers->port("redis-1-r1"), kPatient);
  ASSERT_TRUE(master.command({"SET", "lock", "c1"}).is_ok());
  EXPECT_TRUE(replica.command({"GET", "lock"}).is_nil()) << "still in the lag";
  EXPECT_TRUE(eventually(
      [&] {
        return replica.command({"GET", "lock"}).text == "c1";
      },
      milliseconds(3000)));
  ASSERT_TRUE(master.command({"SET", "lock", "c2"}).is_ok());
  LiveTargets targets;
  servers->add_targets(targets);
  targets.servers.at("redis-1").crash();
  std::this_thread::sleep_for(milliseconds(600));  // twice the lag
  EXPECT_EQ(replica.command({"GET", "lock"}).text, "c1") << "c2 died with the master";
}

// The shipped failover scenarios' mechanism, short: a grant lost in the lag,
// Sentinel promotes the replica, a second client is granted the lock while
// the first holds (violation in both), in 8 s of real time.
TEST(LocksimAgree, AFailoverLosesTheGrantInBoth) {
  LOCKSIM_SKIP_WITHOUT("redis-server", redis_missing());
  const testing::ScratchDir dir("locksim-agree-failover-");
  const std::filesystem::path scenario = dir.write("failover.json", R"({"name": "failover",
    "expect": "violation", "algorithm": "set-nx-lua", "params": {"ttl": "30s"}, "seed": 1,
    "duration": "8s", "workload": {"clients": 3, "hold": "4s..5s"},
    "redis": {"masters": 1, "replicas": 1, "replication_lag": "100ms", "failover": true,
              "down_after": "500ms", "discovery_delay": "100ms"},
    "faults": ["crash redis-1 at 50ms"]})");
  const std::filesystem::path out = dir.path() / "out";
  const testing::Outcome r =
      testing::locksim("agree --scenario " + scenario.string() + " --out " + out.string());
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("verdict             violation             violation"), std::string::npos)
      << r.out;
}

// Ctrl-C on a live run with failover: the servers and Sentinel gone, their
// folders removed.
TEST(LocksimLive, CtrlCStopsSentinelAndReplicas) {
  LOCKSIM_SKIP_WITHOUT("redis-server", redis_missing());
  const std::vector<std::string> args = {"--algorithm", "set-nx-lua", "--replicas",
                                         "1",           "--failover", "--duration",
                                         "60s",         "--clients",  "2"};
  testing::expect_ctrl_c_cleans_up(args, "redis-sentinel", 1);
  testing::expect_ctrl_c_cleans_up(args, "redis-server", 2);
}

// --time-scale: every duration of a scenario, given or default, scaled on
// both sides; nothing else moves.
TEST(TimeScale, ScalesEveryDurationOfAScenarioAndNothingElse) {
  harness::RunConfig c = harness::load_scenario("redisson-partition").config;
  const harness::RunConfig before = c;
  harness::scale_time(c, 0.1);
  EXPECT_EQ(c.duration, Duration::millis(before.duration.to_ms() / 10));
  EXPECT_EQ(c.workload.hold_max, Duration::millis(before.workload.hold_max.to_ms() / 10));
  EXPECT_EQ(c.redis.timeout, Duration::millis(before.redis.timeout.to_ms() / 10));
  ASSERT_EQ(c.faults.events.size(), before.faults.events.size());
  EXPECT_EQ(c.faults.events[0].at, Duration::millis(before.faults.events[0].at.to_ms() / 10));
  EXPECT_EQ(c.faults.events[0].duration,
            Duration::millis(before.faults.events[0].duration.to_ms() / 10));
  EXPECT_EQ(c.algorithm_params.at("watchdog-timeout"), "3s") << "a default parameter scales too";
  EXPECT_EQ(c.seed, before.seed);
  EXPECT_EQ(c.workload.clients, before.workload.clients);
  harness::RunConfig same = before;
  harness::scale_time(same, 1.0);
  EXPECT_EQ(same.duration, before.duration);
  EXPECT_THROW(harness::parse_time_scale("0", "--time-scale"), ConfigError);
  EXPECT_THROW(harness::parse_time_scale("fast", "--time-scale"), ConfigError);
  EXPECT_DOUBLE_EQ(harness::parse_time_scale("0.25", "--time-scale"), 0.25);
}

// A step backwards scales as one forwards (-5s at 0.5 became -1ms: its
// magnitude went through max(1 ms, a negative)), and the network's
// sub-millisecond latency scales in microseconds (rounded to whole
// milliseconds, 200us became 1ms at any factor).
TEST(TimeScale, KeepsTheSignAndTheMicroseconds) {
  harness::RunConfig c;
  c.faults.events = {faults::parse_fault("jump c1 at 1s -5s", "--fault"),
                     faults::parse_fault("jump c2 at 1s +5s", "--fault")};
  harness::scale_time(c, 0.5);
  EXPECT_EQ(c.faults.events[0].jump.ns, Duration::millis(-2500).ns);
  EXPECT_EQ(c.faults.events[1].jump.ns, Duration::millis(2500).ns);
  EXPECT_EQ(c.faults.events[0].at.ns, Duration::millis(500).ns);
  EXPECT_EQ(c.link.latency_base.ns, Duration::micros(100).ns) << "200us at 0.5";
  harness::RunConfig doubled;
  harness::scale_time(doubled, 2.0);
  EXPECT_EQ(doubled.link.latency_base.ns, Duration::micros(400).ns);
  harness::RunConfig tiny;
  harness::scale_time(tiny, 0.01);  // 200us: 2us
  EXPECT_EQ(tiny.link.latency_base.ns, Duration::micros(2).ns);
}

}  // namespace
}  // namespace locksim::live
