// The deterministic world: time, randomness, fibers, nodes, network.
#include <gtest/gtest.h>

#include <functional>
#include <limits>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "sim/clock.h"
#include "sim/event_queue.h"
#include "sim/network.h"
#include "sim/node.h"
#include "sim/rng.h"
#include "sim/rpc.h"
#include "sim/world.h"

namespace locksim::sim {
namespace {

TEST(EventQueue, OrdersByTimeThenInsertion) {
  EventQueue q;
  std::vector<int> order;
  q.push(TimePoint{5}, [&] { order.push_back(1); });
  q.push(TimePoint{3}, [&] { order.push_back(2); });
  q.push(TimePoint{5}, [&] { order.push_back(3); });
  q.push(TimePoint{3}, [&] { order.push_back(4); });
  while (!q.empty()) q.pop().action();
  EXPECT_EQ(order, (std::vector<int>{2, 4, 1, 3}));
  EXPECT_FALSE(q.pop_due(TimePoint{100}).has_value());  // empty: nothing is due
}

// The queue against a reference: random pushes (many at the same instant)
// interleaved with pops, and every event must leave in (time, push order),
// exactly once, whatever the heap's shape -- sizes that fill a node's two
// children partly and wholly, and slots reused after pops. With `lanes`, a
// third of the pushes are fixed-duration timers (push_fixed at now + d, d
// one of six durations: four get lanes, two fall back to the heap), and the
// order must be the same as if every event had gone to the heap.
void pops_in_time_then_push_order(bool lanes) {
  Rng r(5);
  EventQueue q;
  std::set<std::pair<int64_t, int>> pending;  // (time, push number)
  std::vector<int> ran;
  int pushed = 0;
  int64_t now = 0;
  for (int step = 0; step < 200'000; ++step) {
    if (pending.empty() || r.below(100) < 52) {
      const int id = pushed++;
      if (lanes && r.below(3) == 0) {
        const Duration fixed = Duration::nanos(static_cast<int64_t>(r.below(6)) * 7);
        q.push_fixed(TimePoint{now} + fixed, fixed, [&ran, id] { ran.push_back(id); });
        pending.emplace(now + fixed.ns, id);
        continue;
      }
      const int64_t at = now + r.between(0, 40);  // narrow: ties are common
      q.push(TimePoint{at}, [&ran, id] { ran.push_back(id); });
      pending.emplace(at, id);
      continue;
    }
    ASSERT_EQ(q.size(), pending.size());
    ASSERT_EQ(q.next_time().ns, pending.begin()->first);
    const auto expected = *pending.begin();
    // Half the time through pop_due(end): nothing while the earliest is
    // after `end` (and nothing taken), else the same event pop() gives.
    const int64_t end = now + r.between(0, 40);
    std::optional<EventQueue::Event> due;
    if (r.below(2) == 0) {
      due = q.pop_due(TimePoint{end});
      ASSERT_EQ(due.has_value(), expected.first <= end);
      if (!due) {
        ASSERT_EQ(q.size(), pending.size());
        continue;
      }
    }
    EventQueue::Event e = due ? std::move(*due) : q.pop();
    pending.erase(pending.begin());
    ASSERT_EQ(e.at.ns, expected.first);
    e.action();
    ASSERT_EQ(ran.back(), expected.second);
    now = e.at.ns;
  }
  while (!q.empty()) {
    EventQueue::Event e = q.pop();
    e.action();
    ASSERT_EQ(ran.back(), pending.begin()->second);
    pending.erase(pending.begin());
  }
  EXPECT_TRUE(pending.empty());
  EXPECT_EQ(ran.size(), static_cast<size_t>(pushed));
}

TEST(EventQueue, PopsInTimeThenPushOrderAgainstAReference) {
  pops_in_time_then_push_order(false);
}

TEST(EventQueue, FixedDurationLanesKeepTheSameOrder) {
  pops_in_time_then_push_order(true);
}

TEST(Rng, SameSeedSameStreamAndKnownFirstWords) {
  Rng a(42), b(42), c(43);
  std::vector<uint64_t> wa, wb, wc;
  for (int i = 0; i < 8; ++i) {
    wa.push_back(a.next());
    wb.push_back(b.next());
    wc.push_back(c.next());
  }
  EXPECT_EQ(wa, wb);
  EXPECT_NE(wa, wc);
  // Pinned: a change to the generator silently changes every replay.
  Rng pinned(0);
  EXPECT_EQ(pinned.next(), 0x99ec5f36cb75f2b4ULL);
}

TEST(Rng, BoundedMappingsStayInRangeAndCoverIt) {
  Rng r(7);
  std::set<int64_t> seen;
  for (int i = 0; i < 10000; ++i) {
    const int64_t v = r.between(-3, 3);
    ASSERT_GE(v, -3);
    ASSERT_LE(v, 3);
    seen.insert(v);
    const Duration d = r.uniform_duration(Duration::millis(50), Duration::millis(150));
    ASSERT_GE(d, Duration::millis(50));
    ASSERT_LE(d, Duration::millis(150));
    ASSERT_GE(r.exponential(Duration::millis(1)), Duration::zero());
  }
  EXPECT_EQ(seen.size(), 7u);
}

TEST(Rng, SplitStreamsAreIndependentOfEachOthersUse) {
  Rng root1(9), root2(9);
  Rng x1 = root1.split("x"), y1 = root1.split("y");
  Rng x2 = root2.split("x"), y2 = root2.split("y");
  for (int i = 0; i < 100; ++i) x1.next();  // heavy use of x1 must not move y1
  EXPECT_EQ(y1.next(), y2.next());
  EXPECT_NE(x2.next(), y2.next());
}

TEST(LocalClock, DriftAndJumpsArePiecewiseExact) {
  LocalClock c(Duration::seconds(1));
  const TimePoint t0{};
  EXPECT_EQ(c.local(t0), kLocalEpoch + Duration::seconds(1));
  c.set_drift(t0, 50'000);  // +5%
  EXPECT_EQ(c.local(t0 + Duration::seconds(10)) - c.local(t0), Duration::millis(10'500));
  c.jump(t0 + Duration::seconds(10), Duration::seconds(20));
  EXPECT_EQ(c.local(t0 + Duration::seconds(10)),
            kLocalEpoch + Duration::seconds(1) + Duration::millis(10'500) + Duration::seconds(20));
  c.jump(t0 + Duration::seconds(10), -Duration::seconds(30));  // backwards
  EXPECT_LT(c.local(t0 + Duration::seconds(10)), kLocalEpoch + Duration::seconds(2));
}

// The first nanosecond whose reading reaches the target, whatever the drift
// and after a step; at once when the clock already reads past it.
TEST(LocalClock, TrueWhenIsTheFirstNanosecondThatReadsTheTarget) {
  for (int64_t ppm : {0, 50'000, -30'000, 999, -999'000}) {
    LocalClock c(Duration::millis(7));
    const TimePoint t0 = TimePoint{} + Duration::seconds(1);
    c.set_drift(t0, ppm);
    c.jump(t0 + Duration::millis(3), -Duration::millis(40));
    const TimePoint now = t0 + Duration::millis(5);
    // The last is 10 hours ahead: its product takes true_when's 128-bit path.
    for (int64_t ahead_ns : {1LL, 999'999LL, 2'000'000'001LL, 36'000'000'000'000LL}) {
      const TimePoint target = c.local(now) + Duration::nanos(ahead_ns);
      const TimePoint t = c.true_when(target, now);
      EXPECT_GE(c.local(t), target) << ppm << " " << ahead_ns;
      EXPECT_LT(c.local(t - Duration::nanos(1)), target) << ppm << " " << ahead_ns;
    }
    EXPECT_EQ(c.true_when(c.local(now) - Duration::millis(1), now), now);
  }
}

// mul_div is the 128-bit product's quotient whether or not the product fits
// in 64 bits: at the edges, and over seeded draws of every magnitude.
TEST(Time, MulDivIsTheExactQuotientOfTheWideProduct) {
  const auto wide = [](int64_t a, int64_t b, int64_t c) {
    return static_cast<int64_t>(static_cast<Int128>(a) * b / c);
  };
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  const int64_t edges[][3] = {{0, 5, 7},
                              {kMax, 999'999, 1'000'000},
                              {kMax, -999'999, 1'000'000},
                              {kMax / 1'000'000, 1'000'000, 3},
                              {kMax / 1'000'000 + 1, 1'000'000, 1'000'000},
                              {-7, 3, 2}};
  for (const auto& e : edges) EXPECT_EQ(mul_div(e[0], e[1], e[2]), wide(e[0], e[1], e[2]));
  Rng rng(30);
  for (int i = 0; i < 20'000; ++i) {
    // a: any magnitude up to 2^62 ns; b: a drift's range or a rate's; c: 1e6.
    const int64_t a = rng.between(0, int64_t{1} << rng.between(1, 62));
    const int64_t b = rng.between(-999'999, 1'999'999);
    ASSERT_EQ(mul_div(a, b, 1'000'000), wide(a, b, 1'000'000)) << a << " " << b;
  }
}

// A drifting clock read far past its last change (its product no longer
// fits in 64 bits) reads the line exactly.
TEST(LocalClock, ALongDriftReadsTheExactLine) {
  for (int64_t ppm : {999'999, -999'999, 30'001, -1}) {
    LocalClock c;
    c.set_drift(TimePoint{}, ppm);
    for (int64_t hours : {1, 3, 1'000}) {
      const int64_t ns = hours * 3'600 * int64_t{1'000'000'000};
      const int64_t skew = static_cast<int64_t>(static_cast<Int128>(ns) * ppm / 1'000'000);
      EXPECT_EQ(c.local(TimePoint{ns}), kLocalEpoch + Duration::nanos(ns + skew)) << ppm;
    }
  }
}

// Three fibers sleep different amounts in a loop; the log of (time, who) is
// the interleaving.
std::vector<std::string> interleaving(uint64_t seed) {
  std::vector<std::string> log;
  World w(WorldOptions{.seed = seed});
  for (int f = 0; f < 3; ++f) {
    w.spawn("f" + std::to_string(f), nullptr, [&w, &log, f] {
      for (int i = 0; i < 20; ++i) {
        log.push_back(std::to_string(w.now().ns) + ":" + std::to_string(f));
        w.sleep(Duration::millis(i % 3 == f ? 0 : 1));
      }
    });
  }
  w.run_until(TimePoint{} + Duration::seconds(1));
  return log;
}

TEST(World, InterleavingIsAFunctionOfTheSeed) {
  EXPECT_EQ(interleaving(1), interleaving(1));
  EXPECT_EQ(interleaving(2), interleaving(2));
  // Fibers woken at the same instant are picked by a seeded draw.
  std::set<std::vector<std::string>> distinct;
  for (uint64_t s = 1; s <= 8; ++s) distinct.insert(interleaving(s));
  EXPECT_GT(distinct.size(), 1u);
}

TEST(World, SleepAdvancesVirtualTimeOnly) {
  World w(WorldOptions{});
  TimePoint woke{};
  w.spawn("sleeper", nullptr, [&] {
    w.sleep(Duration::seconds(3600));
    woke = w.now();
  });
  w.run_until(TimePoint{} + Duration::seconds(7200));
  EXPECT_EQ(woke, TimePoint{} + Duration::seconds(3600));
  EXPECT_EQ(w.now(), TimePoint{} + Duration::seconds(7200));
}

// run_until stops at `end` and, separately, at the event limit: the limit
// is an error only when an event due by `end` would have run past it.
TEST(World, RunUntilStopsAtTheEndAndAtTheEventLimit) {
  WorldOptions o;
  o.max_events = 3;
  World w(o);
  int ran = 0;
  for (int i = 1; i <= 5; ++i) w.at(TimePoint{i * 10}, [&ran] { ++ran; });
  w.run_until(TimePoint{25});  // events at 10 and 20
  EXPECT_EQ(ran, 2);
  EXPECT_EQ(w.now(), TimePoint{25});
  w.run_until(TimePoint{30});  // the third, exactly at `end`
  EXPECT_EQ(ran, 3);
  EXPECT_TRUE(w.errors().empty());
  w.run_until(TimePoint{35});  // the limit is reached, but nothing is due yet
  EXPECT_TRUE(w.errors().empty());
  w.run_until(TimePoint{100});  // the fourth would pass the limit
  EXPECT_EQ(ran, 3);
  EXPECT_EQ(w.events_executed(), 3u);
  ASSERT_EQ(w.errors().size(), 1u);
  EXPECT_NE(w.errors()[0].find("event limit reached (3 events)"), std::string::npos);
}

// A schedule that stops virtual time (an event that reschedules itself at
// the same instant: a client looping over a zero-latency network) ends with
// an error instead of running, and growing its history, forever. Events that
// move time on, however many, never trip it.
TEST(World, RunUntilStopsWhenVirtualTimeStops) {
  {
    World w{WorldOptions{}};  // one World on a thread at a time
    uint64_t ran = 0;
    std::function<void()> again = [&] {
      ++ran;
      w.at(w.now(), again);
    };
    w.at(TimePoint{5'000'000}, again);
    w.run_until(TimePoint{} + Duration::seconds(1));
    ASSERT_EQ(w.errors().size(), 1u);
    EXPECT_NE(w.errors()[0].find("virtual time stopped at 5 ms: 1000000 events in a row"),
              std::string::npos)
        << w.errors()[0];
    EXPECT_EQ(ran, 1'000'000u);
  }
  // Pair: two million events a nanosecond apart run to the end.
  World moving{WorldOptions{}};
  uint64_t moved = 0;
  std::function<void()> tick = [&] {
    if (++moved < 2'000'000) moving.at(moving.now() + Duration::nanos(1), tick);
  };
  moving.at(TimePoint{1}, tick);
  moving.run_until(TimePoint{} + Duration::seconds(1));
  EXPECT_TRUE(moving.errors().empty());
  EXPECT_EQ(moved, 2'000'000u);
}

TEST(World, ShutdownCancelsBlockedFibersAndRunsTheirDestructors) {
  int destroyed = 0;
  struct Guard {
    int* n;
    ~Guard() { ++*n; }
  };
  {
    World w(WorldOptions{});
    for (int i = 0; i < 4; ++i) {
      w.spawn("blocked", nullptr, [&] {
        Guard g{&destroyed};
        Waiter never;
        w.block(never);  // nobody will ever signal it
        ADD_FAILURE() << "a cancelled fiber must not return from block()";
      });
    }
    w.run_until(TimePoint{} + Duration::seconds(1));
    EXPECT_EQ(destroyed, 0);
  }
  EXPECT_EQ(destroyed, 4);
}

TEST(World, ExceptionInAFiberIsRecordedNotTerminate) {
  World w(WorldOptions{});
  w.spawn("thrower", nullptr, [&] {
    w.sleep(Duration::millis(1));
    throw std::runtime_error("boom");
  });
  bool other_ran = false;
  w.spawn("other", nullptr, [&] {
    w.sleep(Duration::millis(2));
    other_ran = true;
  });
  w.run_until(TimePoint{} + Duration::seconds(1));
  ASSERT_EQ(w.errors().size(), 1u);
  EXPECT_EQ(w.errors()[0], "thrower: boom");
  EXPECT_TRUE(other_ran);
}

TEST(Node, PauseFreezesFibersButNotTheClock) {
  World w(WorldOptions{});
  Node n(w, "c1");
  TimePoint woke{};
  TimePoint local_at_wake{};
  w.spawn("c1", &n, [&] {
    w.sleep(Duration::seconds(1));
    woke = w.now();
    local_at_wake = n.local_now();
  });
  w.at(TimePoint{} + Duration::millis(500), [&] { n.pause(); });
  w.at(TimePoint{} + Duration::seconds(13), [&] { n.resume(); });
  w.run_until(TimePoint{} + Duration::seconds(20));
  EXPECT_EQ(woke, TimePoint{} + Duration::seconds(13));  // woke only at resume
  EXPECT_EQ(local_at_wake, kLocalEpoch + Duration::seconds(13));
}

TEST(Node, CrashCancelsItsFibersOnly) {
  World w(WorldOptions{});
  Node a(w, "a"), b(w, "b");
  int a_steps = 0, b_steps = 0;
  bool crashed_hook = false;
  a.on_crash = [&] { crashed_hook = true; };
  w.spawn("a", &a, [&] {
    for (int i = 0; i < 100; ++i, ++a_steps) w.sleep(Duration::millis(10));
  });
  w.spawn("b", &b, [&] {
    for (int i = 0; i < 100; ++i, ++b_steps) w.sleep(Duration::millis(10));
  });
  w.at(TimePoint{} + Duration::millis(205), [&] { a.crash(); });
  w.run_until(TimePoint{} + Duration::seconds(5));
  EXPECT_TRUE(crashed_hook);
  EXPECT_EQ(a_steps, 20);
  EXPECT_EQ(b_steps, 100);
}

TEST(Node, TransitionsFollowTheTable) {
  using S = Node::State;
  EXPECT_TRUE(Node::transition_allowed(S::kRunning, S::kPaused));
  EXPECT_TRUE(Node::transition_allowed(S::kPaused, S::kRunning));
  EXPECT_TRUE(Node::transition_allowed(S::kRunning, S::kCrashed));
  EXPECT_TRUE(Node::transition_allowed(S::kPaused, S::kCrashed));
  EXPECT_TRUE(Node::transition_allowed(S::kCrashed, S::kRunning));
  EXPECT_FALSE(Node::transition_allowed(S::kCrashed, S::kPaused));
  for (S s : {S::kRunning, S::kPaused, S::kCrashed}) EXPECT_FALSE(Node::transition_allowed(s, s));
}

// A fault schedule may overlap two faults on one node; a request that means
// nothing in the node's state changes nothing (and trips no invariant).
TEST(Node, RequestsThatMeanNothingAreIgnored) {
  World w(WorldOptions{});
  Node n(w, "c1");
  n.resume();
  n.restart();
  EXPECT_TRUE(n.running());
  n.pause();
  n.pause();
  n.restart();
  EXPECT_TRUE(n.paused());
  n.crash();
  n.pause();
  n.resume();
  n.crash();
  EXPECT_TRUE(n.crashed());
  n.restart();
  EXPECT_TRUE(n.running());
}

TEST(Network, EveryMessageIsDroppedInFlightOrArrived) {
  World w(WorldOptions{});
  Network net(w, Rng(3));
  net.set_default_link(LinkParams{.latency_base = Duration::millis(5),
                                  .latency_jitter_mean = Duration::millis(5),
                                  .loss_probability = 0.2});
  Node a(w, "a"), b(w, "b");
  int handled = 0;
  for (int i = 0; i < 100; ++i) {
    w.at(TimePoint{} + Duration::millis(i), [&] { net.send(a, b, [&] { ++handled; }); });
  }
  w.at(TimePoint{} + Duration::millis(50), [&] { net.partition({&a}, {&b}); });
  w.at(TimePoint{} + Duration::millis(60), [&] { net.heal(); });
  w.run_until(TimePoint{} + Duration::millis(30));
  EXPECT_GT(net.in_flight(), 0u);
  EXPECT_EQ(net.sent(), net.dropped() + net.in_flight() + net.arrived());
  w.run_until(TimePoint{} + Duration::seconds(10));
  EXPECT_EQ(net.sent(), 100u);
  EXPECT_EQ(net.in_flight(), 0u);
  EXPECT_EQ(net.arrived(), static_cast<uint64_t>(handled));
  // TCP: the loss and the partition delay messages, they never drop them.
  EXPECT_EQ(net.dropped(), 0u);
  EXPECT_EQ(net.arrived(), 100u);
}

TEST(Network, RpcAcrossAPartitionWaitsForTheHeal) {
  World w(WorldOptions{});
  Network net(w, Rng(1));
  Node client(w, "c1"), server(w, "s1");
  int handled = 0;
  std::vector<std::optional<int>> replies;
  TimePoint second_at{};
  w.spawn("c1", &client, [&] {
    Connection conn(net, client, server);
    for (int i = 0; i < 3; ++i) {
      replies.push_back(call<int>(
                            w, conn, [&] { return ++handled; }, kNoTimeout)
                            .reply);
      if (i == 1) second_at = w.now();
      w.sleep(Duration::seconds(1));
    }
  });
  w.at(TimePoint{} + Duration::millis(900), [&] { net.partition({&client}, {&server}); });
  w.at(TimePoint{} + Duration::millis(1500), [&] { net.heal(); });
  w.run_until(TimePoint{} + Duration::seconds(10));
  ASSERT_EQ(replies.size(), 3u);
  EXPECT_EQ(replies[0], 1);
  EXPECT_EQ(replies[1], 2);  // sent at ~1.0 s, inside the partition: held, then served
  EXPECT_GE(second_at, TimePoint{} + Duration::millis(1500));
  EXPECT_EQ(replies[2], 3);
  EXPECT_EQ(handled, 3);
}

TEST(Network, PausedServerQueuesRequestsAndRepliesLate) {
  World w(WorldOptions{});
  Network net(w, Rng(1));
  Node client(w, "c1"), server(w, "s1");
  std::optional<CallOutcome> outcome;
  TimePoint handled_at{};
  w.spawn("c1", &client, [&] {
    Connection conn(net, client, server);
    outcome = call<int>(
                  w, conn,
                  [&] {
                    handled_at = w.now();
                    return 7;
                  },
                  Duration::millis(100))
                  .outcome;
  });
  w.at(TimePoint{}, [&] { server.pause(); });
  w.at(TimePoint{} + Duration::seconds(2), [&] { server.resume(); });
  w.run_until(TimePoint{} + Duration::seconds(5));
  EXPECT_EQ(outcome, CallOutcome::kTimeout);                  // the client gave up at 100 ms...
  EXPECT_EQ(handled_at, TimePoint{} + Duration::seconds(2));  // ...but the server still did it
}

}  // namespace
}  // namespace locksim::sim
