#include "algorithms/scripted_lock.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "algorithms/quorum_text.h"
#include "algorithms/set_nx_lua.h"  // make_token
#include "env/assert.h"
#include "env/parse.h"  // format_duration

namespace locksim::algorithms {

const std::vector<std::string>& placeholder_names() {
  static const std::vector<std::string> names = {"{resource}", "{token}",  "{ttl_ms}",
                                                 "{ttl_s}",    "{client}", "{attempt}"};
  return names;
}

namespace {

// EXPIRE's whole seconds: rounded up, at least 1 (as naive-setnx).
int64_t ttl_seconds(int64_t ttl_ms) {
  const int64_t s = (ttl_ms + 999) / 1000;
  return s < 1 ? 1 : s;
}

std::string value_of(const std::string& name, const Placeholders& p) {
  if (name == "{resource}") return p.resource;
  if (name == "{token}") return p.token;
  if (name == "{ttl_ms}") return std::to_string(p.ttl_ms);
  if (name == "{ttl_s}") return std::to_string(ttl_seconds(p.ttl_ms));
  if (name == "{client}") return p.client;
  LOCKSIM_ASSERT_MSG(name == "{attempt}", "validation admits only the known placeholders");
  return std::to_string(p.attempt);
}

// The fencing token a granting reply carries (acquire.fence). A script that
// names a fence and grants without one is a script bug: were it read as "no
// token", a fenced lock would be tested unfenced without a word. Throwing
// from the client's fiber puts it in the run's errors (verdict unknown).
uint64_t fence_of(const Reply& r, size_t element) {
  const std::string where = "acquire.fence: element " + std::to_string(element);
  if (r.kind != Reply::Kind::kArray || element >= r.elements.size()) {
    throw std::runtime_error(where + " of a granting reply, expected an array that long, got " +
                             r.to_string());
  }
  const Reply& e = r.elements[element];
  if (e.kind != Reply::Kind::kInteger || e.integer < 0) {
    throw std::runtime_error(where + ": expected an integer >= 0, got " + e.to_string());
  }
  return static_cast<uint64_t>(e.integer);
}

}  // namespace

std::string substitute(const std::string& text, const Placeholders& p) {
  std::string out;
  size_t i = 0;
  while (i < text.size()) {
    const size_t close = text[i] == '{' ? text.find('}', i) : std::string::npos;
    if (close != std::string::npos) {
      const std::string name = text.substr(i, close - i + 1);
      const auto& names = placeholder_names();
      if (std::find(names.begin(), names.end(), name) != names.end()) {
        out += value_of(name, p);
        i = close + 1;
        continue;
      }
    }
    out += text[i++];
  }
  return out;
}

bool matches(const ReplyPattern& pattern, const Reply& whole, const Placeholders& p) {
  const Reply* r = &whole;
  if (pattern.element) {
    if (whole.kind != Reply::Kind::kArray || *pattern.element >= whole.elements.size()) {
      return false;
    }
    r = &whole.elements[*pattern.element];
  }
  switch (pattern.kind) {
    case ReplyPattern::Kind::kStatus:
      return r->kind == Reply::Kind::kStatus && r->text == pattern.text;
    case ReplyPattern::Kind::kInteger:
      return r->is_integer(pattern.integer);
    case ReplyPattern::Kind::kNil:
      return r->is_nil();
    case ReplyPattern::Kind::kBulk:
      return r->kind == Reply::Kind::kBulk && r->text == substitute(pattern.text, p);
  }
  return false;
}

ScriptedLock::ScriptedLock(std::shared_ptr<const ScriptedLockDef> def, Params params)
    : def_(std::move(def)), params_(params) {
  LOCKSIM_ASSERT(def_ != nullptr && def_->masters >= 1);
  LOCKSIM_ASSERT(params_.ttl > Duration::zero());
  LOCKSIM_ASSERT(params_.retry.valid());
  LOCKSIM_ASSERT(params_.drift_factor >= 0.0 && params_.drift_factor < 1.0);
  LOCKSIM_ASSERT_MSG(!def_->renew || params_.renew_period > Duration::zero(),
                     "a renew step comes with a positive period");
}

Duration ScriptedLock::drift() const {
  const double drift_ns = static_cast<double>(params_.ttl.ns) * params_.drift_factor;
  return Duration{static_cast<int64_t>(std::llround(drift_ns))} + Duration::millis(2);
}

std::string ScriptedLock::check_servers(size_t redis_servers) const {
  if (redis_servers == 0) return def_->name + " needs at least one redis server, got none";
  if (!multi()) return "";
  const size_t q = quorum_for(redis_servers);
  if (q < 1 || q > redis_servers) {
    return "quorum: expected a number from 1 to the " + std::to_string(redis_servers) +
           " redis servers, got " + std::to_string(q);
  }
  return "";
}

StoreShape ScriptedLock::store_shape(const std::string& resource, size_t redis_servers) const {
  return StoreShape{resource, multi() ? quorum_for(redis_servers) : 1, false};
}

Reply ScriptedLock::run_step(RedisConnection& redis, const ScriptStep& step,
                             const Placeholders& p) const {
  std::vector<std::string> argv;
  if (!step.command.empty()) {
    for (const std::string& a : step.command) argv.push_back(substitute(a, p));
    return redis.command(argv);
  }
  argv = {"EVAL", step.script, std::to_string(step.keys.size())};
  for (const std::string& k : step.keys) argv.push_back(substitute(k, p));
  for (const std::string& a : step.args) argv.push_back(substitute(a, p));
  return redis.command(argv);
}

AcquireResult ScriptedLock::acquire(Env& env, const std::string& resource) {
  return multi() ? acquire_quorum(env, resource) : acquire_one(env, resource);
}

// Steps 1-3 on one master, in set-nx-lua's and naive-setnx's order of calls.
AcquireResult ScriptedLock::acquire_one(Env& env, const std::string& resource) const {
  RedisConnection& redis = env.redis(0);
  AcquireResult result;
  Placeholders p{resource, make_token(env), env.client_name(), params_.ttl.to_ms(), 0};
  const TimePoint start = env.now();
  bool outcome_unknown = false;  // an earlier attempt got no reply: it may have landed

  for (int attempt = 1; attempt <= params_.retry.max_attempts; ++attempt) {
    result.attempts = attempt;
    p.attempt = attempt;
    Reply r = run_step(redis, def_->acquire, p);
    bool won = matches(def_->acquire.success, r, p);
    if (!won && def_->recheck && outcome_unknown && !r.is_error() && !r.is_io_error()) {
      const Reply owner = run_step(redis, *def_->recheck, p);
      won = matches(def_->recheck->success, owner, p);
      if (owner.is_io_error()) r = owner;
    }
    if (won) {
      result.outcome = Outcome::kOk;
      result.lease.resource = resource;
      result.lease.token = p.token;
      result.lease.acquired_local = start;
      if (def_->fence_element) result.lease.fence = fence_of(r, *def_->fence_element);
      result.detail.clear();
      if (def_->expire) run_expire_step(env, p, result);
      result.lease.validity = params_.ttl - (env.now() - start);
      if (def_->renew) result.lease.renewal = start_renewal(env, p);
      LOCKSIM_ASSERT(is_well_formed(result.lease));
      return result;
    }
    describe_failed_attempt(r, def_->acquire.refused, &outcome_unknown, result.detail);
    params_.retry.backoff_after(env, attempt);
  }
  result.outcome = outcome_unknown ? Outcome::kUnknown : Outcome::kFail;
  return result;
}

// The separate expiry of step 3, worded as naive-setnx words it: its reply
// changes nothing, it is noted so the history shows the hazard.
void ScriptedLock::run_expire_step(Env& env, const Placeholders& p, AcquireResult& result) const {
  if (params_.expire_delay > Duration::zero()) env.sleep(params_.expire_delay);
  const ScriptStep& step = *def_->expire;
  const Reply e = run_step(env.redis(0), step, p);
  const std::string what = step.command.empty() ? "the expire script" : step.command.front();
  if (e.is_io_error()) {
    result.detail = what + " failed (" + e.text + "): the key may have no expiry";
  } else if (e.is_error()) {
    result.detail = what + " failed (" + e.text + "): the key has no expiry";
  } else if (!matches(step.success, e, p)) {
    result.detail = step.refused;
  }
}

ReleaseResult ScriptedLock::release(Env& env, const Lease& lease) {
  LOCKSIM_ASSERT_MSG(is_well_formed(lease), "release takes a lease acquire returned");
  // Stopped whatever the outcome, as Redisson cancels the renewal on unlock.
  if (lease.renewal) lease.renewal->stop.request();
  const Placeholders p{lease.resource, lease.token, env.client_name(), params_.ttl.to_ms(), 0};
  if (multi()) return release_quorum(env, p);
  const Reply r = run_step(env.redis(0), def_->release, p);
  if (matches(def_->release.success, r, p)) return {Outcome::kOk, ""};
  if (r.is_io_error()) return {Outcome::kUnknown, r.text};
  if (r.is_error()) return {Outcome::kFail, r.text};
  return {Outcome::kFail, def_->release.refused};
}

// The N-master steps, in redlock.cpp's order of calls and with its words.
AcquireResult ScriptedLock::acquire_quorum(Env& env, const std::string& resource) const {
  const size_t n = env.redis_count();
  LOCKSIM_ASSERT_MSG(check_servers(n).empty(), "the harness runs check_servers() first");
  const size_t quorum = quorum_for(n);
  AcquireResult result;
  Placeholders p{resource, make_token(env), env.client_name(), params_.ttl.to_ms(), 0};
  std::vector<bool> may_hold(n, false);  // a key of ours may be there
  for (int attempt = 1; attempt <= params_.retry.max_attempts; ++attempt) {
    result.attempts = attempt;
    p.attempt = attempt;
    // A token per round, as redlock.cpp's default (token=per-attempt).
    if (attempt > 1) p.token = make_token(env);
    const TimePoint t1 = env.now();
    QuorumTally tally;
    for (size_t i = 0; i < n; ++i) {
      const Reply r = run_step(env.redis(i), def_->acquire, p);
      const bool ok = matches(def_->acquire.success, r, p);
      if (ok || r.is_io_error()) may_hold[i] = true;  // a lost reply may hide a success
      if (ok) {
        ++tally.locked;
      } else if (r.is_io_error() || r.is_error()) {
        tally.io_errors += r.is_io_error() ? 1 : 0;
        tally.last_error = env.redis(i).server_name() + ": " + r.text;
      }
    }
    const Duration elapsed = env.now() - t1;
    const Duration validity = params_.ttl - elapsed - drift();
    if (tally.locked >= quorum && validity > Duration::zero()) {
      result.outcome = Outcome::kOk;
      result.lease = Lease{resource, p.token, std::nullopt, t1, validity};
      if (def_->renew) result.lease.renewal = start_renewal(env, p);
      result.detail.clear();
      LOCKSIM_ASSERT(is_well_formed(result.lease) && result.lease.validity > Duration::zero());
      return result;
    }
    result.detail = failed_round_detail(tally, n, quorum, validity, elapsed);
    const size_t unanswered = unlock_all(env, p, may_hold);
    result.detail += unanswered_unlock_text(unanswered);
    params_.retry.backoff_after(env, attempt);
  }
  result.outcome = failed_acquire_outcome(may_hold, quorum);
  return result;
}

size_t ScriptedLock::unlock_all(Env& env, const Placeholders& p,
                                std::vector<bool>& may_hold) const {
  LOCKSIM_ASSERT(may_hold.size() == env.redis_count());
  size_t unanswered = 0;
  for (size_t i = 0; i < env.redis_count(); ++i) {
    const Reply r = run_step(env.redis(i), def_->release, p);
    if (!r.is_io_error() && !r.is_error()) {
      may_hold[i] = false;  // the release ran: no key of ours is left there
    } else {
      ++unanswered;
    }
  }
  return unanswered;
}

ReleaseResult ScriptedLock::release_quorum(Env& env, const Placeholders& p) const {
  const size_t n = env.redis_count();
  const size_t quorum = quorum_for(n);
  size_t released = 0;
  size_t io_errors = 0;
  for (size_t i = 0; i < n; ++i) {
    const Reply r = run_step(env.redis(i), def_->release, p);
    if (matches(def_->release.success, r, p)) ++released;
    if (r.is_io_error()) ++io_errors;
  }
  if (released >= quorum) return {Outcome::kOk, ""};
  const std::string counts = "deleted on " + count_text(released, n, quorum);
  if (released + io_errors >= quorum) {
    return {Outcome::kUnknown, counts + ", " + std::to_string(io_errors) + " did not answer"};
  }
  return {Outcome::kFail, counts + ": " + def_->release.refused};
}

// Step 4: the watchdog, a task of the client's process (Env::start_task), as
// Redisson's is: it renews every renew-period from the grant while the work
// goes on, so a renewal's round trip (or its timeout, when a reply is lost)
// never lengthens the critical section. It pauses, crashes and ends with the
// process, as a watchdog thread inside it would; release stops it. It holds a
// copy of the lock (the file's steps and the parameters), not this one: the
// task may wake once more after the run is done with this object.
std::shared_ptr<LeaseRenewal> ScriptedLock::start_renewal(Env& env, const Placeholders& p) const {
  LOCKSIM_ASSERT(def_->renew && params_.renew_period > Duration::zero());
  auto renewal = std::make_shared<LeaseRenewal>();
  auto self = std::make_shared<const ScriptedLock>(*this);
  env.start_task("watchdog", [self, p, renewal](Env& task) {
    // A period, then a renewal; until release stops it or a renewal is refused.
    while (!task.sleep_unless_stopped(self->params_.renew_period, renewal->stop) &&
           self->renew_once(task, p)) {
    }
  });
  return renewal;
}

bool ScriptedLock::renew_once(Env& env, const Placeholders& p) const {
  size_t renewed = 0;
  size_t refused = 0;
  const size_t n = multi() ? env.redis_count() : 1;
  for (size_t i = 0; i < n; ++i) {
    const Reply r = run_step(env.redis(i), *def_->renew, p);
    if (matches(def_->renew->success, r, p)) {
      ++renewed;
    } else if (!r.is_io_error()) {
      ++refused;
    }
  }
  // A refused renewal (the lock is no longer ours) stops the watchdog, as
  // Redisson's does; a lost reply does not: the next period tries again.
  return renewed >= (multi() ? quorum_for(n) : 1) || refused == 0;
}

AlgorithmSpec scripted_lock_spec(std::shared_ptr<const ScriptedLockDef> def) {
  AlgorithmSpec s;
  s.name = def->name;
  s.summary = def->summary;
  s.params = def->params;
  s.default_masters = static_cast<int>(def->masters);
  if (def->renew) {
    // The watchdog keeps the ttl alive: what a fault must outlast is the ttl
    // from the last renewal, not from the grant (harness/margin).
    s.renewed_lease_param = "ttl";
    s.renew_period_param = "renew-period";
  }
  s.make = [def](const ParamValues& values, const std::string& prefix) {
    // The spec is rebuilt here: ParamReader wants one that outlives it.
    AlgorithmSpec spec;
    spec.name = def->name;
    spec.summary = def->summary;
    spec.params = def->params;
    const ParamReader r(spec, values, prefix);
    ScriptedLock::Params p;
    p.ttl = r.positive_duration("ttl");
    p.retry = read_retry_policy(r);
    if (def->masters > 1) {
      p.quorum = read_quorum(r);
      p.drift_factor = r.parse_double("drift-factor", 0.0, 1.0, "[0, 1)");
    }
    if (def->expire) p.expire_delay = r.duration("expire-delay");
    if (def->renew) p.renew_period = r.positive_duration("renew-period");
    return std::unique_ptr<LockAlgorithm>(new ScriptedLock(def, p));
  };
  return s;
}

}  // namespace locksim::algorithms
