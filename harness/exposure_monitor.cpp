#include "harness/exposure_monitor.h"

#include "env/assert.h"

namespace locksim::harness {

ExposureMonitor::ExposureMonitor(sim::World& world, sim::Deployment& deployment,
                                 sim::LockProbe probe, Holders holders)
    : world_(world),
      deployment_(deployment),
      probe_(std::move(probe)),
      holders_(std::move(holders)) {
  LOCKSIM_ASSERT(!probe_.key.empty() && probe_.quorum >= 1);
}

void ExposureMonitor::hold_began() {
  if (ticking_ || !supported_) return;
  ticking_ = true;
  world_.after(kResolution, [this] { tick(); });
}

void ExposureMonitor::tick() {
  LOCKSIM_ASSERT(ticking_);
  const std::vector<std::pair<int, int64_t>> holders = holders_();
  const std::optional<bool> free = holders.empty()
                                       ? std::optional<bool>(false)
                                       : deployment_.lock_free_for_fresh_contender(probe_);
  ++samples_;
  if (!free) {
    supported_ = false;  // the backend cannot tell: stop asking
    ticking_ = false;
    open_.clear();
    return;
  }
  const TimePoint now = world_.now();
  // Close the windows of intervals that are over or no longer exposed.
  for (auto it = open_.begin(); it != open_.end();) {
    bool still = false;
    for (const auto& h : holders) still = still || h == it->first;
    if (still && *free) {
      ++it;
      continue;
    }
    closed_.push_back(ExposureWindow{it->first.first, it->first.second, it->second, now});
    it = open_.erase(it);
  }
  if (*free) {
    for (const auto& h : holders) open_.emplace(h, now);  // keeps an open one's start
  }
  LOCKSIM_ASSERT(*free || open_.empty());
  ticking_ = !holders.empty();
  if (ticking_) world_.after(kResolution, [this] { tick(); });
}

ExposureSamples ExposureMonitor::finish(TimePoint end) {
  ExposureSamples s;
  s.supported = supported_;
  s.resolution = kResolution;
  s.samples = samples_;
  s.windows = closed_;
  for (const auto& [key, start] : open_) {
    LOCKSIM_ASSERT(start <= end);
    s.windows.push_back(ExposureWindow{key.first, key.second, start, end});
  }
  if (!supported_) s.windows.clear();
  return s;
}

}  // namespace locksim::harness
