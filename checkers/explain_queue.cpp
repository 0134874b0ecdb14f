#include "checkers/explain_queue.h"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "checkers/explain_records.h"
#include "env/assert.h"
#include "env/parse.h"

namespace locksim::checkers {

namespace {

using history::History;
using history::Op;
using K = ServerLock::Kind;
namespace r = records;

// From this long on, a span is also given in minutes: a fair lock's
// timeouts lie minutes away, and "1410.512s" alone reads as a count.
constexpr Duration kMinutesFrom = Duration::seconds(120);

bool queued(const ServerLock& s, const std::string& id) {
  return std::any_of(s.queue.begin(), s.queue.end(),
                     [&id](const QueuedWaiter& w) { return w.id == id; });
}

bool heads(const ServerLock& s, const std::string& id) {
  return !s.queue.empty() && s.queue.front().id == id;
}

// When the entry `id` last joined `server`'s queue by `until` (among the
// waiters the trace keeps: one queued far back is first seen when it moved up; a waiter
// purged while it still polled joins again with the same id), and when it
// last became the head.
struct Sighting {
  TimePoint queued;
  TimePoint head_since;
  std::string ahead;           // the head before it ("": it joined an empty queue)
  bool ahead_granted = false;  // ... which left the queue for the lock
};

Sighting sighting(const LockTrace& trace, const std::string& server, const std::string& id,
                  TimePoint until) {
  Sighting out;
  for (const LockChange& c : trace.changes) {
    if (c.at > until) break;
    // A server back from down shows again what it kept: nothing joined then.
    if (c.after.server != server || c.before.kind == K::kDown) continue;
    if (queued(c.after, id) && !queued(c.before, id)) out.queued = c.at;
    if (heads(c.after, id) && !heads(c.before, id)) {
      out.head_since = c.at;
      out.ahead = c.before.queue.empty() ? "" : c.before.queue.front().id;
      out.ahead_granted = c.after.kind == K::kHeld && c.after.holder == out.ahead;
    }
  }
  LOCKSIM_ASSERT(out.queued <= out.head_since);
  return out;
}

// The acquire of `client` that queued its entry by `at`: the last one
// invoked by then and not ended before it, and its end (nullptr: still
// waiting at the end of the run). Both nullptr when there is none.
struct Waiter {
  const Op* invoke = nullptr;
  const Op* done = nullptr;
};

Waiter writer_of(const History& h, int client, TimePoint at) {
  Waiter out;
  for (const Op& op : h.ops) {
    if (op.time_ns > at.ns) break;
    if (!history::is_client_op(op) || op.client != client || op.f != history::OpF::kAcquire ||
        op.type != history::OpType::kInvoke)
      continue;
    const Op* done = r::completion_of(h, op);
    if (done == nullptr || done->time_ns >= at.ns) out = Waiter{&op, done};
  }
  return out;
}

std::string span_text(Duration d) {
  std::string text = format_seconds(d.ns);
  if (d >= kMinutesFrom)
    text += " (about " + std::to_string(d.ns / Duration::seconds(60).ns) + " min)";
  return text;
}

std::string waiter_name(const History& h, const std::string& id) {
  const std::optional<int> c = r::client_of_token(h, id);
  return c ? history::client_label(*c) : id;
}

// ", c2 and c3 waiting behind it"; "" when the head waits alone.
std::string behind(const History& h, const ServerLock& s) {
  std::vector<std::string> names;
  for (size_t i = 1; i < s.queue.size(); ++i) names.push_back(waiter_name(h, s.queue[i].id));
  if (s.queue_length > s.queue.size())
    names.push_back(std::to_string(s.queue_length - s.queue.size()) + " more");
  if (names.empty()) return "";
  std::string text = ", ";
  for (size_t i = 0; i < names.size(); ++i)
    text += (i == 0 ? "" : i + 1 == names.size() ? " and " : ", ") + names[i];
  return text + " waiting behind it";
}

// The entry's arrival: which acquire queued it, and the clock its timeout
// was written from, moved or not.
StoryStep queued_step(const History& h, const ServerLock& s, const Sighting& seen, const Waiter& w,
                      const std::string& c) {
  const std::string& id = s.queue.front().id;
  std::string text = w.invoke == nullptr
                         ? c + "'s entry " + id + " was queued on " + s.server
                         : c + "'s acquire (op " + std::to_string(w.invoke->index) +
                               ", invoked at " + r::at_text(TimePoint{w.invoke->time_ns}) +
                               ") queued its entry " + id + " on " + s.server;
  if (seen.head_since == seen.queued) text += " at the head of the fair lock's queue";
  text += ", with a timeout written from " + c + "'s own clock";
  if (const Op* clk = r::clock_fault_before(h, c, seen.queued)) {
    text += ", which had been moved (" + history::describe_nemesis_op(*clk) + " at " +
            r::at_text(TimePoint{clk->time_ns}) + "): the timeout lies that much later";
  }
  return StoryStep{seen.queued, text};
}

// How the entry came to head the queue: the acquire that queued it, and
// when it moved up to the head if it did not join there.
void arrival_steps(const History& h, const ServerLock& s, const Sighting& seen, const Waiter& w,
                   const std::string& c, Story& story) {
  story.steps.push_back(queued_step(h, s, seen, w, c));
  if (seen.head_since == seen.queued) return;
  std::string text = c + "'s entry became the head of " + s.server + "'s queue";
  if (!seen.ahead.empty())
    text += ", as " + waiter_name(h, seen.ahead) + "'s entry ahead of it " +
            (seen.ahead_granted ? "was granted the lock" : "left the queue");
  story.steps.push_back(StoryStep{seen.head_since, text});
}

// Why the head's waiter never takes the free lock: it crashed, or its
// acquire gave up and left the entry behind. nullopt: it was still waiting
// at the end (paused, cut off: not a dead waiter).
std::optional<StoryStep> gone_step(const History& h, const Sighting& seen, const Waiter& w,
                                   const std::string& c, TimePoint end) {
  const TimePoint until = w.done ? TimePoint{w.done->time_ns} : end;
  if (const Op* crash = r::crash_between(h, c, seen.queued, until)) {
    return StoryStep{TimePoint{crash->time_ns},
                     c + " crashed (" + history::describe_nemesis_op(*crash) +
                         ") with its entry still queued: a crashed waiter never asks again, and "
                         "nothing else takes its entry out"};
  }
  if (w.done == nullptr) return std::nullopt;
  return StoryStep{until, c + "'s acquire (op " + std::to_string(w.invoke->index) + ") ended " +
                              history::to_string(w.done->type) + " (" + w.done->detail +
                              ") and left its entry queued: the cancel that takes it out never "
                              "got through"};
}

// What the end looks like from the head: the text, and whether its
// timeout still lay ahead of a correct clock (so the queue was still stuck).
std::string end_text(const History& h, const ServerLock& s, TimePoint end, bool* ahead) {
  const QueuedWaiter& head = s.queue.front();
  std::string text = s.server + " keeps no live lock, but " + waiter_name(h, head.id) +
                     "'s entry heads its queue of waiters" + behind(h, s) +
                     ": the lock goes only to the head, and a caller drops the head only once "
                     "its own clock has reached the head's timeout";
  *ahead = head.timeout_ms.has_value() && head.due > end;
  if (!head.timeout_ms) return text + ", and this one has none";
  if (head.due == ServerLock::kNever) return text + ", which lies too far ahead for any clock";
  if (!*ahead) {
    return text + ", which a correct clock reached at " + r::at_text(head.due) +
           ", before the end: the records do not show why no caller dropped it";
  }
  return text + ", which a correct clock reaches at " + r::at_text(head.due) + ", " +
         span_text(head.due - end) + " after the end";
}

// The server whose answer counts that keeps a queue and no lock, or nullptr
// (also when one keeps a live lock: then the queue is not what stops a grant).
const ServerLock* free_with_queue(const std::vector<ServerLock>& states) {
  const ServerLock* out = nullptr;
  for (const ServerLock& s : states) {
    if (!s.serving) continue;
    if (s.kind == K::kHeld) return nullptr;
    if (out == nullptr && s.kind != K::kDown && !s.queue.empty()) out = &s;
  }
  return out;
}

}  // namespace

bool explain_queue_head(const ExplainInput& in, TimePoint end, Story& story) {
  const std::vector<ServerLock> states = states_at(*in.trace, end);
  const ServerLock* s = free_with_queue(states);
  if (s == nullptr) return false;
  const History& h = *in.history;
  const std::string& id = s->queue.front().id;
  const std::optional<int> client = r::client_of_token(h, id);
  bool ahead = false;
  const std::string at_end = end_text(h, *s, end, &ahead);
  if (!client) {
    story.steps.push_back(StoryStep{end, at_end + "; the history names no client for the entry " +
                                             id + ": cause not determined"});
    return true;
  }
  const std::string c = history::client_label(*client);
  const Sighting seen = sighting(*in.trace, s->server, id, end);
  const Waiter w = writer_of(h, *client, seen.queued);
  arrival_steps(h, *s, seen, w, c, story);
  const std::optional<StoryStep> gone = gone_step(h, seen, w, c, end);
  if (gone) story.steps.push_back(*gone);
  if (gone && ahead) {
    story.mechanism = Mechanism::kDeadWaiterHeadsQueue;
    story.steps.push_back(StoryStep{end, at_end});
    return true;
  }
  std::string why;
  if (!gone && w.invoke != nullptr) {
    why = "; " + c + "'s acquire was still waiting at the end";
    const Op* cut = r::cut_off_at(h, c, end);
    if (cut != nullptr) {
      why +=
          std::string(cut->f == history::OpF::kPause ? ", paused" : ", cut off from the servers") +
          r::since_fault(*cut);
    }
    // Stalled for most of the time nobody held the lock: the head cannot
    // ask, and the free lock goes to nobody else. It would take the lock
    // the moment it could: not a dead waiter, but the reason all the same.
    const TimePoint since = in.verdicts->liveness.unheld_since;
    if (cut != nullptr && ahead &&
        r::cut_off_percent(h, c, since, end) >= r::kMostlyCutOffPercent) {
      story.mechanism = Mechanism::kStalledHeadHoldsQueue;
      story.steps.push_back(StoryStep{end, at_end + why});
      return true;
    }
  }
  story.steps.push_back(StoryStep{end, at_end + why + ": cause not determined"});
  return true;
}

bool explain_late_head_grant(const ExplainInput& in, const LockChange& grant, TimePoint end,
                             Story& story) {
  const ServerLock& s = grant.before;  // the free lock, its queue as the grant found it
  const std::string& id = grant.after.holder;
  if (grant.after.kind != K::kHeld || s.kind == K::kHeld || s.kind == K::kDown || !heads(s, id))
    return false;
  const History& h = *in.history;
  const std::optional<int> client = r::client_of_token(h, id);
  if (!client) return false;
  const std::string c = history::client_label(*client);
  const Sighting seen = sighting(*in.trace, s.server, id, grant.at);
  const Waiter w = writer_of(h, *client, seen.queued);
  // An acquire still waiting when its entry was granted may yet hear of it:
  // that grant is no dead waiter's.
  if (w.invoke == nullptr || w.done == nullptr || w.done->time_ns > grant.at.ns) return false;
  const std::optional<StoryStep> gone = gone_step(h, seen, w, c, grant.at);
  LOCKSIM_ASSERT(gone.has_value());  // w.done ended it by the grant
  arrival_steps(h, s, seen, w, c, story);
  story.steps.push_back(*gone);
  std::string text = s.server + " granted the lock to " + c + "'s entry " + id +
                     ", still the queue's head, for the acquire that had ended (op " +
                     std::to_string(w.invoke->index) + "): one of its requests, held by the " +
                     "network";
  if (const Op* heal = r::fault_end_between(h, c, s.server, TimePoint{w.invoke->time_ns}, grant.at))
    text += " (" + history::describe_nemesis_op(*heal) + " at " +
            r::at_text(TimePoint{heal->time_ns}) + "; TCP resends at growing intervals)";
  story.steps.push_back(StoryStep{
      grant.at, text + ", arrived only now and ran the acquire script. Nobody knows of this "
                       "grant and nobody renews it"});
  story.steps.push_back(StoryStep{end, r::kept_for_nobody(s, grant.after.expires, end)});
  story.mechanism = Mechanism::kDeadWaiterHeadsQueue;
  return true;
}

}  // namespace locksim::checkers
