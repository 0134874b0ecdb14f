// RedisConnection over hiredis: one blocking TCP connection to a real server.
//
// The live twin of the simulated connection, so the same algorithm code talks
// to redis-server. Transport trouble never throws: a refused connect, a
// timeout or an EOF is Reply::io_error (the command's outcome is unknown, the
// lock client's :info), the broken context is dropped, and the next command
// makes one fresh connect attempt. A command is never resent by this class:
// whether to retry an unknown outcome is the algorithm's decision.
//
// Not thread-safe: one connection belongs to one client thread.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "env/redis_connection.h"
#include "env/time.h"

struct redisContext;

namespace locksim::live {

class HiredisConnection : public RedisConnection {
 public:
  // Does not connect yet: the first command does, so constructing a client
  // whose server is down (or not started yet) is fine. `timeout` bounds the
  // connect and each command's send and receive.
  HiredisConnection(std::string host, int port, Duration timeout, std::string name = "redis");
  ~HiredisConnection() override;

  HiredisConnection(const HiredisConnection&) = delete;
  HiredisConnection& operator=(const HiredisConnection&) = delete;

  // Sends argv as one binary-safe command (redisCommandArgv). At most one
  // connect attempt per call, so a dead server costs at most ~2 timeouts.
  Reply command(std::vector<std::string> argv) override;

  std::string server_name() const override { return name_; }

  // Whether a context is currently held (for tests of the reconnect logic).
  bool connected() const { return context_ != nullptr; }

 private:
  struct ContextDeleter {
    void operator()(redisContext* c) const;
  };

  // Connects if needed. Returns "" on success, else the reason.
  std::string ensure_connected();

  std::string host_;
  int port_;
  Duration timeout_;
  std::string name_;
  std::unique_ptr<redisContext, ContextDeleter> context_;
};

}  // namespace locksim::live
