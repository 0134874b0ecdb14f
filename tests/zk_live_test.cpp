// zk-curator live: three threads run the lock workload for a few seconds of
// real time against a real three-server ZooKeeper ensemble started here, and
// no two of them may believe they hold the lock at once. Every JVM started is
// killed when the test ends, however it ends.
//
// Skips (with a message) when zookeeper is not installed, except when
// CI=true: then it fails.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "algorithms/zk_lock.h"
#include "history/history.h"
#include "live/zk_live_env.h"
#include "live/zk_process.h"
#include "harness/workload.h"
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
