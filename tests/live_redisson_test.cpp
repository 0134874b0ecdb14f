// Redisson's RLock live, against a real redis-server: its watchdog (a task
// of the client's process, a thread of its own live) renews a lease much
// shorter than every hold, so mutual exclusion holds only if the renewals
// really reach the server; with the same lease and no watchdog, it breaks.
// Its waiters sleep on the lock's channel over a second hiredis connection
// (live/hiredis_subscriber.h) and wake on the release's unlock message.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "algorithms/redisson_lock.h"
#include "checkers/mutex_checker.h"
#include "harness/workload.h"
#include "history/history.h"
#include "live/hiredis_connection.h"
#include "live/hiredis_subscriber.h"
#include "live/live_runner.h"
#include "live/redis_process.h"

namespace locksim::live {
namespace {

struct LiveOutcome {
  checkers::Verdict verdict;
  int64_t acquired = 0;
  bool key_left = true;
};

// Three clients hold 400-600 ms each for 3 s under a 300 ms lease.
LiveOutcome run_three_clients(const algorithms::RedissonLock::Params& lock) {
  std::unique_ptr<RedisProcess> server;
  try {
    server = RedisProcess::start();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "cannot start redis-server: " << e.what();
    return {};
  }
  algorithms::RedissonLock algorithm(lock);
  harness::WorkloadParams workload;
  workload.clients = 3;
  workload.hold_min = Duration::millis(400);
  workload.hold_max = Duration::millis(600);
  workload.retry_pause = Duration::millis(10);
  workload.resource = "locksim:live-redisson";
  std::vector<std::string> errors;
  LiveOptions options;
  options.errors = &errors;
  const history::History history = run_live(algorithm, workload, {{"127.0.0.1", server->port()}},
                                            Duration::seconds(3), /*seed=*/11, options);
  EXPECT_TRUE(errors.empty()) << errors.front();
  LiveOutcome out;
  out.verdict = checkers::check_mutex(history);
  for (const history::Op& op : history.ops) {
    out.acquired += op.f == history::OpF::kAcquire && op.type == history::OpType::kOk;
  }
  // The holder at the run's end does not release (the run ends there, as a
  // simulated one does), and its watchdog ends with its Env: the hash must
  // expire with its lease. Polled, bounded: the lease is 300 ms.
  HiredisConnection c("127.0.0.1", server->port(), Duration::seconds(1));
  for (int i = 0; i < 100 && out.key_left; ++i) {
    out.key_left = !c.command({"EXISTS", workload.resource}).is_integer(0);
    if (out.key_left) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return out;
}

algorithms::RedissonLock::Params short_lease() {
  algorithms::RedissonLock::Params p;
  p.watchdog_timeout = Duration::millis(300);  // renewed every 100 ms
  p.retry.max_attempts = 200;
  p.retry.retry_min = Duration::millis(5);
  p.retry.retry_max = Duration::millis(20);
  return p;
}

TEST(LiveRedisson, TheWatchdogRenewsOnARealServer) {
  const LiveOutcome out = run_three_clients(short_lease());
  EXPECT_EQ(out.verdict.kind, checkers::Verdict::Kind::kValid) << out.verdict.explanation;
  EXPECT_GE(out.acquired, 3);
  EXPECT_FALSE(out.key_left) << "every release deleted the hash, and the last lease expired";
}

TEST(LiveRedisson, TheSameLeaseWithoutTheWatchdogOverlaps) {
  algorithms::RedissonLock::Params p = short_lease();
  p.lease = p.watchdog_timeout;  // lock(leaseTime): nothing renews it
  const LiveOutcome out = run_three_clients(p);
  EXPECT_EQ(out.verdict.kind, checkers::Verdict::Kind::kInvalid)
      << "400-600 ms holds under a 300 ms lease nobody renews must overlap";
}

// The subscriber alone: a PUBLISH from another connection, and the one
// Redisson's release script makes, reach it; a wait without one times out.
TEST(LiveRedisson, TheSubscriberGetsTheUnlockMessage) {
  std::unique_ptr<RedisProcess> server = RedisProcess::start();
  HiredisConnection pub("127.0.0.1", server->port(), Duration::seconds(2));
  HiredisSubscriber sub("127.0.0.1", server->port(), Duration::seconds(2));
  const std::string channel = algorithms::RedissonLock::channel("lock");
  ASSERT_TRUE(sub.subscribe(channel));
  EXPECT_EQ(pub.command({"PUBLISH", channel, "0"}), Reply::integer_reply(1));
  EXPECT_EQ(sub.wait_message(channel, Duration::seconds(2)), "0");
  const auto before = std::chrono::steady_clock::now();
  EXPECT_EQ(sub.wait_message(channel, Duration::millis(200)), std::nullopt);
  EXPECT_GE(std::chrono::steady_clock::now() - before, std::chrono::milliseconds(200));
  ASSERT_EQ(pub.command({"HSET", "lock", "me", "1"}), Reply::integer_reply(1));
  const Reply released = pub.command({"EVAL", algorithms::RedissonLock::kReleaseScript, "3", "lock",
                                      channel, "latch", "0", "30000", "me", "30000"});
  EXPECT_EQ(released, Reply::integer_reply(1));
  EXPECT_EQ(sub.wait_message(channel, Duration::seconds(2)), "0") << "published by the script";
}

// Two clients under a 10 s lease, holding 200 ms with 100 ms idle between:
// a waiter woken only by the PTTL would get the lock about once in the run;
// woken by the message, the lock changes hands every hold.
TEST(LiveRedisson, AWaiterIsWokenByTheUnlockMessage) {
  std::unique_ptr<RedisProcess> server = RedisProcess::start();
  algorithms::RedissonLock::Params p;
  p.lease = Duration::seconds(10);
  algorithms::RedissonLock algorithm(p);
  harness::WorkloadParams workload;
  workload.clients = 2;
  workload.hold_min = workload.hold_max = Duration::millis(200);
  workload.idle_min = workload.idle_max = Duration::millis(100);
  workload.resource = "locksim:live-redisson-wait";
  std::vector<std::string> errors;
  LiveOptions options;
  options.errors = &errors;
  const history::History history = run_live(algorithm, workload, {{"127.0.0.1", server->port()}},
                                            Duration::seconds(3), /*seed=*/5, options);
  EXPECT_TRUE(errors.empty()) << errors.front();
  EXPECT_EQ(checkers::check_mutex(history).kind, checkers::Verdict::Kind::kValid);
  int64_t acquired = 0;
  int64_t released_ns = -1;
  for (const history::Op& op : history.ops) {
    if (op.f == history::OpF::kRelease && op.type == history::OpType::kOk) released_ns = op.time_ns;
    if (op.f != history::OpF::kAcquire || op.type != history::OpType::kOk) continue;
    ++acquired;
    if (released_ns >= 0) {
      EXPECT_LT(op.time_ns - released_ns, Duration::seconds(2).ns)
          << "woken by the PTTL, not the message";
    }
  }
  EXPECT_GE(acquired, 5);
}

}  // namespace
}  // namespace locksim::live
