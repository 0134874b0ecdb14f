#include "algorithms/set_nx_lua_fenced.h"

#include "algorithms/param_reader.h"
#include "algorithms/redis_argv.h"
#include "algorithms/set_nx_lua.h"
#include "env/assert.h"

namespace locksim::algorithms {

const AlgorithmSpec& set_nx_lua_fenced_spec() {
  static const AlgorithmSpec spec = [] {
    AlgorithmSpec s;
    s.name = SetNxLuaFenced::kName;
    s.summary = "set-nx-lua plus a fencing token: INCR in the same Redis inside the acquire script";
    s.params = {
        {"ttl", "10s", "lock expiry (PX) set with each acquire"},
        {kMaxAttemptsParam, "20", "acquire-script attempts per acquire before giving up"},
        {kRetryParam, "50ms..150ms", "random backoff between attempts, uniform in the range"},
    };
    // The reference's fencing row is about the data: a counter whose store
    // checks the token on reads and writes (the only safe check).
    s.sweep_settings = {{"resource.workload", "counter"}, {"resource.fencing", "read-write-check"}};
    s.make = [](const ParamValues& values, const std::string& prefix) {
      const ParamReader r(set_nx_lua_fenced_spec(), values, prefix);
      SetNxLuaFenced::Params p;
      p.ttl = r.positive_duration("ttl");
      p.retry = read_retry_policy(r);
      return std::unique_ptr<LockAlgorithm>(new SetNxLuaFenced(p));
    };
    return s;
  }();
  return spec;
}

SetNxLuaFenced::SetNxLuaFenced(Params params) : params_(params) {
  LOCKSIM_ASSERT(params_.ttl > Duration::zero());
  LOCKSIM_ASSERT(params_.retry.valid());
}

AcquireResult SetNxLuaFenced::acquire(Env& env, const std::string& resource) {
  LOCKSIM_ASSERT(env.redis_count() >= 1);
  RedisConnection& redis = env.redis(0);
  AcquireResult result;
  const std::string token = make_token(env);
  const TimePoint start = env.now();
  const std::string ttl_ms = std::to_string(params_.ttl.to_ms());
  bool outcome_unknown = false;  // an earlier attempt timed out: it may have landed
  for (int attempt = 1; attempt <= params_.retry.max_attempts; ++attempt) {
    result.attempts = attempt;
    const Reply r =
        redis.command(redis_argv({"EVAL", kAcquireScript, "3", resource, resource + ":fence",
                                  resource + ":fence:holder", token, ttl_ms}));
    if (r.kind == Reply::Kind::kInteger && r.integer >= 1) {
      result.outcome = Outcome::kOk;
      result.lease.resource = resource;
      result.lease.token = token;
      result.lease.fence = static_cast<uint64_t>(r.integer);
      result.lease.acquired_local = start;
      // Counted from before the first attempt: the key may be that old.
      result.lease.validity = params_.ttl - (env.now() - start);
      result.detail.clear();
      LOCKSIM_ASSERT(is_well_formed(result.lease) && *result.lease.fence >= 1);
      return result;
    }
    describe_failed_attempt(r, "held by another client", &outcome_unknown, result.detail);
    params_.retry.backoff_after(env, attempt);
  }
  result.outcome = outcome_unknown ? Outcome::kUnknown : Outcome::kFail;
  return result;
}

ReleaseResult SetNxLuaFenced::release(Env& env, const Lease& lease) {
  LOCKSIM_ASSERT_MSG(is_well_formed(lease) && lease.fence.has_value(),
                     "release takes a lease acquire returned, with its token");
  RedisConnection& redis = env.redis(0);
  const Reply r = redis.command(
      redis_argv({"EVAL", SetNxLua::kReleaseScript, "1", lease.resource, lease.token}));
  if (r.is_integer(1)) return {Outcome::kOk, ""};
  if (r.is_io_error()) return {Outcome::kUnknown, r.text};
  if (r.is_error()) return {Outcome::kFail, r.text};
  return {Outcome::kFail, "lock no longer held by us (expired or taken over)"};
}

}  // namespace locksim::algorithms
