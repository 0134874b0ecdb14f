#include "algorithms/redlock.h"

#include <algorithm>
#include <cmath>

#include "algorithms/param_reader.h"
#include "algorithms/quorum_text.h"
#include "algorithms/redis_argv.h"
#include "algorithms/set_nx_lua.h"  // make_token, kReleaseScript
#include "env/assert.h"
#include "env/parse.h"  // format_duration, ConfigError

namespace locksim::algorithms {

const AlgorithmSpec& redlock_spec() {
  static const AlgorithmSpec spec = [] {
    AlgorithmSpec s;
    s.name = Redlock::kName;
    s.default_masters = 5;
    s.summary = "SET NX PX on every one of N independent masters; held with a quorum and time left";
    s.params = {
        {"ttl", "10s", "lock expiry (PX) set on each node"},
        {"quorum", "auto", "nodes that must agree: auto (N/2+1) or a number from 1 to N"},
        {"drift-factor", "0.01", "validity = ttl - elapsed - (ttl * drift-factor + 2ms)"},
        {kMaxAttemptsParam, "3", "rounds over all nodes per acquire before giving up"},
        {kRetryParam, "50ms..200ms", "random delay between rounds, uniform in the range"},
        {"token", "per-attempt",
         "per-attempt (the documentation: unique to every lock request) or per-acquire (one "
         "for all rounds, as redlock-py, redlock-rb and node-redlock do)"},
    };
    s.make = [](const ParamValues& values, const std::string& prefix) {
      const ParamReader r(redlock_spec(), values, prefix);
      Redlock::Params p;
      p.ttl = r.positive_duration("ttl");
      p.quorum = read_quorum(r);
      p.drift_factor = r.parse_double("drift-factor", 0.0, 1.0, "[0, 1)");
      p.retry = read_retry_policy(r);
      const std::string token = r.text("token");
      if (token != "per-attempt" && token != "per-acquire") {
        throw ConfigError(r.field("token") + ": expected per-attempt or per-acquire, got '" +
                          token + "'");
      }
      p.token_per_attempt = token == "per-attempt";
      return std::unique_ptr<LockAlgorithm>(new Redlock(p));
    };
    return s;
  }();
  return spec;
}

namespace {

// Step 2: SET on every node, in order, even after a quorum is reached — the
// documentation's clients do, so a slow node costs time on every acquire.
// Marks in `may_hold` every node where our key may now be.
QuorumTally set_on_every_node(Env& env, const std::string& resource, const std::string& token,
                              const std::string& ttl_ms, std::vector<bool>& may_hold) {
  LOCKSIM_ASSERT(may_hold.size() == env.redis_count());
  QuorumTally tally;
  for (size_t i = 0; i < may_hold.size(); ++i) {
    const Reply r = env.redis(i).command(redis_argv({"SET", resource, token, "NX", "PX", ttl_ms}));
    if (r.is_ok() || r.is_io_error()) may_hold[i] = true;  // a lost reply may hide an OK
    if (r.is_ok()) {
      ++tally.locked;
    } else if (r.is_io_error() || r.is_error()) {
      tally.io_errors += r.is_io_error() ? 1 : 0;
      tally.last_error = env.redis(i).server_name() + ": " + r.text;
    }
  }
  return tally;
}

}  // namespace

Redlock::Redlock(Params params) : params_(params) {
  LOCKSIM_ASSERT(params_.ttl > Duration::zero());
  LOCKSIM_ASSERT(params_.drift_factor >= 0.0 && params_.drift_factor < 1.0);
  LOCKSIM_ASSERT(params_.retry.valid());
}

size_t Redlock::quorum_for(size_t n_servers) const {
  return params_.quorum == 0 ? n_servers / 2 + 1 : params_.quorum;
}

Duration Redlock::drift() const {
  // Rounded to whole nanoseconds; the reference clients work in whole ms,
  // which only differs by less than a millisecond.
  const double drift_ns = static_cast<double>(params_.ttl.ns) * params_.drift_factor;
  return Duration{static_cast<int64_t>(std::llround(drift_ns))} + Duration::millis(2);
}

std::string Redlock::validate(size_t n_servers) const {
  if (n_servers == 0) return "redlock needs at least one redis server, got none";
  const size_t q = quorum_for(n_servers);
  if (q < 1 || q > n_servers) {
    return "quorum: expected a number from 1 to the " + std::to_string(n_servers) +
           " redis servers, got " + std::to_string(q);
  }
  return "";
}

size_t Redlock::unlock_all(Env& env, const std::string& resource, const std::string& token,
                           std::vector<bool>& may_hold) {
  LOCKSIM_ASSERT(may_hold.size() == env.redis_count());
  size_t unanswered = 0;
  for (size_t i = 0; i < env.redis_count(); ++i) {
    // Errors change nothing, as in the reference clients: a node that did not
    // answer drops the key when its TTL runs out.
    const Reply r =
        env.redis(i).command(redis_argv({"EVAL", SetNxLua::kReleaseScript, "1", resource, token}));
    if (r.kind == Reply::Kind::kInteger) {
      may_hold[i] = false;  // the script ran: no key of ours is left there
    } else {
      ++unanswered;
    }
  }
  return unanswered;
}

AcquireResult Redlock::acquire(Env& env, const std::string& resource) {
  const size_t n = env.redis_count();
  AcquireResult result;
  LOCKSIM_ASSERT_MSG(validate(n).empty(), "the harness runs check_servers() before any acquire");
  const size_t quorum = quorum_for(n);
  std::string token = make_token(env);  // step 1 (again each round, unless per-acquire)
  const std::string ttl_ms = std::to_string(params_.ttl.to_ms());
  // Nodes where a key of ours may exist: a SET of this acquire got OK or no
  // answer there, and no unlock has answered since.
  std::vector<bool> may_hold(n, false);

  for (int attempt = 1; attempt <= params_.retry.max_attempts; ++attempt) {
    result.attempts = attempt;
    if (attempt > 1 && params_.token_per_attempt) token = make_token(env);
    const TimePoint t1 = env.now();  // step 1: the client's clock, as the reference clients
    const QuorumTally tally = set_on_every_node(env, resource, token, ttl_ms, may_hold);  // step 2
    // Steps 3 and 4. A clock stepped back during step 2 makes elapsed
    // negative and validity larger than the TTL: faithful, and a known flaw.
    const Duration elapsed = env.now() - t1;
    const Duration validity = params_.ttl - elapsed - drift();
    if (tally.locked >= quorum && validity > Duration::zero()) {
      result.outcome = Outcome::kOk;
      result.lease = Lease{resource, token, std::nullopt, t1, validity};
      result.detail.clear();
      LOCKSIM_ASSERT(is_well_formed(result.lease) && result.lease.validity > Duration::zero());
      return result;
    }
    result.detail = failed_round_detail(tally, n, quorum, validity, elapsed);
    // Step 5. A SET that timed out may have landed; the unlock clears it.
    const size_t unanswered = unlock_all(env, resource, token, may_hold);
    result.detail += unanswered_unlock_text(unanswered);
    params_.retry.backoff_after(env, attempt);
  }
  result.outcome = failed_acquire_outcome(may_hold, quorum);
  return result;
}

ReleaseResult Redlock::release(Env& env, const Lease& lease) {
  LOCKSIM_ASSERT_MSG(is_well_formed(lease), "release takes a lease acquire returned");
  const size_t n = env.redis_count();
  const size_t quorum = quorum_for(n);
  size_t deleted = 0;
  size_t io_errors = 0;
  for (size_t i = 0; i < n; ++i) {
    const Reply r = env.redis(i).command(
        redis_argv({"EVAL", SetNxLua::kReleaseScript, "1", lease.resource, lease.token}));
    if (r.is_integer(1)) ++deleted;
    if (r.is_io_error()) ++io_errors;
  }
  if (deleted >= quorum) return {Outcome::kOk, ""};
  const std::string counts = "deleted on " + count_text(deleted, n, quorum);
  // Undecidable only if the nodes that did not answer could make up the quorum.
  if (deleted + io_errors >= quorum) {
    return {Outcome::kUnknown, counts + ", " + std::to_string(io_errors) + " did not answer"};
  }
  return {Outcome::kFail, counts + ": lock no longer held by us (expired or taken over)"};
}

ExtendResult Redlock::extend(Env& env, Lease& lease) {
  const size_t n = env.redis_count();
  LOCKSIM_ASSERT_MSG(validate(n).empty(), "the harness runs check_servers() before any extend");
  LOCKSIM_ASSERT_MSG(is_well_formed(lease), "extend takes a lease acquire returned");
  const size_t quorum = quorum_for(n);
  // The old lease's end by our clock. Validity counts from when acquire (or
  // the last extend) returned, elapsed after acquired_local; the two cancel:
  // acquired_local + elapsed + (ttl - elapsed - drift).
  const TimePoint deadline = lease.acquired_local + params_.ttl - drift();
  const TimePoint t1 = env.now();
  if (t1 >= deadline) return {Outcome::kFail, "lease already expired by our clock"};
  const std::string ttl_ms = std::to_string(params_.ttl.to_ms());
  size_t extended = 0;
  size_t io_errors = 0;
  for (size_t i = 0; i < n; ++i) {
    const Reply r = env.redis(i).command(
        redis_argv({"EVAL", kExtendScript, "1", lease.resource, lease.token, ttl_ms}));
    if (r.is_integer(1)) ++extended;
    if (r.is_io_error()) ++io_errors;
  }
  const TimePoint t2 = env.now();
  const Duration elapsed = t2 - t1;
  const Duration validity = params_.ttl - elapsed - drift();
  const std::string counts = "extended on " + count_text(extended, n, quorum);
  if (extended < quorum) {
    if (extended + io_errors >= quorum) {
      return {Outcome::kUnknown, counts + ", " + std::to_string(io_errors) + " did not answer"};
    }
    return {Outcome::kFail, counts + ": lock no longer held by us"};
  }
  // A quorum agreed, but if the old lease ran out meanwhile, another client
  // may have held the lock in between: the extension cannot bridge that gap.
  if (t2 >= deadline) return {Outcome::kFail, counts + " but only after the old lease ran out"};
  if (validity <= Duration::zero()) {
    return {Outcome::kFail, counts + " but validity " + format_duration(validity) + " <= 0"};
  }
  lease.acquired_local = t1;
  lease.validity = validity;
  LOCKSIM_ASSERT(lease.validity > Duration::zero());
  return {Outcome::kOk, ""};
}

}  // namespace locksim::algorithms
