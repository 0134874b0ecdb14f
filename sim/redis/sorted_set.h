// A Redis sorted set's contents: members with double scores, ordered by
// (score, member) as Redis orders them (t_zset.c: equal scores by member,
// compared byte-wise as memcmp does).
//
// Why two indexes: ZSCORE and ZADD look a member up by name, ZRANGE walks the
// set by rank. Both are ordered containers, so every walk is the same in
// every run; nothing depends on a hash or a pointer.
//
// Scores are never NaN (the commands refuse to make one, as Redis does), and
// a zero score is stored as +0: small sorted sets, the only kind a lock keeps,
// are listpack-encoded in Redis 7.0, which stores -0 as the integer 0 and so
// answers "0" for it (a skiplist-encoded set, past 128 members, would answer
// "-0"; see docs/explanation/redis.md).
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>

namespace locksim::sim::redis {

class SortedSet {
 public:
  using Item = std::pair<double, std::string>;  // (score, member): rank order

  size_t size() const { return by_member_.size(); }
  bool empty() const { return by_member_.empty(); }

  // The member's score, or nullopt when it is not in the set.
  std::optional<double> score(const std::string& member) const;

  // Adds `member` or moves it to `score`. Precondition (asserted): score is
  // not NaN. Returns true when the member is new.
  bool put(const std::string& member, double score);

  // Removes `member`; true if it was there.
  bool erase(const std::string& member);

  // Rank order, lowest score first.
  const std::set<Item>& by_rank() const { return by_rank_; }

  // Same members with the same scores (the rank index follows from them).
  bool operator==(const SortedSet& other) const { return by_member_ == other.by_member_; }

 private:
  // Both indexes have one entry per member (checked after every change).
  void check_sizes() const;

  std::map<std::string, double> by_member_;
  std::set<Item> by_rank_;
};

}  // namespace locksim::sim::redis
