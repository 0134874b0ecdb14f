#include "harness/exposure_monitor.h"

#include <algorithm>

#include "env/assert.h"

namespace locksim::harness {

ExposureMonitor::ExposureMonitor(sim::World& world, sim::Deployment& deployment,
                                 sim::LockProbe probe, Holders holders, bool use_stamp)
    : world_(world),
      deployment_(deployment),
      probe_(std::move(probe)),
      holders_(std::move(holders)),
      use_stamp_(use_stamp),
      stamp_is_world_count_(deployment.lock_state_stamp_is_world_count()) {
  LOCKSIM_ASSERT(!probe_.key.empty() && probe_.quorum >= 1);
  world_.add_event_observer([this] { look(); });
}

void ExposureMonitor::ask() {
  holders_(holding_);
  holds_changed_ = false;
  std::optional<sim::LockExposure> answer = sim::LockExposure{false};
  asked_stamp_.reset();
  if (!holding_.empty()) {
    asked_stamp_ = deployment_.lock_state_stamp();
    LOCKSIM_ASSERT(!stamp_is_world_count_ || asked_stamp_ == world_.state_changes());
    answer = deployment_.lock_free_for_fresh_contender(probe_);
    if (answer) answer_until_ = answer->until;
  }
  ++samples_;
  if (!answer) {
    supported_ = false;  // the backend cannot tell: stop asking
    watching_ = false;
    open_.clear();
    return;
  }
  const TimePoint now = world_.now();
  const bool free = answer->free;
  // Close the windows of intervals that are over or no longer exposed; one
  // that opened and closed at the same instant exposed nothing.
  for (auto it = open_.begin(); it != open_.end();) {
    const bool still = std::any_of(holding_.begin(), holding_.end(), [&](const Holder& h) {
      return h.client == it->first.first && h.acquire_index == it->first.second;
    });
    if (still && free) {
      ++it;
      continue;
    }
    const auto [start, believed] = it->second;
    if (now > start)
      closed_.push_back(
          checkers::ExposureWindow{it->first.first, it->first.second, start, now, believed});
    it = open_.erase(it);
  }
  if (free) {
    // Keeps an open one's start and belief: both are the window's opening's.
    for (const Holder& h : holding_)
      open_.try_emplace(std::make_pair(h.client, h.acquire_index), std::make_pair(now, h.believes));
  }
  LOCKSIM_ASSERT(free || open_.empty());
  watching_ = !holding_.empty();
  if (watching_ && answer->until != sim::LockExposure::kNoChange) wake_at(answer->until);
}

void ExposureMonitor::wake_at(TimePoint at) {
  const TimePoint now = world_.now();
  LOCKSIM_ASSERT_MSG(at >= now, "a backend names a change no earlier than now");
  at = std::max(at, now + Duration::nanos(1));  // the answer at `now` is known
  if (wake_stands_for(at)) return;
  wake_ = at;
  world_.at(at, [] {});  // an event that does nothing: look() runs after it
}

checkers::ExposureSamples ExposureMonitor::finish(TimePoint end) {
  checkers::ExposureSamples s;
  s.supported = supported_;
  s.resolution = Duration::zero();  // exact: see the header
  s.samples = samples_;
  s.windows = closed_;
  for (const auto& [key, opened] : open_) {
    const auto [start, believed] = opened;
    LOCKSIM_ASSERT(start <= end);
    if (end > start)
      s.windows.push_back(checkers::ExposureWindow{key.first, key.second, start, end, believed});
  }
  if (!supported_) s.windows.clear();
  return s;
}

}  // namespace locksim::harness
