// Faults "on grant": a fault that waits, from its time, for the lock's next
// grant (the moment the store records a new holder) and fires there, aimed
// at the client granted ("@grantee"). How a schedule holds a grant's reply
// or crashes a primary before it replicates the grant without knowing when
// the clients will take the lock.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "algorithms/registry.h"
#include "env/parse.h"
#include "faults/fault_schedule.h"
#include "harness/run.h"
#include "history/history_io.h"
#include "sim/connection.h"

namespace locksim::harness {
namespace {

using faults::parse_fault;

SimRunReport run_with(const std::string& algorithm, const std::string& fault,
                      const std::string& ttl) {
  RunConfig c;
  c.algorithm = algorithm;
  c.algorithm_params = {{"ttl", ttl}};
  c.seed = 5;
  c.duration = Duration::seconds(40);
  c.workload.clients = 3;
  // A client that waits for its reply (redis-py's and hiredis's default): a
  // 500 ms command timeout would give the held grant up as unknown. (A Redis
  // setting: another backend's algorithm refuses it.)
  if (algorithms::find_algorithm(algorithm)->backend == "redis") c.redis.timeout = sim::kNoTimeout;
  c.faults.events.push_back(parse_fault(fault, "f"));
  return simulate_and_check(c);
}

std::vector<history::Op> nemesis_ops(const history::History& h) {
  std::vector<history::Op> out;
  for (const history::Op& op : h.ops) {
    if (!history::is_client_op(op)) out.push_back(op);
  }
  return out;
}

TEST(GrantFault, ReadsBackAndNamesWhatIsWrong) {
  for (const char* text :
       {"partition @grantee|redis-1 at 5s on grant for 10s",
        "partition redis-1->@grantee at 5s on grant", "crash @primary at 12s on grant+150ms for 3s",
        "pause @grantee at 1s on grant for 2s", "pause @holder at 3s on held+200ms for 2s"}) {
    const faults::FaultEvent e = parse_fault(text, "faults[0]");
    EXPECT_EQ(e.describe(), text);
    ASSERT_TRUE(e.after_grant.has_value()) << text;
  }
  EXPECT_EQ(*parse_fault("crash redis-1 at 2s on grant+150ms", "f").after_grant,
            Duration::millis(150));
  EXPECT_FALSE(parse_fault("crash redis-1 at 2s for 1s", "f").after_grant.has_value());
  EXPECT_TRUE(parse_fault("crash redis-1 at 2s on held", "f").unless_held);
  EXPECT_FALSE(parse_fault("crash redis-1 at 2s on grant", "f").unless_held);
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"partition @grantee|redis-1 at 5s for 10s", "'on grant' after the time for a fault on"},
      {"crash redis-1 at 5s on grunt", "'on grant', 'on grant+D', 'on held' or 'on held+D'"},
      {"partition @grantee|redis-1 at 5s on held for 10s", "'on grant' after the time"},
      {"crash redis-1 at 5s on grant+soon", "faults[1]"},
  };
  for (const auto& [text, expected] : bad) {
    try {
      parse_fault(text, "faults[1]");
      ADD_FAILURE() << "accepted: " << text;
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
      EXPECT_EQ(std::string(e.what()).rfind("faults[1]", 0), 0u) << e.what();
    }
  }
}

// A cut from the moment the key is set holds the SET's reply: the client
// granted learns of its lease 12 s late, with 2 s of a 10 s lease left, and
// holds past it while the next client takes the expired key.
TEST(GrantFault, APartitionOnGrantHoldsTheGrantsReply) {
  const SimRunReport r =
      run_with("set-nx-lua", "partition @grantee|redis-1 at 5s on grant for 12s", "10s");
  const history::History& h = r.result.history;
  const std::vector<history::Op> ops = nemesis_ops(h);
  ASSERT_GE(ops.size(), 2u) << history::to_jsonl(h);
  const history::Op& cut = ops[0];
  EXPECT_EQ(to_string(cut.f), "partition");
  ASSERT_EQ(cut.value.size(), 3u);
  EXPECT_EQ(cut.value[2], "12s");
  EXPECT_GE(cut.time_ns, Duration::seconds(5).ns) << "it waits from its time";
  const std::string grantee = cut.value[0];
  ASSERT_EQ(grantee.size(), 2u) << "a client: " << grantee;
  const int client = grantee[1] - '1';
  // The grantee's acquire was sent before the cut and answered only after
  // the heal: the reply was held.
  bool held_reply = false;
  for (size_t i = 0; i < h.ops.size(); ++i) {
    const history::Op& op = h.ops[i];
    if (op.client != client || op.type != history::OpType::kOk || op.time_ns < cut.time_ns) {
      continue;
    }
    held_reply = op.time_ns >= cut.time_ns + Duration::seconds(12).ns;
    break;
  }
  EXPECT_TRUE(held_reply) << history::to_jsonl(h);
  EXPECT_EQ(r.result.mutex.kind, checkers::Verdict::Kind::kInvalid) << history::to_jsonl(h);
}

// The MySQL table's grant is its COMMIT: held, it reaches its client after
// the deadline it wrote, and the next client takes the row meanwhile.
TEST(GrantFault, APartitionOnGrantHoldsTheCommitOfTheMysqlTable) {
  const SimRunReport r =
      run_with("mysql-center", "partition @grantee|mysql-1 at 5s on grant for 12s", "10s");
  EXPECT_EQ(r.result.mutex.kind, checkers::Verdict::Kind::kInvalid)
      << history::to_jsonl(r.result.history);
}

// The same fault with a lease longer than the cut and the hold: the late
// grant still fits in its lease, and nothing breaks.
TEST(GrantFault, ALateGrantWithinItsLeaseIsSafe) {
  const SimRunReport r =
      run_with("set-nx-lua", "partition @grantee|redis-1 at 5s on grant for 12s", "30s");
  EXPECT_EQ(r.result.mutex.kind, checkers::Verdict::Kind::kValid);
  EXPECT_EQ(to_string(nemesis_ops(r.result.history).at(0).f), "partition");
}

// GETSET stores a timestamp, which names no client: the fault is skipped,
// saying why, at the grant it waited for.
TEST(GrantFault, AStoreThatNamesNoClientSkipsTheGrantee) {
  const SimRunReport r =
      run_with("getset-timestamp", "partition @grantee|redis-1 at 5s on grant for 12s", "10s");
  const std::vector<history::Op> ops = nemesis_ops(r.result.history);
  ASSERT_EQ(ops.size(), 1u);
  EXPECT_EQ(ops[0].f, history::OpF::kSkip);
  EXPECT_EQ(ops[0].detail, "the lock's store does not name the client it granted");
  EXPECT_GE(ops[0].time_ns, Duration::seconds(5).ns);
}

// A fault that waits past the last grant, or whose time after its grant
// falls past the run's end, is reported as skipped at the end.
TEST(GrantFault, WhatTheRunEndsBeforeIsASkipAtTheEnd) {
  RunConfig c;
  c.seed = 5;
  c.duration = Duration::seconds(40);
  c.workload.clients = 3;
  for (const char* f : {"crash redis-1 at 30s", "crash c1 at 31s on grant"}) {
    c.faults.events.push_back(parse_fault(f, "f"));
  }
  std::vector<history::Op> ops = nemesis_ops(simulate_and_check(c).result.history);
  ASSERT_EQ(ops.size(), 2u);
  EXPECT_EQ(ops[1].f, history::OpF::kSkip);
  EXPECT_EQ(ops[1].detail, "no grant after its time") << "the server stays down";
  EXPECT_EQ(ops[1].time_ns, Duration::seconds(40).ns);

  ops = nemesis_ops(
      run_with("set-nx-lua", "crash redis-1 at 30s on grant+11s", "10s").result.history);
  ASSERT_EQ(ops.size(), 1u);
  EXPECT_EQ(ops[0].f, history::OpF::kSkip);
  EXPECT_EQ(ops[0].detail, "the run ended before grant+D");
}

// A quiet lock: one client holding 1 s after each 3 s idle gap, so it is
// free at 1.5 s; with `fault`.
RunConfig quiet_lock(const std::string& fault) {
  RunConfig c;
  c.seed = 5;
  c.duration = Duration::seconds(30);
  c.workload.clients = 1;
  c.workload.hold_min = c.workload.hold_max = Duration::seconds(1);
  c.workload.idle_min = c.workload.idle_max = Duration::seconds(3);
  c.faults.events.push_back(parse_fault(fault, "f"));
  return c;
}

// "on held+D": at its time if a client holds the lock then; else D after
// the next grant. A quiet lock (one client, long idle gaps) is free at 1.5 s
// and held at the first grant after it; a busy one is held at its time.
TEST(GrantFault, OnHeldFiresAtItsTimeWhenHeldAndElseAfterTheNextGrant) {
  RunConfig c = quiet_lock("pause @holder at 1500ms on held+200ms for 100ms");
  const history::History quiet = simulate_and_check(c).result.history;
  std::vector<history::Op> ops = nemesis_ops(quiet);
  ASSERT_GE(ops.size(), 1u) << history::to_jsonl(quiet);
  EXPECT_EQ(ops[0].f, history::OpF::kPause) << history::to_jsonl(quiet);
  // The second hold starts after the 3 s idle gap: the fault waited for it.
  ASSERT_GE(quiet.held.size(), 2u);
  // The grant is the SET at the server, a reply's latency before the
  // client's hold starts: the pause fires 200 ms after it.
  EXPECT_GT(ops[0].time_ns, quiet.held[1].start.ns + Duration::millis(150).ns);
  EXPECT_LE(ops[0].time_ns, quiet.held[1].start.ns + Duration::millis(200).ns);

  c.workload.idle_min = c.workload.idle_max = Duration::zero();
  c.workload.hold_min = c.workload.hold_max = Duration::seconds(3);
  const history::History busy = simulate_and_check(c).result.history;
  ops = nemesis_ops(busy);
  ASSERT_GE(ops.size(), 1u);
  EXPECT_EQ(ops[0].f, history::OpF::kPause);
  EXPECT_EQ(ops[0].time_ns, Duration::millis(1500).ns) << "held at its time: no wait";
}

// "on held" without +D fires at the grant itself, while the grant's reply
// is still on its way and nobody holds yet: "@holder" names the client
// granted, the holder-to-be, instead of skipping the fault. A store that
// names no client (GETSET's) has no one to name: the fault is skipped.
TEST(GrantFault, OnHeldAtTheGrantNamesTheClientGranted) {
  RunConfig c = quiet_lock("pause @holder at 1500ms on held for 100ms");
  const history::History h = simulate_and_check(c).result.history;
  const std::vector<history::Op> ops = nemesis_ops(h);
  ASSERT_GE(ops.size(), 1u) << history::to_jsonl(h);
  EXPECT_EQ(ops[0].f, history::OpF::kPause) << history::to_jsonl(h);
  ASSERT_FALSE(ops[0].value.empty());
  EXPECT_EQ(ops[0].value[0], "c1");
  ASSERT_GE(h.held.size(), 2u);
  // The grant is the SET at the server, before the client's hold starts.
  EXPECT_LE(ops[0].time_ns, h.held[1].start.ns);
  EXPECT_GT(ops[0].time_ns, h.held[0].end.ns);

  c.algorithm = "getset-timestamp";
  const std::vector<history::Op> unnamed = nemesis_ops(simulate_and_check(c).result.history);
  ASSERT_GE(unnamed.size(), 1u);
  EXPECT_NE(unnamed[0].f, history::OpF::kPause) << "GETSET's store names no client granted";
}

}  // namespace
}  // namespace locksim::harness
