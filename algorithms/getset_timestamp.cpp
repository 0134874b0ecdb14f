#include "algorithms/getset_timestamp.h"

#include <cassert>
#include <charconv>
#include <optional>

namespace locksim::algorithms {

namespace {

// The stored value as a timestamp, or nothing if it is not a whole number
// (a key written by something other than this algorithm).
std::optional<int64_t> parse_timestamp_ms(const std::string& text) {
  int64_t v = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || ptr != text.data() + text.size()) return std::nullopt;
  return v;
}

}  // namespace

GetsetTimestamp::GetsetTimestamp(Params params) : params_(params) {
  assert(params_.ttl > Duration::zero());
  assert(params_.max_attempts >= 1);
  assert(params_.retry_min <= params_.retry_max);
}

AcquireResult GetsetTimestamp::acquire(Env& env, const std::string& resource) {
  assert(params_.server < env.redis_count());
  RedisConnection& redis = env.redis(params_.server);
  AcquireResult result;
  const TimePoint start = env.now();
  const int64_t ttl_ms = params_.ttl.to_ms();
  // A SETNX or GETSET of ours timed out: it may have landed and made us the
  // holder without our knowing. (Unlike set-nx-lua we cannot ask the server
  // whether the key is ours: the value is a timestamp, and another client
  // may have written the same one.)
  bool outcome_unknown = false;

  auto won = [&](int64_t expires_at_ms) {
    result.outcome = Outcome::kOk;
    result.lease.resource = resource;
    result.lease.token = std::to_string(expires_at_ms);
    result.lease.acquired_local = start;
    // The client believes it holds the lock until its own clock reaches the
    // timestamp it wrote: that, and nothing the server knows, is the lease.
    result.lease.validity = TimePoint::from_ns(expires_at_ms * 1'000'000) - env.now();
    result.detail.clear();
    return result;
  };

  for (int attempt = 1; attempt <= params_.max_attempts; ++attempt) {
    result.attempts = attempt;
    for (int round = 1; round <= kMaxImmediateRetries; ++round) {
      // Step 1. Recomputed each round: the client's clock has moved on.
      const int64_t expires_at_ms = env.now().to_ms() + ttl_ms + 1;
      const Reply set = redis.command({"SETNX", resource, std::to_string(expires_at_ms)});
      if (set.is_integer(1)) return won(expires_at_ms);
      if (set.is_io_error()) {
        outcome_unknown = true;
        result.detail = set.text;
        break;
      }
      if (!set.is_integer(0)) {
        result.detail = set.is_error() ? set.text : "unexpected SETNX reply " + set.to_string();
        break;
      }
      // Step 2.
      const Reply got = redis.command({"GET", resource});
      if (got.is_nil()) {
        result.detail = "key vanished between SETNX and GET " +
                        std::to_string(kMaxImmediateRetries) + " times in a row";
        continue;  // released in between: straight back to step 1
      }
      if (got.kind != Reply::Kind::kBulk) {
        // An io_error here changes nothing on the server: a plain retry.
        result.detail = got.is_io_error() || got.is_error()
                            ? got.text
                            : "unexpected GET reply " + got.to_string();
        break;
      }
      const std::optional<int64_t> stored_ms = parse_timestamp_ms(got.text);
      if (!stored_ms) {
        // Not ours to interpret, so not ours to take over: a clean failure.
        result.detail = "lock key holds '" + got.text + "', not a timestamp";
        break;
      }
      // Step 3: judged by *our* clock. This comparison is the whole weakness.
      const int64_t now_ms = env.now().to_ms();
      if (*stored_ms > now_ms) {
        result.detail = "held by another client";
        break;
      }
      // Step 4: expired by our clock; try to take it over.
      const int64_t new_expires_at_ms = now_ms + ttl_ms + 1;
      const Reply old = redis.command({"GETSET", resource, std::to_string(new_expires_at_ms)});
      // Step 5: nobody changed the value between our GET and our GETSET.
      if (old.kind == Reply::Kind::kBulk && old.text == got.text) return won(new_expires_at_ms);
      // Step 6 when the server answered: our GETSET has already replaced the
      // winner's timestamp. A lost reply may hide a GETSET that won.
      result.detail = describe_failed_attempt(
          old, "another client took the expired lock over first", &outcome_unknown);
      break;
    }
    if (attempt < params_.max_attempts) {
      sleep_random(env, params_.retry_min, params_.retry_max);
    }
  }
  result.outcome = outcome_unknown ? Outcome::kUnknown : Outcome::kFail;
  return result;
}

ReleaseResult GetsetTimestamp::release(Env& env, const Lease& lease) {
  RedisConnection& redis = env.redis(params_.server);
  const std::optional<int64_t> expires_at_ms = parse_timestamp_ms(lease.token);
  assert(expires_at_ms.has_value());  // only this class makes these leases
  // The documented guard: past our timestamp someone may have taken the lock
  // over, so the key may be theirs. It is judged by our clock, so a slow
  // clock still deletes another client's lock.
  if (!expires_at_ms || env.now().to_ms() >= *expires_at_ms) {
    return {Outcome::kFail, "lease expired by our clock: not deleting, the key may be another's"};
  }
  const Reply r = redis.command({"DEL", lease.resource});
  if (r.is_integer(1)) return {Outcome::kOk, ""};
  if (r.is_io_error()) return {Outcome::kUnknown, r.text};
  if (r.is_error()) return {Outcome::kFail, r.text};
  return {Outcome::kFail, "key already gone"};
}

}  // namespace locksim::algorithms
