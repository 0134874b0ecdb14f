// The list commands of the simulated Redis server (t_list.c of Redis 7.0):
// RPUSH, LPOP (with and without a count), LINDEX, LREM, LLEN, LRANGE, the ones
// Redisson's fair lock keeps its queue of waiting threads with.
//
// Each follows its Redis function in the order it checks things, because
// that order is visible: LRANGE and LREM parse their numbers before looking
// at the key (a bad number on a string key is a number error), LINDEX after
// (a bad index on a missing key is nil). A list emptied by LPOP or LREM is
// deleted, TTL and all, as Redis deletes it.
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "env/assert.h"
#include "sim/redis/command_util.h"
#include "sim/redis/server.h"

namespace locksim::sim::redis {
namespace {

using List = std::deque<std::string>;

}  // namespace

// pushGenericCommand: the key is made on the first push; replies the length.
Reply Server::cmd_rpush(const Argv& argv, int64_t now_ms) {
  bool wrong_type = false;
  Entry* entry = find_typed_for_write(argv[1], now_ms, KeyType::kList, &wrong_type);
  if (wrong_type) return kWrongType;
  if (entry == nullptr) entry = &keyspace_.create(argv[1], KeyType::kList);
  for (size_t i = 2; i < argv.size(); ++i) entry->list->push_back(argv[i]);
  LOCKSIM_ASSERT(!entry->list->empty());
  return Reply::integer_reply(static_cast<int64_t>(entry->list->size()));
}

// popGenericCommand: the count is checked first ("must be positive" for
// anything but an integer >= 0); a missing key is nil (a null array with a
// count, which RESP2 clients and Lua see as nil too); count 0 is an empty array.
Reply Server::cmd_lpop(const Argv& argv, int64_t now_ms) {
  if (argv.size() > 3) return wrong_arity("lpop");
  const bool has_count = argv.size() == 3;
  int64_t count = 1;
  if (has_count) {
    const std::optional<int64_t> parsed = string2ll(argv[2]);
    if (!parsed || *parsed < 0) return Reply::error("ERR value is out of range, must be positive");
    count = *parsed;
  }
  bool wrong_type = false;
  Entry* entry = find_typed_for_write(argv[1], now_ms, KeyType::kList, &wrong_type);
  if (wrong_type) return kWrongType;
  if (entry == nullptr) return Reply::nil();
  List& list = *entry->list;
  LOCKSIM_ASSERT_MSG(!list.empty(), "an empty list outlived its command");
  if (!has_count) {
    Reply head = Reply::bulk(std::move(list.front()));
    list.pop_front();
    if (list.empty()) keyspace_.erase(argv[1], now_ms);
    return head;
  }
  std::vector<Reply> popped;
  while (count > 0 && !list.empty()) {
    popped.push_back(Reply::bulk(std::move(list.front())));
    list.pop_front();
    --count;
  }
  if (list.empty()) keyspace_.erase(argv[1], now_ms);
  return Reply::array(std::move(popped));
}

Reply Server::cmd_lindex(const Argv& argv, int64_t now_ms) {
  bool wrong_type = false;
  const Entry* entry = find_typed(argv[1], now_ms, KeyType::kList, &wrong_type);
  if (wrong_type) return kWrongType;
  if (entry == nullptr) return Reply::nil();
  const std::optional<int64_t> parsed = string2ll(argv[2]);
  if (!parsed) return kNotInteger;
  const auto length = static_cast<int64_t>(entry->list->size());
  const int64_t index = *parsed < 0 ? length + *parsed : *parsed;
  if (index < 0 || index >= length) return Reply::nil();
  return Reply::bulk((*entry->list)[static_cast<size_t>(index)]);
}

// lremCommand: count > 0 removes that many from the head, < 0 from the tail,
// 0 all of them.
Reply Server::cmd_lrem(const Argv& argv, int64_t now_ms) {
  const std::optional<int64_t> parsed = string2ll(argv[2]);
  if (!parsed) return kNotInteger;
  bool wrong_type = false;
  Entry* entry = find_typed_for_write(argv[1], now_ms, KeyType::kList, &wrong_type);
  if (wrong_type) return kWrongType;
  if (entry == nullptr) return Reply::integer_reply(0);
  List& list = *entry->list;
  const bool from_tail = *parsed < 0;
  // The magnitude as unsigned: exact for INT64_MIN too (Redis's -LONG_MIN
  // wraps and so removes every match; a limit of 2^63 does the same).
  const uint64_t limit =
      from_tail ? 0 - static_cast<uint64_t>(*parsed) : static_cast<uint64_t>(*parsed);
  const std::string& value = argv[3];
  uint64_t removed = 0;
  List kept;
  auto keep_or_remove = [&](std::string& element) {
    if (element == value && (limit == 0 || removed < limit)) {
      ++removed;
    } else if (from_tail) {
      kept.push_front(std::move(element));
    } else {
      kept.push_back(std::move(element));
    }
  };
  if (from_tail) {
    for (auto it = list.rbegin(); it != list.rend(); ++it) keep_or_remove(*it);
  } else {
    for (std::string& element : list) keep_or_remove(element);
  }
  list = std::move(kept);
  if (list.empty()) keyspace_.erase(argv[1], now_ms);
  return Reply::integer_reply(static_cast<int64_t>(removed));
}

Reply Server::cmd_llen(const Argv& argv, int64_t now_ms) {
  bool wrong_type = false;
  const Entry* entry = find_typed(argv[1], now_ms, KeyType::kList, &wrong_type);
  if (wrong_type) return kWrongType;
  return Reply::integer_reply(entry == nullptr ? 0 : static_cast<int64_t>(entry->list->size()));
}

Reply Server::cmd_lrange(const Argv& argv, int64_t now_ms) {
  const std::optional<int64_t> start = string2ll(argv[2]);
  const std::optional<int64_t> end = string2ll(argv[3]);
  if (!start || !end) return kNotInteger;
  bool wrong_type = false;
  const Entry* entry = find_typed(argv[1], now_ms, KeyType::kList, &wrong_type);
  if (wrong_type) return kWrongType;
  if (entry == nullptr) return Reply::array({});
  const std::optional<RankRange> range = clamp_rank_range(*start, *end, entry->list->size());
  std::vector<Reply> out;
  if (range) {
    for (size_t i = range->first; i <= range->last; ++i) {
      out.push_back(Reply::bulk((*entry->list)[i]));
    }
  }
  return Reply::array(std::move(out));
}

}  // namespace locksim::sim::redis
