// script:FILE.json: a Redis lock defined by data — its commands or Lua
// scripts and a few rules — instead of C++ (docs/how-to/script-a-lock.md).
//
// Where it comes from: most Redis locks in production are a SET NX or a Lua
// script with a team's own twist (a renewal, a hash for re-entrancy, a token
// counter). locksim's simulated Redis runs real Lua, so such a lock can be
// written as its scripts; harness/script_file.h reads and validates the file
// and registers the result like any built-in algorithm.
//
// Steps on one master (`masters` 1), as set-nx-lua and naive-setnx do them:
//   1. token := a value unique to this acquire (client name + 64 random bits).
//   2. Run the acquire step. A reply matching `success` means we hold the
//      lock (its fence, if the file names one, is read from the reply).
//      Otherwise back off and retry, up to max-attempts. If an earlier
//      attempt got no reply (it may have landed) and this one was refused,
//      the optional `recheck` step asks whether the lock is ours after all.
//   3. The optional `expire` step (a second round trip, after an optional
//      pause): its reply changes nothing, it is only noted.
//      validity := ttl - (now - start), counted from before the first attempt.
//   4. While holding, the optional `renew` step runs every renew-period from
//      the grant (the watchdog: a task of the client's own process beside its
//      work, so it pauses and dies with the process but never lengthens the
//      work); a refused renewal stops the watchdog, not the work; release
//      stops it.
//   5. Release: the release step; `success` means released.
// Steps on N masters (`masters` > 1), as redlock.cpp (Redlock) does them:
//   the acquire step on every master in turn; held when `quorum` answered
//   success and validity := ttl - elapsed - (ttl * drift-factor + 2 ms) > 0;
//   otherwise the release step on every master and retry. Release and renew
//   run on every master and count when a quorum succeeded.
//
// What it does not protect against: whatever its scripts do not. Only what
// the file can say is expressible (docs/how-to/script-a-lock.md, "What a file
// cannot express").
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "algorithms/algorithm_spec.h"
#include "algorithms/lock_algorithm.h"
#include "algorithms/retry_policy.h"

namespace locksim::algorithms {

// What counts as success for one reply: a status, an integer, nil or a bulk
// string (its text may hold placeholders, e.g. "{token}"), of the whole reply
// or of one element of an array reply.
struct ReplyPattern {
  enum class Kind { kStatus, kInteger, kNil, kBulk };
  Kind kind = Kind::kStatus;
  std::string text = "OK";        // kStatus, kBulk (placeholders substituted)
  int64_t integer = 0;            // kInteger
  std::optional<size_t> element;  // 0-based element of an array reply
};

// One round trip: a plain command, or a Lua script sent with EVAL.
// Every string may hold placeholders: {resource} {token} {ttl_ms} {ttl_s}
// {client} {attempt}.
struct ScriptStep {
  std::vector<std::string> command;  // non-empty: a command
  std::string script;                // else: a Lua body, with keys and args
  std::vector<std::string> keys;
  std::vector<std::string> args;
  ReplyPattern success;
  std::string refused;  // the detail a history shows when success did not match
};

struct ScriptedLockDef {
  std::string name;     // "script:PATH", as the user wrote it
  std::string summary;  // the file's, for `locksim list`
  size_t masters = 1;   // > 1: the quorum rules above
  ScriptStep acquire;
  std::optional<ScriptStep> recheck;    // after a lost reply, then a refusal
  std::optional<ScriptStep> expire;     // a separate expiry round trip
  std::optional<size_t> fence_element;  // the fencing token: this element (an integer)
  ScriptStep release;
  std::optional<ScriptStep> renew;  // the watchdog's step
  std::vector<ParamInfo> params;    // what `locksim list` shows and --param takes
};

// The values a step's placeholders take.
struct Placeholders {
  std::string resource, token, client;
  int64_t ttl_ms = 0;
  int attempt = 0;
};

// The placeholder names, for validation ("{resource}" ...).
const std::vector<std::string>& placeholder_names();
// `text` with every placeholder replaced.
std::string substitute(const std::string& text, const Placeholders& p);
// Whether `r` matches `pattern` (placeholders in it replaced by `p`).
bool matches(const ReplyPattern& pattern, const Reply& r, const Placeholders& p);

class ScriptedLock : public LockAlgorithm {
 public:
  struct Params {
    Duration ttl = Duration::seconds(10);
    RetryPolicy retry;
    size_t quorum = 0;                         // masters > 1; 0: N/2+1
    double drift_factor = 0.01;                // masters > 1
    Duration expire_delay = Duration::zero();  // before the expire step
    Duration renew_period = Duration::zero();  // the watchdog's, > 0 with a renew step
  };

  ScriptedLock(std::shared_ptr<const ScriptedLockDef> def, Params params);

  AcquireResult acquire(Env& env, const std::string& resource) override;
  ReleaseResult release(Env& env, const Lease& lease) override;
  std::string name() const override { return def_->name; }
  std::string check_servers(size_t redis_servers) const override;
  StoreShape store_shape(const std::string& resource, size_t redis_servers) const override;

 private:
  bool multi() const { return def_->masters > 1; }
  size_t quorum_for(size_t n) const { return params_.quorum == 0 ? n / 2 + 1 : params_.quorum; }
  Duration drift() const;
  Reply run_step(RedisConnection& redis, const ScriptStep& step, const Placeholders& p) const;
  AcquireResult acquire_one(Env& env, const std::string& resource) const;
  AcquireResult acquire_quorum(Env& env, const std::string& resource) const;
  void run_expire_step(Env& env, const Placeholders& p, AcquireResult& result) const;
  ReleaseResult release_quorum(Env& env, const Placeholders& p) const;
  size_t unlock_all(Env& env, const Placeholders& p, std::vector<bool>& may_hold) const;
  std::shared_ptr<LeaseRenewal> start_renewal(Env& env, const Placeholders& p) const;
  // One round of the renew step; false once the watchdog should stop.
  bool renew_once(Env& env, const Placeholders& p) const;

  std::shared_ptr<const ScriptedLockDef> def_;
  Params params_;
};

// The registry entry for `def`: its params, its masters, a make that reads
// ttl, max-attempts, retry and the others the file's steps need.
AlgorithmSpec scripted_lock_spec(std::shared_ptr<const ScriptedLockDef> def);

}  // namespace locksim::algorithms
