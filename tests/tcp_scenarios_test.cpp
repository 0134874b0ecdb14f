// The shipped scenarios of the network as TCP sees it: each gives
// its verdict for the reason its story names, and replays byte for byte.
#include <gtest/gtest.h>

#include <string>

#include "history/history_io.h"
#include "harness/run.h"
#include "harness/scenario.h"

namespace locksim::harness {
namespace {

const char* const kTcpScenarios[] = {"set-nx-lua-partition-late-grant",
                                     "redlock-partition-late-grant",
                                     "naive-setnx-partition-late-delete",
                                     "set-nx-lua-delay-spike",
                                     "redlock-delay-spike",
                                     "set-nx-lua-one-way-partition"};

SimRunReport run(const std::string& name) {
  return simulate_and_check(load_scenario(name).config);
}

TEST(TcpScenarios, ReplayIsByteIdentical) {
  for (const char* name : kTcpScenarios) {
    SCOPED_TRACE(name);
    const SimRunReport a = run(name);
    const SimRunReport b = run(name);
    EXPECT_EQ(history::to_jsonl(a.result.history), history::to_jsonl(b.result.history));
    EXPECT_EQ(history::to_edn(a.result.history), history::to_edn(b.result.history));
    EXPECT_EQ(history::held_to_json(a.result.history).dump(), history::held_to_json(b.result.history).dump());
  }
}

// The late grant: the overlap begins when the held OK finally arrives, after
// the heal, and its holder's acquire was invoked before the partition.
TEST(TcpScenarios, LateGrantOverlapStartsAfterTheHeal) {
  for (const char* name : {"set-nx-lua-partition-late-grant", "set-nx-lua-one-way-partition"}) {
    SCOPED_TRACE(name);
    const SimRunReport r = run(name);
    ASSERT_EQ(r.result.mutex.kind, checkers::Verdict::Kind::kInvalid);
    ASSERT_FALSE(r.result.mutex.overlaps.empty());
    const checkers::Overlap& o = r.result.mutex.overlaps.front();
    const TimePoint heal =
        TimePoint{} + Duration::millis(160) +
        (std::string(name).find("one-way") != std::string::npos ? Duration::seconds(15)
                                                                : Duration::seconds(20));
    EXPECT_GE(o.window_start, heal);  // the late grant overlaps only after the heal
    EXPECT_NE(r.result.mutex.explanation.find("so both held it in"), std::string::npos)
        << r.result.mutex.explanation;
  }
}

// The delay spike: 6 s on the replies, more than the 5 s TTL, no partition.
TEST(TcpScenarios, DelaySpikeGrantArrivesAfterTheTtl) {
  const SimRunReport r = run("set-nx-lua-delay-spike");
  ASSERT_EQ(r.result.mutex.kind, checkers::Verdict::Kind::kInvalid);
  const checkers::Overlap& o = r.result.mutex.overlaps.front();
  EXPECT_GE(o.window_start, TimePoint{} + Duration::seconds(6));
  EXPECT_EQ(r.output.messages_dropped, 0u);  // nothing lost, only late
}

// Redlock rejects the same late grants: every acquisition it reports came
// after the fault, with time left.
TEST(TcpScenarios, RedlockRejectsTheLateGrant) {
  for (const char* name : {"redlock-partition-late-grant", "redlock-delay-spike"}) {
    SCOPED_TRACE(name);
    const SimRunReport r = run(name);
    EXPECT_EQ(r.result.mutex.kind, checkers::Verdict::Kind::kValid) << r.result.mutex.explanation;
    EXPECT_GT(r.result.acquisitions, 5);
  }
}

}  // namespace
}  // namespace locksim::harness
