#include "checkers/explain_nobody.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "checkers/explain_records.h"
#include "env/parse.h"

namespace locksim::checkers {

namespace {

using history::History;
using history::Op;
using K = ServerLock::Kind;
namespace r = records;

// "op 6, invoked at 4.003s, ended info at 15.422s (timeout after 500 ms);
// op 12, ...": the acquires that may have set a token, and whether every
// one of them had ended before `granted`.
std::string acquires_text(const History& h, const std::string& c,
                          const std::vector<std::pair<const Op*, const Op*>>& candidates,
                          TimePoint granted, TimePoint end, bool* all_ended_before) {
  std::string which;
  *all_ended_before = true;
  for (const auto& [inv, done] : candidates) {
    which += std::string(which.empty() ? "" : "; ") + "op " + std::to_string(inv->index) +
             ", invoked at " + r::at_text(TimePoint{inv->time_ns});
    if (done == nullptr) {
      which += ", still waiting at the end";
      if (const Op* p = r::pause_at(h, c, end))
        which += " (" + c + " paused since " + r::at_text(TimePoint{p->time_ns}) + ")";
      *all_ended_before = false;
      continue;
    }
    which += std::string(", ended ") + history::to_string(done->type) + " at " +
             r::at_text(TimePoint{done->time_ns}) + " (" + done->detail + ")";
    if (done->time_ns > granted.ns) *all_ended_before = false;
  }
  return which;
}

// The acquire of `client` that asked for a token first stored at `at`: its
// last acquire invoked by then. nullptr when none.
const Op* asked_by(const History& h, int client, TimePoint at) {
  const Op* out = nullptr;
  for (const Op& op : h.ops) {
    if (op.time_ns > at.ns) break;
    if (history::is_client_op(op) && op.client == client && op.f == history::OpF::kAcquire &&
        op.type == history::OpType::kInvoke)
      out = &op;
  }
  return out;
}

// Who deleted `token` at `at`: the holder's release, or the acquire that
// undid its own grant (a grant no replica acknowledged) and then failed.
std::string deleted_by(const History& h, int client, const Op* asked, TimePoint at) {
  const Op* done = asked != nullptr ? r::completion_of(h, *asked) : nullptr;
  if (done != nullptr && done->type == history::OpType::kOk) {
    for (const Op& op : h.ops) {
      if (op.time_ns < done->time_ns || !history::is_client_op(op) || op.client != client ||
          op.f != history::OpF::kRelease || op.type != history::OpType::kInvoke)
        continue;
      if (op.time_ns > at.ns) break;
      return ": " + history::client_label(client) + " released it (op " + std::to_string(op.index) +
             ")";
    }
    return "";
  }
  if (done != nullptr && done->time_ns >= at.ns)
    return ": " + history::client_label(client) + "'s acquire (op " + std::to_string(asked->index) +
           ") undid its own grant and ended " + history::to_string(done->type) + " at " +
           r::at_text(TimePoint{done->time_ns}) + " (" + done->detail + ")";
  return "";
}

// The fault that cut `server` off between `from` and `to`: its crash,
// pause or partition. nullptr when none.
const Op* cut_off(const History& h, const std::string& server, TimePoint from, TimePoint to) {
  for (const Op& op : h.ops) {
    if (op.time_ns > to.ns) break;
    const bool cuts = op.f == history::OpF::kCrash || op.f == history::OpF::kPause ||
                      op.f == history::OpF::kPartition;
    if (op.time_ns >= from.ns && !history::is_client_op(op) && cuts && r::names(op, server))
      return &op;
  }
  return nullptr;
}

}  // namespace

// A lock with an expiry that no acquire was granted: the store ran a request
// of an acquire whose client had stopped waiting for it (held by a paused
// server or a cut link, let through by the resume or the heal), or the
// grant's reply never reached it. Nobody holds the lock and nobody renews
// it: it keeps everyone out until its lease runs out. False when the
// history names no acquire that may have asked for it.
bool explain_unheard_grant(const ExplainInput& in, const ServerLock& s, TimePoint end,
                           Story& story) {
  const History& h = *in.history;
  const std::optional<int> writer = r::client_of_token(h, s.holder);
  const LockChange* grant = r::first_stored(*in.trace, s.holder);
  if (!writer || grant == nullptr) return false;
  const auto candidates = r::acquires_unknown(h, *writer, grant->at);
  if (candidates.empty()) return false;
  const std::string c = history::client_label(*writer);
  bool gave_up_first = false;
  const std::string which = acquires_text(h, c, candidates, grant->at, end, &gave_up_first);
  const bool one = candidates.size() == 1;
  std::string text = grant->after.server + " stored the lock for " + c + "'s token " + s.holder +
                     ", which no acquire was granted. " + c +
                     (one ? "'s acquire that asked for it: " : "'s acquires that may have: ") +
                     which;
  if (gave_up_first) {
    // Nobody was waiting for this grant any more: the request itself came late.
    text += std::string(". ") + (one ? "Its request" : "A request of one of them");
    const TimePoint asked{candidates.front().first->time_ns};
    if (const Op* let = r::fault_end_between(h, grant->after.server, c, asked, grant->at))
      text += ", held until " + history::describe_nemesis_op(*let) + " at " +
              r::at_text(TimePoint{let->time_ns}) + ",";
    text += std::string(" ran only now, after ") + (one ? "it" : "all") + " had given up";
  }
  story.steps.push_back(
      StoryStep{grant->at, text + ". Nobody knows of this grant and nobody renews it"});
  // Kept by another server at the end: a copy, which came by replication.
  const LockChange* copy = r::first_stored(*in.trace, s.holder, s.server);
  if (grant->after.server != s.server && copy != nullptr) {
    story.steps.push_back(StoryStep{
        copy->at, s.server + " received the lock by replication" +
                      (s.serving ? std::string(", and its answer counts at the end") : "")});
  }
  story.steps.push_back(StoryStep{end, r::kept_for_nobody(s, s.expires, end)});
  story.mechanism = Mechanism::kUnheardGrant;
  return true;
}

bool explain_revived_lock(const ExplainInput& in, const ServerLock& s, TimePoint end,
                          Story& story) {
  if (!s.serving || s.kind != K::kHeld) return false;
  const std::string& token = s.holder;
  const LockChange* deleted = nullptr;  // the last delete by a server whose answer counted
  for (const LockChange& c : in.trace->changes) {
    if (c.at > end) break;
    if (c.before.serving && c.before.kind == K::kHeld && c.before.holder == token &&
        c.after.kind == K::kAbsent)
      deleted = &c;
  }
  if (deleted == nullptr) return false;
  const LockChange* promoted = nullptr;  // the first promotion after it that brought the lock back
  for (const LockChange& c : in.trace->changes) {
    if (c.at < deleted->at || c.at > end) continue;
    if (c.after.serving && !c.before.serving && c.after.kind == K::kHeld &&
        c.after.holder == token) {
      promoted = &c;
      break;
    }
  }
  const LockChange* grant = r::first_stored(*in.trace, token);
  const std::optional<int> client = r::client_of_token(*in.history, token);
  if (promoted == nullptr || grant == nullptr || !client) return false;
  const std::string& old = deleted->after.server;
  const std::string& revived = promoted->after.server;
  const LockChange* copy = nullptr;  // when the promoted server's copy came
  for (const LockChange& c : in.trace->changes) {
    if (c.at > promoted->at) break;
    if (c.after.server == revived && c.after.kind == K::kHeld && c.after.holder == token &&
        !(c.before.kind == K::kHeld && c.before.holder == token))
      copy = &c;
  }
  // It kept the lock when promoted, so a change gave it the lock by then,
  // unless the trace began with it: nothing to tell of how it came.
  if (copy == nullptr) return false;
  const History& h = *in.history;
  const std::string c = history::client_label(*client);
  const Op* asked = asked_by(h, *client, grant->at);
  story.steps.push_back(StoryStep{
      grant->at,
      grant->after.server + " stored the lock for " + c + "'s token " + token +
          (asked == nullptr ? std::string()
                            : " (" + c + "'s acquire, op " + std::to_string(asked->index) + ")")});
  story.steps.push_back(
      StoryStep{deleted->at, old + " deleted it" + deleted_by(h, *client, asked, deleted->at)});
  story.steps.push_back(StoryStep{
      copy->at, revived + " received the grant by replication, " +
                    format_seconds((copy->at - grant->at).ns) + " after it was made" +
                    (copy->at > deleted->at ? ", and was still to receive the delete" : "")});
  if (const Op* cut = cut_off(h, old, deleted->at, promoted->at))
    story.steps.push_back(
        StoryStep{TimePoint{cut->time_ns}, history::describe_nemesis_op(*cut) + " cut " + old +
                                               " off before the delete reached " + revived});
  story.steps.push_back(
      StoryStep{promoted->at, revived +
                                  " was promoted, its copy of the lock with it: the lock came back "
                                  "after " +
                                  c + " had let go"});
  if (s.server != revived)
    story.steps.push_back(StoryStep{end, s.server + ", serving at the end, has the same copy"});
  story.steps.push_back(StoryStep{end, r::kept_for_nobody(s, s.expires, end)});
  story.mechanism = Mechanism::kFailoverRevivedLock;
  return true;
}

}  // namespace locksim::checkers
