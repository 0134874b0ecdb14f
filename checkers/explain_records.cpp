#include "checkers/explain_records.h"

#include <algorithm>
#include <cctype>

#include "env/assert.h"
#include "env/parse.h"

namespace locksim::checkers::records {

namespace {

// How many instants cut_off_percent reads over its span.
constexpr int kCutOffSamples = 20;

}  // namespace

using history::History;
using history::Op;
using history::OpF;
using history::OpType;

namespace {

void split_into(const std::string& field, std::vector<std::string>& out) {
  size_t start = 0;
  while (start <= field.size()) {
    size_t end = field.find_first_of(",|", start);
    const size_t arrow = field.find("->", start);
    if (arrow != std::string::npos && (end == std::string::npos || arrow < end)) end = arrow;
    if (end == std::string::npos) end = field.size();
    if (end > start) out.push_back(field.substr(start, end - start));
    start = end + (end < field.size() && field[end] == '-' ? 2 : 1);
  }
}

TimePoint time_of(const Op& op) {
  return TimePoint{op.time_ns};
}

// The op ends `fault`: a resume of its node, a heal of every link or of its
// sides, a restart of its node.
bool ends(const Op& end, const Op& fault) {
  if (fault.f == OpF::kPause)
    return end.f == OpF::kResume && names(end, nodes_named(fault).front());
  if (fault.f == OpF::kHang) return end.f == OpF::kUnhang && names(end, nodes_named(fault).front());
  if (fault.f == OpF::kDelay) {
    // A delay's end is a delay op with only its two sides.
    return end.f == OpF::kDelay && end.value.size() == 2 && fault.value.size() >= 2 &&
           end.value[0] == fault.value[0] && end.value[1] == fault.value[1];
  }
  if (fault.f == OpF::kPartition) {
    if (end.f != OpF::kHeal) return false;
    if (end.value.empty()) return true;
    return std::equal(
        end.value.begin(), end.value.end(), fault.value.begin(),
        fault.value.begin() + static_cast<long>(std::min(end.value.size(), fault.value.size())));
  }
  return false;
}

// A delay op that starts a delay (its end names only the two sides).
bool starts(const Op& op) {
  return op.f != OpF::kDelay || op.value.size() > 2;
}

// The last op of kind `f` for which `match` holds, at or before `at`, that
// nothing ended before `at` (of nested pauses, the outer one).
template <typename Match>
const Op* under_way_if(const History& h, OpF f, TimePoint at, Match match) {
  const Op* found = nullptr;
  for (const Op& op : h.ops) {
    if (time_of(op) > at) break;
    if (history::is_client_op(op)) continue;
    if (found != nullptr && time_of(op) < at && ends(op, *found)) {
      found = nullptr;
      continue;
    }
    // A pause (or hang) of a node already paused is nested in the one in
    // force, which alone ends it (the nemesis records one resume): the node
    // has been paused since the outer one began.
    const bool nested = found != nullptr && (f == OpF::kPause || f == OpF::kHang);
    if (op.f == f && starts(op) && match(op) && !nested) found = &op;
  }
  return found;
}

// The last op of kind `f` naming `node` at or before `at` that nothing ended
// before `at`.
const Op* under_way(const History& h, OpF f, const std::string& node, TimePoint at) {
  return under_way_if(h, f, at, [&node](const Op& op) { return names(op, node); });
}

// Every node `op` names is one of `servers`, and it names at least two.
bool names_only(const Op& op, const std::vector<std::string>& servers) {
  const std::vector<std::string> n = nodes_named(op);
  return n.size() >= 2 && std::all_of(n.begin(), n.end(), [&servers](const std::string& x) {
           return std::find(servers.begin(), servers.end(), x) != servers.end();
         });
}

}  // namespace

std::vector<std::string> nodes_named(const Op& op) {
  std::vector<std::string> out;
  if (history::is_client_op(op) || op.value.empty()) return out;
  const size_t fields =
      op.f == OpF::kPartition || op.f == OpF::kDelay || op.f == OpF::kLoss ? 2 : 1;
  for (size_t i = 0; i < fields && i < op.value.size(); ++i) split_into(op.value[i], out);
  return out;
}

bool names(const Op& op, const std::string& node) {
  const std::vector<std::string> n = nodes_named(op);
  return std::find(n.begin(), n.end(), node) != n.end();
}

bool names_server(const std::string& text, const std::string& server) {
  for (size_t at = text.find(server); at != std::string::npos; at = text.find(server, at + 1)) {
    const size_t end = at + server.size();
    const bool starts = at == 0 || (std::isalnum(static_cast<unsigned char>(text[at - 1])) == 0 &&
                                    text[at - 1] != '-');
    const bool ends =
        end == text.size() ||
        (std::isalnum(static_cast<unsigned char>(text[end])) == 0 && text[end] != '-');
    if (starts && ends) return true;
  }
  return false;
}

const Op* pause_at(const History& h, const std::string& node, TimePoint at) {
  return under_way(h, OpF::kPause, node, at);
}

const Op* partition_at(const History& h, const std::string& node, TimePoint at) {
  return under_way(h, OpF::kPartition, node, at);
}

const Op* link_fault_at(const History& h, const std::string& node, TimePoint at) {
  if (const Op* p = partition_at(h, node, at)) return p;
  return under_way(h, OpF::kDelay, node, at);
}

const Op* servers_split_at(const History& h, const std::vector<std::string>& servers,
                           TimePoint at) {
  const auto split = [&servers](const Op& op) { return names_only(op, servers); };
  if (const Op* p = under_way_if(h, OpF::kPartition, at, split)) return p;
  return under_way_if(h, OpF::kDelay, at, split);
}

const Op* clock_fault_before(const History& h, const std::string& node, TimePoint at) {
  const Op* found = nullptr;
  for (const Op& op : h.ops) {
    if (time_of(op) > at) break;
    if (!history::is_client_op(op) && (op.f == OpF::kJump || op.f == OpF::kDrift) &&
        names(op, node))
      found = &op;
  }
  return found;
}

const Op* release_in_flight(const History& h, TimePoint at, int not_client) {
  std::vector<const Op*> open;  // release invocations not yet completed, in order
  for (const Op& op : h.ops) {
    if (time_of(op) > at) break;
    if (!history::is_client_op(op) || op.f != OpF::kRelease || op.client == not_client) continue;
    if (op.type == OpType::kInvoke) {
      open.push_back(&op);
    } else if (time_of(op) < at && op.type != OpType::kInfo) {  // known before `at`
      std::erase_if(open, [&op](const Op* o) { return o->process == op.process; });
    }
  }
  return open.empty() ? nullptr : open.back();
}

const Op* acquire_with_token(const History& h, const std::string& token) {
  if (token.empty()) return nullptr;
  for (const Op& op : h.ops) {
    if (history::is_client_op(op) && op.f == OpF::kAcquire && op.type == OpType::kOk &&
        op.token == token)
      return &op;
  }
  return nullptr;
}

std::optional<int> client_of_token(const History& h, const std::string& token) {
  if (const Op* ok = acquire_with_token(h, token)) return ok->client;
  const size_t colon = token.find(':');
  if (colon == std::string::npos) return history::client_from_label(token);
  return history::client_from_label(std::string_view(token).substr(0, colon));
}

bool holds(const std::string& stored, const std::string& token) {
  if (stored.empty() || token.empty()) return false;
  if (stored == token) return true;
  return history::client_from_label(stored).has_value() && token.size() > stored.size() &&
         token.compare(0, stored.size(), stored) == 0 && token[stored.size()] == ':';
}

const Op* invocation_of(const History& h, const Op& ok) {
  for (auto it = h.ops.rbegin(); it != h.ops.rend(); ++it) {
    if (it->index < ok.index && it->process == ok.process && it->type == OpType::kInvoke)
      return &*it;
  }
  return nullptr;
}

const Op* completion_of(const History& h, const Op& invoke) {
  for (size_t k = static_cast<size_t>(invoke.index) + 1; k < h.ops.size(); ++k) {
    if (h.ops[k].process == invoke.process && h.ops[k].f == invoke.f) return &h.ops[k];
  }
  return nullptr;
}

const Op* crash_between(const History& h, const std::string& node, TimePoint from, TimePoint to) {
  for (const Op& op : h.ops) {
    if (time_of(op) > to) break;
    if (time_of(op) >= from && !history::is_client_op(op) && op.f == OpF::kCrash && names(op, node))
      return &op;
  }
  return nullptr;
}

std::vector<std::pair<const Op*, const Op*>> acquires_unknown(const History& h, int writer,
                                                              TimePoint written) {
  std::vector<std::pair<const Op*, const Op*>> out;
  for (const Op& inv : h.ops) {
    if (inv.time_ns > written.ns) break;
    if (!history::is_client_op(inv) || inv.client != writer || inv.f != OpF::kAcquire ||
        inv.type != OpType::kInvoke)
      continue;
    const Op* done = completion_of(h, inv);
    if (done == nullptr || done->type == OpType::kInfo) out.emplace_back(&inv, done);
  }
  return out;
}

std::vector<const Op*> open_acquires(const History& h) {
  std::vector<const Op*> out;
  for (const Op& op : h.ops) {
    if (history::is_client_op(op) && op.f == OpF::kAcquire && op.type == OpType::kInvoke &&
        completion_of(h, op) == nullptr)
      out.push_back(&op);
  }
  return out;
}

const LockChange* first_stored(const LockTrace& trace, const std::string& token,
                               const std::string& server) {
  for (const LockChange& c : trace.changes) {
    if (c.after.kind == ServerLock::Kind::kHeld && c.after.holder == token &&
        (server.empty() || c.after.server == server))
      return &c;
  }
  return nullptr;
}

namespace {

// When a delay's start ("delay A|B for D by X" at T) stops holding its
// links: T + D + X, the last message sent during it arriving X late, and a
// link keeping its order. nullopt for any other op, or one it cannot read.
std::optional<TimePoint> delay_holds_until(const Op& op) {
  // A delay's start names its sides, its length and its size; its end only the sides.
  if (op.f != OpF::kDelay || op.value.size() < 4) return std::nullopt;
  try {
    return TimePoint{op.time_ns} + parse_duration(op.value[2], "delay") +
           parse_duration(op.value[3], "delay");
  } catch (const ConfigError&) {  // a nemesis op it cannot read: nothing to tell of it
    return std::nullopt;
  }
}

// A delay on `c`'s links whose held messages were still arriving at `at`:
// one sent as the delay ended arrives `by` later, and a link keeps its
// order, so everything sent after it waits too. So a delay of D by X that
// began at T holds the link until T + D + X, past its own end. nullptr
// when none.
const Op* delay_shadow_at(const History& h, const std::string& c, TimePoint at) {
  for (const Op& op : h.ops) {
    if (op.time_ns > at.ns) break;
    if (history::is_client_op(op) || !names(op, c)) continue;
    if (const std::optional<TimePoint> until = delay_holds_until(op); until && *until > at)
      return &op;
  }
  return nullptr;
}

// "; what it holds arrives until 40.1s" for a delay, "" for any other fault.
std::string held_until(const Op& fault) {
  const std::optional<TimePoint> until = delay_holds_until(fault);
  return until ? "; what it holds arrives until " + at_text(*until) : "";
}

}  // namespace

std::string since_fault(const Op& fault) {
  return " since " + at_text(TimePoint{fault.time_ns}) + " (" +
         history::describe_nemesis_op(fault) + held_until(fault) + ")";
}

// `c` paused, cut off, or behind a delay's held messages at `at`.
const Op* cut_off_at(const History& h, const std::string& c, TimePoint at) {
  if (const Op* p = pause_at(h, c, at)) return p;
  if (const Op* l = link_fault_at(h, c, at)) return l;
  return delay_shadow_at(h, c, at);
}

// The share of [from, to] during which `c` was paused or cut off, read at
// kCutOffSamples instants spread over it: a fault that began in the last
// second of a long stuck window is not why the lock was stuck.
int cut_off_percent(const History& h, const std::string& c, TimePoint from, TimePoint to) {
  int cut = 0;
  for (int i = 0; i < kCutOffSamples; ++i) {
    const TimePoint at = from + (to - from) * (i + 1) / kCutOffSamples;
    if (cut_off_at(h, c, at) != nullptr) ++cut;
  }
  return cut * 100 / kCutOffSamples;
}

const LockChange* went_down(const LockTrace& trace, const std::string& server, TimePoint until) {
  const LockChange* out = nullptr;
  for (const LockChange& c : trace.changes) {
    if (c.at > until) break;
    if (c.after.server == server && c.after.kind == ServerLock::Kind::kDown &&
        c.before.kind != ServerLock::Kind::kDown)
      out = &c;
  }
  return out;
}

std::string kept_for_nobody(const ServerLock& s, TimePoint expires, TimePoint end) {
  std::string text = s.server + " keeps the lock for nobody";
  if (expires == ServerLock::kNever) return text + ", with no expiry";
  if (expires <= end) return text + " until its lease ran out at " + at_text(expires);
  // Past two minutes, in the largest unit that fits: a year's lease read in
  // seconds is a count, not a time.
  const int64_t left_s = (expires - end).ns / Duration::seconds(1).ns;
  const std::string span =
      left_s < 120      ? "at " + at_text(expires) + ", " + format_seconds((expires - end).ns)
      : left_s < 7200   ? "about " + std::to_string(left_s / 60) + " min"
      : left_s < 172800 ? "about " + std::to_string(left_s / 3600) + " h"
                        : "about " + std::to_string(left_s / 86400) + " days";
  return text + " until its lease runs out" + (left_s < 120 ? " " : ", ") + span +
         " after the end: no acquire can take it before then";
}

const Op* fault_end_between(const History& h, const std::string& a, const std::string& b,
                            TimePoint from, TimePoint to) {
  const Op* out = nullptr;
  for (const Op& op : h.ops) {
    if (time_of(op) > to) break;
    const bool ending = op.f == OpF::kResume || op.f == OpF::kHeal || op.f == OpF::kRestart;
    if (time_of(op) >= from && !history::is_client_op(op) && ending &&
        (names(op, a) || names(op, b)))
      out = &op;
  }
  return out;
}

bool protected_by(const std::vector<ServerLock>& states, const std::string& token) {
  if (token.empty()) return false;
  size_t serving = 0, others = 0;
  for (const ServerLock& s : states) {
    if (!s.serving) continue;
    ++serving;
    // A down server grants nobody: it neither protects nor betrays.
    const bool ours = s.kind == ServerLock::Kind::kHeld && holds(s.holder, token);
    if (s.kind != ServerLock::Kind::kDown && !ours) ++others;
  }
  const size_t quorum = serving / 2 + 1;
  return others < quorum;
}

std::optional<TimePoint> protected_until(const std::vector<ServerLock>& states,
                                         const std::string& token) {
  if (!protected_by(states, token)) return std::nullopt;
  size_t serving = 0, others = 0;
  std::vector<TimePoint> ends;  // of the servers that keep it
  for (const ServerLock& s : states) {
    if (!s.serving) continue;
    ++serving;
    if (s.kind == ServerLock::Kind::kHeld && holds(s.holder, token)) {
      ends.push_back(s.expires);
    } else if (s.kind != ServerLock::Kind::kDown) {
      ++others;
    }
  }
  const size_t quorum = serving / 2 + 1;
  LOCKSIM_ASSERT(others < quorum);
  const size_t needed = quorum - others;  // expiries that leave a majority free
  if (needed > ends.size()) return ServerLock::kNever;
  std::sort(ends.begin(), ends.end());
  return ends[needed - 1];
}

std::optional<TimePoint> lost_at(const LockTrace& trace, const std::string& token, TimePoint from,
                                 TimePoint to) {
  std::vector<ServerLock> states = states_at(trace, from);
  if (!protected_by(states, token)) return from;
  for (size_t i = 0; i < trace.changes.size(); ++i) {
    const LockChange& c = trace.changes[i];
    if (c.at <= from) continue;
    if (c.at > to) break;
    apply(states, c);
    // Judge once every change of this instant is in.
    const bool last_of_instant = i + 1 == trace.changes.size() || trace.changes[i + 1].at != c.at;
    if (last_of_instant && !protected_by(states, token)) return c.at;
  }
  return std::nullopt;
}

std::string at_text(TimePoint t) {
  return format_seconds(t.ns);
}

}  // namespace locksim::checkers::records
