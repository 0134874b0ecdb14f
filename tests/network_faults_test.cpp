// The network faults as data: `delay`, one-way `partition`,
// `loss`, their text and history values, bad input naming the field, the
// client-timeout rows, and the per-seed draw a partition profile calls.
#include <gtest/gtest.h>

#include <string>

#include "env/parse.h"
#include "faults/fault_schedule.h"
#include "faults/network_draw.h"
#include "history/history.h"
#include "harness/settings.h"
#include "sim/connection.h"

namespace locksim::faults {
namespace {

TEST(NetworkFaults, ParseAndDescribeRoundTrip) {
  for (const char* text :
       {"delay c1,c2|redis-1 at 5s for 2s by 12s", "partition redis-1->c1,c2 at 1s for 15s",
        "partition c1->redis-1 at 1s", "loss c1|redis-1,redis-2 at 3s 0.25 for 10s",
        "loss c1|redis-1 at 0s 1"}) {
    SCOPED_TRACE(text);
    const FaultEvent e = parse_fault(text, "--fault");
    EXPECT_EQ(e.describe(), text);
  }
  const FaultEvent d = parse_fault("delay c1|redis-1 at 5s for 2s by 12s", "--fault");
  EXPECT_EQ(d.kind, FaultKind::kDelay);
  EXPECT_EQ(d.delay, Duration::seconds(12));
  EXPECT_EQ(d.duration, Duration::seconds(2));
  const FaultEvent p = parse_fault("partition redis-1->c1 at 1s for 15s", "--fault");
  EXPECT_TRUE(p.one_way);
  EXPECT_EQ(p.side_a, std::vector<std::string>{"redis-1"});
  EXPECT_EQ(p.side_b, std::vector<std::string>{"c1"});
}

TEST(NetworkFaults, HistoryValuesAndTheirText) {
  using history::describe_nemesis_op;
  using history::nemesis_op;
  const auto text = [](const FaultEvent& e) {
    return history::describe_nemesis_op(history::nemesis_op(to_string(e.kind), e.value(), ""));
  };
  EXPECT_EQ(text(parse_fault("delay c1|redis-1 at 5s for 2s by 12s", "f")),
            "delay c1|redis-1 for 2s by 12s");
  EXPECT_EQ(text(parse_fault("partition redis-1->c1 at 1s for 15s", "f")),
            "partition redis-1->c1 for 15s");
  EXPECT_EQ(text(parse_fault("partition c1|redis-1 at 1s for 15s", "f")),
            "partition c1|redis-1 for 15s");
  EXPECT_EQ(text(parse_fault("loss c1|redis-1 at 1s 0.5 for 3s", "f")),
            "loss c1|redis-1 0.5 for 3s");
}

TEST(NetworkFaults, BadInputNamesTheField) {
  for (const char* bad :
       {"delay c1|redis-1 at 5s for 2s", "delay c1|redis-1 at 5s for 2s by -1s",
        "delay c1|redis-1 at 5s for 0s by 1s", "delay c1 at 5s for 2s by 1s",
        "partition ->c1 at 1s", "partition c1-> at 1s", "partition c1,,c2|redis-1 at 1s",
        "loss c1|redis-1 at 1s", "loss c1|redis-1 at 1s 1.5", "loss c1|redis-1 at 1s nan",
        "loss c1|redis-1 at 1s 0.5 for", "loss c1->redis-1 at 1s 0.5"}) {
    SCOPED_TRACE(bad);
    try {
      parse_fault(bad, "scenario.json: faults[3]");
      ADD_FAILURE() << "accepted";
    } catch (const ConfigError& e) {
      EXPECT_EQ(std::string(e.what()).rfind("scenario.json: faults[3]: expected", 0), 0u)
          << e.what();
    }
  }
}

TEST(NetworkFaults, TimeoutRowsTakeNoneOrAPositiveDuration) {
  for (const char* flag : {"--timeout", "--mysql-timeout"}) {
    SCOPED_TRACE(flag);
    const harness::Setting& row = *harness::find_setting_by_flag(flag);
    harness::RunConfig c;
    row.parse(c, "none", flag);
    EXPECT_EQ(row.format(c), "none");
    row.parse(c, "3s", flag);
    EXPECT_EQ(row.format(c), "3s");
    for (const char* bad : {"0s", "-1s", "never", "5", ""}) {
      try {
        row.parse(c, bad, flag);
        ADD_FAILURE() << "accepted " << bad;
      } catch (const ConfigError& e) {
        EXPECT_EQ(std::string(e.what()).rfind(std::string(flag) + ": expected none or", 0), 0u)
            << e.what();
      }
    }
  }
}

TEST(NetworkDraw, DrawsReadableSchedulesWithNoneAmongTheTimeouts) {
  NetworkDrawInput in;
  in.clients = {"c1", "c2", "c3"};
  in.servers = {"redis-1", "redis-2", "redis-3", "redis-4", "redis-5"};
  in.ttl = Duration::seconds(10);
  bool none = false, one_way = false, delay = false, past_ttl = false;
  for (uint64_t seed = 1; seed <= 200; ++seed) {
    sim::Rng rng(seed);
    const NetworkDraw d = draw_network_faults(rng, in);
    sim::Rng again(seed);
    EXPECT_EQ(draw_network_faults(again, in).events.size(), d.events.size());
    ASSERT_FALSE(d.events.empty());
    none |= d.client_timeout == sim::kNoTimeout;
    for (const FaultEvent& e : d.events) {
      // Early enough that the fault and the late delivery after it (about
      // as long again) end inside the run; where nothing fits, in the first half.
      const Duration length = e.kind == FaultKind::kDelay ? e.duration + e.delay : e.duration;
      EXPECT_TRUE(e.at + length * 2 <= in.run_length - in.run_length / 10 ||
                  e.at <= in.run_length / 2)
          << e.describe();
      one_way |= e.one_way;
      delay |= e.kind == FaultKind::kDelay;
      past_ttl |= e.kind == FaultKind::kPartition && e.duration > in.ttl;
    }
  }
  EXPECT_TRUE(none && one_way && delay && past_ttl);
}

}  // namespace
}  // namespace locksim::faults
