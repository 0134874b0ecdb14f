#include "algorithms/getset_timestamp.h"

#include <charconv>
#include <optional>

#include "algorithms/param_reader.h"
#include "algorithms/redis_argv.h"
#include "env/assert.h"

namespace locksim::algorithms {

const AlgorithmSpec& getset_timestamp_spec() {
  static const AlgorithmSpec spec = [] {
    AlgorithmSpec s;
    s.name = GetsetTimestamp::kName;
    s.summary =
        "SETNX key expiry-timestamp from the client clock; take over expired locks with GETSET";
    s.params = {
        {"ttl", "10s", "added to the client's clock to make the stored expiry timestamp"},
        {kMaxAttemptsParam, "20", "acquire attempts before giving up"},
        {kRetryParam, "50ms..150ms", "random backoff between attempts, uniform in the range"},
    };
    s.make = [](const ParamValues& values, const std::string& prefix) {
      const ParamReader r(getset_timestamp_spec(), values, prefix);
      GetsetTimestamp::Params p;
      p.ttl = r.positive_duration("ttl");
      p.retry = read_retry_policy(r);
      return std::unique_ptr<LockAlgorithm>(new GetsetTimestamp(p));
    };
    return s;
  }();
  return spec;
}

namespace {

// The stored value as a timestamp, or nothing if it is not a whole number
// (a key written by something other than this algorithm).
std::optional<int64_t> parse_timestamp_ms(const std::string& text) {
  int64_t v = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || ptr != text.data() + text.size()) return std::nullopt;
  return v;
}

// How one round of steps 1-6 ended.
enum class RoundEnd {
  kWon,       // we hold the lock until the timestamp we wrote
  kVanished,  // step 2 found no key (released in between): straight back to step 1
  kLost,      // not this time: back off and retry (the reason is in `detail`)
};

// What the rounds of one acquire share.
struct Rounds {
  Rounds(Env& e, RedisConnection& c, const std::string& res, int64_t ttl)
      : env(e), redis(c), resource(res), ttl_ms(ttl) {}

  Env& env;
  RedisConnection& redis;
  const std::string& resource;
  const int64_t ttl_ms;
  std::string detail;  // why the last round did not win
  // A SETNX or GETSET of ours timed out: it may have landed and made us the
  // holder without our knowing. (Unlike set-nx-lua we cannot ask the server
  // whether the key is ours: the value is a timestamp, and another client
  // may have written the same one.)
  bool outcome_unknown = false;
  int64_t won_expires_at_ms = 0;  // on kWon: the timestamp we wrote
};

// Steps 3 to 6, once step 2's GET read `stored` from the key.
RoundEnd take_over_if_expired(Rounds& r, const std::string& stored) {
  const std::optional<int64_t> stored_ms = parse_timestamp_ms(stored);
  if (!stored_ms) {
    // Not ours to interpret, so not ours to take over: a clean failure.
    r.detail = "lock key holds '" + stored + "', not a timestamp";
    return RoundEnd::kLost;
  }
  // Step 3: judged by *our* clock. This comparison is the whole weakness.
  const int64_t now_ms = r.env.now().to_ms();
  if (*stored_ms > now_ms) {
    r.detail = "held by another client";
    return RoundEnd::kLost;
  }
  // Step 4: expired by our clock; try to take it over.
  const int64_t new_expires_at_ms = now_ms + r.ttl_ms + 1;
  const Reply old =
      r.redis.command(redis_argv({"GETSET", r.resource, std::to_string(new_expires_at_ms)}));
  // Step 5: nobody changed the value between our GET and our GETSET.
  if (old.kind == Reply::Kind::kBulk && old.text == stored) {
    r.won_expires_at_ms = new_expires_at_ms;
    return RoundEnd::kWon;
  }
  // Step 6 when the server answered: our GETSET has already replaced the
  // winner's timestamp. A lost reply may hide a GETSET that won.
  describe_failed_attempt(old, "another client took the expired lock over first",
                          &r.outcome_unknown, r.detail);
  return RoundEnd::kLost;
}

// Steps 1 and 2, then 3 to 6 if the key is there.
RoundEnd one_round(Rounds& r) {
  // Step 1. Recomputed each round: the client's clock has moved on.
  const int64_t expires_at_ms = r.env.now().to_ms() + r.ttl_ms + 1;
  const Reply set =
      r.redis.command(redis_argv({"SETNX", r.resource, std::to_string(expires_at_ms)}));
  if (set.is_integer(1)) {
    r.won_expires_at_ms = expires_at_ms;
    return RoundEnd::kWon;
  }
  if (set.is_io_error()) {
    r.outcome_unknown = true;
    r.detail = set.text;
    return RoundEnd::kLost;
  }
  if (!set.is_integer(0)) {
    r.detail = set.is_error() ? set.text : "unexpected SETNX reply " + set.to_string();
    return RoundEnd::kLost;
  }
  // Step 2.
  const Reply got = r.redis.command(redis_argv({"GET", r.resource}));
  if (got.is_nil()) {
    r.detail = "key vanished between SETNX and GET " +
               std::to_string(GetsetTimestamp::kImmediateRetriesMax) + " times in a row";
    return RoundEnd::kVanished;
  }
  if (got.kind != Reply::Kind::kBulk) {
    // An io_error here changes nothing on the server: a plain retry.
    r.detail =
        got.is_io_error() || got.is_error() ? got.text : "unexpected GET reply " + got.to_string();
    return RoundEnd::kLost;
  }
  return take_over_if_expired(r, got.text);
}

// The lease of an acquire that wrote `expires_at_ms`. The client believes it
// holds the lock until its own clock reaches that timestamp: that, and
// nothing the server knows, is the lease.
AcquireResult won(Env& env, AcquireResult result, const std::string& resource, TimePoint start,
                  int64_t expires_at_ms) {
  result.outcome = Outcome::kOk;
  result.lease.resource = resource;
  result.lease.token = std::to_string(expires_at_ms);
  result.lease.acquired_local = start;
  result.lease.validity = TimePoint::from_ns(expires_at_ms * 1'000'000) - env.now();
  result.detail.clear();
  LOCKSIM_ASSERT(is_well_formed(result.lease));
  LOCKSIM_ASSERT_MSG(parse_timestamp_ms(result.lease.token) == expires_at_ms,
                     "the token is the timestamp release will read back");
  return result;
}

}  // namespace

GetsetTimestamp::GetsetTimestamp(Params params) : params_(params) {
  LOCKSIM_ASSERT(params_.ttl > Duration::zero());
  LOCKSIM_ASSERT(params_.retry.valid());
}

AcquireResult GetsetTimestamp::acquire(Env& env, const std::string& resource) {
  LOCKSIM_ASSERT(params_.server < env.redis_count());
  Rounds rounds(env, env.redis(params_.server), resource, params_.ttl.to_ms());
  AcquireResult result;
  const TimePoint start = env.now();

  for (int attempt = 1; attempt <= params_.retry.max_attempts; ++attempt) {
    result.attempts = attempt;
    RoundEnd end = RoundEnd::kVanished;
    for (int round = 1; round <= kImmediateRetriesMax && end == RoundEnd::kVanished; ++round) {
      end = one_round(rounds);
    }
    if (end == RoundEnd::kWon) {
      return won(env, std::move(result), resource, start, rounds.won_expires_at_ms);
    }
    params_.retry.backoff_after(env, attempt);
  }
  result.detail = rounds.detail;
  result.outcome = rounds.outcome_unknown ? Outcome::kUnknown : Outcome::kFail;
  return result;
}

ReleaseResult GetsetTimestamp::release(Env& env, const Lease& lease) {
  LOCKSIM_ASSERT_MSG(is_well_formed(lease), "release takes a lease acquire returned");
  RedisConnection& redis = env.redis(params_.server);
  const std::optional<int64_t> expires_at_ms = parse_timestamp_ms(lease.token);
  LOCKSIM_ASSERT_MSG(expires_at_ms.has_value(), "only acquire makes these leases: see won()");
  // The documented guard: past our timestamp someone may have taken the lock
  // over, so the key may be theirs. It is judged by our clock, so a slow
  // clock still deletes another client's lock.
  if (!expires_at_ms || env.now().to_ms() >= *expires_at_ms) {
    return {Outcome::kFail, "lease expired by our clock: not deleting, the key may be another's"};
  }
  const Reply r = redis.command(redis_argv({"DEL", lease.resource}));
  if (r.is_integer(1)) return {Outcome::kOk, ""};
  if (r.is_io_error()) return {Outcome::kUnknown, r.text};
  if (r.is_error()) return {Outcome::kFail, r.text};
  return {Outcome::kFail, "key already gone"};
}

}  // namespace locksim::algorithms
