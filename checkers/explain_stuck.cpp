#include "checkers/explain_stuck.h"

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

// The stored lock's writer never learned of its grant (no acquire :ok
// carried this token): on ZooKeeper an orphan node, on Redis a key its
// writer left without an expiry when it crashed.
bool explain_ungranted(const ExplainInput& in, const ServerLock& s, TimePoint end, Story& story) {
  const History& h = *in.history;
  if (in.backend == "zookeeper") {
    story.mechanism = Mechanism::kOrphanNode;
    story.steps.push_back(StoryStep{
        end, "the lowest lock node on " + s.server + " is " + s.holder +
                 ", but no client was ever granted it: its creator never learned that its create "
                 "succeeded, and its session lives on, so every contender waits behind it"});
    return true;
  }
  if (s.expires != ServerLock::kNever) return false;
  const std::optional<int> writer = r::client_of_token(h, s.holder);
  std::string text = s.server + " keeps the lock with no expiry, value " + s.holder;
  if (writer) {
    const std::string c = history::client_label(*writer);
    for (const Op& op : h.ops) {
      if (history::is_client_op(op) && op.client == *writer && op.f == history::OpF::kAcquire &&
          op.type == history::OpType::kInfo) {
        text += ": " + c + " set it and its acquire (op " + std::to_string(op.index) +
                ") ended at " + r::at_text(TimePoint{op.time_ns}) + " (" + op.detail +
                ") before it gave the key an expiry";
        break;
      }
    }
  }
  story.mechanism = Mechanism::kNoExpiryAfterCrash;
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
    if (!far) return false;
    story.mechanism = Mechanism::kDeadlineTooFar;
    const std::string c = history::client_label(ok.client);
    story.steps.push_back(StoryStep{i.end, c + " crashed while it held the lock (acquire op " +
                                               std::to_string(ok.index) + ")"});
    story.steps.push_back(StoryStep{
        end,
        s.server + " keeps " + c + "'s lock until " +
            (s.expires == ServerLock::kNever ? std::string("forever")
                                             : format_duration(s.expires - end) + " from now") +
            ": nobody can take it before then"});
    return true;
  }
  return false;
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
  story.steps.push_back(StoryStep{
      l.overdue_since, c + " was still holding past its longest planned hold; " +
                           std::to_string(l.failed_attempts) +
                           " acquires by others failed from here to the end, and " +
                           std::to_string(l.waiting_at_end) + " were still waiting at the end"});
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
  story.steps.push_back(StoryStep{l.unheld_since, "nobody held the lock from here to the end, " +
                                                      std::to_string(l.failed_attempts) +
                                                      " acquires failed meanwhile"});
  for (const ServerLock& s : states_at(*in.trace, end)) {
    if (!s.serving || s.kind != K::kHeld) continue;
    const Op* ok = r::acquire_with_token(*in.history, s.holder);
    if (ok == nullptr ? explain_ungranted(in, s, end, story)
                      : explain_far_deadline(in, s, *ok, end, story) ||
                            explain_lost_release(in, s, *ok, end, story))
      return;
  }
  story.steps.push_back(
      StoryStep{end, "the servers' records do not show what keeps it: cause not determined"});
}

}  // namespace locksim::checkers
