#include "algorithms/redisson_fair_lock.h"

#include <optional>

#include "algorithms/param_reader.h"
#include "algorithms/redis_argv.h"
#include "algorithms/redisson_lock.h"
#include "algorithms/set_nx_lua.h"
#include "env/assert.h"
#include "env/parse.h"

namespace locksim::algorithms {

namespace {

// As RLock's: long enough for the release's retries to find the latch.
constexpr Duration kLatchExpiry = Duration::seconds(30);

// The longest wait time accepted: a day. Each waiter's timeout is the one
// ahead of it plus the wait time, so a longer one only pushes timeouts
// toward the limits of a Lua number (exact to 2^53 ms) and hides a typo.
constexpr Duration kWaitTimeMax = Duration::seconds(86'400);

constexpr const char* kWaitTimeParam = "wait-time";
constexpr const char* kWatchdogParam = "watchdog-timeout";

// Step 2a, opening the acquire and release scripts alike: drop every head
// whose timeout has passed on the caller's clock. Both scripts pass the
// queue as KEYS[2], the set as KEYS[3] and the caller's now as ARGV[4]. A
// head without a score (no script here writes one) goes too, so the loop
// never stops on a broken entry.
constexpr const char* kPurge =
    "local now = tonumber(ARGV[4]); "
    "while true do "
    "local head = redis.call('lindex', KEYS[2], 0); "
    "if head == false then break; end; "
    "local timeout = tonumber(redis.call('zscore', KEYS[3], head)); "
    "if timeout ~= nil and timeout > now then break; end; "
    "redis.call('zrem', KEYS[3], head); redis.call('lpop', KEYS[2]); "
    "end; ";

Duration bounded_wait_time(const ParamReader& r) {
  const Duration d = r.positive_duration(kWaitTimeParam);
  if (d > kWaitTimeMax || d < Duration::millis(1)) {
    throw ConfigError(r.field(kWaitTimeParam) + ": expected a duration from 1ms to 24h, got '" +
                      r.text(kWaitTimeParam) + "'");
  }
  return d;
}

}  // namespace

const std::string& RedissonFairLock::acquire_script() {
  static const std::string script =
      std::string(kPurge) +
      // b. Free, and our turn: leave the queue; everyone behind moves up by
      // one wait time.
      "if redis.call('exists', KEYS[1]) == 0 then "
      "local head = redis.call('lindex', KEYS[2], 0); "
      "if head == false or head == ARGV[2] then "
      "if head ~= false then redis.call('lpop', KEYS[2]); end; "
      "redis.call('zrem', KEYS[3], ARGV[2]); "
      "local rest = redis.call('zrange', KEYS[3], 0, -1); "
      "for i = 1, #rest do redis.call('zincrby', KEYS[3], '-' .. ARGV[3], rest[i]); end; "
      "redis.call('hset', KEYS[1], ARGV[2], 1); "
      "redis.call('pexpire', KEYS[1], ARGV[1]); "
      "return nil; end; end; "
      // c. Re-entry.
      "if redis.call('hexists', KEYS[1], ARGV[2]) == 1 then "
      "redis.call('hincrby', KEYS[1], ARGV[2], 1); "
      "redis.call('pexpire', KEYS[1], ARGV[1]); "
      "return nil; end; "
      // d. Already queued: our remaining wait.
      "local mine = tonumber(redis.call('zscore', KEYS[3], ARGV[2])); "
      "if mine ~= nil then return mine - tonumber(ARGV[3]) - now; end; "
      // e. Join the tail, one wait time behind the last waiter (or the
      // holder's PTTL away when nobody waits).
      "local last = redis.call('lindex', KEYS[2], -1); "
      "local ttl; "
      "if last ~= false then "
      "ttl = tonumber(redis.call('zscore', KEYS[3], last)) - now; "
      "else ttl = redis.call('pttl', KEYS[1]); end; "
      "if redis.call('zadd', KEYS[3], ttl + tonumber(ARGV[3]) + now, ARGV[2]) == 1 then "
      "redis.call('rpush', KEYS[2], ARGV[2]); end; "
      "return ttl;";
  return script;
}

const std::string& RedissonFairLock::cancel_script() {
  static const std::string script =
      "local queue = redis.call('lrange', KEYS[1], 0, -1); "
      "local behind = false; "
      "for i = 1, #queue do "
      "if behind then redis.call('zincrby', KEYS[2], '-' .. ARGV[2], queue[i]); end; "
      "if queue[i] == ARGV[1] then behind = true; end; "
      "end; "
      "redis.call('zrem', KEYS[2], ARGV[1]); "
      "return redis.call('lrem', KEYS[1], 0, ARGV[1]);";
  return script;
}

const std::string& RedissonFairLock::release_script() {
  static const std::string script =
      "local done = redis.call('get', KEYS[5]); "
      "if done ~= false then return tonumber(done); end; " +
      std::string(kPurge) +
      // The head, told by its own channel that the lock is free.
      "local function wake() "
      "local head = redis.call('lindex', KEYS[2], 0); "
      "if head ~= false then redis.call('publish', KEYS[4] .. ':' .. head, ARGV[1]); end; "
      "end; "
      "local outcome = 1; "
      "if redis.call('exists', KEYS[1]) == 0 then wake(); "
      "else "
      "if redis.call('hexists', KEYS[1], ARGV[3]) == 0 then return nil; end; "
      "if redis.call('hincrby', KEYS[1], ARGV[3], -1) > 0 then "
      "redis.call('pexpire', KEYS[1], ARGV[2]); outcome = 0; "
      "else redis.call('del', KEYS[1]); wake(); end; "
      "end; "
      "redis.call('set', KEYS[5], outcome, 'px', ARGV[5]); "
      "return outcome;";
  return script;
}

const AlgorithmSpec& redisson_fair_spec() {
  static const AlgorithmSpec spec = [] {
    AlgorithmSpec s;
    s.name = RedissonFairLock::kName;
    s.summary =
        "Redisson RedissonFairLock.lock(): RLock with a queue of waiters whose timeouts come "
        "from the waiters' own clocks, and its watchdog";
    s.renewed_lease_param = kWatchdogParam;
    s.waits_for_replicas = true;  // sync_replicas() after the grant
    s.params = {
        {kWatchdogParam, "30s", "the lease the watchdog keeps renewing (lockWatchdogTimeout)"},
        {kWaitTimeParam, "5m",
         "how long a queued waiter's place is kept past its estimated turn (threadWaitTime)"},
        {kMaxAttemptsParam, "60",
         "lock attempts per acquire before giving up and leaving the queue"},
        {kRetryParam, "50ms..150ms", "pause between attempts, cut to a positive answer"},
    };
    s.make = [](const ParamValues& values, const std::string& prefix) {
      const ParamReader r(redisson_fair_spec(), values, prefix);
      RedissonFairLock::Params p;
      p.watchdog_timeout = bounded_lease(r, kWatchdogParam);
      p.wait_time = bounded_wait_time(r);
      p.retry = read_retry_policy(r);
      return std::unique_ptr<LockAlgorithm>(new RedissonFairLock(p));
    };
    return s;
  }();
  return spec;
}

RedissonFairLock::RedissonFairLock(Params params) : params_(params) {
  LOCKSIM_ASSERT(params_.watchdog_timeout >= Duration::millis(3));
  LOCKSIM_ASSERT(params_.wait_time > Duration::zero() && params_.wait_time <= kWaitTimeMax);
  LOCKSIM_ASSERT(params_.retry.valid() && params_.release_attempts >= 1);
}

std::string RedissonFairLock::queue_key(const std::string& resource) {
  return "redisson_lock_queue:{" + resource + "}";
}

std::string RedissonFairLock::timeout_key(const std::string& resource) {
  return "redisson_lock_timeout:{" + resource + "}";
}

AcquireResult RedissonFairLock::acquire(Env& env, const std::string& resource) {
  LOCKSIM_ASSERT(params_.server < env.redis_count());
  RedisConnection& redis = env.redis(params_.server);
  AcquireResult result;
  const std::string field = make_token(env);
  const std::string lease_ms = std::to_string(params_.watchdog_timeout.to_ms());
  const std::string wait_ms = std::to_string(params_.wait_time.to_ms());
  bool outcome_unknown = false;  // an earlier attempt got no reply: it may have landed

  for (int attempt = 1; attempt <= params_.retry.max_attempts; ++attempt) {
    result.attempts = attempt;
    const TimePoint start = env.now();
    const Reply r = redis.command(redis_argv({"EVAL", acquire_script(), "3", resource,
                                              queue_key(resource), timeout_key(resource), lease_ms,
                                              field, wait_ms, std::to_string(start.to_ms())}));
    if (r.is_nil()) {
      result.outcome = Outcome::kOk;
      result.lease.resource = resource;
      result.lease.token = field;
      result.lease.acquired_local = start;
      if (const WriteSync sync = sync_replicas(redis); sync != WriteSync::kStands) {
        return unsynced_grant(env, *this, sync, std::move(result));
      }
      result.lease.validity = params_.watchdog_timeout - (env.now() - start);
      result.lease.renewal =
          start_watchdog(env, params_.server, params_.watchdog_timeout, resource, field);
      result.detail.clear();
      LOCKSIM_ASSERT(is_well_formed(result.lease) && result.lease.renewal != nullptr);
      return result;
    }
    describe_failed_attempt(r, "held by another client or queued behind a waiter", &outcome_unknown,
                            result.detail);
    // Step 3: a positive answer is the estimated wait; a negative one (our
    // estimate has passed, the turn not yet come) gives no cap.
    std::optional<Duration> wait;
    if (r.kind == Reply::Kind::kInteger && r.integer > 0) wait = Duration::millis(r.integer);
    params_.retry.backoff_after(env, attempt, wait);
  }
  cancel(env, resource, field);
  result.outcome = outcome_unknown ? Outcome::kUnknown : Outcome::kFail;
  return result;
}

void RedissonFairLock::cancel(Env& env, const std::string& resource,
                              const std::string& field) const {
  RedisConnection& redis = env.redis(params_.server);
  const std::vector<std::string> argv =
      redis_argv({"EVAL", cancel_script(), "2", queue_key(resource), timeout_key(resource), field,
                  std::to_string(params_.wait_time.to_ms())});
  // Retried as any Redisson command (and the release) is; a retry after a
  // landed cancel finds nothing to remove.
  for (int attempt = 1; attempt <= params_.release_attempts; ++attempt) {
    const Reply r = redis.command(argv);
    // At most our one entry: the scripts never queue a field twice.
    LOCKSIM_ASSERT(r.kind != Reply::Kind::kInteger || r.integer <= 1);
    if (!r.is_io_error()) return;
    if (attempt < params_.release_attempts) env.sleep(params_.release_retry);
  }
}

ReleaseResult RedissonFairLock::release(Env& env, const Lease& lease) {
  LOCKSIM_ASSERT_MSG(is_well_formed(lease), "release takes a lease acquire returned");
  // Stopped whatever the outcome, as Redisson cancels the renewal on unlock.
  if (lease.renewal) lease.renewal->stop.request();
  const std::string& resource = lease.resource;
  const std::vector<std::string> argv = redis_argv(
      {"EVAL", release_script(), "5", resource, queue_key(resource), timeout_key(resource),
       RedissonLock::channel(resource), RedissonLock::latch_key(resource, make_token(env)),
       "0",  // Redisson's UNLOCK_MESSAGE
       std::to_string(params_.watchdog_timeout.to_ms()), lease.token,
       std::to_string(env.now().to_ms()), std::to_string(kLatchExpiry.to_ms())});
  return release_with_retries(env, env.redis(params_.server), argv, params_.release_attempts,
                              params_.release_retry);
}

}  // namespace locksim::algorithms
