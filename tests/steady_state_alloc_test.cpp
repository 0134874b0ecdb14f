// The engine allocates nothing per event, message, timer or RPC once a run is
// in its steady state (issue 30): events and messages keep their captures
// inline or in a pooled box (sim/callback.h), the event heap and a stream's ring keep their
// room, a sleep reuses its fiber's waiter, an RPC's shared state comes from
// its thread's pool (sim/local_shared.h). A regression here costs every run a
// malloc and a free per message, which no history would show; this test
// counts them instead of timing anything.
//
// This binary counts allocations with tests/counting_new.h's operator new.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>

#include "sim/connection.h"
#include "sim/network.h"
#include "sim/node.h"
#include "sim/rpc.h"
#include "sim/world.h"
#include "tests/counting_new.h"

namespace locksim::sim {
namespace {

// Warm-up rounds fill the pools and grow the heap, the rings and the
// scheduler's queues to their working size; the measured rounds after them
// must allocate nothing. An RPC's state lives until its timeout's event has
// run (a reply does not take the event out of the heap), so the warm-up
// outlasts the timeout: from then on, each round's state is one a past
// round gave back.
constexpr Duration kTimeout = Duration::millis(200);
constexpr int kWarmUpRounds = 200;  // 200 rounds of ~4 ms: 4 timeouts
constexpr int kMeasuredRounds = 2'000;

// Rounds of one client: an RPC (a request message, its handling, a reply
// message and the client's timeout timer, cancelled by the reply), a message
// too large to keep inline (a reply carrying its payload: boxed), then a
// sleep (a timer waking the fiber), while a second fiber ticks on timers of
// its own. Returns the allocations counted over the measured rounds.
uint64_t allocations_over_measured_rounds() {
  World w(WorldOptions{});
  Network net(w, Rng(7));
  Node client(w, "c1"), ticker(w, "t1"), server(w, "s1");
  uint64_t at_start = 0, at_end = 0;
  int replies = 0, ticks = 0, payloads = 0;
  w.spawn("c1", &client, [&] {
    Connection conn(net, client, server);
    for (int round = 0; round < kWarmUpRounds + kMeasuredRounds; ++round) {
      if (round == kWarmUpRounds) at_start = test_alloc::t_allocations;
      const CallResult<int> r = call<int>(
          w, conn, [round] { return round; }, kTimeout);
      if (r.reply == round) ++replies;
      std::array<int64_t, 16> payload{};
      payload.back() = round;
      static_assert(sizeof(payload) > Callback::kInlineBytes, "a message boxed, not inline");
      net.send(client, server, [payload, &payloads, round] {
        if (payload.back() == round) ++payloads;
      });
      w.sleep(Duration::millis(3));
    }
    at_end = test_alloc::t_allocations;
  });
  w.spawn("t1", &ticker, [&] {
    for (;;) {
      w.sleep(Duration::millis(2));
      ++ticks;
    }
  });
  w.run_until(TimePoint{} + Duration::seconds(60));
  w.shutdown();
  // Pair of the count: the rounds did happen, each with its reply.
  EXPECT_EQ(replies, kWarmUpRounds + kMeasuredRounds);
  EXPECT_EQ(payloads, kWarmUpRounds + kMeasuredRounds);
  EXPECT_GT(ticks, kMeasuredRounds);
  EXPECT_GT(at_end, 0u);
  return at_end - at_start;
}

TEST(SteadyState, RpcsMessagesAndTimersAllocateNothing) {
  EXPECT_EQ(allocations_over_measured_rounds(), 0u);
}

TEST(SteadyState, TheCounterSeesAnAllocation) {
  EXPECT_TRUE(test_alloc::counter_sees_an_allocation());
}

}  // namespace
}  // namespace locksim::sim
