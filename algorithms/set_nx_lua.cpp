#include "algorithms/set_nx_lua.h"

#include <cstdint>
#include <string>

#include "algorithms/hex.h"
#include "algorithms/param_reader.h"
#include "algorithms/redis_argv.h"
#include "env/assert.h"

namespace locksim::algorithms {

const AlgorithmSpec& set_nx_lua_spec() {
  static const AlgorithmSpec spec = [] {
    AlgorithmSpec s;
    s.name = SetNxLua::kName;
    s.summary = "SET key token NX PX ttl on one Redis master; release by Lua compare-and-delete";
    s.params = {
        {"ttl", "10s", "lock expiry (PX) set with each acquire"},
        {kMaxAttemptsParam, "20", "SET attempts per acquire before giving up"},
        {kRetryParam, "50ms..150ms", "random backoff between attempts, uniform in the range"},
    };
    s.make = [](const ParamValues& values, const std::string& prefix) {
      const ParamReader r(set_nx_lua_spec(), values, prefix);
      SetNxLua::Params p;
      p.ttl = r.positive_duration("ttl");
      p.retry = read_retry_policy(r);
      return std::unique_ptr<LockAlgorithm>(new SetNxLua(p));
    };
    return s;
  }();
  return spec;
}

std::string make_token(Env& env) {
  const uint64_t bits = env.random();  // drawn first, as before: the name draws nothing
  std::string token = env.client_name();
  token += ':';
  append_hex16(token, bits);
  return token;
}

SetNxLua::SetNxLua(Params params) : params_(params) {
  LOCKSIM_ASSERT(params_.ttl > Duration::zero());
  LOCKSIM_ASSERT(params_.retry.valid());
}

AcquireResult SetNxLua::acquire(Env& env, const std::string& resource) {
  LOCKSIM_ASSERT(params_.server < env.redis_count());
  RedisConnection& redis = env.redis(params_.server);
  AcquireResult result;
  const std::string token = make_token(env);
  const TimePoint start = env.now();
  const std::string ttl_ms = std::to_string(params_.ttl.to_ms());
  bool outcome_unknown = false;  // an earlier SET timed out: it may have landed

  for (int attempt = 1; attempt <= params_.retry.max_attempts; ++attempt) {
    result.attempts = attempt;
    Reply r = redis.command(redis_argv({"SET", resource, token, "NX", "PX", ttl_ms}));
    bool won = r.is_ok();
    if (r.is_nil() && outcome_unknown) {
      // The key exists. If an earlier, timed-out SET of ours created it, we
      // hold the lock: ask rather than wait for our own key to expire.
      Reply owner = redis.command(redis_argv({"GET", resource}));
      won = owner.kind == Reply::Kind::kBulk && owner.text == token;
      if (owner.is_io_error()) r = owner;
    }
    if (won) {
      result.outcome = Outcome::kOk;
      result.lease.resource = resource;
      result.lease.token = token;
      result.lease.acquired_local = start;
      // Counted from before the first SET: the key may be that old.
      result.lease.validity = params_.ttl - (env.now() - start);
      result.detail.clear();
      LOCKSIM_ASSERT(is_well_formed(result.lease));
      return result;
    }
    describe_failed_attempt(r, "held by another client", &outcome_unknown, result.detail);
    params_.retry.backoff_after(env, attempt);
  }
  result.outcome = outcome_unknown ? Outcome::kUnknown : Outcome::kFail;
  return result;
}

ReleaseResult SetNxLua::release(Env& env, const Lease& lease) {
  LOCKSIM_ASSERT_MSG(is_well_formed(lease), "release takes a lease acquire returned");
  RedisConnection& redis = env.redis(params_.server);
  Reply r = redis.command(redis_argv({"EVAL", kReleaseScript, "1", lease.resource, lease.token}));
  if (r.is_integer(1)) return {Outcome::kOk, ""};
  if (r.is_io_error()) return {Outcome::kUnknown, r.text};
  if (r.is_error()) return {Outcome::kFail, r.text};
  return {Outcome::kFail, "lock no longer held by us (expired or taken over)"};
}

}  // namespace locksim::algorithms
