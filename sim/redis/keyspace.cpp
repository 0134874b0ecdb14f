#include "sim/redis/keyspace.h"

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

Entry* Keyspace::find(const std::string& key, int64_t now_ms) {
  auto it = entries_.find(key);
  if (it == entries_.end()) return nullptr;
  ++version_;  // the entry is handed out (or removed below)
  // (The volatile index is not checked here, on every lookup: that cost a
  // string search per command. active_expire checks it key by key and
  // check_invariants in full, at a cost they pay anyway.)
  if (is_expired(it->second, now_ms)) {
    remove(key);
    return nullptr;
  }
  return &it->second;
}

void Keyspace::put(const std::string& key, std::string value, std::optional<int64_t> expire_at_ms) {
  ++version_;
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
  ++version_;
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
  ++version_;
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
  ++version_;
  volatile_keys_.erase(key);
}

std::vector<std::string> Keyspace::active_expire(int64_t now_ms, Rng& rng) {
  std::vector<std::string> deleted;
  for (int round = 0; round < kRoundsMax && !volatile_keys_.empty(); ++round) {
    // Collect the sample: every volatile key when there are few (Redis would
    // very likely hit them all anyway), else kSampleSize seeded draws with
    // replacement, deduplicated. std::set keeps the sample in key order.
    std::set<std::string> sample;
    const size_t volatile_before = volatile_keys_.size();
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
    LOCKSIM_ASSERT(!sample.empty() && sample.size() <= kSampleSize);
    size_t expired = 0;
    for (const std::string& key : sample) {
      auto it = entries_.find(key);
      LOCKSIM_ASSERT_MSG(it != entries_.end(), "a volatile key that is not a key");
      LOCKSIM_ASSERT_MSG(it->second.expire_at_ms.has_value(), "a volatile key without an expiry");
      if (is_expired(it->second, now_ms)) {
        deleted.push_back(key);
        remove(key);
        ++expired;
      }
    }
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
  ++version_;
  volatile_keys_.clear();
  for (const auto& [key, entry] : entries_) {
    if (entry.expire_at_ms) volatile_keys_.insert(key);
  }
  check_invariants();
}

void Keyspace::clear() {
  ++version_;
  entries_.clear();
  volatile_keys_.clear();
}

void Keyspace::check_invariants() const {
  // O(n): run after the bulk operations only (a whole-keyspace load, an
  // expiry cycle), whose cost is O(n) already.
  size_t with_expiry = 0;
  for (const auto& [key, entry] : entries_) {
    if (entry.expire_at_ms) {
      ++with_expiry;
      LOCKSIM_ASSERT_MSG(volatile_keys_.count(key) == 1, "volatile index misses a key");
    }
  }
  LOCKSIM_ASSERT_MSG(with_expiry == volatile_keys_.size(), "volatile index has extra keys");
}

}  // namespace locksim::sim::redis
