// `locksim explain`: a run's finding told as a chain of causes, in true-time
// order, from the run's own records — the history (client ops and the
// nemesis's), the held intervals, the exposure windows, and the lock as each
// server stored it (checkers/lock_trace.h) — never from a scenario's name.
//
// How a mechanism is found, for the first overlap (a held, b stepped in at T):
//   1. Did the store stop protecting a before T? Its first exposure window
//      says when (E). None: the store still protected a, so b's own judgement
//      let it in — a contender whose clock ran ahead, or undetermined.
//   2. E is a's grant instant: the store had let the lock go before a heard
//      of its grant. Where it went says why: stored only on a server whose
//      answer did not count (a deposed primary), taken by a change step 3
//      names (a late release, a failover), or expired before the reply came
//      (a late grant).
//   3. Otherwise the trace says what changed at E on the servers whose answer
//      counts: a promoted replica without the lock (failover), a restarted
//      server without it (restart), the lock deleted while another client's
//      release was in flight (a late release), the lock expired by a
//      server's clock (then: that clock had jumped or drifted; a was paused;
//      a's clock was skewed; or the hold simply outlasted the lease), the lock
//      node gone with no release in flight (a ZooKeeper session expired,
//      while a was paused, or cut off: a partition or delay on its links, or
//      between the ensemble's servers).
// A liveness finding reads the lock left in the store at the end: a key with
// no expiry whose writer crashed or gave up, a deadline days ahead, a lock node whose
// creator never learned of it, or a free lock whose fair queue is headed by
// the entry of a waiter that crashed or gave up. Anything else is "cause not
// determined": the story says so rather than guess.
#pragma once

#include <string>
#include <vector>

#include "checkers/checker_list.h"
#include "checkers/lock_trace.h"
#include "history/history.h"

namespace locksim::checkers {

// Every way locksim can break a lock, as far as explain can tell them apart.
enum class Mechanism {
  kNone,                  // no finding to explain
  kUndetermined,          // a finding, but the records do not show its cause
  kPauseOutlastedLease,   // the holder was paused past its lease
  kHoldOutlastedLease,    // the holder worked past its lease, no fault involved
  kLeaseExpiredCutOff,    // the lease ran out while the holder was cut off (no renewal got through)
  kServerClockFast,       // a server's clock jumped or ran fast and expired the lock early
  kHolderClockSkew,       // the holder's clock misjudged its own lease
  kContenderClockAhead,   // a contender's clock ran ahead: it judged a live lease expired
  kFailoverLostLock,      // a failover promoted a replica that never had the lock
  kRestartLostLock,       // a server restarted without the lock (no fsync)
  kLateRelease,           // a late release deleted the next holder's lock
  kLateGrant,             // the grant reached its client after the lease had run out
  kStalePrimaryGrant,     // the grant was stored only on a server whose answer did not count
  kSessionExpiredPaused,  // ZooKeeper: the holder's session expired while it was paused
  kSessionExpiredCutOff,  // ZooKeeper: ... while it was cut off from the ensemble
  kSessionExpired,        // ZooKeeper: ... for no fault the history shows at that instant
  kNoExpiryAfterCrash,    // a key with no expiry, its writer crashed (SETNX then EXPIRE)
  kNoExpiryOutcomeUnknown,  // a key with no expiry, its writer's acquire never learned it landed
  kDeadlineTooFar,          // a crashed holder's deadline days ahead (the article's year)
  kOrphanNode,              // a lock node its creator never learned of (a lost create reply)
  kReleaseLost,             // a release whose outcome was unknown left the lock in place
  kHolderKeptLock,          // the holder's work stopped, its process kept renewing the lease
  kDeadWaiterHeadsQueue,    // a gone waiter's entry heads a fair lock's queue: the free lock waits
  kUnheardGrant,  // a grant its client never heard of (ran after it gave up): held for nobody
  kFailoverRevivedLock,    // a promoted replica had the lock but not its release: held for nobody
  kCrashedHolderLease,     // the holder crashed: its lease, still running, keeps everyone out
  kStoreDown,              // too many of the servers that count were down to grant anything
  kWaitersAsleep,          // the lock went without a release: waiters sleep out their lease
  kWaitersCutOff,          // every waiting contender was paused or cut off at the end
  kStalledHeadHoldsQueue,  // a fair queue's head waits, paused or cut off: the free lock waits
  kGrantsUndone,           // every grant undone: no replica acknowledged it in time
};

// A stable id, e.g. "pause-outlasted-lease", "cause-not-determined".
const char* mechanism_id(Mechanism m);
// In words: "the lease ran out while the holder was paused".
const char* mechanism_words(Mechanism m);
// What would have prevented it, for this algorithm and backend ("" if
// nothing short of another algorithm does).
std::string prevention(Mechanism m, const std::string& algorithm, const std::string& backend);

struct StoryStep {
  TimePoint at;
  std::string text;
};

struct Story {
  std::string finding;  // "two holders", "the lock stuck", "lease exposure", "" (none)
  Mechanism mechanism = Mechanism::kNone;  // of the first finding
  // The mechanisms of every overlap, distinct, in the order first met
  // (mechanism first): a late release often follows a pause.
  std::vector<Mechanism> mechanisms;
  std::vector<StoryStep> steps;  // true-time order
  std::string prevention;
};

struct ExplainInput {
  const history::History* history = nullptr;  // required
  const Verdicts* verdicts = nullptr;         // required
  const LockTrace* trace = nullptr;           // required (may be unsupported)
  std::string algorithm;                      // "set-nx-lua"
  std::string backend;                        // "redis", "mysql", "zookeeper"
};

Story explain(const ExplainInput& input);

// The story for people: the steps, one per line with their instant, then
// the mechanism and what would have prevented it.
std::string format_story(const Story& story);

}  // namespace locksim::checkers
