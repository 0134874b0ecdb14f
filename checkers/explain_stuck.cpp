#include "checkers/explain_stuck.h"

#include <utility>
#include <vector>

#include "checkers/explain_nobody.h"
#include "checkers/explain_queue.h"
#include "checkers/explain_records.h"
#include "env/assert.h"
#include "env/parse.h"

namespace locksim::checkers {

namespace {

using history::History;
using history::Op;
using K = ServerLock::Kind;
namespace r = records;

// A deadline further ahead than this, kept by a crashed holder, is the
// article's "expire of a year": nobody will live to see it.
constexpr Duration kFarDeadline = Duration::seconds(86'400);

// On a lock whose nodes carry a per-acquire GUID (Curator's protected mode,
// "_c_<guid>-lock-..."), the acquire that was granted another node with the
// same GUID as `node`, or nullptr.
const Op* guid_twin(const History& h, const std::string& node) {
  const size_t from = node.rfind("/_c_");
  const size_t dash = from == std::string::npos ? from : node.find('-', from);
  if (dash == std::string::npos) return nullptr;
  const std::string guid = node.substr(from + 1, dash - from);  // "_c_<guid>-"
  for (const Op& op : h.ops) {
    if (history::is_client_op(op) && op.f == history::OpF::kAcquire &&
        op.type == history::OpType::kOk && op.token != node &&
        op.token.find("/" + guid) != std::string::npos)
      return &op;
  }
  return nullptr;
}

bool explain_orphan(const ExplainInput& in, const ServerLock& s, TimePoint end, Story& story) {
  story.mechanism = Mechanism::kOrphanNode;
  std::string text = "the lowest lock node on " + s.server + " is " + s.holder +
                     ", but no client was ever granted it: its creator never learned that its "
                     "create succeeded, and its session lives on, so every contender waits "
                     "behind it";
  if (const Op* twin = guid_twin(*in.history, s.holder)) {
    text += "; its name carries the GUID of " + history::client_label(twin->client) +
            "'s acquire (op " + std::to_string(twin->index) + "), which was granted " +
            twin->token +
            ": protected mode found one of that acquire's two nodes and left this one";
  }
  story.steps.push_back(StoryStep{end, text});
  return true;
}

// The acquire ended because its client crashed.
bool ended_by_crash(const History& h, const Op& done) {
  for (const Op& op : h.ops) {
    if (op.time_ns > done.time_ns) break;
    if (op.time_ns == done.time_ns && op.f == history::OpF::kCrash &&
        r::names(op, history::client_label(done.client)))
      return true;
  }
  return false;
}

// The stored lock's writer never learned of its grant (no acquire :ok
// carried this token): on ZooKeeper an orphan node, on Redis a key with no
// expiry, its writer's acquire ended (crashed) or never learned that its
// SETNX landed (gave up, or still waiting) before it gave the key an expiry.
bool explain_ungranted(const ExplainInput& in, const ServerLock& s, TimePoint end, Story& story) {
  const History& h = *in.history;
  if (in.backend == "zookeeper") return explain_orphan(in, s, end, story);
  // When the lock was first stored for this holder, on this server.
  const LockChange* first = r::first_stored(*in.trace, s.holder, s.server);
  // A fair lock's queue head granted after its waiter had gone.
  if (first != nullptr && explain_late_head_grant(in, *first, end, story)) return true;
  if (s.expires != ServerLock::kNever) return explain_unheard_grant(in, s, end, story);
  const std::optional<int> writer = r::client_of_token(h, s.holder);
  const TimePoint written = first != nullptr ? first->at : end;
  std::string text = s.server + " keeps the lock with no expiry, value " + s.holder +
                     ", first stored at " + r::at_text(written);
  size_t crashed = 0, unknown = 0;
  if (writer) {
    const std::string c = history::client_label(*writer);
    std::string which;
    for (const auto& [inv, done] : r::acquires_unknown(h, *writer, written)) {
      which += std::string(which.empty() ? "" : "; ") + "op " + std::to_string(inv->index) +
               ", invoked at " + r::at_text(TimePoint{inv->time_ns});
      if (done == nullptr) {
        which += ", still waiting at the end";
        ++unknown;
        continue;
      }
      which += ", ended at " + r::at_text(TimePoint{done->time_ns}) + " (" + done->detail + ")";
      ++(ended_by_crash(h, *done) ? crashed : unknown);
    }
    if (!which.empty())
      text += ": no acquire was granted it; " + c +
              "'s acquires that may have set it ended without knowing their outcome (" + which +
              "), none giving the key an expiry";
  }
  story.mechanism = crashed > 0 && unknown == 0   ? Mechanism::kNoExpiryAfterCrash
                    : unknown > 0 && crashed == 0 ? Mechanism::kNoExpiryOutcomeUnknown
                                                  : Mechanism::kUndetermined;
  if (story.mechanism == Mechanism::kUndetermined) text += "; cause not determined";
  story.steps.push_back(StoryStep{end, text + "; it will never expire"});
  return true;
}

// The holder let go of the lock, but its release's outcome was unknown and
// the lock is still there.
bool explain_lost_release(const ExplainInput& in, const ServerLock& s, const Op& ok, TimePoint end,
                          Story& story) {
  const History& h = *in.history;
  for (const history::HeldInterval& i : h.held) {
    if (i.acquire_index != ok.index || i.release_index < 0) continue;
    const Op& rel = h.ops[static_cast<size_t>(i.release_index)];
    for (size_t k = static_cast<size_t>(rel.index) + 1; k < h.ops.size(); ++k) {
      const Op& done = h.ops[k];
      if (done.process != rel.process || done.f != history::OpF::kRelease) continue;
      if (done.type == history::OpType::kOk) return false;
      story.mechanism = Mechanism::kReleaseLost;
      const std::string c = history::client_label(ok.client);
      story.steps.push_back(
          StoryStep{TimePoint{done.time_ns}, c + "'s release (op " + std::to_string(rel.index) +
                                                 ") ended " + history::to_string(done.type) + " (" +
                                                 done.detail + "); it did not try again"});
      story.steps.push_back(StoryStep{end, s.server + " still keeps " + c + "'s lock " + s.holder +
                                               ", and nothing will remove it"});
      return true;
    }
  }
  return false;
}

// The lock's holder was granted it and then crashed; its deadline is far off.
bool explain_far_deadline(const ExplainInput& in, const ServerLock& s, const Op& ok, TimePoint end,
                          Story& story) {
  const History& h = *in.history;
  for (const history::HeldInterval& i : h.held) {
    if (i.acquire_index != ok.index) continue;
    if (i.end_reason != history::HeldInterval::EndReason::kCrash) return false;
    const bool far = s.expires == ServerLock::kNever || s.expires - end > kFarDeadline;
    // A lease of ordinary length, still running at the end: the wait a
    // lease lock makes everyone do after its holder crashed, by design.
    story.mechanism = far ? Mechanism::kDeadlineTooFar : Mechanism::kCrashedHolderLease;
    const std::string c = history::client_label(ok.client);
    story.steps.push_back(StoryStep{i.end, c + " crashed while it held the lock (acquire op " +
                                               std::to_string(ok.index) + ")"});
    const std::string until = s.expires == ServerLock::kNever ? std::string("forever")
                              : far ? format_long_duration(s.expires - end) + " from now"
                                    : "its lease runs out at " + r::at_text(s.expires) + ", " +
                                          format_seconds((s.expires - end).ns) + " after the end";
    story.steps.push_back(StoryStep{end, s.server + " keeps " + c + "'s lock until " + until +
                                             ": nobody can take it before then"});
    return true;
  }
  return false;
}

// The servers whose answer counts were down at the end, too many of them
// for any grant (one of one; three of Redlock's five): no acquire could be
// granted, whatever the lock. Or none was serving at all (no primary).
bool explain_store_down(const ExplainInput& in, TimePoint end, Story& story) {
  // Without a trace there are no servers to read, which is not none serving.
  if (!in.trace->supported) return false;
  const std::vector<ServerLock> states = states_at(*in.trace, end);
  if (states.empty()) return false;
  size_t serving = 0, up = 0, down_total = 0;
  for (const ServerLock& s : states) {
    down_total += s.kind == K::kDown ? 1 : 0;
    if (!s.serving) continue;
    ++serving;
    if (s.kind != K::kDown) ++up;
  }
  if (serving > 0 && up >= serving / 2 + 1) return false;
  const History& h = *in.history;
  std::string names;
  for (const ServerLock& s : states) {
    // With none serving (no primary, no leader), every server down is why.
    if ((serving > 0 && !s.serving) || s.kind != K::kDown) continue;
    const LockChange* down = r::went_down(*in.trace, s.server, end);
    const TimePoint since = down != nullptr ? down->at : TimePoint{};
    std::string how = " went down";
    if (const Op* crash = r::crash_between(h, s.server, since, since)) {
      how = " crashed (" + history::describe_nemesis_op(*crash) + ")";
    } else if (const Op* pause = r::pause_at(h, s.server, since)) {
      how = " was paused (" + history::describe_nemesis_op(*pause) + ")";
    }
    story.steps.push_back(StoryStep{since, s.server + how + " and was still down at the end"});
    names += (names.empty() ? "" : ", ") + s.server;
  }
  const std::string servers = std::to_string(states.size());
  story.steps.push_back(StoryStep{
      end, serving == 0 ? "no server was serving at the end (no primary or leader; " +
                              std::to_string(down_total) + " of the " + servers +
                              " servers down): no acquire could be granted"
           : serving == 1 ? names + ", the only server whose answer counts, was down at the "
                                    "end: no acquire could be granted"
                          : std::to_string(serving - up) + " of the " + std::to_string(serving) +
                                " servers whose answer counts (" + names +
                                ") were down at the end: no acquire could be granted"});
  story.mechanism = Mechanism::kStoreDown;
  return true;
}

// What an acquire's detail says when its grant was undone because no
// replica acknowledged it in time (algorithms/redisson_lock.cpp,
// unsynced_grant: Redisson's handleNoSync). The history carries the
// words, not the reason, so the words are what is matched;
// ExplainNobody.GrantsNoReplicaAcknowledgesAreAllUndone holds the two
// together.
constexpr const char* kGrantUndone = "the grant was undone";

// Every acquire that failed while nobody held the lock failed the same way:
// granted, then undone for want of a replica's acknowledgement. With a
// replica further behind than WAIT's second, no grant ever stands.
bool explain_grants_undone(const ExplainInput& in, TimePoint end, Story& story) {
  const History& h = *in.history;
  const TimePoint since = in.verdicts->liveness.unheld_since;
  int undone = 0;
  const Op* first = nullptr;
  for (const Op& op : h.ops) {
    if (op.time_ns < since.ns || !history::is_client_op(op) || op.f != history::OpF::kAcquire ||
        op.type != history::OpType::kFail)
      continue;
    if (op.detail.find(kGrantUndone) == std::string::npos) return false;
    if (first == nullptr) first = &op;
    ++undone;
  }
  if (first == nullptr) return false;
  story.steps.push_back(StoryStep{TimePoint{first->time_ns},
                                  history::client_label(first->client) + "'s acquire ended " +
                                      history::to_string(first->type) + ": " + first->detail});
  story.steps.push_back(StoryStep{
      end, "every acquire that failed while nobody held the lock (" + std::to_string(undone) +
               ") was granted and then undone the same way: no grant stood long enough for a "
               "replica to acknowledge it"});
  story.mechanism = Mechanism::kGrantsUndone;
  return true;
}

// Redisson's RLock waiters (redisson, redisson-leased, redisson-fenced;
// algorithms/redisson_lock.h, step 2) sleep on the lock's unlock channel,
// each for at most the lease its refusal told it (PTTL), and wake early
// only on the message a release publishes. The fair lock's waiters poll.
bool sleeps_on_unlock_message(const std::string& algorithm) {
  return algorithm == "redisson" || algorithm == "redisson-leased" ||
         algorithm == "redisson-fenced";
}

// How the servers that count came to keep no lock: the last change that
// took it from them, told; nullptr when none did.
const LockChange* last_let_go(const LockTrace& trace, TimePoint end) {
  const LockChange* out = nullptr;
  for (const LockChange& c : trace.changes) {
    if (c.at > end) break;
    const bool lost = c.before.serving && c.before.kind == K::kHeld && c.after.kind != K::kHeld;
    const bool promoted_without = c.after.serving && !c.before.serving && c.after.kind != K::kHeld;
    if (lost || promoted_without) out = &c;
  }
  return out;
}

std::string let_go_text(const History& h, const LockChange& c) {
  const std::string& s = c.after.server;
  if (c.after.serving && !c.before.serving) return s + " was promoted without the lock";
  if (c.after.kind == K::kDown) {
    const Op* crash = r::crash_between(h, s, c.at, c.at);
    return s + " went down with the lock" +
           (crash ? " (" + history::describe_nemesis_op(*crash) + ")" : std::string());
  }
  if (c.after.kind == K::kExpired) return "the lock expired on " + s;
  if (c.before.kind == K::kDown) return s + " came back up without the lock";
  return s + " deleted the lock";
}

// A free lock whose waiters sleep on: the servers that count are up and
// keep no lock, and acquires of clients neither paused nor cut off are
// still waiting at the end. The lock went away without a release (a crash,
// a restart, a failover, an expiry) and so without an unlock message: each
// waiter sleeps until the lease it was last told runs out.
bool explain_waiters_asleep(const ExplainInput& in, TimePoint end, Story& story) {
  if (!sleeps_on_unlock_message(in.algorithm)) return false;
  for (const ServerLock& s : states_at(*in.trace, end)) {
    if (s.serving && (s.kind == K::kHeld || s.kind == K::kDown)) return false;
  }
  const History& h = *in.history;
  std::string waiting;
  for (const Op* op : r::open_acquires(h)) {
    const std::string c = history::client_label(op->client);
    if (r::pause_at(h, c, end) != nullptr || r::link_fault_at(h, c, end) != nullptr) continue;
    waiting += (waiting.empty() ? "" : ", ") + c + "'s (op " + std::to_string(op->index) +
               ", invoked at " + r::at_text(TimePoint{op->time_ns}) + ")";
  }
  const LockChange* gone = last_let_go(*in.trace, end);
  if (waiting.empty() || gone == nullptr) return false;
  story.steps.push_back(StoryStep{
      gone->at, let_go_text(h, *gone) + ": no release took it away, so no unlock message was "
                                        "published"});
  story.steps.push_back(
      StoryStep{end, "the servers that count keep no lock, but acquires still wait: " + waiting +
                         ". A waiter sleeps until an unlock message comes or the lease its refusal "
                         "told it runs out, whichever is first"});
  story.mechanism = Mechanism::kWaitersAsleep;
  return true;
}

// Every acquire still waiting at the end has its client paused or cut off
// (a partition, a delay on its links) at the end, and for most of the time
// nobody held the lock, with the servers that count up: the lock may well
// be free, but no contender can reach it.
bool explain_waiters_cut_off(const ExplainInput& in, TimePoint end, Story& story) {
  const History& h = *in.history;
  const TimePoint since = in.verdicts->liveness.unheld_since;
  std::vector<StoryStep> steps;
  for (const Op* op : r::open_acquires(h)) {
    const std::string c = history::client_label(op->client);
    const Op* fault = r::cut_off_at(h, c, end);
    // One that could reach the store, or could for most of the time: not this.
    const int percent = fault == nullptr ? 0 : r::cut_off_percent(h, c, since, end);
    if (percent < r::kMostlyCutOffPercent) return false;
    steps.push_back(
        StoryStep{end, c + "'s acquire (op " + std::to_string(op->index) + ", invoked at " +
                           r::at_text(TimePoint{op->time_ns}) + ") was still waiting, " + c +
                           (fault->f == history::OpF::kPause ? " paused" : " cut off") +
                           r::since_fault(*fault) + ", and paused or cut off for " +
                           std::to_string(percent) + " % of the time since " + r::at_text(since)});
  }
  if (steps.empty()) return false;
  story.steps.insert(story.steps.end(), steps.begin(), steps.end());
  story.steps.push_back(
      StoryStep{end,
                "every acquire still waiting at the end was of a client paused or cut off "
                "from the servers: none could take the lock"});
  story.mechanism = Mechanism::kWaitersCutOff;
  return true;
}

// Stuck held (liveness_checker.h): the holder never let go. A hang of the
// holder's work, if the history shows one, is the cause; the lease the
// store still keeps for it at the end says who kept it alive.
void explain_kept(const ExplainInput& in, Story& story) {
  const LivenessVerdict& l = in.verdicts->liveness;
  const History& h = *in.history;
  const std::string c = history::client_label(l.held_by);
  const Op& ok = h.ops[static_cast<size_t>(l.held_acquire_index)];
  story.steps.push_back(StoryStep{
      TimePoint{ok.time_ns}, c + " took the lock (acquire op " + std::to_string(ok.index) + ")"});
  bool hung = false;
  for (const Op& op : h.ops) {
    if (history::is_client_op(op) || op.f != history::OpF::kHang || op.time_ns < ok.time_ns ||
        !r::names(op, c))
      continue;
    story.steps.push_back(StoryStep{
        TimePoint{op.time_ns},
        c + "'s work hung (" + history::describe_nemesis_op(op) + "), while its process ran on"});
    hung = true;
    break;
  }
  // "others' 0 acquires failed" said nothing when every other client waited.
  const std::string others =
      l.failed_attempts + l.unknown_attempts == 0
          ? "none of the others' acquires ended"
          : "others' " + unsuccessful_text(l.failed_attempts, l.unknown_attempts, "acquire");
  story.steps.push_back(StoryStep{
      l.overdue_since, c + " was still holding past its longest planned hold; " + others +
                           " from here to the end, and " + std::to_string(l.waiting_at_end) +
                           (l.waiting_at_end == 1 ? " was" : " were") +
                           " still waiting at the end"});
  const TimePoint end = TimePoint{} + h.run_length;
  for (const ServerLock& s : states_at(*in.trace, end)) {
    if (!s.serving || s.kind != K::kHeld || s.holder != ok.token) continue;
    story.steps.push_back(
        StoryStep{end, s.server + " still keeps " + c + "'s lock" +
                           (s.expires == ServerLock::kNever
                                ? std::string(", with no expiry")
                                : ", expiring " + format_duration(s.expires - end) + " from now") +
                           ": its lease was renewed all along"});
    if (hung) story.mechanism = Mechanism::kHolderKeptLock;
    return;
  }
}

}  // namespace

void explain_stuck(const ExplainInput& in, Story& story) {
  const LivenessVerdict& l = in.verdicts->liveness;
  LOCKSIM_ASSERT(l.kind == Validity::kInvalid);
  story.finding = "the lock stuck";
  story.mechanism = Mechanism::kUndetermined;
  const TimePoint end = TimePoint{} + in.history->run_length;
  if (l.held_by >= 0) {
    explain_kept(in, story);
    return;
  }
  story.steps.push_back(StoryStep{
      l.unheld_since, "nobody held the lock from here to the end, " +
                          unsuccessful_text(l.failed_attempts, l.unknown_attempts, "acquire") +
                          " meanwhile"});
  for (const ServerLock& s : states_at(*in.trace, end)) {
    if (!s.serving || s.kind != K::kHeld) continue;
    if (explain_revived_lock(in, s, end, story)) return;
    const Op* ok = r::acquire_with_token(*in.history, s.holder);
    if (ok == nullptr ? explain_ungranted(in, s, end, story)
                      : explain_far_deadline(in, s, *ok, end, story) ||
                            explain_lost_release(in, s, *ok, end, story))
      return;
  }
  if (explain_queue_head(in, end, story)) return;
  if (explain_store_down(in, end, story)) return;
  if (explain_grants_undone(in, end, story)) return;
  if (explain_waiters_asleep(in, end, story)) return;
  if (explain_waiters_cut_off(in, end, story)) return;
  story.steps.push_back(
      StoryStep{end, "the servers' records do not show what keeps it: cause not determined"});
}

}  // namespace locksim::checkers
