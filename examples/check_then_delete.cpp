#include "examples/check_then_delete.h"

#include "algorithms/param_reader.h"
#include "env/assert.h"

namespace locksim::examples {

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
      algorithms::SetNxLua::Params p;
      p.ttl = r.positive_duration("ttl");
      p.retry = algorithms::read_retry_policy(r);
      return std::unique_ptr<algorithms::LockAlgorithm>(
          new CheckThenDelete(p, r.duration("check-delay")));
    };
    return s;
  }();
  return spec;
}

CheckThenDelete::CheckThenDelete(SetNxLua::Params params, Duration check_delay)
    : SetNxLua(params), check_delay_(check_delay) {
  LOCKSIM_ASSERT(check_delay_ >= Duration::zero());
}

ReleaseResult CheckThenDelete::release(Env& env, const algorithms::Lease& lease) {
  LOCKSIM_ASSERT_MSG(algorithms::is_well_formed(lease), "release takes a lease acquire returned");
  RedisConnection& redis = env.redis(params().server);
  const Reply owner = redis.command({"GET", lease.resource});
  if (owner.is_io_error()) return {Outcome::kUnknown, owner.text};
  if (owner.kind != Reply::Kind::kBulk || owner.text != lease.token)
    return {Outcome::kFail, "not ours any more"};
  // The flaw: between this check and the DEL the key can expire and be
  // taken; the DEL then removes the next holder's lock.
  if (check_delay_ > Duration::zero()) env.sleep(check_delay_);
  const Reply r = redis.command({"DEL", lease.resource});
  if (r.is_integer(1)) return {Outcome::kOk, ""};
  if (r.is_io_error()) return {Outcome::kUnknown, r.text};
  return {Outcome::kFail, r.is_error() ? r.text : "key already gone"};
}

}  // namespace locksim::examples
