// The simulated Redis keyspace: string, hash, list or sorted-set values with
// optional absolute expiry.
//
// Expiry is stored, as in Redis, as an absolute unix time in milliseconds on
// the server's own clock. So a clock that jumps or drifts on the server moves
// every lease it holds: that is exactly the failure mode Redlock critics point
// at, and the reason the simulated server must not store relative TTLs.
//
// Two ways a key dies, both as Redis 7.0 does them:
//  - lazily: any lookup of a key whose expire time is strictly before `now`
//    deletes it first and reports it absent (Redis' keyIsExpired is now > when);
//  - actively: a periodic cycle samples keys with an expiry and deletes the
//    expired ones (active_expire).
//
// Keys live in a std::map so every iteration order is the sorted key order,
// never a hash or pointer order that could differ between runs.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "sim/change_count.h"
#include "sim/redis/sorted_set.h"
#include "sim/rng.h"

namespace locksim::sim::redis {

// What a key holds, as TYPE names it.
enum class KeyType { kString, kHash, kList, kZSet };

// One key's state. `expire_at_ms` is absolute unix-ms on the server clock.
//
// The type is which optional is engaged: none, a string (`value`); at most
// one of the others (asserted by type()), and then `value` is unused. A
// command meeting the wrong type answers WRONGTYPE, as Redis does. Optionals
// rather than a variant keep `entry.value` and `Entry{value, expiry}` (what
// the string commands and the tests use) as they were.
struct Entry {
  std::string value;
  std::optional<int64_t> expire_at_ms;
  // A hash's fields, as HSET and HINCRBY make it.
  std::optional<std::map<std::string, std::string>> hash = std::nullopt;
  // A list, head first, as RPUSH makes it. Never empty: an emptied list is
  // deleted, as Redis deletes it.
  std::optional<std::deque<std::string>> list = std::nullopt;
  // A sorted set, as ZADD makes it. Never empty, for the same reason.
  std::optional<SortedSet> zset = std::nullopt;

  KeyType type() const;
  bool operator==(const Entry&) const = default;
};

// TYPE's word for `type`: "string", "hash", "list", "zset".
const char* type_name(KeyType type);

class Keyspace {
 public:
  // Redis' keyIsExpired: a key whose expire time equals now is still alive.
  static bool is_expired(const Entry& entry, int64_t now_ms) {
    return entry.expire_at_ms.has_value() && now_ms > *entry.expire_at_ms;
  }

  // The live entry for `key`, or nullptr, for a caller that only reads it.
  // Deletes the key first if it has expired at `now_ms` (lazy expiry), so
  // callers never see a dead key. Only that deletion counts in version(): a
  // read changes nothing (a waiting client's failed SET NX, a GET, a PTTL).
  const Entry* find(const std::string& key, int64_t now_ms);
  // As find(), for a caller that may write through the entry (INCR, HSET,
  // RPUSH...): handing one out counts in version().
  Entry* find_for_write(const std::string& key, int64_t now_ms);

  // Inserts or overwrites `key` with a string. `expire_at_ms` nullopt means no expiry.
  void put(const std::string& key, std::string value, std::optional<int64_t> expire_at_ms);

  // A new key of `type` (not a string), empty and without expiry, for a
  // command that creates it (HSET, RPUSH, ZADD). Precondition (asserted):
  // `key` is not there. The caller fills it before the command ends: an
  // empty aggregate must not outlive the command.
  Entry& create(const std::string& key, KeyType type);

  // Changes the expiry of an existing key (nullopt removes it). The key must exist.
  void set_expire(const std::string& key, std::optional<int64_t> expire_at_ms);

  // Removes `key` if present (expired or not); true if it was there and alive
  // at `now_ms`, which is what DEL counts.
  bool erase(const std::string& key, int64_t now_ms);

  // Redis' activeExpireCycle, simplified: sample up to kSampleSize keys that
  // have an expiry, delete the expired ones, and repeat while more than 10% of
  // the sample was expired, at most kRoundsMax rounds. Sampling draws from
  // `rng` over the sorted set of keys with an expiry. Returns the deleted keys
  // in deletion order.
  std::vector<std::string> active_expire(int64_t now_ms, Rng& rng);

  const std::map<std::string, Entry>& entries() const { return entries_; }
  void replace_all(std::map<std::string, Entry> entries);
  void clear();
  size_t size() const { return entries_.size(); }
  // Grows whenever the keyspace may have changed: every write, every lazy or
  // active expiry, and every find_for_write() that hands out an entry (its
  // caller may write through it), so a reader that cached an answer from
  // entries() knows it still holds while this stands still. Counts more
  // than the changes, never fewer; find() alone does not move it unless it
  // expires the key. (The exposure monitor asks the servers again only when
  // this moves: a read that moved it would make every waiting client's
  // retry a question.)
  uint64_t version() const { return version_.value(); }
  ChangeCount& version_count() { return version_; }

  static constexpr size_t kSampleSize = 20;
  static constexpr int kRoundsMax = 16;

 private:
  void remove(const std::string& key);  // precondition: key present
  // The live entry for `key`, or nullptr after lazy expiry (which counts).
  Entry* live(const std::string& key, int64_t now_ms);
  // Keeps volatile_keys_ in step with one key's new expiry.
  void index_expiry(const std::string& key, std::optional<int64_t> expire_at_ms);
  // The volatile index is exactly the keys with an expiry (O(n)).
  void check_invariants() const;

  std::map<std::string, Entry> entries_;
  // The keys of entries_ that have an expiry, kept in sync with entries_ so
  // active expiry samples only among them (Redis keeps a separate expires dict
  // for the same reason).
  std::set<std::string> volatile_keys_;
  ChangeCount version_;
  // active_expire's working room, kept between cycles so that a cycle (ten
  // a second per server) allocates nothing: positions drawn in
  // volatile_keys_, and the sample they point to. Meaningless between calls.
  std::vector<size_t> drawn_;
  std::vector<std::set<std::string>::iterator> sample_;
};

}  // namespace locksim::sim::redis
