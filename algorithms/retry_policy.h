// How often, and how far apart, an acquire tries: the `max-attempts` and
// `retry LO..HI` parameters every algorithm has, as one type.
//
// Why one type: every lock client retries the same way (a bounded number of
// attempts with a seeded random backoff between them, so contenders that
// collided once do not collide again in step), and the backends still to come
// (MySQL, ZooKeeper) retry the same way too. One type keeps the
// names, the bounds and the backoff identical everywhere; each algorithm
// keeps its own defaults and help texts.
#pragma once

#include <optional>

#include "algorithms/param_reader.h"
#include "env/env.h"
#include "env/time.h"

namespace locksim::algorithms {

// The parameter names, as `locksim list` shows them and specs declare them.
inline constexpr const char* kMaxAttemptsParam = "max-attempts";
inline constexpr const char* kRetryParam = "retry";
// The largest max-attempts accepted: a bound on how long one acquire can spin.
inline constexpr int kMaxAttemptsMax = 10'000;

struct RetryPolicy {
  int max_attempts = 20;                       // per acquire call, >= 1
  Duration retry_min = Duration::millis(50);   // backoff between attempts,
  Duration retry_max = Duration::millis(150);  // drawn uniformly per attempt

  // max_attempts in [1, kMaxAttemptsMax] and 0 <= retry_min <= retry_max.
  bool valid() const;

  // Call after attempt number `attempt` (1-based) failed: sleeps a random
  // time in [retry_min, retry_max], unless that was the last attempt (no
  // point waiting when nothing follows). Precondition: 1 <= attempt <=
  // max_attempts. With a `cap`, sleeps at most that (a Redisson waiter also
  // wakes when the holder's PTTL runs out); the draw is the same.
  void backoff_after(Env& env, int attempt, std::optional<Duration> cap = std::nullopt) const;
};

// Reads `max-attempts` (a whole number in [1, kMaxAttemptsMax]) and `retry`
// (LO..HI) through `reader`; the spec must declare both. Throws ConfigError
// naming the parameter. The result is valid().
RetryPolicy read_retry_policy(const ParamReader& reader);

}  // namespace locksim::algorithms
