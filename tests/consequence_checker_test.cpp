// The consequence checkers on hand-written store logs, and the store's
// fencing check as a step function.
#include <gtest/gtest.h>

#include <optional>
#include <vector>

#include "checkers/consequence_checker.h"
#include "sim/resource_store.h"

namespace locksim::harness {
namespace {

using Kind = ResourceRequest::Kind;

// One logged access; `after` defaults to `before`, or to `written` for an
// accepted write.
StoreAccess access(int64_t t_ms, int client, int64_t lease, std::optional<uint64_t> fence,
                        Kind kind, bool accepted, int64_t before, int64_t written = 0) {
  StoreAccess a;
  a.time_ns = t_ms * 1'000'000;
  a.client = client;
  a.lease_id = lease;
  a.fence = fence;
  a.kind = kind;
  a.accepted = accepted;
  a.value_before = before;
  a.written = kind == Kind::kWrite ? written : 0;
  a.value_after = accepted && kind == Kind::kWrite ? written : before;
  return a;
}

ResourceParams params(Workload w, Fencing f, int64_t items = 10) {
  ResourceParams p;
  p.workload = w;
  p.fencing = f;
  p.items = items;
  return p;
}

TEST(ConsequenceChecker, NoStoreIsValidAndInactive) {
  const checkers::ConsequenceVerdict v = checkers::check_consequences(ResourceParams{}, {});
  EXPECT_FALSE(v.active);
  EXPECT_EQ(v.kind, checkers::Verdict::Kind::kValid);
}

TEST(ConsequenceChecker, AnOlderLeasesWriteAfterANewerLeasesReadIsStale) {
  // Lease 2 (c1, token 1) reads, lease 9 (c2, token 2) reads, then lease 2
  // writes and is accepted: the write-check let a stale write through.
  const std::vector<StoreAccess> log = {
      access(10, 0, 2, 1, Kind::kRead, true, 0),
      access(20, 1, 9, 2, Kind::kRead, true, 0),
      access(30, 0, 2, 1, Kind::kWrite, true, 0, 1),
      access(40, 1, 9, 2, Kind::kWrite, true, 1, 1),
  };
  const checkers::ConsequenceVerdict v =
      checkers::check_consequences(params(Workload::kCounter, Fencing::kWriteCheck), log);
  EXPECT_EQ(v.kind, checkers::Verdict::Kind::kInvalid);
  ASSERT_EQ(v.stale_writes.size(), 1u);
  EXPECT_EQ(v.stale_writes[0].write.lease_id, 2);
  EXPECT_EQ(v.stale_writes[0].newer.lease_id, 9);
  EXPECT_EQ(v.stale_writes[0].newer.kind, Kind::kRead);
  // Two increments accepted, the counter says 1: one lost, by c2's write.
  EXPECT_EQ(v.lost_increments, 1);
  ASSERT_EQ(v.lost_updates.size(), 1u);
  EXPECT_EQ(v.lost_updates[0].write.client, 1);
  EXPECT_EQ(v.lost_updates[0].overwritten, 1);
  EXPECT_NE(v.explanation.find("Stale writes accepted: 1"), std::string::npos) << v.explanation;
  EXPECT_NE(v.explanation.find("Lost updates: 1 of 2"), std::string::npos) << v.explanation;
}

TEST(ConsequenceChecker, ARejectedStaleWriteIsNoFinding) {
  // The fenced register: the paused holder's write (token 1) is refused
  // after token 2 wrote.
  const std::vector<StoreAccess> log = {
      access(10, 1, 9, 2, Kind::kWrite, true, 0, 9),
      access(20, 0, 2, 1, Kind::kWrite, false, 9, 2),
  };
  const checkers::ConsequenceVerdict v =
      checkers::check_consequences(params(Workload::kRegister, Fencing::kWriteCheck), log);
  EXPECT_EQ(v.kind, checkers::Verdict::Kind::kValid) << v.explanation;
  EXPECT_EQ(v.rejected, 1);
  EXPECT_EQ(v.writes_accepted, 1);
  EXPECT_EQ(v.final_value, 9);
  EXPECT_NE(v.explanation.find("stayed consistent"), std::string::npos) << v.explanation;
}

TEST(ConsequenceChecker, SerialIncrementsLoseNothing) {
  std::vector<StoreAccess> log;
  for (int i = 0; i < 5; ++i) {
    log.push_back(access(10 * i, i % 2, 2 * i, i + 1, Kind::kRead, true, i));
    log.push_back(access(10 * i + 5, i % 2, 2 * i, i + 1, Kind::kWrite, true, i, i + 1));
  }
  const checkers::ConsequenceVerdict v =
      checkers::check_consequences(params(Workload::kCounter, Fencing::kNone), log);
  EXPECT_EQ(v.kind, checkers::Verdict::Kind::kValid) << v.explanation;
  EXPECT_EQ(v.final_value, 5);
  EXPECT_EQ(v.lost_increments, 0);
  EXPECT_TRUE(v.stale_writes.empty());
}

TEST(ConsequenceChecker, MoreSalesThanItemsIsAnOversell) {
  // Two items. c1 reads 2, c2 reads 2 and sells (2 -> 1), c1 sells (writes
  // 1 again), c3 reads 1 and sells (1 -> 0): three sales of two items.
  const std::vector<StoreAccess> log = {
      access(1, 0, 1, std::nullopt, Kind::kRead, true, 2),
      access(2, 1, 5, std::nullopt, Kind::kRead, true, 2),
      access(3, 1, 5, std::nullopt, Kind::kWrite, true, 2, 1),
      access(4, 0, 1, std::nullopt, Kind::kWrite, true, 1, 1),
      access(5, 2, 8, std::nullopt, Kind::kRead, true, 1),
      access(6, 2, 8, std::nullopt, Kind::kWrite, true, 1, 0),
  };
  const checkers::ConsequenceVerdict v =
      checkers::check_consequences(params(Workload::kInventory, Fencing::kNone, 2), log);
  EXPECT_EQ(v.kind, checkers::Verdict::Kind::kInvalid);
  EXPECT_EQ(v.sold, 3);
  EXPECT_EQ(v.oversold, 1);
  ASSERT_EQ(v.oversales.size(), 1u);
  EXPECT_EQ(v.oversales[0].client, 2);
  EXPECT_EQ(v.final_value, 0);
  EXPECT_NE(v.explanation.find("Oversold: 3 items sold of 2"), std::string::npos) << v.explanation;
  // c1's sale came after c2's access, with an older lease: stale too.
  ASSERT_EQ(v.stale_writes.size(), 1u);
  EXPECT_EQ(v.stale_writes[0].write.client, 0);
}

TEST(ConsequenceChecker, SellingOutExactlyIsNoOversell) {
  const std::vector<StoreAccess> log = {
      access(1, 0, 1, 1, Kind::kRead, true, 1),
      access(2, 0, 1, 1, Kind::kWrite, true, 1, 0),
      access(3, 1, 4, 2, Kind::kRead, true, 0),
  };
  const checkers::ConsequenceVerdict v =
      checkers::check_consequences(params(Workload::kInventory, Fencing::kNone, 1), log);
  EXPECT_EQ(v.kind, checkers::Verdict::Kind::kValid) << v.explanation;
  EXPECT_EQ(v.sold, 1);
  EXPECT_EQ(v.oversold, 0);
}

TEST(ConsequenceChecker, SaysSoWhenTheAlgorithmHasNoFencingToken) {
  const std::vector<StoreAccess> log = {
      access(1, 0, 1, std::nullopt, Kind::kWrite, true, 0, 1),
  };
  const checkers::ConsequenceVerdict fenced =
      checkers::check_consequences(params(Workload::kRegister, Fencing::kWriteCheck), log);
  EXPECT_EQ(fenced.unfenced_accesses, 1);
  EXPECT_NE(checkers::fencing_note(fenced).find("no fencing token"), std::string::npos);
  const checkers::ConsequenceVerdict unfenced =
      checkers::check_consequences(params(Workload::kRegister, Fencing::kNone), log);
  EXPECT_EQ(checkers::fencing_note(unfenced), "");
}

// --- The store's fencing check, as a step function. ---

ResourceRequest request(Kind kind, std::optional<uint64_t> fence, int64_t value = 0) {
  ResourceRequest r;
  r.kind = kind;
  r.fence = fence;
  r.value = value;
  r.lease_id = static_cast<int64_t>(fence.value_or(0));
  return r;
}

TEST(ResourceStore, WriteCheckRejectsALowerTokenButNotAStaleRead) {
  sim::ResourceStore s(params(Workload::kCounter, Fencing::kWriteCheck));
  EXPECT_EQ(s.execute(request(Kind::kWrite, 2, 1), TimePoint{}).status, ResourceReply::Status::kOk);
  const ResourceReply stale = s.execute(request(Kind::kWrite, 1, 5), TimePoint{});
  EXPECT_EQ(stale.status, ResourceReply::Status::kRejected);
  EXPECT_EQ(stale.detail, "token 1 < highest seen 2");
  EXPECT_EQ(s.value(), 1);
  // Reads are not checked, and do not raise the bar.
  EXPECT_EQ(s.execute(request(Kind::kRead, 1), TimePoint{}).status, ResourceReply::Status::kOk);
  EXPECT_EQ(s.execute(request(Kind::kRead, 7), TimePoint{}).status, ResourceReply::Status::kOk);
  EXPECT_EQ(s.execute(request(Kind::kWrite, 2, 3), TimePoint{}).status, ResourceReply::Status::kOk);
  ASSERT_EQ(s.log().size(), 5u);
  EXPECT_FALSE(s.log()[1].accepted);
}

TEST(ResourceStore, ReadWriteCheckRecordsReadsToo) {
  sim::ResourceStore s(params(Workload::kCounter, Fencing::kReadWriteCheck));
  EXPECT_EQ(s.execute(request(Kind::kRead, 7), TimePoint{}).status, ResourceReply::Status::kOk);
  EXPECT_EQ(s.execute(request(Kind::kWrite, 6, 1), TimePoint{}).status,
            ResourceReply::Status::kRejected);
  EXPECT_EQ(s.execute(request(Kind::kRead, 6), TimePoint{}).status,
            ResourceReply::Status::kRejected);
  EXPECT_EQ(s.value(), 0);
}

TEST(ResourceStore, NoFencingAndNoTokenAcceptEverything) {
  sim::ResourceStore s(params(Workload::kInventory, Fencing::kNone, 10));
  EXPECT_EQ(s.value(), 10);  // the stock at the start
  EXPECT_EQ(s.execute(request(Kind::kWrite, 5, 9), TimePoint{}).status, ResourceReply::Status::kOk);
  EXPECT_EQ(s.execute(request(Kind::kWrite, 1, 8), TimePoint{}).status, ResourceReply::Status::kOk);
  sim::ResourceStore fenced(params(Workload::kRegister, Fencing::kReadWriteCheck));
  EXPECT_EQ(fenced.execute(request(Kind::kWrite, 5, 1), TimePoint{}).status,
            ResourceReply::Status::kOk);
  // A tokenless access cannot be checked (Redlock): accepted, and counted by the checker.
  EXPECT_EQ(fenced.execute(request(Kind::kWrite, std::nullopt, 2), TimePoint{}).status,
            ResourceReply::Status::kOk);
}

}  // namespace
}  // namespace locksim::harness
