#include "checkers/explain.h"

#include <algorithm>
#include <set>

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
  if (r::link_fault_at(h, holder, at))
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
// Nor is one heard a network hop after its write (under 1 % of the lease):
// a 30 s hold on a 30 s lease, heard 1 ms late, was told as a late grant
// when its watchdog's renewals had been cut off.
bool grant_came_late(TimePoint written, TimePoint heard, TimePoint e, TimePoint hold_end) {
  if (heard <= written) return false;
  const Duration late = heard - written;
  const Duration lease = e - written;
  return late * 2 > lease || (late * 100 > lease && hold_end - heard <= lease);
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
  } else if (r::link_fault_at(h, holder, e) != nullptr) {
    // Cut off (a partition, or a delay that holds its messages), the holder
    // could neither renew its lease (a watchdog's renewals time out) nor
    // hear that it ran out.
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
// ensemble expired its session. Cut off: a partition or delay on the
// holder's links, or one that splits the servers (a follower cut off from
// the leader cannot pass on its clients' pings). The records do not say
// which server a session was on, so a fault under way at `e` on either path
// is the cut the story names, with the fault itself for the reader to check.
Cause session_cause(const ExplainInput& in, const LockChange& c, const std::string& holder,
                    TimePoint e) {
  const History& h = *in.history;
  Cause out;
  out.mechanism = Mechanism::kSessionExpired;
  std::string why;
  std::vector<std::string> servers;
  for (const ServerLock& s : in.trace->initial) servers.push_back(s.server);
  const Op* cut = nullptr;
  if (r::pause_at(h, holder, e)) {
    out.mechanism = Mechanism::kSessionExpiredPaused;
  } else if ((cut = r::link_fault_at(h, holder, e)) != nullptr) {
    out.mechanism = Mechanism::kSessionExpiredCutOff;
    why = " while a fault on " + holder + "'s links was under way (";
  } else if ((cut = r::servers_split_at(h, servers, e)) != nullptr) {
    out.mechanism = Mechanism::kSessionExpiredCutOff;
    why = " while the ensemble's servers were cut apart (";
  }
  if (cut != nullptr)
    why +=
        history::describe_nemesis_op(*cut) + ", since " + r::at_text(TimePoint{cut->time_ns}) + ")";
  out.steps.push_back(StoryStep{e, holder + "'s ZooKeeper session expired" + why + " and " +
                                       c.after.server + " deleted its lock node " +
                                       c.before.holder + "; " + could_know(h, holder, e)});
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

const std::string& token_of(const History& h, const HeldInterval& i) {
  return h.ops[static_cast<size_t>(i.acquire_index)].token;
}

// A server's state keeps the grant that carried `token`.
bool keeps(const ServerLock& s, const std::string& token) {
  return s.kind == K::kHeld && r::holds(s.holder, token);
}

// What a promoted server had instead of `holder`'s grant: "absent",
// "expired", "c1's earlier lease c1:993c...", "c2's lock c2:...".
std::string copy_of(const History& h, const ServerLock& s, const std::string& holder) {
  if (s.kind != K::kHeld) return to_string(s.kind);
  const std::optional<int> owner = r::client_of_token(h, s.holder);
  if (owner && who(*owner) == holder) return holder + "'s earlier lease " + s.holder;
  return (owner ? who(*owner) : std::string("another client")) + "'s lock " + s.holder;
}

// Promotions lost `a`'s lock at `e`: every server promoted since a's grant
// without it, for losing a majority can take several (Redlock's five
// masters fail over one by one).
Cause failover_cause(const ExplainInput& in, const HeldInterval& a, TimePoint e) {
  const History& h = *in.history;
  const std::string holder = who(a.client);
  const std::string& token = token_of(h, a);
  // Since the grant was first stored: a reply can arrive after the store
  // already lost it.
  TimePoint since = a.start;
  for (const LockChange& c : in.trace->changes) {
    if (c.at >= since) break;
    if (keeps(c.after, token)) since = c.at;
  }
  std::vector<const LockChange*> promoted;
  for (const LockChange& c : in.trace->changes) {
    if (c.at > e) break;
    if (c.at <= since || !c.after.serving || c.before.serving || keeps(c.after, token)) continue;
    promoted.push_back(&c);
  }
  LOCKSIM_ASSERT_MSG(!promoted.empty(), "a promotion at e is after a's grant");
  std::string text;
  if (promoted.size() == 1) {
    text =
        promoted.front()->after.server + " was promoted to primary, and its copy of the lock is " +
        copy_of(h, promoted.front()->after, holder) + ": it never received " + holder + "'s grant";
  } else {
    text = "losing the lock took " + std::to_string(promoted.size()) +
           " promotions, none of a server that had received " + holder + "'s grant: ";
    for (size_t i = 0; i < promoted.size(); ++i) {
      text += (i == 0 ? "" : ", ") + promoted[i]->after.server + " at " +
              r::at_text(promoted[i]->at) +
              " (its copy: " + copy_of(h, promoted[i]->after, holder) + ")";
    }
  }
  return Cause{Mechanism::kFailoverLostLock, {{e, text + "; " + could_know(h, holder, e)}}};
}

// How the store stopped protecting `a` at `e`, from the changes at `e` on
// the servers whose answer counts.
Cause store_let_go(const ExplainInput& in, const HeldInterval& a, TimePoint e) {
  const History& h = *in.history;
  const std::string holder = who(a.client);
  const std::vector<const LockChange*> at_e = changes_at(*in.trace, e);
  const std::string& token = token_of(h, a);
  for (const LockChange* c : at_e) {
    if (c->after.serving && !c->before.serving && !keeps(c->after, token))
      return failover_cause(in, a, e);
  }
  for (const LockChange* c : at_e) {
    // Back from a pause with the lease run out meanwhile: it expired while
    // the server was stopped (a paused server shows as down), and took
    // effect as it resumed.
    if (!c->after.serving || c->before.kind != K::kDown) continue;
    const std::string& server = c->after.server;
    const LockChange* went = r::went_down(*in.trace, server, e);
    if (went == nullptr || !keeps(went->before, token) || went->before.expires > e ||
        r::pause_at(h, server, went->at) == nullptr)
      continue;
    Cause out = expiry_cause(h, *in.trace, *went, holder, a.start, a.end, went->before.expires);
    out.steps.push_back(StoryStep{e, server + " resumed (paused since " + r::at_text(went->at) +
                                         ") and acted at once on the expiry that came due while "
                                         "it was stopped"});
    return out;
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
    if (in.backend == "zookeeper") return session_cause(in, *c, holder, e);
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

// "c2's grant reached it only now, 0.5s after it asked (op 8 at 2.091s)".
std::string grant_heard(const History& h, const HeldInterval& g) {
  const Op& ok = h.ops[static_cast<size_t>(g.acquire_index)];
  std::string text = who(g.client) + "'s grant reached it only now";
  if (const Op* invoke = r::invocation_of(h, ok))
    text += ", " + format_span(ok.time_ns - invoke->time_ns) + " after it asked (op " +
            std::to_string(invoke->index) + " at " + r::at_text(TimePoint{invoke->time_ns}) + ")";
  return text;
}

// The last change at or before `g`'s grant at which a server that counts
// let the grant go: stopped keeping it, or stored it already expired (a
// deadline past when it committed).
const LockChange* let_go(const LockTrace& trace, const std::string& token, TimePoint heard) {
  const LockChange* out = nullptr;
  for (const LockChange& c : trace.changes) {
    if (c.at > heard) break;
    const bool left = keeps(c.before, token) && !keeps(c.after, token);
    const bool stored_expired = c.after.kind == K::kExpired && r::holds(c.after.holder, token) &&
                                !r::holds(c.before.holder, token);
    if (c.after.serving && (left || stored_expired)) out = &c;
  }
  return out;
}

// The first change at or before `heard` that stored `token` on a server
// whose answer did not count then.
const LockChange* kept_elsewhere(const LockTrace& trace, const std::string& token,
                                 TimePoint heard) {
  for (const LockChange& c : trace.changes) {
    if (c.at > heard) break;
    if (!c.after.serving && keeps(c.after, token) && !keeps(c.before, token)) return &c;
  }
  return nullptr;
}

// The servers that count did not keep `g`'s grant when `g` heard of it.
// Where it went says why: kept only by a server whose answer did not count
// (a deposed primary, a replica), taken away before the reply arrived by a
// change store_let_go names (a late release, a failover, a restart), or
// expired first (a late grant, unless a server's clock had been moved).
Cause grant_not_kept(const ExplainInput& in, const HeldInterval& g) {
  const History& h = *in.history;
  const std::string& token = token_of(h, g);
  const std::string c = who(g.client);
  const LockChange* gone = let_go(*in.trace, token, g.start);
  if (gone == nullptr) {
    if (const LockChange* w = kept_elsewhere(*in.trace, token, g.start)) {
      return Cause{Mechanism::kStalePrimaryGrant,
                   {{w->at, c + "'s grant was stored on " + w->after.server +
                                ", whose answer did not count then (a replica, or a primary a "
                                "failover had replaced); no server that counted kept it"}}};
    }
    return Cause{Mechanism::kUndetermined,
                 {{g.start, grant_heard(h, g) + "; no server's records show its lock: cause "
                                                "not determined"}}};
  }
  // Expired by a correct clock before the reply came: the grant was late.
  // Anything else is a change of the store, told as for a holder.
  // (A key removed at its own expiry instant expired too.)
  const bool expired = gone->after.kind == K::kExpired ||
                       (gone->before.kind == K::kHeld && gone->before.expires <= gone->at);
  Cause out{Mechanism::kLateGrant, {}};
  if (!expired || r::clock_fault_before(h, gone->after.server, gone->at) != nullptr)
    out = store_let_go(in, g, gone->at);
  out.steps.push_back(StoryStep{g.start, grant_heard(h, g) + "; the store had let it go at " +
                                             r::at_text(gone->at) + ", before the grant reached " +
                                             c + ". " + c + " could not tell"});
  return out;
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
    return grant_not_kept(in, ov.b);
  const std::optional<TimePoint> lost =
      r::lost_at(trace, token_of(h, ov.a), ov.a.start, ov.b.start);
  if (lost && *lost == ov.a.start) return grant_not_kept(in, ov.a);
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

// "redis-1-r1 was promoted to primary", "zk-2 became the serving leader".
std::string promotion_text(const ExplainInput& in, const LockChange& c) {
  return "failover: " + c.after.server +
         (in.backend == "zookeeper" ? " became the serving leader" : " was promoted to primary") +
         " (its copy of the lock: " + copy_of(*in.history, c.after, "") + ")";
}

// The faults up to `until`, and the promotions they caused (a server
// becoming the one whose answer counts, after the first fault: before it,
// the deployment is still starting), the latest kFaultStepsMax; but a
// promotion of a server the cause's steps name is always kept, since the
// cause reads it ("a grant on redis-1-r1, a primary a failover had
// replaced" once came without redis-1-r1's promotion).
void add_faults(const ExplainInput& in, TimePoint until, const std::vector<StoryStep>& cause,
                std::vector<StoryStep>& steps) {
  // Each step, and the server whose promotion it is when the cause names
  // that server ("" otherwise).
  std::vector<std::pair<StoryStep, std::string>> all;
  std::optional<TimePoint> first_fault;
  for (const Op& op : in.history->ops) {
    if (op.time_ns > until.ns) break;
    if (history::is_client_op(op)) continue;
    all.emplace_back(StoryStep{TimePoint{op.time_ns}, "fault: " + history::describe_nemesis_op(op)},
                     "");
    if (!first_fault) first_fault = TimePoint{op.time_ns};
  }
  if (in.trace->supported && first_fault) {
    for (const LockChange& c : in.trace->changes) {
      if (c.at > until) break;
      if (c.at < *first_fault || !c.after.serving || c.before.serving) continue;
      const bool named = std::any_of(cause.begin(), cause.end(), [&c](const StoryStep& s) {
        return r::names_server(s.text, c.after.server);
      });
      all.emplace_back(StoryStep{c.at, promotion_text(in, c)}, named ? c.after.server : "");
    }
    std::stable_sort(all.begin(), all.end(),
                     [](const auto& x, const auto& y) { return x.first.at < y.first.at; });
  }
  // Only the latest promotion of a named server is the one the cause reads.
  std::set<std::string> seen;
  for (size_t i = all.size(); i-- > 0;) {
    if (!all[i].second.empty() && !seen.insert(all[i].second).second) all[i].second.clear();
  }
  // The latest kFaultStepsMax, less room for the needed ones before them.
  size_t room = kFaultStepsMax;
  std::vector<bool> kept(all.size(), false);
  for (size_t i = 0; i < all.size() && room > 0; ++i) {
    if (all[i].second.empty()) continue;
    kept[i] = true;
    --room;
  }
  for (size_t i = all.size(); i-- > 0 && room > 0;) {
    if (kept[i]) continue;
    kept[i] = true;
    --room;
  }
  for (size_t i = 0; i < all.size(); ++i) {
    if (kept[i]) steps.push_back(std::move(all[i].first));
  }
}

void tell_overlap(const ExplainInput& in, const Overlap& ov, const Cause& cause, Story& story) {
  add_acquired(in, ov.a, story.steps);
  add_faults(in, ov.window_start, cause.steps, story.steps);
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
      w.start == held->start ? grant_not_kept(in, *held) : store_let_go(in, *held, w.start);
  story.finding = "lease exposure (latent: nobody stepped in)";
  story.mechanism = cause.mechanism;
  add_acquired(in, *held, story.steps);
  add_faults(in, w.start, cause.steps, story.steps);
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
