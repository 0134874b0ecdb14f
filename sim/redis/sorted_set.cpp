// The two indexes of a sorted set kept in step (see sorted_set.h).
#include "sim/redis/sorted_set.h"

#include <cmath>

#include "env/assert.h"

namespace locksim::sim::redis {

std::optional<double> SortedSet::score(const std::string& member) const {
  const auto it = by_member_.find(member);
  if (it == by_member_.end()) return std::nullopt;
  return it->second;
}

bool SortedSet::put(const std::string& member, double score) {
  LOCKSIM_ASSERT_MSG(!std::isnan(score), "a NaN score reached a sorted set");
  if (score == 0) score = 0.0;  // -0 is stored as +0 (listpack encoding: see the header)
  const auto [it, inserted] = by_member_.try_emplace(member, score);
  if (!inserted) {
    const size_t erased = by_rank_.erase(Item{it->second, member});
    LOCKSIM_ASSERT_MSG(erased == 1, "a member missing from the rank index");
    it->second = score;
  }
  by_rank_.emplace(score, member);
  check_sizes();
  return inserted;
}

bool SortedSet::erase(const std::string& member) {
  const auto it = by_member_.find(member);
  if (it == by_member_.end()) return false;
  const size_t erased = by_rank_.erase(Item{it->second, member});
  LOCKSIM_ASSERT_MSG(erased == 1, "a member missing from the rank index");
  by_member_.erase(it);
  check_sizes();
  return true;
}

void SortedSet::check_sizes() const {
  // Every member has exactly one rank entry: a rank entry left behind by a
  // score change would show up in ZRANGE twice.
  LOCKSIM_ASSERT_MSG(by_member_.size() == by_rank_.size(), "sorted set indexes disagree");
}

}  // namespace locksim::sim::redis
