#include "algorithms/redisson_lock.h"

#include "algorithms/param_reader.h"
#include "algorithms/redis_argv.h"
#include "algorithms/set_nx_lua.h"
#include "env/assert.h"
#include "env/parse.h"

namespace locksim::algorithms {

namespace {

// How long a release's latch outlives it: long enough for Redisson's retries
// (3 x 1.5 s plus their timeouts) to find it, short enough not to pile up.
constexpr Duration kLatchExpiry = Duration::seconds(30);

// The largest lease or watchdog timeout accepted: a day (PEXPIRE takes more,
// but a run is minutes long and a longer lease only hides a typo).
constexpr Duration kLeaseMax = Duration::seconds(86'400);

}  // namespace

Duration bounded_lease(const ParamReader& r, const std::string& name) {
  const Duration d = r.positive_duration(name);
  // At least 3 ms: the watchdog renews every third of it, in whole milliseconds.
  if (d > kLeaseMax || d < Duration::millis(3)) {
    throw ConfigError(r.field(name) + ": expected a duration from 3ms to 24h, got '" +
                      r.text(name) + "'");
  }
  return d;
}

namespace {

constexpr const char* kWatchdogParam = "watchdog-timeout";

// The three entries differ only in name, summary, which lease they read
// (the watchdog's or a fixed `ttl`) and fencing. `self` is the entry's own
// function: ParamReader keeps a reference to the spec it reads against.
AlgorithmSpec variant_spec(const AlgorithmSpec& (*self)(), const char* name, const char* summary,
                           bool watchdog, bool fenced) {
  AlgorithmSpec s;
  s.name = name;
  s.summary = summary;
  const char* lease = watchdog ? kWatchdogParam : "ttl";
  if (watchdog) s.renewed_lease_param = kWatchdogParam;
  s.waits_for_replicas = true;  // sync_replicas() after every write
  s.params = {
      watchdog ? ParamInfo{kWatchdogParam, "30s",
                           "the lease the watchdog keeps renewing (lockWatchdogTimeout)"}
               : ParamInfo{"ttl", "10s",
                           "the lease set by each acquire (Redisson's leaseTime); nothing renews "
                           "it"},
      {kMaxAttemptsParam, "20", "lock attempts per acquire before giving up"},
      {kRetryParam, "50ms..150ms",
       "pause after an attempt that got no PTTL (an error, no reply); a refused waiter waits "
       "for the unlock message or the PTTL"},
  };
  // A token means nothing without a resource that checks it (as
  // set-nx-lua-fenced's sweep runs).
  if (fenced) {
    s.sweep_settings = {{"resource.workload", "counter"}, {"resource.fencing", "read-write-check"}};
  }
  s.make = [self, lease, watchdog, fenced](const ParamValues& values, const std::string& prefix) {
    const ParamReader r(self(), values, prefix);
    RedissonLock::Params p;
    (watchdog ? p.watchdog_timeout : p.lease) = bounded_lease(r, lease);
    p.retry = read_retry_policy(r);
    p.fenced = fenced;
    return std::unique_ptr<LockAlgorithm>(new RedissonLock(p));
  };
  return s;
}

}  // namespace

const AlgorithmSpec& redisson_spec() {
  static const AlgorithmSpec spec =
      variant_spec(&redisson_spec, RedissonLock::kName,
                   "Redisson RLock.lock(): a hash lock whose watchdog renews it every third of "
                   "watchdog-timeout while the client's process runs",
                   /*watchdog=*/true, /*fenced=*/false);
  return spec;
}

const AlgorithmSpec& redisson_leased_spec() {
  static const AlgorithmSpec spec =
      variant_spec(&redisson_leased_spec, RedissonLock::kLeasedName,
                   "Redisson RLock.lock(leaseTime): the hash lock with a fixed lease, no watchdog",
                   /*watchdog=*/false, /*fenced=*/false);
  return spec;
}

const AlgorithmSpec& redisson_fenced_spec() {
  static const AlgorithmSpec spec = variant_spec(
      &redisson_fenced_spec, RedissonLock::kFencedName,
      "Redisson RFencedLock.lock(): RLock with its watchdog, and a token INCRed in the same "
      "Redis with each grant",
      /*watchdog=*/true, /*fenced=*/true);
  return spec;
}

RedissonLock::RedissonLock(Params params) : params_(params) {
  LOCKSIM_ASSERT(params_.lease >= Duration::zero() && params_.lease <= kLeaseMax);
  LOCKSIM_ASSERT(params_.watchdog_timeout >= Duration::millis(3));
  LOCKSIM_ASSERT(params_.retry.valid() && params_.release_attempts >= 1);
}

std::string RedissonLock::channel(const std::string& resource) {
  return "redisson_lock__channel:{" + resource + "}";
}

std::string RedissonLock::latch_key(const std::string& resource, const std::string& request) {
  return "redisson_unlock_latch:{" + resource + "}:" + request;
}

std::string RedissonLock::token_key(const std::string& resource) {
  return "redisson_lock_token:{" + resource + "}";
}

Reply RedissonLock::try_once(RedisConnection& redis, const std::string& resource,
                             const std::string& field, std::optional<uint64_t>* fence) const {
  const std::string lease_ms = std::to_string(lease_of_store().to_ms());
  if (!params_.fenced) {
    return redis.command(redis_argv({"EVAL", kAcquireScript, "1", resource, lease_ms, field}));
  }
  Reply r = redis.command(redis_argv(
      {"EVAL", kFencedAcquireScript, "2", resource, token_key(resource), lease_ms, field}));
  const bool pair = r.kind == Reply::Kind::kArray && r.elements.size() == 2 &&
                    r.elements[0].kind == Reply::Kind::kInteger &&
                    r.elements[1].kind == Reply::Kind::kInteger;
  if (!pair) return r;  // an error, or no reply
  if (r.elements[0].integer == -1 && r.elements[1].integer > 0) {
    *fence = static_cast<uint64_t>(r.elements[1].integer);
    return Reply::nil();
  }
  return r.elements[0];  // refused: the PTTL
}

AcquireResult RedissonLock::acquire(Env& env, const std::string& resource) {
  LOCKSIM_ASSERT(params_.server < env.redis_count());
  RedisConnection& redis = env.redis(params_.server);
  AcquireResult result;
  const std::string field = make_token(env);
  bool outcome_unknown = false;  // an earlier attempt got no reply: it may have landed
  // Step 2's subscription, taken after the first refusal and given up when
  // the acquire returns, as Redisson's finally { unsubscribe } does. Not on
  // an exception (a crash or the run's end cancels the client): nothing may
  // be sent then, and the connection dies with the process anyway.
  struct Unlocks {
    RedisSubscriber* subscriber = nullptr;
    std::string channel;
    void end() {
      if (subscriber != nullptr) subscriber->unsubscribe(channel);
    }
  } unlocks{nullptr, channel(resource)};

  for (int attempt = 1; attempt <= params_.retry.max_attempts; ++attempt) {
    result.attempts = attempt;
    const TimePoint start = env.now();
    std::optional<uint64_t> fence;
    const Reply r = try_once(redis, resource, field, &fence);
    if (r.is_nil()) {
      LOCKSIM_ASSERT(fence.has_value() == params_.fenced);
      result.outcome = Outcome::kOk;
      result.lease.resource = resource;
      result.lease.token = field;
      result.lease.fence = fence;
      result.lease.acquired_local = start;
      result.detail.clear();
      if (const WriteSync sync = sync_replicas(redis); sync != WriteSync::kStands) {
        unlocks.end();
        return unsynced_grant(env, *this, sync, std::move(result));
      }
      // After the WAIT: the time it took is gone from the lease.
      result.lease.validity = lease_of_store() - (env.now() - start);
      if (watchdog()) {
        result.lease.renewal =
            start_watchdog(env, params_.server, params_.watchdog_timeout, resource, field);
      }
      LOCKSIM_ASSERT(is_well_formed(result.lease));
      unlocks.end();
      return result;
    }
    describe_failed_attempt(r, "held by another client", &outcome_unknown, result.detail);
    if (attempt == params_.retry.max_attempts) break;
    std::optional<Duration> pttl;
    if (r.kind == Reply::Kind::kInteger && r.integer >= 0) pttl = Duration::millis(r.integer);
    if (!pttl || !env.has_redis_subscriber()) {
      // An error or no reply (or an Env without pub/sub): the retry pause,
      // cut to the PTTL when there is one.
      params_.retry.backoff_after(env, attempt, pttl);
    } else if (unlocks.subscriber == nullptr) {
      // Step 2, as Redisson's lock(): subscribe after the first refusal and
      // try again at once, so a release before the subscription took hold
      // is not waited for.
      unlocks.subscriber = &env.redis_subscriber(params_.server);
      unlocks.subscriber->subscribe(unlocks.channel);
    } else {
      unlocks.subscriber->wait_message(unlocks.channel, *pttl);
    }
  }
  unlocks.end();
  result.outcome = outcome_unknown ? Outcome::kUnknown : Outcome::kFail;
  return result;
}

namespace {

// Step 3: the watchdog's loop, on a task of the client's process.
void renew_until_stopped(Env& task, size_t server, Duration timeout, const std::string& resource,
                         const std::string& field, const std::shared_ptr<LeaseRenewal>& renewal) {
  RedisConnection& redis = task.redis(server);
  const Duration period = timeout / 3;
  const std::string lease_ms = std::to_string(timeout.to_ms());
  LOCKSIM_ASSERT(period > Duration::zero());
  while (!renewal->stop.requested()) {
    if (task.sleep_unless_stopped(period, renewal->stop)) return;
    const Reply r = redis.command(
        redis_argv({"EVAL", RedissonLock::kRenewScript, "1", resource, lease_ms, field}));
    // The field is gone: stop, and tell nobody. Anything but an answer
    // (a timeout, a lost connection) is logged by Redisson and tried again
    // at the next period.
    if (r.is_integer(0)) return;
    // A renewal no replica acknowledged is logged too: only its time counts.
    if (r.is_integer(1)) (void)sync_replicas(redis);
  }
}

}  // namespace

std::shared_ptr<LeaseRenewal> start_watchdog(Env& env, size_t server, Duration timeout,
                                             const std::string& resource,
                                             const std::string& field) {
  LOCKSIM_ASSERT(timeout >= Duration::millis(3) && !field.empty());
  auto renewal = std::make_shared<LeaseRenewal>();
  // Captured by value: the task may outlive this call (until its next wake)
  // and, live, run on another thread.
  env.start_task("watchdog", [server, timeout, resource, field, renewal](Env& task) {
    renew_until_stopped(task, server, timeout, resource, field, renewal);
  });
  return renewal;
}

WriteSync sync_replicas(RedisConnection& redis) {
  const int listed = redis.replicas();
  LOCKSIM_ASSERT(listed >= 0);
  if (listed == 0) return WriteSync::kStands;
  const Reply r = redis.command(
      redis_argv({"WAIT", std::to_string(listed), std::to_string(kSyncTimeout.to_ms())}));
  if (r.kind != Reply::Kind::kInteger) return WriteSync::kNoReply;
  LOCKSIM_ASSERT_MSG(r.integer >= 0 && r.integer <= listed, "WAIT counts replicas");
  return r.integer == 0 ? WriteSync::kNoReplicaAcked : WriteSync::kStands;
}

AcquireResult unsynced_grant(Env& env, LockAlgorithm& lock, WriteSync sync, AcquireResult granted) {
  LOCKSIM_ASSERT(sync != WriteSync::kStands && granted.outcome == Outcome::kOk);
  LOCKSIM_ASSERT(granted.lease.renewal == nullptr);
  AcquireResult result;
  result.attempts = granted.attempts;
  if (sync == WriteSync::kNoReply) {
    result.outcome = Outcome::kUnknown;
    result.detail = "granted, but the WAIT for the replicas got no reply";
    return result;
  }
  const ReleaseResult undone = lock.release(env, granted.lease);
  result.outcome = Outcome::kFail;
  result.detail =
      "granted, but no replica acknowledged it within 1 s (None of slaves were "
      "synced); the grant was undone";
  if (undone.outcome != Outcome::kOk) result.detail += ", or not: " + undone.detail;
  return result;
}

ReleaseResult release_with_retries(Env& env, RedisConnection& redis,
                                   const std::vector<std::string>& argv, int attempts,
                                   Duration pause) {
  LOCKSIM_ASSERT(attempts >= 1);
  Reply r;
  for (int attempt = 1; attempt <= attempts; ++attempt) {
    r = redis.command(argv);
    if (!r.is_io_error()) break;
    if (attempt < attempts) env.sleep(pause);
  }
  if (r.is_integer(1) || r.is_integer(0)) return {Outcome::kOk, ""};
  if (r.is_io_error()) return {Outcome::kUnknown, r.text};
  if (r.is_error()) return {Outcome::kFail, r.text};
  return {Outcome::kFail, "not locked by current thread (expired or taken over)"};
}

ReleaseResult RedissonLock::release(Env& env, const Lease& lease) {
  LOCKSIM_ASSERT_MSG(is_well_formed(lease), "release takes a lease acquire returned");
  // Stopped whatever the outcome, as Redisson cancels the renewal on unlock.
  if (lease.renewal) lease.renewal->stop.request();
  RedisConnection& redis = env.redis(params_.server);
  const std::string latch = latch_key(lease.resource, make_token(env));
  const std::vector<std::string> argv =
      redis_argv({"EVAL", kReleaseScript, "3", lease.resource, channel(lease.resource), latch,
                  "0",  // Redisson's UNLOCK_MESSAGE
                  std::to_string(lease_of_store().to_ms()), lease.token,
                  std::to_string(kLatchExpiry.to_ms())});
  return release_with_retries(env, redis, argv, params_.release_attempts, params_.release_retry);
}

}  // namespace locksim::algorithms
