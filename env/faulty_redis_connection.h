// Breaking a Redis connection on purpose, through a wrapper of the seam.
//
// LevelDB's EnvWrapper is the model: RedisConnectionWrapper forwards every
// call to a wrapped RedisConnection, so a subclass overrides only what it
// wants to change and inherits the rest. FaultyRedisConnection is the
// subclass that injects the faults lock clients must survive, in front of
// ANY connection — the simulated server's, an in-memory test one, or hiredis
// to a real redis-server in live mode — so the same fault means the same
// thing wherever the algorithm runs:
//   - down:         every command fails as a lost connection, and the server
//                   never sees it;
//   - lost replies: the next N commands reach the server and are executed,
//                   but their replies are lost (the "unknown outcome" of a
//                   timeout after the write landed);
//   - failed commands: commands with a given name never reach the server and
//                   get a given reply instead (an io error for a request
//                   lost on the way, or an error the server would send).
// A lost request or reply is Reply::io_error(lost_text), the kind every
// RedisConnection returns for a timeout, so algorithms treat it exactly like
// a real one.
//
// Ownership: a wrapper does not own the connection it wraps; that connection
// must outlive it. Thread-safety: none — use one wrapper from one client (one
// fiber, or one live client thread), as every RedisConnection is used.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "env/redis_connection.h"

namespace locksim {

// Forwards every call to `target`. Subclass it and override what you break.
class RedisConnectionWrapper : public RedisConnection {
 public:
  explicit RedisConnectionWrapper(RedisConnection& target) : target_(target) {}

  Reply command(std::vector<std::string> argv) override { return target_.command(std::move(argv)); }
  std::string server_name() const override { return target_.server_name(); }
  int replicas() const override { return target_.replicas(); }

  // The wrapped connection.
  RedisConnection& target() const { return target_; }

 private:
  RedisConnection& target_;
};

class FaultyRedisConnection : public RedisConnectionWrapper {
 public:
  // `lost_text` is the io-error text of a lost request or reply, as the
  // algorithm (and so the history) sees it.
  explicit FaultyRedisConnection(RedisConnection& target, std::string lost_text = "timeout");

  // Applies the faults below, in this order: down, then a failed command
  // (neither reaches the target), then a lost reply (the target executed the
  // command). With no fault set, exactly target().command(argv).
  // Precondition: argv is not empty.
  Reply command(std::vector<std::string> argv) override;

  // While down, every command returns Reply::io_error(lost_text) without
  // reaching the target. Lost replies are not counted down meanwhile.
  void set_down(bool down) { down_ = down; }
  bool down() const { return down_; }

  // The next `n` commands that reach the target are executed there, and their
  // replies replaced by Reply::io_error(lost_text). Replaces any count left.
  // Precondition: n >= 0.
  void lose_next_replies(int n);
  int replies_to_lose() const { return replies_to_lose_; }

  // From now on, commands named `name` (case-insensitively, as Redis reads
  // command names) do not reach the target and return `reply` instead — e.g.
  // Reply::io_error("timeout") for a request lost on the way, or
  // Reply::error("READONLY ...") for what a demoted master would say.
  // Replaces an earlier rule for the same name. Precondition: name not empty.
  void fail_command(const std::string& name, Reply reply);
  // fail_command(name, Reply::io_error(lost_text)): the request is lost.
  void lose_command(const std::string& name);
  // Removes every fail_command/lose_command rule.
  void clear_failed_commands() { failed_commands_.clear(); }

  const std::string& lost_text() const { return lost_text_; }

 private:
  std::string lost_text_;
  bool down_ = false;
  int replies_to_lose_ = 0;
  std::map<std::string, Reply> failed_commands_;  // by upper-case name
};

}  // namespace locksim
