#include "examples/check_then_delete.h"

#include "algorithms/param_reader.h"
#include "algorithms/set_nx_lua.h"  // make_token
#include "env/assert.h"

namespace locksim::examples {

using algorithms::AcquireResult;
using algorithms::Outcome;
using algorithms::ReleaseResult;

const algorithms::AlgorithmSpec& check_then_delete_spec() {
  static const algorithms::AlgorithmSpec spec = [] {
    algorithms::AlgorithmSpec s;
    s.name = CheckThenDelete::kName;
    s.summary = "SET NX PX; release by GET, then DEL if still ours (two round trips)";
    s.params = {
        {"ttl", "10s", "lock expiry (PX)"},
        {algorithms::kMaxAttemptsParam, "20", "SET NX attempts per acquire before giving up"},
        {algorithms::kRetryParam, "50ms..150ms",
         "random backoff between attempts, uniform in the range"},
        {"check-delay", "0s", "pause between the release's GET and its DEL"},
    };
    s.make = [](const algorithms::ParamValues& values, const std::string& prefix) {
      const algorithms::ParamReader r(check_then_delete_spec(), values, prefix);
      CheckThenDelete::Params p;
      p.ttl = r.positive_duration("ttl");
      p.retry = algorithms::read_retry_policy(r);
      p.check_delay = r.duration("check-delay");
      return std::unique_ptr<algorithms::LockAlgorithm>(new CheckThenDelete(p));
    };
    return s;
  }();
  return spec;
}

CheckThenDelete::CheckThenDelete(Params params) : params_(params) {
  LOCKSIM_ASSERT(params_.ttl > Duration::zero());
  LOCKSIM_ASSERT(params_.retry.valid());
  LOCKSIM_ASSERT(params_.check_delay >= Duration::zero());
}

AcquireResult CheckThenDelete::acquire(Env& env, const std::string& resource) {
  RedisConnection& redis = env.redis(0);
  AcquireResult result;
  const std::string token = algorithms::make_token(env);
  const TimePoint start = env.now();
  const std::string px = std::to_string(params_.ttl.ns / 1'000'000);
  bool outcome_unknown = false;  // a timed-out SET may have landed
  for (int attempt = 1; attempt <= params_.retry.max_attempts; ++attempt) {
    result.attempts = attempt;
    const Reply r = redis.command({"SET", resource, token, "NX", "PX", px});
    if (r.kind == Reply::Kind::kStatus && r.text == "OK") {
      result.outcome = Outcome::kOk;
      result.lease.resource = resource;
      result.lease.token = token;
      result.lease.acquired_local = start;
      // Counted from before the first SET: the client must not assume more.
      result.lease.validity = params_.ttl - (env.now() - start);
      result.detail.clear();
      LOCKSIM_ASSERT(algorithms::is_well_formed(result.lease));
      return result;
    }
    result.detail =
        algorithms::describe_failed_attempt(r, "held by another client", &outcome_unknown);
    params_.retry.backoff_after(env, attempt);
  }
  result.outcome = outcome_unknown ? Outcome::kUnknown : Outcome::kFail;
  return result;
}

ReleaseResult CheckThenDelete::release(Env& env, const algorithms::Lease& lease) {
  LOCKSIM_ASSERT_MSG(algorithms::is_well_formed(lease), "release takes a lease acquire returned");
  RedisConnection& redis = env.redis(0);
  const Reply owner = redis.command({"GET", lease.resource});
  if (owner.is_io_error()) return {Outcome::kUnknown, owner.text};
  if (owner.kind != Reply::Kind::kBulk || owner.text != lease.token)
    return {Outcome::kFail, "not ours any more"};
  // The flaw: between this check and the DEL the key can expire and be
  // taken; the DEL then removes the next holder's lock.
  if (params_.check_delay > Duration::zero()) env.sleep(params_.check_delay);
  const Reply r = redis.command({"DEL", lease.resource});
  if (r.is_integer(1)) return {Outcome::kOk, ""};
  if (r.is_io_error()) return {Outcome::kUnknown, r.text};
  return {Outcome::kFail, r.is_error() ? r.text : "key already gone"};
}

}  // namespace locksim::examples
