// `locksim explain` for a lock that ended stuck while nobody held it: the
// store keeps it for nobody (an unheard grant, a lock a failover revived),
// a crashed holder's lease still runs, the store is down, or Redisson's
// waiters sleep on. Until these rules, 218 of the 955 findings of a 30-seed
// sweep of every algorithm and profile (23 %) were told as "cause not
// determined", every one of them a stuck lock; 1 is now, and the sweep
// test below holds that share down.
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <string>

#include "checkers/explain.h"
#include "harness/explain_run.h"
#include "harness/run.h"
#include "harness/sweep/sweep.h"
#include "tests/locksim_binary.h"

namespace {

using locksim::testing::locksim;
using locksim::testing::Outcome;

// The story of `args` (after `explain`), asserting the run found something.
std::string told(const std::string& args) {
  const Outcome o = locksim("explain " + args);
  EXPECT_EQ(o.exit_code, 1) << args << "\n" << o.err << o.out;
  return o.out;
}

void expect_steps(const std::string& story, std::initializer_list<const char*> steps) {
  for (const char* step : steps)
    EXPECT_NE(story.find(step), std::string::npos) << step << "\n" << story;
  EXPECT_EQ(story.find("cause not determined"), std::string::npos) << story;
}

// redis-1 paused for 20.6 s from 4.0 s: c1's SET NX, sent at 4.0 s, waits
// in its socket; c1 gives up at 15.4 s. At the resume the SET runs and
// takes the lock for a token no acquire was told of, for its 10 s TTL.
TEST(ExplainNobody, AGrantItsClientNeverHeardOfIsHeldForNobody) {
  const std::string story = told(
      "--algorithm set-nx-lua --seed 10 --duration 34s --clients 2 --hold 6s..8500ms "
      "--retry-pause 135ms --stuck-after 10s --fault 'pause redis-1 at 4041ms for 20610ms'");
  expect_steps(story, {"24.651s  redis-1 stored the lock for c1's token c1:",
                       "which no acquire was granted. c1's acquires that may have: op 6, invoked "
                       "at 4.003s, ended info at 15.422s (timeout after 500 ms)",
                       "Nobody knows of this grant and nobody renews it",
                       "redis-1 keeps the lock for nobody until its lease runs out at 34.652s, "
                       "0.652s after the end",
                       "mechanism: unheard-grant"});
}

// Every grant on redis-1 is undone, for the replica 2 s behind never
// acknowledges within WAIT's second. The replica has c3's grant of 2.0 s at
// 4.0 s, but redis-1 crashes at 4.4 s before sending it the undo of 3.0 s;
// promoted at 5.5 s, it keeps the lock for nobody.
TEST(ExplainNobody, AFailoverRevivesALockItsHolderHadLetGo) {
  const std::string story = told(
      "--algorithm redisson --seed 1 --duration 20s --clients 3 --retry-pause 446ms "
      "--idle 3s..8s --stuck-after 10s --replicas 1 --replication-lag 2s --failover "
      "--down-after 1s --discovery-delay 200ms --fault 'crash redis-1 at 4425ms for 3404ms'");
  expect_steps(story, {"2.005s  redis-1 stored the lock for c3's token c3:",
                       "3.007s  redis-1 deleted it: c3's acquire (op 4) undid its own grant and "
                       "ended fail at 3.007s",
                       "4.006s  redis-1-r1 received the grant by replication, 2.000s after it "
                       "was made",
                       "4.425s  crash redis-1 for 3404ms cut redis-1 off before the delete "
                       "reached redis-1-r1",
                       "5.500s  redis-1-r1 was promoted, its copy of the lock with it",
                       "mechanism: failover-revived-lock"});
}

// c2 crashes holding the fair lock at 2.8 s; its 30 s watchdog lease, last
// renewed before the crash, runs past the end. A lease lock's wait, by
// design, told as one: not a deadline days ahead.
TEST(ExplainNobody, ACrashedHoldersLeaseStillRunningIsToldAsTheLeasesWait) {
  const std::string story = told(
      "--algorithm redisson-fair --seed 2 --duration 20s --clients 3 --retry-pause 343ms "
      "--idle 1500ms..4s --stuck-after 10s --fault 'crash c2 at 2774ms for 2420ms'");
  expect_steps(story, {"2.774s  c2 crashed while it held the lock (acquire op 6)",
                       "redis-1 keeps c2's lock until its lease runs out at 31.588s, 11.588s "
                       "after the end",
                       "mechanism: crashed-holder-lease"});
  // A deadline more than a day ahead stays the article's year.
  EXPECT_NE(told("--scenario mysql-center-client-crash").find("mechanism: deadline-too-far"),
            std::string::npos);
}

// The only Redis paused past the end, and a ZooKeeper ensemble with two of
// three servers down (no leader): no acquire can be granted.
TEST(ExplainNobody, AStoreDownAtTheEndGrantsNothing) {
  expect_steps(told("--algorithm set-nx-lua --seed 11 --duration 20s --stuck-after 10s "
                    "--fault 'pause redis-1 at 5675ms for 23150ms'"),
               {"5.675s  redis-1 was paused (pause redis-1 for 23150ms) and was still down at "
                "the end",
                "redis-1, the only server whose answer counts, was down at the end",
                "mechanism: store-down"});
  expect_steps(told("--algorithm zk-recipe --seed 6 --duration 20s --stuck-after 10s "
                    "--fault 'crash zk-3 at 7060ms for 14080ms' "
                    "--fault 'crash zk-2 at 8870ms for 18640ms'"),
               {"zk-3 crashed (crash zk-3 for 14080ms) and was still down at the end",
                "zk-2 crashed (crash zk-2 for 18640ms)",
                "no server was serving at the end (no primary or leader; 2 of the 3 servers "
                "down)",
                "mechanism: store-down"});
}

// Redisson's RLock waiters sleep on the unlock channel for the lease they
// were told. redis-1 and its replica crash in turn; redis-1 goes down with
// a lock at 12.8 s and comes back without it: no release, no message, and
// the waiters sleep on while the lock is free. The fair lock's waiters
// poll, so it is never told so.
TEST(ExplainNobody, WaitersSleepOnWhenTheLockWentWithoutARelease) {
  const std::string faults =
      " --duration 20s --stuck-after 10s --replicas 1 --replication-lag 250ms --failover "
      "--down-after 1s --discovery-delay 200ms --fault 'crash redis-1 at 1873ms for 3858ms' "
      "--fault 'crash redis-1-r1 at 11320ms for 3138ms' --fault 'crash redis-1 at 12832ms for "
      "3952ms'";
  expect_steps(told("--algorithm redisson --seed 17" + faults),
               {"12.832s  redis-1 went down with the lock (crash redis-1 for 3952ms): no "
                "release took it away, so no unlock message was published",
                "the servers that count keep no lock, but acquires still wait: ",
                "mechanism: waiters-asleep"});
  const Outcome fair = locksim("explain --algorithm redisson-fair --seed 17" + faults);
  EXPECT_EQ(fair.out.find("waiters-asleep"), std::string::npos) << fair.out;
}

// Every link to redis-1 delayed by 19 s, then cut one way and delayed by
// 15 s: from c1's release at 7.7 s to the end, every acquire waits on a
// reply the network holds. A contender cut off only at the very end (c1
// paused for the last second of a run stuck for another reason) is not.
TEST(ExplainNobody, WaitersAllCutOffCannotTakeTheLock) {
  expect_steps(
      told("--algorithm getset-timestamp --seed 37 --duration 51s --clients 3 --hold 6s..8500ms "
           "--retry-pause 457ms --stuck-after 10s --timeout 2s "
           "--fault 'delay c1,c2,c3|redis-1 at 2146ms for 35965ms by 19257ms' "
           "--fault 'partition redis-1->c1,c2,c3 at 38159ms for 8311ms' "
           "--fault 'delay c1,c2,c3|redis-1 at 38542ms for 24034ms by 15478ms'"),
      {"c1's acquire (op 11, invoked at 9.715s) was still waiting, c1 cut off since 38.542s "
       "(delay c1,c2,c3|redis-1 for 24034ms by 15478ms; what it holds arrives until 78.054s), "
       "and paused or cut off for 100 % of the time since 7.715s",
       "every acquire still waiting at the end was of a client paused or cut off from the "
       "servers: none could take the lock",
       "mechanism: waiters-cut-off"});
  // Delays that ended at 27.5 s still hold the links until 40.2 s, past the
  // end: a link keeps its order, so what was sent later waits behind.
  expect_steps(told("--algorithm zk-recipe --seed 7 --duration 40s --clients 3 "
                    "--retry-pause 301ms --idle 1500ms..4s --stuck-after 10s "
                    "--fault 'delay c1,c2,c3|zk-1,zk-2,zk-3 at 3030ms for 24497ms by 12652ms' "
                    "--fault 'delay c1,c2,c3|zk-1,zk-2,zk-3 at 12589ms for 12129ms by 10815ms'"),
               {"c1 cut off since 3.030s (delay c1,c2,c3|zk-1,zk-2,zk-3 for 24497ms by 12652ms; "
                "what it holds arrives until 40.179s)",
                "mechanism: waiters-cut-off"});
  const std::string late = told(
      "--algorithm redisson-fair --seed 2 --duration 20s --clients 3 --retry-pause 343ms "
      "--idle 1500ms..4s --stuck-after 10s --fault 'crash c2 at 2774ms for 2420ms' "
      "--fault 'pause c1 at 19s for 5s' --fault 'pause c3 at 19s for 5s'");
  EXPECT_EQ(late.find("waiters-cut-off"), std::string::npos) << late;
}

// One client, no fault, a replica 2 s behind: Redisson waits 1 s for a
// replica to acknowledge each grant, gets none, and undoes it (the shrunk
// counterexample of redisson x failover, seed 1). With the replica 500 ms
// behind, grants stand and nothing is stuck.
TEST(ExplainNobody, GrantsNoReplicaAcknowledgesAreAllUndone) {
  const std::string setup =
      "--algorithm redisson --seed 1 --duration 10s --clients 1 --hold 1s..1s "
      "--retry-pause 446ms --idle 3s..8s --stuck-after 10s --replicas 1 --failover "
      "--down-after 1s --discovery-delay 200ms --replication-lag ";
  expect_steps(told(setup + "2s"),
               {"c1's acquire ended fail: granted, but no replica acknowledged it within 1 s",
                "every acquire that failed while nobody held the lock (7) was granted and then "
                "undone the same way",
                "mechanism: grants-undone"});
  EXPECT_EQ(locksim("explain " + setup + "500ms").exit_code, 0);
}

// The share of a sweep's findings the story cannot tell: every algorithm x
// every profile x 30 seeds, as `locksim sweep` runs them. 1 of 955 was
// undetermined when these rules came (a fair lock whose waiters were cut
// off for part of the time); a rule that stops firing puts the count back
// up.
TEST(ExplainNobody, FewOfASweepsFindingsAreLeftUndetermined) {
  locksim::harness::SweepPlan plan;
  plan.algorithms = locksim::harness::parse_algorithm_list("all", "algorithms");
  plan.profiles = locksim::harness::parse_profile_list("all", "profiles");
  plan.seed_last = 30;
  plan.base.duration = locksim::Duration::seconds(20);
  plan.base.stuck_after = locksim::Duration::seconds(10);
  plan.base.workload.draw = true;
  int findings = 0;
  std::map<std::string, int> undetermined;  // cell -> count, to name them on failure
  int undetermined_total = 0;
  for (const std::string& a : plan.algorithms) {
    for (const std::string& p : plan.profiles) {
      for (uint64_t seed = plan.seed_first; seed <= plan.seed_last; ++seed) {
        locksim::harness::RunExtras extras;
        extras.trace_lock = true;
        const auto r =
            locksim::harness::simulate_and_check(plan.config_of(a, p, seed), extras).result;
        const auto story = locksim::harness::explain_result(r);
        if (story.mechanism == locksim::checkers::Mechanism::kNone) continue;
        ++findings;
        if (story.mechanism != locksim::checkers::Mechanism::kUndetermined) continue;
        ++undetermined[a + " x " + p];
        ++undetermined_total;
      }
    }
  }
  std::string cells;
  for (const auto& [cell, n] : undetermined) cells += cell + ": " + std::to_string(n) + "\n";
  EXPECT_GT(findings, 500);  // the sweep does find things to tell
  EXPECT_LE(undetermined_total, 5) << findings << " findings; undetermined:\n" << cells;
}

}  // namespace
