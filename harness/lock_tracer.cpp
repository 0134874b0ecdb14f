#include "harness/lock_tracer.h"

#include <algorithm>
#include <utility>

#include "env/assert.h"

namespace locksim::harness {

namespace {

checkers::ServerLock plain(const sim::ServerLockState& s) {
  using K = sim::ServerLockState::Kind;
  checkers::ServerLock out;
  out.server = s.server;
  out.holder = s.holder;
  out.serving = s.serving;
  static_assert(checkers::ServerLock::kNever == sim::LockExposure::kNoChange);
  out.expires = s.expires;
  out.queue.reserve(s.queue.size());
  for (const sim::QueuedWaiter& w : s.queue)
    out.queue.push_back(checkers::QueuedWaiter{w.id, w.timeout_ms, w.due});
  out.queue_length = s.queue_length;
  switch (s.kind) {
    case K::kDown:
      out.kind = checkers::ServerLock::Kind::kDown;
      break;
    case K::kAbsent:
      out.kind = checkers::ServerLock::Kind::kAbsent;
      break;
    case K::kHeld:
      out.kind = checkers::ServerLock::Kind::kHeld;
      break;
    case K::kExpired:
      out.kind = checkers::ServerLock::Kind::kExpired;
      break;
  }
  return out;
}

}  // namespace

LockTracer::LockTracer(sim::World& world, sim::Deployment& deployment, sim::LockProbe probe,
                       bool use_stamp)
    : world_(world),
      deployment_(deployment),
      probe_(std::move(probe)),
      stamp_(deployment, use_stamp) {
  last_ = deployment_.lock_states(probe_);
  stamp_.noted(last_);
  trace_.supported = !last_.empty();
  for (const auto& s : last_) trace_.initial.push_back(plain(s));
  world_.add_event_observer([this] { look(); });
}

void LockTracer::look() {
  if (!trace_.supported || !stamp_.may_have_changed(world_.now())) return;
  std::vector<sim::ServerLockState>& now_states = now_;  // keeps its strings' room
  deployment_.fill_lock_states(probe_, now_states);
  LOCKSIM_ASSERT_MSG(now_states.size() == last_.size(), "a deployment keeps its servers");
  const TimePoint now = world_.now();
  for (size_t i = 0; i < now_states.size(); ++i) {
    const sim::ServerLockState& was = last_[i];
    const sim::ServerLockState& is = now_states[i];
    LOCKSIM_ASSERT(was.server == is.server);
    if (was == is) continue;
    // A key that expired by time alone, with nothing else changed, expired
    // at the instant it named, which may lie before this event.
    TimePoint at = now;
    const bool expired_alone = was.kind == sim::ServerLockState::Kind::kHeld &&
                               is.kind == sim::ServerLockState::Kind::kExpired &&
                               was.holder == is.holder && was.serving == is.serving &&
                               was.queue == is.queue;
    if (expired_alone && was.expires <= now) at = was.expires;
    const checkers::ServerLock before = plain(was), after = plain(is);
    if (!(before == after)) trace_.changes.push_back(checkers::LockChange{at, before, after});
  }
  std::swap(last_, now_);
  stamp_.noted(last_);
}

checkers::LockTrace LockTracer::finish(TimePoint end) {
  look();
  // Expiries stamped at their own instant may come after a later change of
  // another server in the vector: order by time, keeping ties as seen.
  std::stable_sort(
      trace_.changes.begin(), trace_.changes.end(),
      [](const checkers::LockChange& a, const checkers::LockChange& b) { return a.at < b.at; });
  // A key that would expire after the run's end but before it was looked at
  // cannot exist: the last look is at `end`.
  for (const auto& c : trace_.changes) LOCKSIM_ASSERT(c.at <= end);
  return trace_;
}

}  // namespace locksim::harness
