// zk-curator live: three threads run the lock workload for a few seconds of
// real time against a real three-server ZooKeeper ensemble started here, and
// no two of them may believe they hold the lock at once. Faults on a real
// ensemble (issue 25): a cut relay in front of a server expires the session
// behind it, a live run's partition of the holder's relays breaks the bare
// recipe, a fault on a ZooKeeper client is refused, and the clock shim moves
// a server's ctime and not its session expiry. Every JVM started is killed
// when the test ends, however it ends.
//
// Skips (with a message) when zookeeper is not installed, except when
// CI=true: then it fails.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "algorithms/zk_lock.h"
#include "harness/workload.h"
#include "history/history.h"
#include "live/tcp_relay.h"
#include "live/zk_connection_live.h"
#include "live/zk_live_env.h"
#include "live/zk_process.h"
#include "locksim_binary.h"
#include "real_servers.h"

namespace locksim::live {
namespace {

#define SKIP_WITHOUT_ZOOKEEPER() LOCKSIM_SKIP_WITHOUT("zookeeper", ZkEnsembleProcess::missing())

// The live Truth: the steady clock since the run began, one mutex.
class LiveTruth : public harness::Truth {
 public:
  explicit LiveTruth(Duration length) : start_(std::chrono::steady_clock::now()), length_(length) {}

  TimePoint true_now() override {
    return TimePoint::from_ns(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                  std::chrono::steady_clock::now() - start_)
                                  .count());
  }
  bool stopping() override { return true_now() >= TimePoint{} + length_; }
  int64_t fresh_process() override {
    std::lock_guard<std::mutex> lock(mu_);
    return next_process_++;
  }
  int64_t record(history::Op op, bool begin_hold, bool end_hold) override {
    std::lock_guard<std::mutex> lock(mu_);
    const TimePoint now = true_now();
    op.time_ns = now.ns;
    const int64_t index = recorder_.record(op);
    if (begin_hold) recorder_.begin_hold(op.client, op.process, now, index);
    if (end_hold) {
      recorder_.end_hold(op.client, now, index, history::HeldInterval::EndReason::kRelease);
    }
    return index;
  }
  history::History finish() {
    std::lock_guard<std::mutex> lock(mu_);
    return recorder_.finish(true_now());
  }

 private:
  std::chrono::steady_clock::time_point start_;
  Duration length_;
  std::mutex mu_;
  int64_t next_process_ = 100;
  history::HistoryRecorder recorder_;
};

TEST(ZkLive, CuratorHoldsTheLockAloneOnARealEnsemble) {
  SKIP_WITHOUT_ZOOKEEPER();
  std::unique_ptr<ZkEnsembleProcess> zk;
  try {
    zk = ZkEnsembleProcess::start({.servers = 3, .tick_ms = 100});
  } catch (const std::exception& e) {
    FAIL() << "cannot start zookeeper: " << e.what();
  }
  algorithms::ZkLock::Params p;
  p.variant = algorithms::ZkLock::Variant::kCurator;
  p.wait = Duration::seconds(3);
  algorithms::ZkLock lock(p);
  harness::WorkloadParams w;
  w.clients = 3;
  w.hold_min = Duration::millis(20);
  w.hold_max = Duration::millis(80);
  w.resource = "live-test";
  LiveTruth truth(Duration::seconds(4));
  std::vector<std::unique_ptr<ZkLiveEnv>> envs;
  for (int i = 0; i < w.clients; ++i) {
    envs.push_back(std::make_unique<ZkLiveEnv>(i, zk->hosts(), Duration::seconds(2), 7));
  }
  std::vector<std::string> errors(static_cast<size_t>(w.clients));
  std::vector<std::thread> threads;
  for (int i = 0; i < w.clients; ++i) {
    threads.emplace_back([&, i] {
      try {
        harness::run_client(*envs[i], lock, i, w, truth);
      } catch (const std::exception& e) {
        errors[static_cast<size_t>(i)] = e.what();
      }
    });
  }
  for (auto& t : threads) t.join();
  for (const auto& e : errors) EXPECT_EQ(e, "");
  const history::History h = truth.finish();
  EXPECT_GT(h.held.size(), 10u);  // the lock really went round
  for (size_t i = 0; i < h.held.size(); ++i) {
    for (size_t j = i + 1; j < h.held.size(); ++j) {
      const bool overlap = h.held[i].client != h.held[j].client &&
                           h.held[i].start < h.held[j].end && h.held[j].start < h.held[i].end;
      EXPECT_FALSE(overlap) << "clients " << h.held[i].client << " and " << h.held[j].client;
    }
  }
  // The fencing tokens (czxids) grow with each acquire.
  uint64_t last = 0;
  for (const history::Op& op : h.ops) {
    if (op.type != history::OpType::kOk || op.f != history::OpF::kAcquire || !op.fence) continue;
    EXPECT_GT(*op.fence, last);
    last = *op.fence;
  }
  envs.clear();  // sessions closed before the servers go
}

// One standalone server with a 100 ms tick: sessions of 1 s (the shortest
// that two ticks allow at this tick is 200 ms; 1 s leaves a loaded machine
// room), started in about two seconds.
std::unique_ptr<ZkEnsembleProcess> start_standalone(bool clock_shim = false) {
  return ZkEnsembleProcess::start({.servers = 1, .tick_ms = 100, .clock_shim = clock_shim});
}

// Polls `done` every 20 ms for up to `limit`: whether it came true.
bool eventually(const std::function<bool()>& done, std::chrono::milliseconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!done()) {  // bounded by the deadline
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

// What a live partition of a ZooKeeper client does: its relay holds the
// client's pings, the server hears nothing, and the session expires on the
// real server (its ephemeral node goes, as another session sees); after the
// heal the client learns that its session is gone.
TEST(ZkLive, ACutRelayExpiresTheSessionBehindIt) {
  SKIP_WITHOUT_ZOOKEEPER();
  const std::unique_ptr<ZkEnsembleProcess> zk = start_standalone();
  TcpRelay relay(zk->client_ports().at(0));
  ZkConnectionLive cut("127.0.0.1:" + std::to_string(relay.port()), Duration::seconds(1));
  ASSERT_EQ(cut.connect(), ZkError::kOk);
  ASSERT_EQ(cut.create("/held", "c1", {.ephemeral = true}).error, ZkError::kOk);
  ZkConnectionLive other(zk->hosts(), Duration::seconds(1));
  ASSERT_EQ(other.connect(), ZkError::kOk);
  relay.cut(true, true);
  const auto cut_at = std::chrono::steady_clock::now();
  EXPECT_TRUE(eventually([&] { return other.exists("/held", false).error == ZkError::kNoNode; },
                         std::chrono::milliseconds(5000)))
      << "the server expired the silent session and removed its node";
  // Not before the client's last ping could have been heard for 2T/3: an
  // expiry, not a lost connection.
  EXPECT_GE(std::chrono::steady_clock::now() - cut_at, std::chrono::milliseconds(600));
  relay.heal();
  EXPECT_TRUE(eventually([&] { return cut.state() == ZkSessionState::kExpired; },
                         std::chrono::milliseconds(5000)))
      << "the held handshake reaches the server, which says the session expired";
  EXPECT_EQ(cut.create("/again", "", {}).error, ZkError::kSessionExpired);
}

// The same through `locksim live`: the holder's relays to the one server
// are cut past its session timeout, its session expires and its node goes,
// the waiter takes the lock, and the bare recipe, not watching its session,
// works on: two holders, exit 1. A fault on a client is refused before any
// JVM starts, naming the field, exit 2.
TEST(LocksimLive, AZooKeeperPartitionOfTheHolderBreaksTheBareRecipe) {
  SKIP_WITHOUT_ZOOKEEPER();
  const std::string common =
      "live --algorithm zk-recipe --param wait=10s --zk-servers 1 --zk-tick 100ms "
      "--session-timeout 1s --clients 2 --seed 1 ";
  const testing::Outcome r = testing::locksim(common +
                                              "--duration 4s --hold 3s..3500ms "
                                              "--fault 'partition @holder|zk-1 at 500ms for 2s'");
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("VIOLATION: mutual exclusion broken"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("zookeeper.relays"), std::string::npos) << r.out;
  const testing::Outcome refused =
      testing::locksim(common + "--duration 2s --fault 'pause c1 at 1s for 1s'");
  EXPECT_EQ(refused.exit_code, 2) << refused.out << refused.err;
  EXPECT_NE(refused.err.find("--fault[0]: 'pause c1"), std::string::npos) << refused.err;
  EXPECT_NE(refused.err.find("ZooKeeper client"), std::string::npos) << refused.err;
  EXPECT_EQ(refused.err.find('\n'), refused.err.size() - 1) << "one line: " << refused.err;
}

// The clock shim in the ZooKeeper JVM: System.currentTimeMillis (a node's
// ctime) jumps with the server's wall clock, while System.nanoTime, on which
// the server expires sessions, stays real: a 1 s session lives on through a
// jump of an hour. (If HotSpot ever read the wall clock past libc, the ctime
// check fails; if ZooKeeper timed sessions on it, the session check does.)
TEST(ZkLive, TheClockShimMovesZooKeeperCtimeOnly) {
  SKIP_WITHOUT_ZOOKEEPER();
  const std::unique_ptr<ZkEnsembleProcess> zk = start_standalone(true);
  ASSERT_NE(zk->clock(0), nullptr);
  ZkConnectionLive c(zk->hosts(), Duration::seconds(1));
  ASSERT_EQ(c.connect(), ZkError::kOk);
  const ZkCreateResult before = c.create("/before", "", {.ephemeral = true});
  ASSERT_EQ(before.error, ZkError::kOk);
  zk->clock(0)->jump(Duration::seconds(3600));
  const ZkCreateResult after = c.create("/after", "", {});
  ASSERT_EQ(after.error, ZkError::kOk);
  const int64_t moved_ms = after.stat.ctime_ms - before.stat.ctime_ms;
  EXPECT_GE(moved_ms, 3600 * 1000);
  EXPECT_LT(moved_ms, 3610 * 1000);
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));  // past the session timeout
  EXPECT_EQ(c.state(), ZkSessionState::kConnected);
  ZkConnectionLive other(zk->hosts(), Duration::seconds(1));
  ASSERT_EQ(other.connect(), ZkError::kOk);
  EXPECT_EQ(other.exists("/before", false).error, ZkError::kOk) << "the session lives on";
}

// Ctrl-C on a live ZooKeeper run: every JVM gone, the ensemble's folder
// removed (the parent-death signal alone would leave it in /tmp).
TEST(LocksimLive, CtrlCStopsTheEnsembleAndRemovesItsFolder) {
  SKIP_WITHOUT_ZOOKEEPER();
  testing::expect_ctrl_c_cleans_up(
      {"--algorithm", "zk-curator", "--zk-servers", "1", "--zk-tick", "100ms", "--session-timeout",
       "1s", "--duration", "120s", "--clients", "2"},
      "java", 1);
}

}  // namespace
}  // namespace locksim::live
