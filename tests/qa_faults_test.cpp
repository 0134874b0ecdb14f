// Faults and settings a third fresh-eyes QA pass (2026-11-30) found ending
// a run in a broken invariant (exit 70): each now runs, or is refused as bad
// input in one line (exit 2).
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "harness/run.h"
#include "tests/locksim_binary.h"

namespace {

using locksim::testing::expect_bad_input;
using locksim::testing::locksim;
using locksim::testing::Outcome;

// A MySQL client crashed while its connection's handshake was in flight:
// close() asserted a session the handshake had not yet given it.
TEST(QaFaults, AMysqlClientCrashedWhileConnectingRuns) {
  for (const std::string algorithm : {"mysql-v1", "mysql-center", "mysql-segmented"}) {
    for (const std::string at : {"500us", "1ms", "1300us"}) {
      const Outcome o = locksim("run --algorithm " + algorithm + " --fault 'crash c1 at " + at +
                                " for 2s' --duration 10s");
      EXPECT_EQ(o.exit_code, 0) << algorithm << " at " << at << "\n" << o.out << o.err;
      EXPECT_NE(o.out.find("crash c1"), std::string::npos) << o.out;
    }
  }
  // A shipped scenario, time-scaled into the handshake.
  EXPECT_NE(locksim("run --scenario mysql-center-client-crash --time-scale 0.01 --quiet").exit_code,
            70);
}

// A partition healed after the last retransmission a limit off TCP's
// schedule allows (200 ms, then 400 ms: the last by 1 s leaves at 600 ms)
// and before the limit: the network asserted a next retransmission. The
// stream now stays held and breaks at the limit, as the kernel gives up.
TEST(QaFaults, AHealBetweenTheLastRetransmissionAndTheLimitBreaksTheConnection) {
  for (const std::string& flags :
       {std::string("--retransmission-limit 1s --fault 'partition c1|redis-1 at 1s for 900ms'"),
        std::string(
            "--retransmission-limit 500ms --fault 'partition c1|redis-1 at 1s for 450ms'")}) {
    const Outcome o = locksim("run --duration 10s " + flags);
    EXPECT_EQ(o.exit_code, 0) << flags << "\n" << o.out << o.err;
  }
}

// The partition profile drew a delay spike's length from 10 ms to twice
// the delay, and a long cut's from 1 s to the TTL: empty ranges under a
// short TTL, a broken invariant of the draw.
TEST(QaFaults, ThePartitionProfileDrawsUnderAShortTtl) {
  for (const std::string ttl : {"1ms", "2ms", "5ms", "500ms"}) {
    const Outcome o = locksim("run --profile partition --quiet --ttl " + ttl);
    EXPECT_TRUE(o.exit_code == 0 || o.exit_code == 1) << ttl << ": " << o.exit_code << o.err;
  }
  const Outcome o = locksim(
      "run --ttl 500ms --retransmission-limit 1s --duration 10s --profile partition --quiet");
  EXPECT_TRUE(o.exit_code == 0 || o.exit_code == 1) << o.exit_code << o.err;
}

// The summary of a 10 s `run ARGS` names `faults` (its faults line, or part).
void expect_faults(const std::string& args, const std::string& faults) {
  const Outcome o = locksim("run --duration 10s " + args);
  EXPECT_NE(o.out.find(faults), std::string::npos) << args << "\n" << o.out;
}

// A pause outlived the crash of its process: a later pause of the
// restarted client ended with the dead process's pause (4 s + 1 s ended at
// 6 s), and a pause of a down client was recorded, with its resume, though
// nothing was paused. Now as a hang: skipped while down, and owing nothing
// to a pause a crash ended.
TEST(QaFaults, APauseEndsWithItsProcess) {
  expect_faults(
      "--fault 'pause c1 at 1s for 5s' --fault 'crash c1 at 2s for 1s' "
      "--fault 'pause c1 at 4s for 1s'",
      "4.000s pause c1 for 1s; 5.000s resume c1\n");
  expect_faults("--fault 'crash c1 at 1s for 1s' --fault 'pause c1 at 1.5s for 3s'",
                "1.500s skip pause c1 for 3s (down); 2.000s restart c1\n");
}

// A client that reached its bound of acquire cycles stopped without a word,
// and the run said OK for the part it ran (a 168 h run with no hold: its
// history ended at 33 minutes). It is now a client error: verdict unknown.
TEST(QaFaults, AClientAtItsCycleBoundMakesTheRunUnknown) {
  locksim::harness::RunConfig c;
  c.workload.clients = 1;
  c.workload.max_ops_per_client = 3;
  const locksim::harness::SimRunReport r = locksim::harness::simulate_and_check(c);
  ASSERT_EQ(r.result.errors.size(), 1u);
  EXPECT_NE(r.result.errors[0].find("stopped after 3 acquire cycles, the bound each client has"),
            std::string::npos)
      << r.result.errors[0];
  EXPECT_EQ(locksim::harness::overall_verdict(r.result), locksim::checkers::Validity::kUnknown);
  c.workload.max_ops_per_client = 1'000'000;  // the default: a minute's run is far below it
  EXPECT_TRUE(locksim::harness::simulate_and_check(c).result.errors.empty());
}

// --scenario took the first of two --seed values, where without it a
// setting given twice is bad input.
TEST(QaFaults, AScenarioRefusesTwoSeeds) {
  for (const std::string command : {"run", "explain"}) {
    expect_bad_input(command + " --scenario redlock-node-restart --seed 1 --seed 2",
                     "--seed: expected once, given 2 times");
  }
}

// @holder resolved to the node the other side names: "partition c3|c3" was
// recorded as applied, though a literal c3|c3 is refused. And a side that
// names a node twice was accepted and echoed.
TEST(QaFaults, ALinkFromANodeToItselfIsSkippedOrRefused) {
  // In seed 1 the holder at 1 s is c3.
  const Outcome o =
      locksim("run --seed 1 --duration 10s --fault 'partition @holder|c3 at 1s for 1s'");
  EXPECT_NE(o.out.find("1.000s skip partition @holder|c3 for 1s (c3 is on both sides)"),
            std::string::npos)
      << o.out;
  EXPECT_EQ(o.out.find("partition c3|c3"), std::string::npos) << o.out;
  for (const std::string fault :
       {"partition c1,c1|redis-1 at 1s", "loss c1|redis-1,redis-1 at 1s 0.5",
        "delay c2,c2|redis-1 at 1s for 1s by 1s"}) {
    expect_bad_input("run --fault '" + fault + "'", "twice");
  }
}

// The end of a loss on several pairs recorded the first pair's rate for all:
// "loss c1,c2|redis-1 0.5" where c2|redis-1 went back to 0.
TEST(QaFaults, TheEndOfALossRecordsEachPairsRate) {
  expect_faults(
      "--fault 'loss c1|redis-1 at 1s 0.5 for 5s' --fault 'loss c1,c2|redis-1 at 2s 0.9 for 1s'",
      "3.000s loss c1|redis-1 0.5; 3.000s loss c2|redis-1 0");
}

// A run's result.json params are a scenario file (scenarios.md): for a
// ZooKeeper or MySQL run they said redis.masters 1, refused as "a redis
// setting" on another backend.
TEST(QaFaults, AnyRunsParamsReadBackAsAScenario) {
  const locksim::testing::ScratchDir dir("locksim_qa_params_");
  for (const std::string algorithm : {"zk-curator", "mysql-center", "redlock"}) {
    const std::string out = (dir.path() / algorithm).string();
    ASSERT_NE(
        locksim("run --algorithm " + algorithm + " --duration 5s --quiet --out " + out).exit_code,
        2);
    const nlohmann::json r = nlohmann::json::parse(locksim::testing::slurp(out + "/result.json"));
    const std::string file = (dir.path() / (algorithm + ".json")).string();
    std::ofstream(file) << r["params"].dump(2);
    const Outcome again = locksim("run --quiet --scenario " + file);
    EXPECT_NE(again.exit_code, 2) << algorithm << ": " << again.err;
  }
}

// Durations finer than a nanosecond were cut to one: --duration 1.5ns ran
// and replayed as 1ns, a fault at 1.0000000005s acted at 1s.
TEST(QaFaults, ADurationFinerThanANanosecondIsRefused) {
  expect_bad_input("run --duration 1.5ns", "--duration: expected a duration in whole nanoseconds");
  expect_bad_input("run --fault 'pause c1 at 1.0000000005s for 1s'", "whole nanoseconds");
  EXPECT_EQ(locksim("run --duration 1.5us --quiet").exit_code, 0) << "1500ns is whole";
  EXPECT_EQ(locksim("run --duration 2.0000000000s --quiet").exit_code, 0) << "zeros add nothing";
}

}  // namespace
