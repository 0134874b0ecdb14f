// What the command bodies of the simulated Redis share (commands.cpp,
// commands_list.cpp, commands_zset.cpp, commands_pubsub.cpp): Redis's number
// parsing and formatting, and the error replies several commands give, each
// with redis-server 7.0's exact text.
//
// Why here and not in each file: the parsers decide which inputs are errors,
// and every command must decide the same way, as Redis's one util.c does.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "env/reply.h"

namespace locksim::sim::redis {

inline const Reply kNotInteger = Reply::error("ERR value is not an integer or out of range");
inline const Reply kNotFloat = Reply::error("ERR value is not a valid float");
inline const Reply kSyntaxError = Reply::error("ERR syntax error");
inline const Reply kWrongType =
    Reply::error("WRONGTYPE Operation against a key holding the wrong kind of value");

// ASCII lowercase (command names and options are case-insensitive in Redis).
std::string lowercase(std::string s);

// Whether `s` is `lower` (lowercase ASCII) in any letter case, as Redis'
// strcasecmp matches an option: no lowercased copy of `s` is made, which
// every SET's NX and PX would otherwise cost.
inline bool equals_ignoring_case(std::string_view s, std::string_view lower) {
  if (s.size() != lower.size()) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if ((c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c) != lower[i]) return false;
  }
  return true;
}

// "ERR wrong number of arguments for '<full_name>' command".
Reply wrong_arity(const std::string& full_name);

// Redis' string2ll: strict decimal, no spaces, no '+', no leading zeros, no
// "-0", at most 20 characters, within int64. Everything Redis reads as an
// integer (values for INCR, TTLs, counts, indexes, numkeys) goes through it.
std::optional<int64_t> string2ll(const std::string& s);

// Redis 7.0's getDoubleFromObject: strtod over the whole string (so "+1.5",
// "0x10", ".5", "inf" and "-INF" are scores), but no leading space, no
// trailing bytes, no overflow to +-HUGE_VAL or underflow to 0 by ERANGE, and
// never NaN. nullopt: "ERR value is not a valid float".
std::optional<double> string2d(const std::string& s);

// A range of ranks, as LRANGE and ZRANGE take it, clamped to a sequence of
// `length` the way addListRangeReply and genericZrangebyrankCommand clamp:
// negative indexes count from the end; nullopt when nothing is in range.
struct RankRange {
  size_t first;
  size_t last;  // inclusive; first <= last < length
};
std::optional<RankRange> clamp_rank_range(int64_t start, int64_t end, size_t length);

// Redis 7.0's addReplyDouble in RESP2: "inf", "-inf", else printf's "%.17g"
// ("1.5", "3", "0.10000000000000001", "1e+20"). (7.2 moved to the shortest
// round-trip form; locksim follows 7.0, the version it is tested against.)
std::string format_double(double d);

// printf's "%.17g" of d, exactly ("inf", "-inf", "nan" included): also how a
// Lua number becomes a command argument in redis.call.
std::string format_g17(double d);

}  // namespace locksim::sim::redis
