#include "sim/redis/keyspace.h"

#include <algorithm>
#include <iterator>

#include "env/assert.h"

namespace locksim::sim::redis {

KeyType Entry::type() const {
  const int aggregates = (hash ? 1 : 0) + (list ? 1 : 0) + (zset ? 1 : 0);
  LOCKSIM_ASSERT_MSG(aggregates <= 1, "a key holding two types at once");
  if (hash) return KeyType::kHash;
  if (list) return KeyType::kList;
  if (zset) return KeyType::kZSet;
  return KeyType::kString;
}

const char* type_name(KeyType type) {
  switch (type) {
    case KeyType::kString:
      return "string";
    case KeyType::kHash:
      return "hash";
    case KeyType::kList:
      return "list";
    case KeyType::kZSet:
      return "zset";
  }
  return "none";
}

Entry* Keyspace::live(const std::string& key, int64_t now_ms) {
  auto it = entries_.find(key);
  if (it == entries_.end()) return nullptr;
  // (The volatile index is not checked here, on every lookup: that cost a
  // string search per command. active_expire checks it key by key and
  // check_invariants in full, at a cost they pay anyway.)
  if (is_expired(it->second, now_ms)) {
    // Erased by its position: remove(key) would search the map again. The
    // index first, while `key` surely still names something alive.
    volatile_keys_.erase(key);
    entries_.erase(it);
    version_.bump();
    return nullptr;
  }
  return &it->second;
}

const Entry* Keyspace::find(const std::string& key, int64_t now_ms) {
  return live(key, now_ms);
}

Entry* Keyspace::find_for_write(const std::string& key, int64_t now_ms) {
  Entry* entry = live(key, now_ms);
  if (entry != nullptr) version_.bump();  // handed out: the caller may write through it
  return entry;
}

void Keyspace::put(const std::string& key, std::string value, std::optional<int64_t> expire_at_ms) {
  version_.bump();
  Entry& entry = entries_[key];
  entry.value = std::move(value);
  // SET over any other type makes it a string.
  entry.hash.reset();
  entry.list.reset();
  entry.zset.reset();
  entry.expire_at_ms = expire_at_ms;
  index_expiry(key, expire_at_ms);
}

Entry& Keyspace::create(const std::string& key, KeyType type) {
  const auto [it, inserted] = entries_.try_emplace(key);
  LOCKSIM_ASSERT_MSG(inserted, "creating a key that is already there");
  version_.bump();
  Entry& entry = it->second;
  switch (type) {
    case KeyType::kHash:
      entry.hash.emplace();
      break;
    case KeyType::kList:
      entry.list.emplace();
      break;
    case KeyType::kZSet:
      entry.zset.emplace();
      break;
    case KeyType::kString:
      LOCKSIM_ASSERT_MSG(false, "create() makes aggregates; put() makes strings");
  }
  // A new key has no expiry, so the volatile index is untouched.
  LOCKSIM_ASSERT(entry.type() == type && !entry.expire_at_ms);
  return entry;
}

void Keyspace::set_expire(const std::string& key, std::optional<int64_t> expire_at_ms) {
  auto it = entries_.find(key);
  LOCKSIM_ASSERT_MSG(it != entries_.end(), "set_expire on a missing key");
  version_.bump();
  it->second.expire_at_ms = expire_at_ms;
  index_expiry(key, expire_at_ms);
}

void Keyspace::index_expiry(const std::string& key, std::optional<int64_t> expire_at_ms) {
  if (expire_at_ms) {
    volatile_keys_.insert(key);
  } else {
    volatile_keys_.erase(key);
  }
  // Every volatile key is a key: the index never outgrows the keyspace.
  LOCKSIM_ASSERT(volatile_keys_.size() <= entries_.size());
}

bool Keyspace::erase(const std::string& key, int64_t now_ms) {
  const bool alive = find(key, now_ms) != nullptr;
  if (alive) remove(key);
  return alive;
}

void Keyspace::remove(const std::string& key) {
  const size_t erased = entries_.erase(key);
  LOCKSIM_ASSERT_MSG(erased == 1, "removing a key that is not there");
  version_.bump();
  volatile_keys_.erase(key);
}

std::vector<std::string> Keyspace::active_expire(int64_t now_ms, Rng& rng) {
  std::vector<std::string> deleted;
  std::vector<size_t>& drawn = drawn_;                             // positions in volatile_keys_
  std::vector<std::set<std::string>::iterator>& sample = sample_;  // in key order, no key twice
  for (int round = 0; round < kRoundsMax && !volatile_keys_.empty(); ++round) {
    // Collect the sample: every volatile key when there are few (Redis would
    // very likely hit them all anyway), else kSampleSize seeded draws of a
    // position with replacement, deduplicated. Positions in the sorted index
    // are in key order, so sorting them keeps the sample in key order, and
    // one walk reaches them all. The sample points into the index: no key
    // is copied unless it is deleted.
    const size_t volatile_before = volatile_keys_.size();
    sample.clear();
    if (volatile_before <= kSampleSize) {
      for (auto it = volatile_keys_.begin(); it != volatile_keys_.end(); ++it) sample.push_back(it);
    } else {
      drawn.clear();
      for (size_t draw = 0; draw < kSampleSize; ++draw) drawn.push_back(rng.below(volatile_before));
      std::sort(drawn.begin(), drawn.end());
      drawn.erase(std::unique(drawn.begin(), drawn.end()), drawn.end());
      auto it = volatile_keys_.begin();
      size_t at = 0;
      for (const size_t position : drawn) {
        it = std::next(it, static_cast<std::ptrdiff_t>(position - at));
        at = position;
        sample.push_back(it);
      }
    }
    LOCKSIM_ASSERT(!sample.empty() && sample.size() <= kSampleSize);
    // Judge the whole sample, then delete: a deletion would end its iterator.
    const size_t deleted_before = deleted.size();
    for (const auto key : sample) {
      auto it = entries_.find(*key);
      LOCKSIM_ASSERT_MSG(it != entries_.end(), "a volatile key that is not a key");
      LOCKSIM_ASSERT_MSG(it->second.expire_at_ms.has_value(), "a volatile key without an expiry");
      if (is_expired(it->second, now_ms)) deleted.push_back(*key);
    }
    for (size_t i = deleted_before; i < deleted.size(); ++i) remove(deleted[i]);
    const size_t expired = deleted.size() - deleted_before;
    LOCKSIM_ASSERT(volatile_keys_.size() == volatile_before - expired);
    // Redis 7.0 repeats while more than 10% of the sample was stale
    // (ACTIVE_EXPIRE_CYCLE_ACCEPTABLE_STALE at the default effort).
    if (expired * 10 <= sample.size()) break;
  }
  check_invariants();
  return deleted;
}

void Keyspace::replace_all(std::map<std::string, Entry> entries) {
  entries_ = std::move(entries);
  version_.bump();
  volatile_keys_.clear();
  for (const auto& [key, entry] : entries_) {
    if (entry.expire_at_ms) volatile_keys_.insert(key);
  }
  check_invariants();
}

void Keyspace::clear() {
  version_.bump();
  entries_.clear();
  volatile_keys_.clear();
}

void Keyspace::check_invariants() const {
  // O(n): run after the bulk operations only (a whole-keyspace load, an
  // expiry cycle), whose cost is O(n) already. Both are sorted by key, so
  // one walk of each compares them, without a lookup per key.
  auto indexed = volatile_keys_.begin();
  for (const auto& [key, entry] : entries_) {
    if (!entry.expire_at_ms) continue;
    LOCKSIM_ASSERT_MSG(indexed != volatile_keys_.end() && *indexed == key,
                       "the volatile index is not the keys with an expiry");
    ++indexed;
  }
  LOCKSIM_ASSERT_MSG(indexed == volatile_keys_.end(), "volatile index has extra keys");
}

}  // namespace locksim::sim::redis
