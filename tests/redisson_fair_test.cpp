// Redisson's fair lock (algorithms/redisson_fair_lock.h) in whole simulated
// runs: without faults waiters are granted in the order they asked; a
// waiter whose clock jumped ahead purges the live waiter ahead of it and
// takes the lock out of turn; a waiter whose clock is far ahead and then
// crashes leaves its entry at the queue's head, and nobody gets the free
// lock until every clock passes that entry's timeout.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "faults/fault_schedule.h"
#include "harness/run.h"

namespace locksim::harness {
namespace {

using history::Op;
using history::OpF;
using history::OpType;

constexpr auto kValid = checkers::Verdict::Kind::kValid;
constexpr auto kInvalid = checkers::Verdict::Kind::kInvalid;

// Long enough that no waiter gives up (and rejoins at the tail) in these
// runs: 1000 polls of 50-150 ms.
RunConfig fair_run(int clients, Duration hold_min, Duration hold_max, Duration duration) {
  RunConfig c;
  c.algorithm = "redisson-fair";
  c.algorithm_params["max-attempts"] = "1000";
  c.seed = 3;
  c.duration = duration;
  c.workload.clients = clients;
  c.workload.hold_min = hold_min;
  c.workload.hold_max = hold_max;
  return c;
}

void add_fault(RunConfig& c, const std::string& text) {
  c.faults.events.push_back(faults::parse_fault(text, "f"));
}

// The clients granted the lock, in order.
std::vector<int> grants(const RunResult& r) {
  std::vector<int> out;
  for (const Op& op : r.history.ops) {
    if (history::is_client_op(op) && op.f == OpF::kAcquire && op.type == OpType::kOk)
      out.push_back(op.client);
  }
  return out;
}

// Grants that went to a client while another had been waiting longer, by
// more than `slack` (two acquires begun within it may reach Redis in either
// order).
int overtakes(const RunResult& r, Duration slack) {
  std::map<int, int64_t> waiting_since;  // client -> its pending acquire's invoke time
  int count = 0;
  for (const Op& op : r.history.ops) {
    if (!history::is_client_op(op) || op.f != OpF::kAcquire) continue;
    if (op.type == OpType::kInvoke) {
      waiting_since[op.client] = op.time_ns;
      continue;
    }
    const int64_t mine = waiting_since.at(op.client);
    waiting_since.erase(op.client);
    if (op.type != OpType::kOk) continue;
    for (const auto& [client, since] : waiting_since) count += since + slack.ns < mine;
  }
  return count;
}

std::string label(int client) {
  return history::client_label(client);
}

TEST(RedissonFair, WaitersAreGrantedInTheOrderTheyAsked) {
  const RunConfig c =
      fair_run(4, Duration::seconds(1), Duration::seconds(3), Duration::seconds(60));
  const RunResult fair = simulate_and_check(c).result;
  EXPECT_EQ(fair.mutex.kind, kValid) << fair.mutex.explanation;
  EXPECT_EQ(fair.liveness.kind, kValid) << fair.liveness.explanation;
  EXPECT_GE(fair.acquisitions, 20);
  EXPECT_EQ(fair.acquire_fail, 0) << "nobody gave up";
  EXPECT_EQ(overtakes(fair, Duration::millis(20)), 0);
  // RLock's waiters race for the lock at each release: the order is luck.
  RunConfig rlock = c;
  rlock.algorithm = "redisson";
  EXPECT_GT(overtakes(simulate_and_check(rlock).result, Duration::millis(20)), 0);
}

// Three clients holding 10 s each: the first holder h, then the head waiter
// a (queued at ~0 s with a timeout of ~0 s + the holder's PTTL + 5 min) and
// b behind it (a's timeout + 5 min). b's clock jumps 6 min ahead at 5 s:
// past a's timeout, not past its own. b's next poll purges a, a live
// waiter, and b is granted at h's release.
TEST(RedissonFair, AWaiterWhoseClockJumpedPurgesTheLiveWaiterAheadAndGoesFirst) {
  RunConfig c = fair_run(3, Duration::seconds(10), Duration::seconds(10), Duration::seconds(60));
  const std::vector<int> plain = grants(simulate_and_check(c).result);
  ASSERT_GE(plain.size(), 3u);
  const int h = plain[0];
  const int a = plain[1];
  const int b = plain[2];
  ASSERT_TRUE(h != a && a != b && b != h);

  add_fault(c, "jump " + label(b) + " at 5s +6m");
  const RunResult skewed = simulate_and_check(c).result;
  const std::vector<int> order = grants(skewed);
  ASSERT_GE(order.size(), 3u);
  EXPECT_EQ(order[0], h);
  EXPECT_EQ(order[1], b) << "b went ahead of a";
  EXPECT_EQ(order[2], a) << "a rejoined behind b";
  // Out of turn, never two at once: the checkers see nothing.
  EXPECT_EQ(skewed.mutex.kind, kValid) << skewed.mutex.explanation;
  EXPECT_EQ(skewed.liveness.kind, kValid) << skewed.liveness.explanation;
}

// Two clients holding 10 s; w's clock is 20 min ahead from the start, so it
// queues with a timeout of 20 min + the holder's PTTL (~30 s) + 5 min on the
// true clock, and crashes at 2 s. Its entry stays at the head: after h's
// release at ~10 s the lock is free, but h, with a correct clock, queues
// behind the dead entry until the true time passes its timeout, ~25.5 min.
TEST(RedissonFair, ADeadWaiterWithAClockAheadStallsTheQueueForTheWaitTimeAndItsLead) {
  RunConfig c = fair_run(2, Duration::seconds(10), Duration::seconds(10), Duration::seconds(1700));
  const std::vector<int> plain = grants(simulate_and_check(c).result);
  ASSERT_GE(plain.size(), 2u);
  const int h = plain[0];
  const int w = plain[1];
  add_fault(c, "jump " + label(w) + " at 0s +20m");
  add_fault(c, "crash " + label(w) + " at 2s");

  const RunResult stalled = simulate_and_check(c).result;
  EXPECT_EQ(stalled.mutex.kind, kValid) << stalled.mutex.explanation;
  const auto& held = stalled.history.held;
  ASSERT_GE(held.size(), 2u) << "h's first hold, then one after the stall";
  EXPECT_EQ(held[0].client, h);
  EXPECT_EQ(held[1].client, h);
  const Duration stall = held[1].start - held[0].end;
  // The dead entry's timeout: lead (20 min) + wait time (5 min) + the PTTL
  // it joined behind (< 30 s), counted from its join (~0 s); h released at
  // ~10 s.
  EXPECT_GE(stall, Duration::seconds(1200 + 300 - 10));
  EXPECT_LE(stall, Duration::seconds(1200 + 300 + 30));
  // Within a normal run's length, with acquires that give up after the
  // default 60 polls, that is a stuck lock.
  c.duration = Duration::seconds(120);
  c.algorithm_params.erase("max-attempts");
  const RunResult short_run = simulate_and_check(c).result;
  EXPECT_EQ(short_run.liveness.kind, kInvalid) << short_run.liveness.explanation;
  EXPECT_EQ(short_run.mutex.kind, kValid);
}

}  // namespace
}  // namespace locksim::harness
