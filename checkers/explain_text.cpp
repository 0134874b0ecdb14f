// The words of `explain` (checkers/explain.h): each mechanism's id, what it
// is, what would have prevented it, and the story laid out for people.
#include <optional>
#include <string>

#include <fmt/format.h>

#include "checkers/explain.h"
#include "env/parse.h"

namespace locksim::checkers {

namespace {

struct MechanismText {
  Mechanism m;
  const char* id;
  const char* words;
};

constexpr MechanismText kTexts[] = {
    {Mechanism::kNone, "none", "no finding to explain"},
    {Mechanism::kUndetermined, "cause-not-determined", "cause not determined"},
    {Mechanism::kPauseOutlastedLease, "pause-outlasted-lease",
     "the lease ran out while the holder was paused"},
    {Mechanism::kHoldOutlastedLease, "hold-outlasted-lease",
     "the lease ran out while the holder was still working (no fault froze it)"},
    {Mechanism::kLeaseExpiredCutOff, "lease-expired-while-cut-off",
     "the lease ran out while the holder was cut off from the servers, still working"},
    {Mechanism::kServerClockFast, "server-clock-jumped",
     "a server's clock jumped or ran fast and expired the lock early"},
    {Mechanism::kHolderClockSkew, "holder-clock-skewed",
     "the holder's clock was skewed, so it believed its lease longer than the store kept it"},
    {Mechanism::kContenderClockAhead, "contender-clock-ahead",
     "a contender's clock ran ahead, so it judged a live lease expired and took the lock"},
    {Mechanism::kFailoverLostLock, "failover-lost-lock",
     "a failover promoted a replica that never received the lock"},
    {Mechanism::kRestartLostLock, "restart-lost-lock",
     "a server restarted without the lock it had not written to disk"},
    {Mechanism::kLateRelease, "late-release", "a late release deleted the next holder's lock"},
    {Mechanism::kLateGrant, "late-grant",
     "the grant reached its client late, when its lease had run out or nearly so"},
    {Mechanism::kStalePrimaryGrant, "stale-primary-grant",
     "the grant was stored only on a server whose answer no longer counted (a replica, or a "
     "primary a failover had replaced), while the servers that counted granted the lock again"},
    {Mechanism::kSessionExpiredPaused, "session-expired-while-paused",
     "the holder's ZooKeeper session expired while it was paused"},
    {Mechanism::kSessionExpiredCutOff, "session-expired-while-cut-off",
     "the holder's ZooKeeper session expired while it was cut off from the ensemble"},
    {Mechanism::kSessionExpired, "session-expired", "the holder's ZooKeeper session expired"},
    {Mechanism::kNoExpiryAfterCrash, "crash-before-expiry",
     "a client crashed between setting the key and giving it an expiry"},
    {Mechanism::kNoExpiryOutcomeUnknown, "setnx-outcome-unknown",
     "the acquire that set the key never learned that its SETNX had landed (it gave up, or was "
     "still waiting), so nothing gave the key an expiry"},
    {Mechanism::kDeadlineTooFar, "deadline-too-far",
     "a crashed holder's lock keeps a deadline far in the future"},
    {Mechanism::kOrphanNode, "orphan-node",
     "a lock node whose creator never learned of it blocks everyone behind it"},
    {Mechanism::kReleaseLost, "release-lost",
     "a release whose outcome was unknown left the holder's lock in place, and nothing expires it"},
    {Mechanism::kHolderKeptLock, "holder-kept-lock",
     "the holder's work stopped while its process kept renewing the lease, so it never let go"},
    {Mechanism::kDeadWaiterHeadsQueue, "dead-waiter-heads-queue",
     "the entry of a waiter that crashed or gave up heads the fair lock's queue, and the free "
     "lock goes to nobody else until a caller's clock passes the entry's timeout"},
    {Mechanism::kUnheardGrant, "unheard-grant",
     "the store granted the lock to an acquire whose client never learned it held it (its "
     "request ran after the client had given up, its reply was lost, or the grant's "
     "confirmation never came), so the lock was held for nobody until its lease ran out"},
    {Mechanism::kFailoverRevivedLock, "failover-revived-lock",
     "a failover promoted a replica that had received the lock but not its release, so the "
     "lock came back for nobody until its lease ran out"},
    {Mechanism::kCrashedHolderLease, "crashed-holder-lease",
     "the holder crashed while it held the lock, and the store keeps it until its lease runs "
     "out: the wait a lease makes everyone do after a crash"},
    {Mechanism::kStoreDown, "store-down",
     "the servers whose answer counts were down (or none served), so no acquire could be "
     "granted"},
    {Mechanism::kWaitersAsleep, "waiters-asleep",
     "the lock went away without a release (a crash, a restart, a failover, an expiry), so no "
     "unlock message woke the waiters, who sleep until the lease they were last told runs out"},
    {Mechanism::kWaitersCutOff, "waiters-cut-off",
     "every acquire still waiting at the end was of a client paused or cut off from the servers "
     "(a partition, a delay on its links), so none could take the lock"},
    {Mechanism::kStalledHeadHoldsQueue, "stalled-head-holds-queue",
     "the waiter at the head of the fair lock's queue was paused or cut off from the servers, "
     "and the free lock goes to nobody else while it cannot ask"},
    {Mechanism::kGrantsUndone, "grants-undone",
     "every grant was undone because no replica acknowledged it within WAIT's timeout (the "
     "replicas lag further behind), so no acquire could keep the lock"},
};

const MechanismText& text_of(Mechanism m) {
  for (const MechanismText& t : kTexts) {
    if (t.m == m) return t;
  }
  return kTexts[1];
}

}  // namespace

const char* mechanism_id(Mechanism m) {
  return text_of(m).id;
}

const char* mechanism_words(Mechanism m) {
  return text_of(m).words;
}

namespace {

// What fencing would add, for a lock that has a token (and checks it on
// writes only) or none.
std::string fencing_advice(const std::string& algorithm) {
  return algorithm.find("fenced") != std::string::npos
             ? "checking the fencing token on reads as well as writes (this lock checks writes "
               "only)"
             : "a fencing token that the guarded store checks on every read and write";
}

// The mechanisms a lease alone cannot stop: their prevention ends with
// `fencing`. nullopt for the others.
std::optional<std::string> prevention_with_fencing(Mechanism m, const std::string& fencing) {
  switch (m) {
    case Mechanism::kPauseOutlastedLease:
    case Mechanism::kHoldOutlastedLease:
    case Mechanism::kSessionExpiredPaused:
      return fencing + "; no lease can protect a holder that does not run";
    case Mechanism::kLeaseExpiredCutOff:
      return "a holder told when its renewals stop reaching the store, which stops work before "
             "its lease can run out (Redisson gives no such callback; Curator's SUSPENDED does), "
             "and " +
             fencing;
    case Mechanism::kServerClockFast:
      return "server clocks that are slewed, never stepped (Redis expires keys by its wall clock), "
             "and " +
             fencing;
    case Mechanism::kHolderClockSkew:
      return "measuring the lease on the client with a monotonic clock, and " + fencing;
    case Mechanism::kHolderKeptLock:
      return "renewing the lease from the work itself (each step of the critical section extends "
             "it) rather than from a timer of the process, or a lease time that ends a hung hold "
             "(Redisson's lock(leaseTime)) with " +
             fencing;
    default:
      return std::nullopt;
  }
}

// Whether `algorithm` follows Curator's rules: a per-acquire GUID in its
// lock nodes' names (protected mode) and a holder that stops at SUSPENDED:
// zk-curator and zk-herd (algorithms/zk_lock.h).
bool curator_rules(const std::string& algorithm) {
  return algorithm == "zk-curator" || algorithm == "zk-herd";
}

// The mechanisms of a stuck lock that nobody holds (checkers/explain_nobody.h,
// explain_stuck.cpp): what would have kept it moving. nullopt for others.
std::optional<std::string> prevention_when_stuck(Mechanism m, const std::string& backend) {
  switch (m) {
    case Mechanism::kFailoverRevivedLock:
      return backend == "mysql"
                 ? "semi-synchronous replication for the release too (the delete waits for a "
                   "replica's ack), or a promotion that waits until the replica has applied "
                   "all it received"
                 : "a store that replicates by consensus (ZooKeeper); WAIT after the release "
                   "narrows the window but does not close it. A short lease bounds how long the "
                   "revived lock keeps everyone out";
    case Mechanism::kCrashedHolderLease:
      return "a shorter lease, which bounds the wait after a crash; it must still outlast the "
             "work, so a lease renewed while the holder runs (a watchdog) is what allows it";
    case Mechanism::kStoreDown:
      return "replicas and a failover that promotes one while the primary is down, or a "
             "consensus store whose majority survives; the lock itself cannot help";
    case Mechanism::kWaitersAsleep:
      return "waiters that also retry on their own, on a period shorter than the lease (the fair "
             "lock's poll), or a shorter lease, which bounds the sleep; Redisson's RLock waiter "
             "wakes only on the message or when the lease it was told runs out";
    case Mechanism::kGrantsUndone:
      return "replicas that keep up within WAIT's timeout (Redisson waits 1 s for one), or "
             "waiting for no replica; undoing an unacknowledged grant is Redisson's guard "
             "against losing it in a failover, so it trades the lock's availability for that";
    case Mechanism::kStalledHeadHoldsQueue:
      return "a shorter wait for queued waiters (Redisson's fairLockWaitTimeout, or tryLock's "
             "waitTime; wait-time here): once a caller's clock passes the stalled head's "
             "timeout, it drops the head and the queue moves on";
    case Mechanism::kWaitersCutOff:
      return "nothing in the lock: a contender that cannot reach the store cannot take it; an "
             "acquire timeout shorter than such a fault only turns the wait into failed retries";
    case Mechanism::kUnheardGrant:
      return "a lease no longer than the work needs, since a grant nobody heard of keeps everyone "
             "out for one whole lease; and a client that, after an acquire of unknown outcome, "
             "releases with that acquire's token once it reaches the store again (a release that "
             "deletes only its own token is safe to send), which undoes a grant that ran before "
             "it";
    default:
      return std::nullopt;
  }
}

// The mechanisms another design of the lock or its store prevents.
std::string prevention_by_design(Mechanism m, const std::string& algorithm,
                                 const std::string& backend) {
  switch (m) {
    case Mechanism::kContenderClockAhead:
      return "letting the server judge expiry by its own clock (SET NX PX instead of client "
             "timestamps; "
             "the database's NOW() instead of the client's time)";
    case Mechanism::kFailoverLostLock:
      return backend == "mysql"
                 ? "semi-synchronous replication (the grant waits for a replica's ack)"
                 : "a store that replicates by consensus (ZooKeeper); Redis's WAIT narrows "
                   "the window but does not close it";
    case Mechanism::kRestartLostLock:
      return backend == "mysql"
                 ? "innodb_flush_log_at_trx_commit=1"
                 : "appendfsync always, or keeping a restarted server out for longer than the TTL";
    case Mechanism::kLateRelease:
      return "a release that deletes the key only if it still holds this client's token (a "
             "compare-and-delete "
             "script, as set-nx-lua does)";
    case Mechanism::kLateGrant:
      return "checking, before using a grant, how long the acquire took against the lease "
             "(Redlock's "
             "validity check)";
    case Mechanism::kSessionExpiredCutOff:
      // Curator's rules stop a holder at SUSPENDED already: a violation
      // under them means it never came, its server still answering.
      if (curator_rules(algorithm))
        return "Curator's SUSPENDED handling is on here already and never fired: the holder's "
               "server went on answering it (a follower cut off from the leader serves its "
               "clients until syncLimit), while the leader expired the session. Only a fencing "
               "token the guarded store checks (the lock node's czxid) stops such a holder; a "
               "syncLimit x tickTime well below the session timeout narrows the window";
      return "Curator's handling of SUSPENDED: stop work when the connection is lost, before the "
             "session can expire";
    case Mechanism::kStalePrimaryGrant:
      return "a store where only the server a majority follows can grant (consensus, as "
             "ZooKeeper); Redis's min-replicas-to-write narrows the window (a master without its "
             "replicas refuses writes) but does not close it";
    case Mechanism::kNoExpiryAfterCrash:
    case Mechanism::kNoExpiryOutcomeUnknown:
      return "setting the key and its expiry in one command: SET key token NX PX ttl";
    case Mechanism::kDeadlineTooFar:
      return "a lease as short as the longest critical section, renewed while the holder works";
    case Mechanism::kOrphanNode:
      // Protected mode is already on there: its acquire found one node of
      // its own and left another.
      if (curator_rules(algorithm))
        return "protected mode is on here already; what it lacks: deleting, once an acquire has "
               "found its node, every other node that carries the acquire's GUID";
      return "Curator's protected mode: a GUID in the node's name lets a client find its own node "
             "after a "
             "lost reply";
    case Mechanism::kDeadWaiterHeadsQueue:
      return "a shorter wait for queued waiters: Redisson's fairLockWaitTimeout (5 minutes by "
             "default; Redisson 3.46+), or the waitTime of tryLock(waitTime, leaseTime, unit), "
             "which takes its place (wait-time here). A dead waiter's entry still blocks the free "
             "lock for about that wait past its turn, plus the lead of the clock that wrote its "
             "timeout: only timeouts written and judged by one clock, the server's, would take "
             "the lead away, and Redisson's scripts take the callers' clocks";
    case Mechanism::kReleaseLost:
      return "retrying a release whose outcome is unknown (deleting one's own lock is idempotent), "
             "or a lease "
             "that expires";
    default:
      return "";
  }
}

}  // namespace

std::string prevention(Mechanism m, const std::string& algorithm, const std::string& backend) {
  if (std::optional<std::string> p = prevention_with_fencing(m, fencing_advice(algorithm))) {
    return *p;
  }
  if (std::optional<std::string> p = prevention_when_stuck(m, backend)) return *p;
  return prevention_by_design(m, algorithm, backend);
}

std::string format_story(const Story& story) {
  if (story.mechanism == Mechanism::kNone)
    return "explain: no finding to explain: the run is clean\n";
  std::string out =
      "explain: " + story.finding + ", because " + mechanism_words(story.mechanism) + "\n";
  for (const StoryStep& s : story.steps)
    out += fmt::format("  {:>9}  {}\n", format_seconds(s.at.ns), s.text);
  out += std::string("mechanism: ") + mechanism_id(story.mechanism);
  if (story.mechanisms.size() > 1) {
    out += "; later overlaps also:";
    for (size_t i = 1; i < story.mechanisms.size(); ++i)
      out += std::string(" ") + mechanism_id(story.mechanisms[i]);
  }
  out += "\n";
  if (!story.prevention.empty()) out += "would have prevented it: " + story.prevention + "\n";
  return out;
}

}  // namespace locksim::checkers
