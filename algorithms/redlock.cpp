#include "algorithms/redlock.h"

#include <algorithm>
#include <cassert>
#include <cmath>

#include "algorithms/set_nx_lua.h"  // make_token, kReleaseScript
#include "env/parse.h"              // format_duration

namespace locksim::algorithms {

namespace {

// "3 of 5 nodes (quorum 3)"
std::string count_text(size_t count, size_t n, size_t quorum) {
  return std::to_string(count) + " of " + std::to_string(n) + " nodes (quorum " +
         std::to_string(quorum) + ")";
}

}  // namespace

Redlock::Redlock(Params params) : params_(params) {
  assert(params_.ttl > Duration::zero());
  assert(params_.drift_factor >= 0.0 && params_.drift_factor < 1.0);
  assert(params_.max_attempts >= 1);
  assert(params_.retry_min <= params_.retry_max);
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
  size_t unanswered = 0;
  for (size_t i = 0; i < env.redis_count(); ++i) {
    // Errors change nothing, as in the reference clients: a node that did not
    // answer drops the key when its TTL runs out.
    const Reply r = env.redis(i).command({"EVAL", SetNxLua::kReleaseScript, "1", resource, token});
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
  const std::string problem = validate(n);
  assert(problem.empty());
  if (!problem.empty()) {  // NDEBUG builds: refuse cleanly rather than never win
    result.detail = problem;
    return result;
  }
  const size_t quorum = quorum_for(n);
  const std::string token = make_token(env);  // step 1, kept across attempts
  const std::string ttl_ms = std::to_string(params_.ttl.to_ms());
  // Nodes where a key of ours may exist: a SET of this acquire got OK or no
  // answer there, and no unlock has answered since.
  std::vector<bool> may_hold(n, false);

  for (int attempt = 1; attempt <= params_.max_attempts; ++attempt) {
    result.attempts = attempt;
    const TimePoint t1 = env.now();  // step 1: the client's clock, as the reference clients
    // Step 2: every node, in order, even after a quorum is reached — the
    // documentation's clients do, so a slow node costs time on every acquire.
    size_t locked = 0;
    size_t io_errors = 0;
    std::string last_error;
    for (size_t i = 0; i < n; ++i) {
      const Reply r = env.redis(i).command({"SET", resource, token, "NX", "PX", ttl_ms});
      if (r.is_ok() || r.is_io_error()) may_hold[i] = true;  // a lost reply may hide an OK
      if (r.is_ok()) {
        ++locked;
      } else if (r.is_io_error() || r.is_error()) {
        io_errors += r.is_io_error() ? 1 : 0;
        last_error = env.redis(i).server_name() + ": " + r.text;
      }
    }
    // Steps 3 and 4. A clock stepped back during step 2 makes elapsed
    // negative and validity larger than the TTL: faithful, and a known flaw.
    const Duration elapsed = env.now() - t1;
    const Duration validity = params_.ttl - elapsed - drift();
    if (locked >= quorum && validity > Duration::zero()) {
      result.outcome = Outcome::kOk;
      result.lease.resource = resource;
      result.lease.token = token;
      result.lease.acquired_local = t1;
      result.lease.validity = validity;
      result.detail.clear();
      return result;
    }
    if (locked >= quorum) {
      result.detail = "locked " + count_text(locked, n, quorum) + " but validity " +
                      format_duration(validity) + " <= 0 after " + format_duration(elapsed);
    } else {
      result.detail = "locked " + count_text(locked, n, quorum) +
                      (io_errors > 0 ? ", " + std::to_string(io_errors) + " did not answer" : "") +
                      (last_error.empty() ? "" : "; last error " + last_error);
    }
    // Step 5. A SET that timed out may have landed; the unlock clears it.
    const size_t unanswered = unlock_all(env, resource, token, may_hold);
    if (unanswered > 0) {
      result.detail += "; unlock got no answer from " + std::to_string(unanswered) + " nodes";
    }
    if (attempt < params_.max_attempts) {
      sleep_random(env, params_.retry_min, params_.retry_max);
    }
  }
  // The token is the same in every attempt, so each unlock also covered the
  // SETs of earlier attempts. Our keys left behind on fewer than a quorum of
  // nodes are no lock (they only delay others until they expire): the
  // acquire cleanly did not happen. On a quorum they are, in effect, a lock
  // nobody knows it holds, until the TTL: the outcome is unknown.
  const size_t left = static_cast<size_t>(std::count(may_hold.begin(), may_hold.end(), true));
  result.outcome = left >= quorum ? Outcome::kUnknown : Outcome::kFail;
  return result;
}

ReleaseResult Redlock::release(Env& env, const Lease& lease) {
  const size_t n = env.redis_count();
  const size_t quorum = quorum_for(n);
  size_t deleted = 0;
  size_t io_errors = 0;
  for (size_t i = 0; i < n; ++i) {
    const Reply r =
        env.redis(i).command({"EVAL", SetNxLua::kReleaseScript, "1", lease.resource, lease.token});
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
  assert(validate(n).empty());
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
    const Reply r =
        env.redis(i).command({"EVAL", kExtendScript, "1", lease.resource, lease.token, ttl_ms});
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
  return {Outcome::kOk, ""};
}

}  // namespace locksim::algorithms
