#include "checkers/explain.h"

#include <algorithm>

#include "checkers/explain_records.h"
#include "checkers/explain_stuck.h"
#include "env/assert.h"
#include "env/parse.h"

namespace locksim::checkers {

namespace {

using history::HeldInterval;
using history::History;
using history::Op;
using K = ServerLock::Kind;
namespace r = records;

// How many overlaps are classified for `mechanisms` (the first is told).
constexpr size_t kOverlapsClassifiedMax = 64;
// How many fault steps a story shows before the finding, the latest kept.
constexpr size_t kFaultStepsMax = 8;

std::string who(int client) {
  return history::client_label(client);
}

struct Cause {
  Mechanism mechanism = Mechanism::kUndetermined;
  std::vector<StoryStep> steps;
};

// The changes at exactly `at`.
std::vector<const LockChange*> changes_at(const LockTrace& trace, TimePoint at) {
  std::vector<const LockChange*> out;
  for (const LockChange& c : trace.changes) {
    if (c.at == at) out.push_back(&c);
  }
  return out;
}

// What the holder could know, for the step that says the store let go.
std::string could_know(const History& h, const std::string& holder, TimePoint at) {
  if (const Op* p = r::pause_at(h, holder, at))
    return holder + " was paused (since " + r::at_text(TimePoint{p->time_ns}) +
           ") and could not notice";
  if (r::partition_at(h, holder, at))
    return holder + " was cut off from the servers and could not hear of it";
  return holder + " had no way to know: nothing tells a holder that its lock is gone";
}

// When the serving servers last began to hold `token` (the grant's write),
// at or before `e`.
std::optional<TimePoint> written_at(const LockTrace& trace, const std::string& token, TimePoint e) {
  std::optional<TimePoint> out;
  for (const LockChange& c : trace.changes) {
    if (c.at > e) break;
    if (c.after.serving && c.after.kind == K::kHeld && c.after.holder == token &&
        c.before.holder != token)
      out = c.at;
  }
  return out;
}

// The grant reached its client late enough to matter: after more than half
// of the lease (written at `written`, expired at `e`) had passed, or late
// enough that a hold (heard .. `hold_end`) that fits in the whole lease
// outlasted what was left of it. A hold longer than the whole lease would
// have outlasted it however early its grant came: that is not a late grant.
bool grant_came_late(TimePoint written, TimePoint heard, TimePoint e, TimePoint hold_end) {
  if (heard <= written) return false;
  return (heard - written) * 2 > (e - written) || hold_end - heard <= e - written;
}

// An expiry by a server's clock at `e` of `holder`'s lock: why so early.
Cause expiry_cause(const History& h, const LockTrace& trace, const LockChange& c,
                   const std::string& holder, TimePoint holder_start, TimePoint holder_end,
                   TimePoint e) {
  const std::string& server = c.after.server;
  Cause out;
  std::string text = "the lock expired on " + server + " by its own clock";
  if (const Op* clk = r::clock_fault_before(h, server, e)) {
    out.mechanism = Mechanism::kServerClockFast;
    text += ", which had been moved (" + history::describe_nemesis_op(*clk) + " at " +
            r::at_text(TimePoint{clk->time_ns}) + ")";
  } else if (r::pause_at(h, holder, e) != nullptr) {
    out.mechanism = Mechanism::kPauseOutlastedLease;
  } else if (const Op* own = r::clock_fault_before(h, holder, e)) {
    out.mechanism = Mechanism::kHolderClockSkew;
    text += "; " + holder + "'s clock had been moved (" + history::describe_nemesis_op(*own) +
            "), so it judged its lease longer than the store kept it";
  } else if (const std::optional<TimePoint> written = written_at(trace, c.before.holder, e);
             written && grant_came_late(*written, holder_start, e, holder_end)) {
    // The lease started when the server wrote the key; the client heard of it
    // much later, so what it believed was its lease was mostly gone already.
    out.mechanism = Mechanism::kLateGrant;
    text += ": the server had written it at " + r::at_text(*written) + ", but " + holder +
            " heard of its grant only at " + r::at_text(holder_start) + ", with " +
            format_span((e - holder_start).ns) + " of the lease left";
  } else if (r::partition_at(h, holder, e) != nullptr) {
    // Cut off, the holder could neither renew its lease (a watchdog's
    // renewals time out) nor hear that it ran out.
    out.mechanism = Mechanism::kLeaseExpiredCutOff;
    text += " while " + holder + " was cut off from it and still inside its critical section";
  } else {
    out.mechanism = Mechanism::kHoldOutlastedLease;
    text += " while " + holder + " was still inside its critical section";
  }
  out.steps.push_back(StoryStep{e, text + "; " + could_know(h, holder, e)});
  return out;
}

// The lock node of `holder` vanished at `e` with no release in flight: the
// ensemble expired its session.
Cause session_cause(const History& h, const LockChange& c, const std::string& holder, TimePoint e) {
  Cause out;
  out.mechanism = Mechanism::kSessionExpired;
  if (r::pause_at(h, holder, e))
    out.mechanism = Mechanism::kSessionExpiredPaused;
  else if (r::partition_at(h, holder, e))
    out.mechanism = Mechanism::kSessionExpiredCutOff;
  out.steps.push_back(StoryStep{e, holder + "'s ZooKeeper session expired and " + c.after.server +
                                       " deleted its lock node " + c.before.holder + "; " +
                                       could_know(h, holder, e)});
  return out;
}

// `rel` deleted the lock at `e`: it was sent earlier and arrived, or ran,
// only now. Another client's, or the holder's own for an earlier lease: an
// unconditional DEL its client gave up on (a timeout during a partition)
// stays in the TCP send queue, and a retransmission after the heal can
// deliver it seconds later, onto the holder's next lease.
Cause late_release(const History& h, const LockChange& c, const Op& rel, const std::string& holder,
                   TimePoint e) {
  const std::string owner = who(r::client_of_token(h, c.before.holder).value_or(-1));
  const std::string sender = who(rel.client);
  const std::string sent = "(op " + std::to_string(rel.index) + ", invoked at " +
                           r::at_text(TimePoint{rel.time_ns}) + ")";
  if (sender == holder && owner == holder) {
    return Cause{Mechanism::kLateRelease,
                 {{e, holder + "'s own release of an earlier lease " + sent +
                          ", which it had given up on, arrived only now and deleted the lock on " +
                          c.after.server + ": its new lease; " + could_know(h, holder, e)}}};
  }
  return Cause{Mechanism::kLateRelease,
               {{e, sender + "'s release " + sent + " deleted the lock on " + c.after.server +
                        ", which was " + owner + "'s by then; " + could_know(h, holder, e)}}};
}

// Another client wrote its own token over `holder`'s live lock at `e`.
Cause overwritten(const History& h, const LockChange& c, const std::string& holder, TimePoint e) {
  const std::optional<int> writer = r::client_of_token(h, c.after.holder);
  const std::string w = writer ? who(*writer) : std::string("another client");
  if (writer) {
    if (const Op* clk = r::clock_fault_before(h, w, e)) {
      return Cause{
          Mechanism::kContenderClockAhead,
          {{e, w + "'s clock had been moved (" + history::describe_nemesis_op(*clk) + " at " +
                   r::at_text(TimePoint{clk->time_ns}) + "), so it judged " + holder +
                   "'s live lease expired and wrote its own over it on " + c.after.server}}};
    }
  }
  return Cause{Mechanism::kUndetermined,
               {{e, w + " wrote its own lock over " + holder + "'s on " + c.after.server +
                        "; the records do not show why: cause not determined"}}};
}

// How the store stopped protecting `a` at `e`, from the changes at `e` on
// the servers whose answer counts.
Cause store_let_go(const ExplainInput& in, const HeldInterval& a, TimePoint e) {
  const History& h = *in.history;
  const std::string holder = who(a.client);
  const std::vector<const LockChange*> at_e = changes_at(*in.trace, e);
  for (const LockChange* c : at_e) {
    if (c->after.serving && !c->before.serving && c->after.kind != K::kHeld) {
      return Cause{Mechanism::kFailoverLostLock,
                   {{e, c->after.server + " was promoted to primary, and its copy of the lock is " +
                            to_string(c->after.kind) + ": it never received " + holder +
                            "'s grant; " + could_know(h, holder, e)}}};
    }
  }
  for (const LockChange* c : at_e) {
    if (c->after.serving && c->before.kind == K::kDown && c->after.kind != K::kHeld) {
      return Cause{Mechanism::kRestartLostLock,
                   {{e, c->after.server +
                            " restarted without the lock: what it had not written to "
                            "disk was lost; " +
                            could_know(h, holder, e)}}};
    }
  }
  for (const LockChange* c : at_e) {
    // Gone, or (ZooKeeper) no longer the lowest node: deleted.
    const bool deleted =
        c->after.kind == K::kAbsent || (in.backend == "zookeeper" && c->after.kind == K::kHeld);
    if (!c->after.serving || c->before.kind != K::kHeld || c->after.holder == c->before.holder ||
        !deleted)
      continue;
    // A ZooKeeper release deletes its own client's node, never another's
    // (a node's sequential name is its creator's): the holder's node went
    // with its session, whatever release was still in flight.
    if (in.backend == "zookeeper") return session_cause(h, *c, holder, e);
    const Op* rel = r::release_in_flight(h, e, a.client);
    // None of another client's: the holder's own, sent before this lease
    // (one sent during it would have ended the hold before `e`).
    if (rel == nullptr) rel = r::release_in_flight(h, e, -1);
    if (rel != nullptr && (rel->client != a.client || TimePoint{rel->time_ns} <= a.start))
      return late_release(h, *c, *rel, holder, e);
  }
  for (const LockChange* c : at_e) {
    if (c->after.serving && c->before.kind == K::kHeld && c->after.kind == K::kHeld &&
        c->after.holder != c->before.holder)
      return overwritten(h, *c, holder, e);
  }
  for (const LockChange* c : at_e) {
    if (c->after.serving && c->before.kind == K::kHeld && c->after.kind == K::kExpired)
      return expiry_cause(h, *in.trace, *c, holder, a.start, a.end, e);
  }
  return Cause{Mechanism::kUndetermined,
               {{e, "the store stopped protecting " + holder +
                        ", but the servers' records do not show how: cause not determined"}}};
}

// The grant reached `a` after the store had let the lock go.
Cause late_grant(const ExplainInput& in, const HeldInterval& a) {
  const History& h = *in.history;
  const Op& ok = h.ops[static_cast<size_t>(a.acquire_index)];
  const Op* invoke = r::invocation_of(h, ok);
  std::string text = who(a.client) + "'s grant reached it only now";
  if (invoke != nullptr)
    text += ", " + format_span(ok.time_ns - invoke->time_ns) + " after it asked (op " +
            std::to_string(invoke->index) + " at " + r::at_text(TimePoint{invoke->time_ns}) + ")";
  // When the store let this grant go: it stopped holding the token, or it
  // stored the token already expired (a deadline past when it committed).
  std::optional<TimePoint> gone;
  for (const LockChange& c : in.trace->changes) {
    if (c.at > a.start) break;
    const bool left = c.before.kind == K::kHeld && c.before.holder == ok.token &&
                      !(c.after.kind == K::kHeld && c.after.holder == ok.token);
    const bool stored_expired =
        c.after.kind == K::kExpired && c.after.holder == ok.token && c.before.holder != ok.token;
    if (c.after.serving && (left || stored_expired)) gone = c.at;
  }
  text += gone ? "; the store had let it go at " + r::at_text(*gone) +
                     ", before the grant reached " + who(a.client)
               : "; by then the store no longer protected it";
  return Cause{Mechanism::kLateGrant, {{a.start, text + ". " + who(a.client) + " could not tell"}}};
}

const std::string& token_of(const History& h, const HeldInterval& i) {
  return h.ops[static_cast<size_t>(i.acquire_index)].token;
}

// Why `b` got the lock while `a` held it. The store's own records say whose
// the lock was: if it never kept b's grant, b's grant came late; otherwise
// the instant it stopped keeping a's is where the story turns.
Cause overlap_cause(const ExplainInput& in, const Overlap& ov) {
  const History& h = *in.history;
  const LockTrace& trace = *in.trace;
  if (!trace.supported)
    return Cause{Mechanism::kUndetermined,
                 {{ov.window_start,
                   "the servers' lock was not "
                   "recorded: cause not determined"}}};
  if (!r::protected_by(states_at(trace, ov.b.start), token_of(h, ov.b)))
    return late_grant(in, ov.b);
  const std::optional<TimePoint> lost =
      r::lost_at(trace, token_of(h, ov.a), ov.a.start, ov.b.start);
  if (lost && *lost == ov.a.start) return late_grant(in, ov.a);
  if (lost) return store_let_go(in, ov.a, *lost);
  const std::string b = who(ov.b.client);
  if (const Op* clk = r::clock_fault_before(h, b, ov.window_start)) {
    return Cause{Mechanism::kContenderClockAhead,
                 {{ov.window_start,
                   "the store still protected " + who(ov.a.client) + " by a correct clock, but " +
                       b + "'s clock had been moved (" + history::describe_nemesis_op(*clk) +
                       "): it judged the lease over"}}};
  }
  return Cause{
      Mechanism::kUndetermined,
      {{ov.window_start, "the store still protected " + who(ov.a.client) + " when " + b +
                             " was granted the lock; the records do not show why: cause not "
                             "determined"}}};
}

// "c3 acquired the lock (acquire op 8); the store would keep it until
// 6.857s": until when the servers' own expiries protect it, if nothing else
// happens.
void add_acquired(const ExplainInput& in, const HeldInterval& a, std::vector<StoryStep>& steps) {
  std::string text =
      who(a.client) + " acquired the lock (acquire op " + std::to_string(a.acquire_index) + ")";
  if (in.trace->supported) {
    const std::string& token = token_of(*in.history, a);
    const std::optional<TimePoint> until = r::protected_until(states_at(*in.trace, a.start), token);
    if (until && *until == ServerLock::kNever) {
      text += "; the store keeps it until it is deleted (no expiry)";
    } else if (until) {
      text += "; the store would keep it until " + r::at_text(*until);
    }
  }
  steps.push_back(StoryStep{a.start, text});
}

// The faults up to `until`, the latest kFaultStepsMax.
void add_faults(const History& h, TimePoint until, std::vector<StoryStep>& steps) {
  std::vector<StoryStep> faults;
  for (const Op& op : h.ops) {
    if (op.time_ns > until.ns) break;
    if (!history::is_client_op(op))
      faults.push_back(
          StoryStep{TimePoint{op.time_ns}, "fault: " + history::describe_nemesis_op(op)});
  }
  const size_t skip = faults.size() > kFaultStepsMax ? faults.size() - kFaultStepsMax : 0;
  steps.insert(steps.end(), faults.begin() + static_cast<long>(skip), faults.end());
}

void tell_overlap(const ExplainInput& in, const Overlap& ov, const Cause& cause, Story& story) {
  const History& h = *in.history;
  add_acquired(in, ov.a, story.steps);
  add_faults(h, ov.window_start, story.steps);
  story.steps.insert(story.steps.end(), cause.steps.begin(), cause.steps.end());
  story.steps.push_back(
      StoryStep{ov.window_start, who(ov.b.client) + " acquired the lock (acquire op " +
                                     std::to_string(ov.b.acquire_index) + ") while " +
                                     who(ov.a.client) + " still believed it held it"});
  story.steps.push_back(StoryStep{
      ov.window_end,
      "both believed they held it for " + format_span((ov.window_end - ov.window_start).ns)});
}

void explain_overlaps(const ExplainInput& in, Story& story) {
  const std::vector<Overlap>& overlaps = in.verdicts->mutex.overlaps;
  story.finding = "two holders";
  for (size_t i = 0; i < overlaps.size() && i < kOverlapsClassifiedMax; ++i) {
    const Cause cause = overlap_cause(in, overlaps[i]);
    if (i == 0) {
      story.mechanism = cause.mechanism;
      tell_overlap(in, overlaps[i], cause, story);
    }
    if (std::find(story.mechanisms.begin(), story.mechanisms.end(), cause.mechanism) ==
        story.mechanisms.end())
      story.mechanisms.push_back(cause.mechanism);
  }
}

// Exposure with no overlap: the store let a holder go and nobody stepped in.
void explain_latent(const ExplainInput& in, Story& story) {
  const ExposureWindow& w = in.verdicts->exposure.windows.front();
  const History& h = *in.history;
  const auto held = std::find_if(h.held.begin(), h.held.end(), [&w](const HeldInterval& i) {
    return i.acquire_index == w.acquire_index;
  });
  LOCKSIM_ASSERT_MSG(held != h.held.end(), "an exposure window lies in a held interval");
  const Cause cause =
      w.start == held->start ? late_grant(in, *held) : store_let_go(in, *held, w.start);
  story.finding = "lease exposure (latent: nobody stepped in)";
  story.mechanism = cause.mechanism;
  add_acquired(in, *held, story.steps);
  add_faults(h, w.start, story.steps);
  story.steps.insert(story.steps.end(), cause.steps.begin(), cause.steps.end());
  story.steps.push_back(
      StoryStep{w.end, "exposed for " + format_span((w.end - w.start).ns) +
                           "; no contender stepped in, so no two holders this time"});
}

}  // namespace

Story explain(const ExplainInput& in) {
  LOCKSIM_ASSERT(in.history != nullptr && in.verdicts != nullptr && in.trace != nullptr);
  Story story;
  const Verdicts& v = *in.verdicts;
  if (v.mutex.kind == Validity::kInvalid && !v.mutex.overlaps.empty()) {
    explain_overlaps(in, story);
  } else if (v.exposure.latent) {
    explain_latent(in, story);
  } else if (v.liveness.kind == Validity::kInvalid) {
    explain_stuck(in, story);
  }
  if (v.consequences.kind == Validity::kInvalid) {
    if (story.finding.empty()) {
      story.finding = "a consequence for the data";
      story.mechanism = Mechanism::kUndetermined;
    }
    const TimePoint end = TimePoint{} + in.history->run_length;
    story.steps.push_back(StoryStep{end, "for the data: " + v.consequences.explanation});
  }
  if (story.mechanisms.empty() && story.mechanism != Mechanism::kNone)
    story.mechanisms.push_back(story.mechanism);
  std::stable_sort(story.steps.begin(), story.steps.end(),
                   [](const StoryStep& x, const StoryStep& y) { return x.at < y.at; });
  story.prevention = prevention(story.mechanism, in.algorithm, in.backend);
  return story;
}

}  // namespace locksim::checkers
