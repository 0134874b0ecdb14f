// The sorted-set commands of the simulated Redis server (t_zset.c of Redis
// 7.0): ZADD with NX XX GT LT CH INCR, ZINCRBY, ZSCORE, ZREM, ZCARD, and ZRANGE
// by rank (REV, WITHSCORES), the ones Redisson's fair lock keeps its waiters'
// deadlines with.
//
// Scores are doubles, parsed as Redis parses them (string2d) and answered as
// Redis 7.0 prints them (format_double: "%.17g", "inf", "-inf"). ZINCRBY is
// ZADD with INCR forced on, exactly as Redis implements it, so it shares its
// option parsing and its errors. A sorted set emptied by ZREM is deleted.
//
// Not here: ZRANGE BYSCORE and BYLEX (and so LIMIT), which no lock script
// sends; they get an error that says so rather than a wrong answer.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "env/assert.h"
#include "sim/redis/command_util.h"
#include "sim/redis/server.h"

namespace locksim::sim::redis {
namespace {

struct ZaddOptions {
  bool nx = false, xx = false, gt = false, lt = false, ch = false, incr = false;
  size_t score_index = 2;  // the first score-member pair
};

// zaddGenericCommand's option loop and checks, in its order: options until
// the first argument that is none, then pairs, then conflicts.
std::variant<ZaddOptions, Reply> parse_zadd_options(const std::vector<std::string>& argv,
                                                    bool incr) {
  ZaddOptions o;
  o.incr = incr;
  for (; o.score_index < argv.size(); ++o.score_index) {
    const std::string opt = lowercase(argv[o.score_index]);
    bool* flag = opt == "nx"     ? &o.nx
                 : opt == "xx"   ? &o.xx
                 : opt == "ch"   ? &o.ch
                 : opt == "incr" ? &o.incr
                 : opt == "gt"   ? &o.gt
                 : opt == "lt"   ? &o.lt
                                 : nullptr;
    if (flag == nullptr) break;
    *flag = true;
  }
  const size_t rest = argv.size() - o.score_index;
  if (rest % 2 != 0 || rest == 0) return kSyntaxError;
  if (o.nx && o.xx)
    return Reply::error("ERR XX and NX options at the same time are not compatible");
  if ((o.gt && o.nx) || (o.lt && o.nx) || (o.gt && o.lt)) {
    return Reply::error("ERR GT, LT, and/or NX options at the same time are not compatible");
  }
  if (o.incr && rest > 2) {
    return Reply::error("ERR INCR option supports a single increment-element pair");
  }
  return o;
}

const Reply kNanResult = Reply::error("ERR resulting score is not a number (NaN)");

// What zsetAdd did to one member.
enum class Outcome { kAdded, kUpdated, kUnchanged, kNop, kNan };

// zsetAdd: one member under the options. `*new_score` is set unless kNop/kNan.
Outcome zset_add(SortedSet& zset, const ZaddOptions& o, const std::string& member, double score,
                 double* new_score) {
  LOCKSIM_ASSERT_MSG(!std::isnan(score), "string2d let a NaN through");
  const std::optional<double> current = zset.score(member);
  if (!current) {
    if (o.xx) return Outcome::kNop;
    zset.put(member, score);
    *new_score = score;
    return Outcome::kAdded;
  }
  if (o.nx) return Outcome::kNop;
  if (o.incr) {
    score += *current;
    if (std::isnan(score)) return Outcome::kNan;  // inf + -inf
  }
  if ((o.lt && score >= *current) || (o.gt && score <= *current)) return Outcome::kNop;
  *new_score = score;
  if (score == *current) return Outcome::kUnchanged;
  zset.put(member, score);
  return Outcome::kUpdated;
}

}  // namespace

Reply Server::cmd_zadd(const Argv& argv, int64_t now_ms) {
  return zadd_generic(argv, now_ms, false);
}

// zincrbyCommand is zaddGenericCommand with INCR: "ZINCRBY k nx m" is a syntax
// error there too (NX is taken as an option, leaving no pair).
Reply Server::cmd_zincrby(const Argv& argv, int64_t now_ms) {
  return zadd_generic(argv, now_ms, true);
}

Reply Server::zadd_generic(const Argv& argv, int64_t now_ms, bool incr) {
  const auto parsed = parse_zadd_options(argv, incr);
  if (const Reply* error = std::get_if<Reply>(&parsed)) return *error;
  const ZaddOptions& o = std::get<ZaddOptions>(parsed);
  // Every score is checked before anything changes: all or nothing.
  std::vector<double> scores;
  for (size_t i = o.score_index; i < argv.size(); i += 2) {
    const std::optional<double> score = string2d(argv[i]);
    if (!score) return kNotFloat;
    scores.push_back(*score);
  }
  bool wrong_type = false;
  Entry* entry = find_typed_for_write(argv[1], now_ms, KeyType::kZSet, &wrong_type);
  if (wrong_type) return kWrongType;
  int64_t added = 0, updated = 0, processed = 0;
  double last_score = 0;
  if (entry != nullptr || !o.xx) {  // no key and XX: nothing to do
    if (entry == nullptr) entry = &keyspace_.create(argv[1], KeyType::kZSet);
    for (size_t j = 0; j < scores.size(); ++j) {
      const std::string& member = argv[o.score_index + 2 * j + 1];
      const Outcome outcome = zset_add(*entry->zset, o, member, scores[j], &last_score);
      if (outcome == Outcome::kNan) return kNanResult;  // INCR: its only pair
      added += outcome == Outcome::kAdded ? 1 : 0;
      updated += outcome == Outcome::kUpdated ? 1 : 0;
      processed += outcome != Outcome::kNop ? 1 : 0;
    }
    // A new key always gains a member (only XX skips new members).
    LOCKSIM_ASSERT_MSG(!entry->zset->empty(), "ZADD left an empty sorted set");
  }
  if (o.incr) return processed > 0 ? Reply::bulk(format_double(last_score)) : Reply::nil();
  return Reply::integer_reply(o.ch ? added + updated : added);
}

Reply Server::cmd_zscore(const Argv& argv, int64_t now_ms) {
  bool wrong_type = false;
  const Entry* entry = find_typed(argv[1], now_ms, KeyType::kZSet, &wrong_type);
  if (wrong_type) return kWrongType;
  if (entry == nullptr) return Reply::nil();
  const std::optional<double> score = entry->zset->score(argv[2]);
  return score ? Reply::bulk(format_double(*score)) : Reply::nil();
}

Reply Server::cmd_zrem(const Argv& argv, int64_t now_ms) {
  bool wrong_type = false;
  Entry* entry = find_typed_for_write(argv[1], now_ms, KeyType::kZSet, &wrong_type);
  if (wrong_type) return kWrongType;
  if (entry == nullptr) return Reply::integer_reply(0);
  int64_t deleted = 0;
  for (size_t i = 2; i < argv.size(); ++i) {
    deleted += entry->zset->erase(argv[i]) ? 1 : 0;
    if (entry->zset->empty()) {
      keyspace_.erase(argv[1], now_ms);  // TTL and all; the other members are not looked at
      break;
    }
  }
  return Reply::integer_reply(deleted);
}

Reply Server::cmd_zcard(const Argv& argv, int64_t now_ms) {
  bool wrong_type = false;
  const Entry* entry = find_typed(argv[1], now_ms, KeyType::kZSet, &wrong_type);
  if (wrong_type) return kWrongType;
  return Reply::integer_reply(entry == nullptr ? 0 : static_cast<int64_t>(entry->zset->size()));
}

// zrangeGenericCommand, by rank: options, their conflicts, the two indexes,
// then the key. BYSCORE and BYLEX are parsed (so their syntax errors match)
// but refused.
Reply Server::cmd_zrange(const Argv& argv, int64_t now_ms) {
  enum class By { kRank, kScore, kLex } by = By::kRank;
  bool withscores = false, rev = false, limit = false;
  for (size_t j = 4; j < argv.size(); ++j) {
    const std::string opt = lowercase(argv[j]);
    if (opt == "withscores") {
      withscores = true;
    } else if (opt == "limit" && argv.size() - j - 1 >= 2) {
      if (!string2ll(argv[j + 1]) || !string2ll(argv[j + 2])) return kNotInteger;
      limit = true;
      j += 2;
    } else if (opt == "rev" && !rev) {
      rev = true;
    } else if ((opt == "byscore" || opt == "bylex") && by == By::kRank) {
      by = opt == "byscore" ? By::kScore : By::kLex;
    } else {
      return kSyntaxError;
    }
  }
  if (limit && by == By::kRank) {
    return Reply::error(
        "ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX");
  }
  if (withscores && by == By::kLex) {
    return Reply::error("ERR syntax error, WITHSCORES not supported in combination with BYLEX");
  }
  if (by != By::kRank)
    return Reply::error("ERR ZRANGE BYSCORE and BYLEX are not simulated by locksim");
  const std::optional<int64_t> start = string2ll(argv[2]);
  const std::optional<int64_t> end = string2ll(argv[3]);
  if (!start || !end) return kNotInteger;
  bool wrong_type = false;
  const Entry* entry = find_typed(argv[1], now_ms, KeyType::kZSet, &wrong_type);
  if (wrong_type) return kWrongType;
  if (entry == nullptr) return Reply::array({});
  const auto& items = entry->zset->by_rank();
  const std::optional<RankRange> range = clamp_rank_range(*start, *end, items.size());
  std::vector<Reply> out;
  if (!range) return Reply::array(std::move(out));
  // Rank r from the top under REV is rank size-1-r from the bottom.
  const size_t from = rev ? items.size() - 1 - range->last : range->first;
  const size_t to = rev ? items.size() - 1 - range->first : range->last;
  std::vector<const SortedSet::Item*> picked;
  auto it = std::next(items.begin(), static_cast<std::ptrdiff_t>(from));
  for (size_t r = from; r <= to; ++r, ++it) picked.push_back(&*it);
  if (rev) std::reverse(picked.begin(), picked.end());
  for (const SortedSet::Item* item : picked) {
    out.push_back(Reply::bulk(item->second));
    if (withscores) out.push_back(Reply::bulk(format_double(item->first)));
  }
  return Reply::array(std::move(out));
}

}  // namespace locksim::sim::redis
