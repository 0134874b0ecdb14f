#include "sim/redis/keyspace.h"

#include <cassert>
#include <iterator>

namespace locksim::sim::redis {

Entry* Keyspace::find(const std::string& key, int64_t now_ms) {
  auto it = entries_.find(key);
  if (it == entries_.end()) return nullptr;
  if (is_expired(it->second, now_ms)) {
    remove(key);
    return nullptr;
  }
  return &it->second;
}

void Keyspace::put(const std::string& key, std::string value, std::optional<int64_t> expire_at_ms) {
  Entry& entry = entries_[key];
  entry.value = std::move(value);
  entry.expire_at_ms = expire_at_ms;
  if (expire_at_ms) {
    volatile_keys_.insert(key);
  } else {
    volatile_keys_.erase(key);
  }
}

void Keyspace::set_expire(const std::string& key, std::optional<int64_t> expire_at_ms) {
  auto it = entries_.find(key);
  assert(it != entries_.end());
  it->second.expire_at_ms = expire_at_ms;
  if (expire_at_ms) {
    volatile_keys_.insert(key);
  } else {
    volatile_keys_.erase(key);
  }
}

bool Keyspace::erase(const std::string& key, int64_t now_ms) {
  const bool alive = find(key, now_ms) != nullptr;
  if (alive) remove(key);
  return alive;
}

void Keyspace::remove(const std::string& key) {
  entries_.erase(key);
  volatile_keys_.erase(key);
}

std::vector<std::string> Keyspace::active_expire(int64_t now_ms, Rng& rng) {
  std::vector<std::string> deleted;
  for (int round = 0; round < kMaxRounds && !volatile_keys_.empty(); ++round) {
    // Collect the sample: every volatile key when there are few (Redis would
    // very likely hit them all anyway), else kSampleSize seeded draws with
    // replacement, deduplicated. std::set keeps the sample in key order.
    std::set<std::string> sample;
    if (volatile_keys_.size() <= kSampleSize) {
      sample = volatile_keys_;
    } else {
      for (size_t draw = 0; draw < kSampleSize; ++draw) {
        // O(n) step to the drawn index; keyspaces in locksim are small.
        auto it = std::next(volatile_keys_.begin(),
                            static_cast<std::ptrdiff_t>(rng.below(volatile_keys_.size())));
        sample.insert(*it);
      }
    }
    size_t expired = 0;
    for (const std::string& key : sample) {
      auto it = entries_.find(key);
      assert(it != entries_.end());
      if (is_expired(it->second, now_ms)) {
        deleted.push_back(key);
        remove(key);
        ++expired;
      }
    }
    // Redis 7.0 repeats while more than 10% of the sample was stale
    // (ACTIVE_EXPIRE_CYCLE_ACCEPTABLE_STALE at the default effort).
    if (expired * 10 <= sample.size()) break;
  }
  check_invariants();
  return deleted;
}

void Keyspace::replace_all(std::map<std::string, Entry> entries) {
  entries_ = std::move(entries);
  volatile_keys_.clear();
  for (const auto& [key, entry] : entries_) {
    if (entry.expire_at_ms) volatile_keys_.insert(key);
  }
  check_invariants();
}

void Keyspace::clear() {
  entries_.clear();
  volatile_keys_.clear();
}

void Keyspace::check_invariants() const {
#ifndef NDEBUG
  size_t with_expiry = 0;
  for (const auto& [key, entry] : entries_) {
    if (entry.expire_at_ms) {
      ++with_expiry;
      assert(volatile_keys_.count(key) == 1);
    }
  }
  assert(with_expiry == volatile_keys_.size());
#endif
}

}  // namespace locksim::sim::redis
