#include "algorithms/naive_setnx.h"

#include "algorithms/param_reader.h"
#include "algorithms/redis_argv.h"
#include "algorithms/set_nx_lua.h"  // make_token
#include "env/assert.h"

namespace locksim::algorithms {

const AlgorithmSpec& naive_setnx_spec() {
  static const AlgorithmSpec spec = [] {
    AlgorithmSpec s;
    s.name = NaiveSetnx::kName;
    s.summary = "SETNX key token, then a separate EXPIRE (not atomic); release by plain DEL";
    s.params = {
        {"ttl", "10s", "lock expiry, set by EXPIRE in whole seconds (rounded up)"},
        {kMaxAttemptsParam, "20", "SETNX attempts per acquire before giving up"},
        {kRetryParam, "50ms..150ms", "random backoff between attempts, uniform in the range"},
        {"expire-delay", "0s", "pause between SETNX and EXPIRE, widening the no-expiry window"},
    };
    s.make = [](const ParamValues& values, const std::string& prefix) {
      const ParamReader r(naive_setnx_spec(), values, prefix);
      NaiveSetnx::Params p;
      p.ttl = r.positive_duration("ttl");
      p.retry = read_retry_policy(r);
      p.expire_delay = r.duration("expire-delay");
      return std::unique_ptr<LockAlgorithm>(new NaiveSetnx(p));
    };
    return s;
  }();
  return spec;
}

NaiveSetnx::NaiveSetnx(Params params) : params_(params) {
  LOCKSIM_ASSERT(params_.ttl > Duration::zero());
  LOCKSIM_ASSERT(params_.retry.valid());
  LOCKSIM_ASSERT(params_.expire_delay >= Duration::zero());
}

int64_t NaiveSetnx::expire_seconds(Duration ttl) {
  const int64_t second_ns = Duration::seconds(1).ns;
  const int64_t s = (ttl.ns + second_ns - 1) / second_ns;  // round up: never expire early
  return s < 1 ? 1 : s;
}

AcquireResult NaiveSetnx::acquire(Env& env, const std::string& resource) {
  LOCKSIM_ASSERT(params_.server < env.redis_count());
  RedisConnection& redis = env.redis(params_.server);
  AcquireResult result;
  const std::string token = make_token(env);
  const TimePoint start = env.now();
  const std::string ttl_s = std::to_string(expire_seconds(params_.ttl));
  bool outcome_unknown = false;  // an earlier SETNX timed out: it may have landed

  for (int attempt = 1; attempt <= params_.retry.max_attempts; ++attempt) {
    result.attempts = attempt;
    Reply r = redis.command(redis_argv({"SETNX", resource, token}));
    bool won = r.is_integer(1);
    if (r.is_integer(0) && outcome_unknown) {
      // The key exists. If an earlier, timed-out SETNX of ours created it, we
      // hold the lock — and its key has no expiry yet, since we never got to
      // step 3. Ask rather than wait: without an EXPIRE it would never go.
      Reply owner = redis.command(redis_argv({"GET", resource}));
      won = owner.kind == Reply::Kind::kBulk && owner.text == token;
      if (owner.is_io_error()) r = owner;
    }
    if (won) {
      result.outcome = Outcome::kOk;
      result.lease.resource = resource;
      result.lease.token = token;
      result.lease.acquired_local = start;
      result.detail.clear();
      // The window this algorithm is known for: from here until EXPIRE lands,
      // the key has no expiry. A scenario widens it to crash a client inside.
      if (params_.expire_delay > Duration::zero()) env.sleep(params_.expire_delay);
      const Reply e = redis.command(redis_argv({"EXPIRE", resource, ttl_s}));
      // Faithful to the naive client: the EXPIRE reply changes nothing, we
      // already hold the lock. It is noted so the history shows the hazard.
      if (e.is_io_error()) {
        result.detail = "EXPIRE failed (" + e.text + "): the key may have no expiry";
      } else if (e.is_integer(0)) {
        result.detail = "EXPIRE found no key: it was deleted between SETNX and EXPIRE";
      } else if (e.is_error()) {
        result.detail = "EXPIRE failed (" + e.text + "): the key has no expiry";
      }
      // Counted from before the first SETNX, with the TTL the user asked for
      // (not the rounded-up one): the client must not assume more than that.
      result.lease.validity = params_.ttl - (env.now() - start);
      LOCKSIM_ASSERT(is_well_formed(result.lease));
      return result;
    }
    describe_failed_attempt(r, "held by another client", &outcome_unknown, result.detail);
    params_.retry.backoff_after(env, attempt);
  }
  result.outcome = outcome_unknown ? Outcome::kUnknown : Outcome::kFail;
  return result;
}

ReleaseResult NaiveSetnx::release(Env& env, const Lease& lease) {
  LOCKSIM_ASSERT_MSG(is_well_formed(lease), "release takes a lease acquire returned");
  RedisConnection& redis = env.redis(params_.server);
  // No ownership check: if our lease expired and someone else took the lock,
  // this deletes *their* key. That is the flaw this algorithm exists to show.
  const Reply r = redis.command(redis_argv({"DEL", lease.resource}));
  if (r.is_integer(1)) return {Outcome::kOk, ""};
  if (r.is_io_error()) return {Outcome::kUnknown, r.text};
  if (r.is_error()) return {Outcome::kFail, r.text};
  return {Outcome::kFail, "key already gone"};
}

}  // namespace locksim::algorithms
