// `locksim explain` (issue 22): every shipped violating or liveness scenario,
// and the shrunk counterexample of every cell the reference gates as a
// violation, is told with its mechanism; a safe run is never explained as a
// violation; the lock trace the story reads leaves the run unchanged.
#include <gtest/gtest.h>

#include <algorithm>

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "checkers/explain.h"
#include "harness/explain_run.h"
#include "harness/run.h"
#include "harness/scenario.h"
#include "harness/settings.h"
#include "harness/shrink/shrink.h"
#include "harness/sweep/sweep.h"
#include "history/history_io.h"
#include "tests/locksim_binary.h"

namespace {

namespace fs = std::filesystem;
using locksim::checkers::Mechanism;
using locksim::harness::RunConfig;
using locksim::testing::locksim;
using locksim::testing::Outcome;
using locksim::testing::slurp;

locksim::harness::RunResult traced_run(const RunConfig& config) {
  locksim::harness::RunExtras extras;
  extras.trace_lock = true;
  return locksim::harness::simulate_and_check(config, extras).result;
}

std::string mechanism_of(const RunConfig& config) {
  return locksim::checkers::mechanism_id(
      locksim::harness::explain_result(traced_run(config)).mechanism);
}

// What each shipped scenario that expects a finding shows, as the records
// tell it. A scenario added without a line here fails the test below.
const std::map<std::string, std::string> kScenarioMechanisms = {
    {"getset-clock-skew", "contender-clock-ahead"},
    {"inventory-oversell", "pause-outlasted-lease"},
    {"mysql-center-client-crash", "deadline-too-far"},
    {"mysql-center-clock-skew", "contender-clock-ahead"},
    {"mysql-center-crash-flush-0", "restart-lost-lock"},
    {"mysql-center-failover", "failover-lost-lock"},
    {"mysql-center-gc-pause", "pause-outlasted-lease"},
    {"mysql-center-slow-link", "late-grant"},
    {"mysql-segmented-clock-skew", "contender-clock-ahead"},
    {"mysql-segmented-failover", "failover-lost-lock"},
    {"naive-setnx-crash-between", "crash-before-expiry"},
    {"naive-setnx-late-delete", "pause-outlasted-lease"},
    {"naive-setnx-partition-late-delete", "late-release"},
    {"redlock-clock-jump", "server-clock-jumped"},
    {"redlock-gc-pause", "pause-outlasted-lease"},
    {"redlock-node-restart", "restart-lost-lock"},
    // The script's hash field is the client's name ("c3"), not the acquire's
    // token: redis-1 keeps c3's lock until 3.803 s (its last renewal before
    // the pause, plus the 2 s lease), then c2's from 3.809 s.
    {"reentrant-hash-gc-pause", "pause-outlasted-lease"},
    {"redisson-fair-gc-pause", "pause-outlasted-lease"},
    // The lock is free, but the crashed c1's entry heads its queue.
    {"redisson-fair-skewed-clock", "dead-waiter-heads-queue"},
    {"redisson-failover-unacked", "failover-lost-lock"},
    {"redisson-fenced-failover", "failover-lost-lock"},
    {"redisson-gc-pause-25s", "pause-outlasted-lease"},
    {"redisson-hung-holder", "holder-kept-lock"},
    {"redisson-leased-long-holds", "hold-outlasted-lease"},
    {"redisson-partition", "lease-expired-while-cut-off"},
    {"set-nx-lua-clock-jump", "server-clock-jumped"},
    {"set-nx-lua-delay-spike", "late-grant"},
    {"set-nx-lua-failover-fenced", "failover-lost-lock"},
    {"set-nx-lua-failover", "failover-lost-lock"},
    {"set-nx-lua-fenced-stale-read", "pause-outlasted-lease"},
    {"set-nx-lua-gc-pause-fenced", "pause-outlasted-lease"},
    {"set-nx-lua-gc-pause", "pause-outlasted-lease"},
    {"set-nx-lua-one-way-partition", "late-grant"},
    {"set-nx-lua-partition-late-grant", "late-grant"},
    {"set-nx-lua-restart-no-fsync", "restart-lost-lock"},
    {"zk-curator-gc-pause", "session-expired-while-paused"},
    {"zk-recipe-gc-pause", "session-expired-while-paused"},
    {"zk-recipe-lost-create-reply", "orphan-node"},
    {"zk-recipe-partition", "session-expired-while-cut-off"},
};

TEST(Explain, EveryShippedFindingNamesItsMechanism) {
  int told = 0;
  for (const auto& builtin : locksim::harness::builtin_scenario_texts()) {
    const auto sc = locksim::harness::load_scenario(builtin.name);
    if (sc.expect == locksim::harness::Scenario::Expect::kSafe) continue;
    const auto it = kScenarioMechanisms.find(sc.name);
    ASSERT_NE(it, kScenarioMechanisms.end()) << sc.name << ": no expected mechanism in this test";
    EXPECT_EQ(mechanism_of(sc.config), it->second) << sc.name;
    ++told;
  }
  EXPECT_EQ(told, static_cast<int>(kScenarioMechanisms.size()));
}

// Redisson's waiters sleep on the unlock channel, so none of their acquires
// ends while the hung holder keeps the lock: the story said "others' 0
// acquires failed".
TEST(Explain, AHeldLockWithEveryWaiterAsleepSaysNoneEnded) {
  const auto sc = locksim::harness::load_scenario("redisson-hung-holder");
  const std::string text =
      locksim::checkers::format_story(locksim::harness::explain_result(traced_run(sc.config)));
  EXPECT_NE(text.find("none of the others' acquires ended from here to the end, and 2 were "
                      "still waiting at the end"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find(" 0 acquires"), std::string::npos) << text;
}

// A late release follows the pause in naive-setnx-late-delete: the story's
// first overlap is the pause, and the later ones name the delete.
TEST(Explain, LaterOverlapsNameTheirOwnMechanism) {
  const auto sc = locksim::harness::load_scenario("naive-setnx-late-delete");
  const auto story = locksim::harness::explain_result(traced_run(sc.config));
  ASSERT_EQ(story.mechanisms.size(), 2u);
  EXPECT_EQ(story.mechanisms[0], Mechanism::kPauseOutlastedLease);
  EXPECT_EQ(story.mechanisms[1], Mechanism::kLateRelease);
  const std::string text = locksim::checkers::format_story(story);
  EXPECT_NE(text.find("c3 was paused (since 1.000s) and could not notice"), std::string::npos)
      << text;
  EXPECT_NE(text.find("later overlaps also: late-release"), std::string::npos) << text;
  EXPECT_NE(text.find("would have prevented it: a fencing token"), std::string::npos) << text;
}

// The holder's own release, given up on, can be the late one: the
// margins' partition finding (docs/measurements.md, "Safety margins"). A
// lone getset-timestamp holder's DEL is cut off at 2.0 s and times out, but
// TCP keeps retransmitting it (RTO from 200 ms, doubling: at 2.2, 2.6, 3.4,
// 5.0 and 8.2 s, all inside the 6.21 s cut); the retransmission at 14.6 s
// deletes the lease c1 took at 14.044 s. A cut that ends before 8.2 s lets
// the DEL through while c1 holds nothing, and nothing is exposed.
TEST(Explain, AnAbandonedReleaseArrivingLateDeletesItsOwnClientsNextLease) {
  const std::string run =
      "run --algorithm getset-timestamp --seed 1 --duration 44s --clients 1 --hold 2s..2s "
      "--explain --fault 'partition @holder|redis-1 at 2000522us for ";
  const Outcome late = locksim(run + "6210ms'");
  EXPECT_EQ(late.exit_code, 0) << late.err;  // latent: nobody stepped in
  EXPECT_NE(late.out.find("14.601s  c1's own release of an earlier lease (op 3, invoked at "
                          "2.001s), which it had given up on, arrived only now"),
            std::string::npos)
      << late.out;
  EXPECT_NE(late.out.find("mechanism: late-release"), std::string::npos) << late.out;
  const Outcome in_time = locksim(run + "6150ms'");
  EXPECT_NE(in_time.out.find("exposure: No exposure"), std::string::npos) << in_time.out;
}

// A ZooKeeper release deletes its own node, never the holder's: in this
// zk-herd run c2's release was still in flight (invoked at 22.3 s, its
// session expired at 26.3 s) when c3's session expired at 50.3 s and c2
// was granted at once. The story names the expiry, not a late release.
TEST(Explain, AZooKeeperNodeGoneWithAReleaseInFlightIsTheSessionsExpiry) {
  locksim::harness::SweepPlan plan;  // as `locksim sweep` draws its workloads
  plan.base.duration = locksim::Duration::seconds(20);
  plan.base.stuck_after = locksim::Duration::seconds(10);
  plan.base.workload.draw = true;
  const RunConfig c = plan.config_of("zk-herd", "partition", 254);
  ASSERT_EQ(locksim::harness::replay_command(c),
            "locksim run --algorithm zk-herd --seed 254 --clients 3 --hold 12s..20s "
            "--retry-pause 371ms --idle 0s..894ms --stuck-after 10s --profile partition");
  const auto story = locksim::harness::explain_result(traced_run(c));
  ASSERT_FALSE(story.mechanisms.empty()) << "the run breaks the lock";
  EXPECT_EQ(story.mechanisms[0], Mechanism::kSessionExpired);
  const std::string text = locksim::checkers::format_story(story);
  EXPECT_NE(text.find("c3's ZooKeeper session expired"), std::string::npos) << text;
  EXPECT_EQ(text.find("late release"), std::string::npos) << text;
}

// The QA pass's findings (qa/truth-report.md, items 1-8): each run is told
// by what its trace shows.
std::string explained(const std::string& flags) {
  const Outcome o = locksim("explain " + flags);
  EXPECT_NE(o.exit_code, 2) << o.err;
  return o.out;
}

// Item 1: c3's grant was stored only on redis-1-r1, a deposed primary
// restarted after redis-1 was promoted back at 15.100 s; 0.5 s of a 10 s
// lease is not a late grant.
TEST(Explain, AGrantOnAServerThatDoesNotCountIsNotALateGrant) {
  const std::string out = explained(
      "--algorithm getset-timestamp --seed 1 --duration 20s --clients 3 --retry-pause 446ms "
      "--idle 3s..8s --stuck-after 10s --replicas 1 --replication-lag 2s --failover "
      "--down-after 1s --discovery-delay 200ms --profile failover");
  EXPECT_NE(out.find("mechanism: stale-primary-grant"), std::string::npos) << out;
  EXPECT_NE(out.find("c3's grant was stored on redis-1-r1, whose answer did not count"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("15.100s  failover: redis-1 was promoted to primary"), std::string::npos)
      << out;
  EXPECT_EQ(out.find("validity check"), std::string::npos) << out;
}

// Item 2: the reentrant hash keeps the client's name, and the jump is told
// as for the other scripts.
TEST(Explain, AReentrantHashLockIsMatchedByItsClient) {
  const std::string out =
      explained("--algorithm script:" +
                (fs::path(LOCKSIM_SOURCE_DIR) / "examples/scripts/reentrant-hash.json").string() +
                " --seed 3 --fault 'jump redis-1 at 5s +20s'");
  EXPECT_NE(out.find("mechanism: server-clock-jumped"), std::string::npos) << out;
}

// Item 3: a delay on the holder's links, or a partition of the ensemble's
// servers, under way when the session expired, cut the holder off.
TEST(Explain, ASessionExpiredUnderALinkFaultWasCutOff) {
  const std::string delay = explained(
      "--algorithm zk-recipe --seed 35 --clients 4 --hold 12s..20s --retry-pause 96ms "
      "--stuck-after 10s --profile partition");
  EXPECT_NE(delay.find("mechanism: session-expired-while-cut-off"), std::string::npos) << delay;
  EXPECT_NE(delay.find("while a fault on c3's links was under way (delay c1,c2,c3,c4|zk-1"),
            std::string::npos)
      << delay;
  const std::string split = explained(
      "--algorithm zk-curator --seed 458 --clients 3 --hold 12s..20s --retry-pause 358ms "
      "--idle 0s..392ms --stuck-after 10s --profile partition");
  EXPECT_NE(split.find("mechanism: session-expired-while-cut-off"), std::string::npos) << split;
  EXPECT_NE(split.find("while the ensemble's servers were cut apart (partition zk-2|zk-1,zk-3"),
            std::string::npos)
      << split;
  // zk-curator stops at SUSPENDED already: the remedy is not what it has.
  EXPECT_NE(split.find("SUSPENDED handling is on here already and never fired"), std::string::npos)
      << split;
  EXPECT_NE(delay.find("would have prevented it: Curator's handling of SUSPENDED"),
            std::string::npos)
      << delay;
}

// Item 4: no client crashed; c5's acquires timed out not knowing whether
// their SETNX had landed (a delay held them up), and one had.
TEST(Explain, AKeyWithNoExpiryWithoutACrashIsAnAcquireThatGaveUp) {
  const std::string out = explained(
      "--algorithm naive-setnx --seed 24 --duration 40s --stuck-after 10s "
      "--profile partition");
  EXPECT_NE(out.find("mechanism: setnx-outcome-unknown"), std::string::npos) << out;
  EXPECT_EQ(out.find("crashed"), std::string::npos) << out;
  EXPECT_NE(out.find("(timeout after 500 ms)"), std::string::npos) << out;
  EXPECT_NE(
      explained("--scenario naive-setnx-crash-between").find("mechanism: crash-before-expiry"),
      std::string::npos);
}

// Item 5: zk-curator already names its nodes with a GUID. In seed 8 of
// zk-curator x partition, shrunk to its one delay (as a shrink that kept
// only the finding, not its cause, once cut it), one acquire of c1 left two
// nodes with its GUID: it was granted lock-7, and lock-8 blocks everyone.
TEST(Explain, AnOrphanUnderProtectedModeIsNotToldToUseIt) {
  const std::string out = explained(
      "--algorithm zk-curator --seed 8 --duration 22s --clients 3 --hold 1s..1s "
      "--retry-pause 485ms --idle 1500ms..4s --stuck-after 10s "
      "--fault 'delay c1|zk-3 at 7s on held+51ms for 100ms by 3340ms'");
  EXPECT_NE(out.find("mechanism: orphan-node"), std::string::npos) << out;
  EXPECT_NE(out.find("protected mode found one of that acquire's two nodes"), std::string::npos)
      << out;
  EXPECT_NE(out.find("protected mode is on here already"), std::string::npos) << out;
  using locksim::checkers::prevention;
  EXPECT_NE(prevention(Mechanism::kOrphanNode, "zk-recipe", "zookeeper").find("protected mode:"),
            std::string::npos);
  for (const char* lock : {"zk-curator", "zk-herd"}) {
    const std::string p = prevention(Mechanism::kOrphanNode, lock, "zookeeper");
    EXPECT_NE(p.find("protected mode is on here already"), std::string::npos) << lock;
    EXPECT_NE(p.find("every other node that carries the acquire's GUID"), std::string::npos);
  }
}

// Item 6: c2's key, written at 25.349 s, was deleted at 28.329 s by c1's
// release (invoked at 26.929 s) before c2 heard its grant at 28.349 s with
// 7 s of its lease left: a late release, not a late grant.
TEST(Explain, AGrantDeletedBeforeItsReplyArrivedIsALateRelease) {
  const std::string out = explained(
      "--algorithm getset-timestamp --seed 2 --duration 40s --clients 2 --hold 4s..7500ms "
      "--retry-pause 343ms --idle 0s..411ms --stuck-after 10s --timeout none --profile partition");
  EXPECT_NE(out.find("mechanism: late-release"), std::string::npos) << out;
  EXPECT_EQ(out.find("late-grant"), std::string::npos) << out;
}

// Item 7: redis-1-r1 was promoted holding c1's previous lease, not its
// current one: a failover lost the lock.
TEST(Explain, APromotedReplicaWithAnOlderTokenLostTheLock) {
  const std::string out = explained(
      "--algorithm set-nx-lua --seed 3 --duration 34s --clients 2 --hold 6s..8500ms "
      "--retry-pause 218ms --stuck-after 10s --replicas 1 --replication-lag 500ms --failover "
      "--down-after 1s --discovery-delay 200ms --profile failover");
  EXPECT_NE(out.find("mechanism: failover-lost-lock"), std::string::npos) << out;
  EXPECT_NE(out.find("redis-1-r1 was promoted to primary, and its copy of the lock is c1's "
                     "earlier lease c1:"),
            std::string::npos)
      << out;
}

// Item 8: losing Redlock's majority took three promotions.
TEST(Explain, AFailoverOfAMajorityNamesEveryPromotion) {
  const std::string out = explained(
      "--algorithm redlock --seed 3 --clients 2 --hold 10s..20s --retry-pause 218ms "
      "--hold-within-validity --stuck-after 10s --replicas 1 --replication-lag 500ms --failover "
      "--down-after 1s --discovery-delay 200ms --profile failover");
  EXPECT_NE(out.find("mechanism: failover-lost-lock"), std::string::npos) << out;
  EXPECT_NE(out.find("losing the lock took 3 promotions"), std::string::npos) << out;
  for (const char* s : {"redis-2-r1 at 11.100s", "redis-1-r1 at 11.200s", "redis-3-r1 at 11.200s"})
    EXPECT_NE(out.find(s), std::string::npos) << s << "\n" << out;
}

TEST(Explain, SafeScenariosAreNeverExplainedAsViolations) {
  for (const auto& builtin : locksim::harness::builtin_scenario_texts()) {
    auto sc = locksim::harness::load_scenario(builtin.name);
    if (sc.expect != locksim::harness::Scenario::Expect::kSafe) continue;
    for (uint64_t seed = 1; seed <= 3; ++seed) {
      sc.config.seed = seed;
      const auto story = locksim::harness::explain_result(traced_run(sc.config));
      EXPECT_EQ(story.mechanism, Mechanism::kNone) << sc.name << " seed " << seed;
      EXPECT_EQ(locksim::checkers::format_story(story),
                "explain: no finding to explain: the run is clean\n");
    }
  }
}

// A fair lock's queue (Redisson's RedissonFairLock) gives a free lock only
// to its head. In redisson-fair-skewed-clock c1, its clock 20 minutes
// ahead, queues with a timeout 25.5 minutes away by a correct clock, heads
// the queue, and crashes at 2 s; from c3's release at 10 s the lock is free
// and nobody gets it. The story is read from the queue the trace keeps and
// the nemesis ops: whose entry, from which clock, the crash, the timeout.
TEST(Explain, ADeadWaiterHeadingAFairQueueKeepsTheFreeLockFromEveryone) {
  const Outcome o = locksim("explain --scenario redisson-fair-skewed-clock");
  EXPECT_EQ(o.exit_code, 1) << o.err;
  for (const char* step :
       {"with a timeout written from c1's own clock, which had been moved (jump c1 +20m at "
        "0.000s)",
        "2.000s  c1 crashed (crash c1) with its entry still queued",
        "redis-1 keeps no live lock, but c1's entry heads its queue of waiters, c3 and c2 waiting "
        "behind it",
        "which a correct clock reaches at 1530.000s, 1410.000s (about 23 min) after the end",
        "mechanism: dead-waiter-heads-queue",
        "would have prevented it: a shorter wait for queued waiters: Redisson's "
        "fairLockWaitTimeout"})
    EXPECT_NE(o.out.find(step), std::string::npos) << step << "\n" << o.out;
  EXPECT_EQ(o.out.find("cause not determined"), std::string::npos) << o.out;
}

// The same queue with c1 cut off instead of crashed: its acquire gives up
// (:info) at 31.8 s with its entry queued, as a crashed waiter's would be.
// After the heal at 62 s, one of that acquire's requests, resent by TCP,
// reaches redis-1 at 104.2 s, finds the entry still at the head and takes
// the lock for it: a grant nobody knows of, kept until its 30 s lease runs
// out past the end. It was "cause not determined": the lock was held at the
// end, and no :ok carried its token.
TEST(Explain, ALateRequestOfADeadWaiterTakesTheLockForNobody) {
  const Outcome o = locksim(
      "explain --algorithm redisson-fair --seed 1 --duration 120s --clients 3 --hold 10s "
      "--fault 'jump c1 at 0s +20m' --fault 'partition c1|redis-1 at 2s for 60s'");
  EXPECT_EQ(o.exit_code, 1) << o.err;
  for (const char* step :
       {"0.000s  c1's acquire (op 1, invoked at 0.000s) queued its entry",
        "31.762s  c1's acquire (op 1) ended info",
        "and left its entry queued: the cancel that takes it out never got through",
        "104.212s  redis-1 granted the lock to c1's entry",
        "still the queue's head, for the acquire that had ended (op 1): one of its requests, "
        "held by the network (heal c1|redis-1 at 62.000s; TCP resends at growing intervals)",
        "redis-1 keeps the lock for nobody until its lease runs out at 134.213s, 14.213s after "
        "the end",
        "mechanism: dead-waiter-heads-queue"})
    EXPECT_NE(o.out.find(step), std::string::npos) << step << "\n" << o.out;
  EXPECT_EQ(o.out.find("cause not determined"), std::string::npos) << o.out;
}

// The same queue with c1 paused instead of crashed: its entry heads the
// queue just as long, but c1 is still waiting, and would take the lock the
// moment it resumed. Not a dead waiter, but a stalled head: paused for all
// the time nobody held the lock. A lock without a queue is never told as
// one (naive-setnx keeps a key with no expiry).
TEST(Explain, AFairQueueHeadedByAWaiterStillWaitingIsNotADeadWaiter) {
  const Outcome paused = locksim(
      "explain --algorithm redisson-fair --seed 1 --duration 120s --clients 3 --hold 10s "
      "--fault 'jump c1 at 0s +20m' --fault 'pause c1 at 2s for 200s'");
  EXPECT_EQ(paused.exit_code, 1) << paused.err;
  EXPECT_NE(paused.out.find("mechanism: stalled-head-holds-queue"), std::string::npos)
      << paused.out;
  EXPECT_NE(paused.out.find("c1's acquire was still waiting at the end, paused since 2.000s "
                            "(pause c1 for 200s)"),
            std::string::npos)
      << paused.out;
  EXPECT_EQ(paused.out.find("crashed"), std::string::npos) << paused.out;
  const std::string setnx = explained("--scenario naive-setnx-crash-between");
  EXPECT_NE(setnx.find("mechanism: crash-before-expiry"), std::string::npos) << setnx;
  EXPECT_EQ(setnx.find("queue"), std::string::npos) << setnx;
}

// Recording the lock on every server reads state only: the history, its
// events and every verdict are the same with it on or off (the fair lock's
// queue read too).
TEST(Explain, TracingTheLockLeavesTheRunUnchanged) {
  for (const char* name : {"set-nx-lua-failover", "redlock-node-restart", "zk-recipe-partition",
                           "mysql-center-slow-link", "redisson-fair-skewed-clock"}) {
    const auto sc = locksim::harness::load_scenario(name);
    const auto plain = locksim::harness::simulate_and_check(sc.config).result;
    const auto traced = traced_run(sc.config);
    EXPECT_EQ(locksim::history::to_jsonl(plain.history), locksim::history::to_jsonl(traced.history))
        << name;
    EXPECT_EQ(plain.events, traced.events) << name;
    EXPECT_FALSE(plain.lock_trace.supported);
    EXPECT_TRUE(traced.lock_trace.supported);
    EXPECT_FALSE(traced.lock_trace.changes.empty()) << name;
  }
}

// The trace stamps an expiry at its own instant, which the exposure monitor
// found independently: the two records agree to the nanosecond.
TEST(Explain, TheTraceAgreesWithTheExposureWindows) {
  const auto sc = locksim::harness::load_scenario("set-nx-lua-gc-pause");
  const auto r = traced_run(sc.config);
  ASSERT_FALSE(r.exposure.windows.empty());
  const auto& w = r.exposure.windows.front();
  bool found = false;
  for (const auto& c : r.lock_trace.changes) {
    if (c.after.kind == locksim::checkers::ServerLock::Kind::kExpired && c.at == w.start)
      found = true;
  }
  EXPECT_TRUE(found) << "no expiry in the trace at the exposure window's start";
}

// The story is the run's: the same command twice prints the same bytes.
TEST(Explain, TheCommandTellsTheSameStoryTwice) {
  const Outcome a = locksim("explain --scenario redlock-clock-jump");
  const Outcome b = locksim("explain --scenario redlock-clock-jump");
  EXPECT_EQ(a.exit_code, 1) << a.err;
  EXPECT_EQ(a.out, b.out);
  EXPECT_NE(a.out.find("mechanism: server-clock-jumped"), std::string::npos) << a.out;
  EXPECT_NE(a.out.find("replay: locksim run --scenario redlock-clock-jump --seed 1"),
            std::string::npos);
  const Outcome run = locksim("run --scenario redlock-clock-jump --explain");
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_NE(run.out.find("VIOLATION"), std::string::npos);
  EXPECT_NE(run.out.find(a.out.substr(0, a.out.find("replay:"))), std::string::npos) << run.out;
  const Outcome clean = locksim("explain --scenario set-nx-lua-restart-fsync-always");
  EXPECT_EQ(clean.exit_code, 0);
  EXPECT_NE(clean.out.find("no finding to explain"), std::string::npos);
  const Outcome bad = locksim("explain --algorithm no-such-lock");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("--algorithm"), std::string::npos) << bad.err;
}

// What the shrunk counterexample of each cell the reference gates as a
// violation shows (its first failing seed in 1..30, as `sweep --shrink`
// takes it). The failover cells stay failovers: the shrinker keeps the
// cause explain finds, and once cut them to a quick restart of the master.
const std::map<std::string, std::string> kShrunkMechanisms = {
    {"getset-timestamp/client-clock", "contender-clock-ahead"},
    {"getset-timestamp/crash-restart", "restart-lost-lock"},
    {"getset-timestamp/failover", "stale-primary-grant"},
    {"getset-timestamp/partition", "late-release"},
    {"getset-timestamp/pause", "pause-outlasted-lease"},
    {"mysql-center/client-clock", "contender-clock-ahead"},
    {"mysql-center/failover", "failover-lost-lock"},
    {"mysql-center/partition", "late-grant"},
    {"mysql-center/pause", "pause-outlasted-lease"},
    {"mysql-segmented/client-clock", "contender-clock-ahead"},
    {"mysql-segmented/failover", "failover-lost-lock"},
    {"mysql-segmented/partition", "late-grant"},
    {"mysql-segmented/pause", "pause-outlasted-lease"},
    {"mysql-v1/client-clock", "contender-clock-ahead"},
    {"mysql-v1/failover", "failover-lost-lock"},
    {"mysql-v1/partition", "late-grant"},
    {"mysql-v1/pause", "pause-outlasted-lease"},
    {"naive-setnx/crash-restart", "restart-lost-lock"},
    {"naive-setnx/failover", "failover-lost-lock"},
    {"naive-setnx/partition", "late-release"},
    {"naive-setnx/pause", "pause-outlasted-lease"},
    {"naive-setnx/server-clock", "server-clock-jumped"},
    {"redlock/crash-restart", "restart-lost-lock"},
    {"redlock/client-clock", "holder-clock-skewed"},
    {"redlock/failover", "failover-lost-lock"},
    {"redlock/pause", "pause-outlasted-lease"},
    {"redlock/server-clock", "server-clock-jumped"},
    {"redisson/crash-restart", "restart-lost-lock"},
    {"redisson/failover", "restart-lost-lock"},
    {"redisson/pause", "pause-outlasted-lease"},
    {"redisson/server-clock", "server-clock-jumped"},
    {"redisson-fair/crash-restart", "restart-lost-lock"},
    {"redisson-fair/failover", "restart-lost-lock"},
    {"redisson-fair/pause", "pause-outlasted-lease"},
    {"redisson-fair/server-clock", "server-clock-jumped"},
    {"redisson-fenced/crash-restart", "restart-lost-lock"},
    {"redisson-fenced/failover", "restart-lost-lock"},
    {"redisson-fenced/partition", "hold-outlasted-lease"},
    {"redisson-fenced/pause", "pause-outlasted-lease"},
    {"redisson-fenced/server-clock", "server-clock-jumped"},
    {"redisson-leased/crash-restart", "restart-lost-lock"},
    {"redisson-leased/failover", "failover-lost-lock"},
    {"redisson-leased/partition", "late-grant"},
    {"redisson-leased/pause", "pause-outlasted-lease"},
    {"redisson-leased/server-clock", "server-clock-jumped"},
    {"set-nx-lua/crash-restart", "restart-lost-lock"},
    {"set-nx-lua/failover", "failover-lost-lock"},
    {"set-nx-lua-fenced/crash-restart", "restart-lost-lock"},
    {"set-nx-lua-fenced/failover", "failover-lost-lock"},
    {"set-nx-lua-fenced/partition", "late-grant"},
    {"set-nx-lua-fenced/pause", "pause-outlasted-lease"},
    {"set-nx-lua-fenced/server-clock", "server-clock-jumped"},
    {"set-nx-lua/partition", "late-grant"},
    {"set-nx-lua/pause", "pause-outlasted-lease"},
    {"set-nx-lua/server-clock", "server-clock-jumped"},
    {"zk-curator/pause", "session-expired-while-paused"},
    {"zk-herd/pause", "session-expired-while-paused"},
    {"zk-recipe/partition", "session-expired-while-cut-off"},
    {"zk-recipe/pause", "session-expired-while-paused"},
};

TEST(Explain, EveryShrunkReferenceViolationNamesItsMechanism) {
  const auto reference =
      nlohmann::json::parse(slurp(fs::path(LOCKSIM_SOURCE_DIR) / "expectations/reference.json"));
  locksim::harness::SweepPlan plan;
  // As `locksim sweep` plans them: 20 s runs, stuck after 10 s, each seed
  // drawing its workload (cli/sweep_command.cpp's defaults).
  plan.base.duration = locksim::Duration::seconds(20);
  plan.base.stuck_after = locksim::Duration::seconds(10);
  plan.base.workload.draw = true;
  locksim::testing::ScratchDir dir("explain-shrunk");
  int cells = 0;
  for (const auto& cell : reference["cells"]) {
    if (cell["verdict"] != "violation") continue;
    const std::string name =
        cell["algorithm"].get<std::string>() + "/" + cell["profile"].get<std::string>();
    std::optional<RunConfig> failing;
    const uint64_t seeds = std::max<uint64_t>(30, cell.value("seeds_within", 30));
    for (uint64_t seed = 1; seed <= seeds && !failing; ++seed) {
      const RunConfig c = plan.config_of(cell["algorithm"], cell["profile"], seed);
      const auto r = locksim::harness::simulate_and_check(c).result;
      if (locksim::harness::shrink::keeps_finding(locksim::harness::shrink::Finding::kSafety,
                                                  r.checks))
        failing = c;
    }
    ASSERT_TRUE(failing) << name << ": no failing seed in 1.." << seeds;
    const fs::path out = dir.path() / (std::to_string(cells) + ".json");
    std::string command = locksim::harness::replay_command(*failing);
    command.replace(0, std::string("locksim run").size(), "shrink");
    const Outcome shrunk = locksim(command + " --out " + out.string());
    ASSERT_EQ(shrunk.exit_code, 0) << name << ": " << shrunk.err;
    const Outcome told = locksim("explain --scenario " + out.string());
    const auto it = kShrunkMechanisms.find(name);
    if (it == kShrunkMechanisms.end()) {  // every missing cell at once, with what it said
      ADD_FAILURE() << name << ": no expected mechanism in this test\n" << told.out;
      continue;
    }
    EXPECT_NE(told.out.find("mechanism: " + it->second), std::string::npos) << name << "\n"
                                                                            << told.out;
    // The cause of the run it was shrunk from: shrinking keeps it (a
    // failover cell once shrank to a crash too short for any failover).
    EXPECT_EQ(it->second,
              locksim::checkers::mechanism_id(locksim::harness::shrink::cause_of(*failing)))
        << name;
    EXPECT_EQ(told.out.find("cause not determined"), std::string::npos) << name << "\n" << told.out;
    ++cells;
  }
  EXPECT_EQ(cells, static_cast<int>(kShrunkMechanisms.size()));
}

}  // namespace

namespace {

// The timeline draws the trace: a lane per lock server, the key held, then
// expired on redis-1 under the paused holder, and one numbered mark per step
// of the story, which the page lists below.
TEST(Explain, TheTimelineDrawsEachServerAndTheStory) {
  locksim::testing::ScratchDir dir("explain-html");
  const fs::path page = dir.path() / "t.html";
  const Outcome o = locksim("explain --scenario set-nx-lua-gc-pause --html " + page.string());
  ASSERT_EQ(o.exit_code, 1) << o.err;
  const std::string html = slurp(page);
  EXPECT_NE(html.find("data-lane=\"redis-1\""), std::string::npos);
  EXPECT_NE(html.find("data-server=\"redis-1\" data-state=\"held\""), std::string::npos);
  EXPECT_NE(html.find("data-server=\"redis-1\" data-state=\"expired\""), std::string::npos);
  size_t marks = 0;
  for (size_t at = html.find("class=\"caption\""); at != std::string::npos;
       at = html.find("class=\"caption\"", at + 1))
    ++marks;
  size_t steps = 0;
  for (size_t at = o.out.find("\n   "); at != std::string::npos; at = o.out.find("\n   ", at + 1))
    ++steps;
  EXPECT_EQ(marks, steps) << o.out;
  EXPECT_NE(html.find("<ol class=\"story\">"), std::string::npos);
  EXPECT_NE(html.find("mechanism: <code>pause-outlasted-lease</code>"), std::string::npos);
}

}  // namespace
