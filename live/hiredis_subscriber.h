// RedisSubscriber over hiredis: one TCP connection in subscribe mode to a
// real server, the live twin of sim/redis/subscriber_connection.h, holding to
// the contract of env/redis_subscriber.h.
//
// Connects on the first subscribe(); SUBSCRIBE waits for its confirmation up
// to the command timeout, keeping any message that arrives first. A wait
// polls the socket for up to its timeout and reads what arrived. A broken
// connection (EOF, a reset, a timeout on the confirmation) is dropped; the
// next wait or subscribe reconnects and subscribes again to every channel
// held. Unlike the simulated subscriber it sends no keepalive PING: a live
// run cuts no links, and a dead server shows as EOF.
//
// Not thread-safe: one subscriber belongs to one client thread.
#pragma once

#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include "env/redis_subscriber.h"
#include "env/time.h"

struct redisContext;
struct redisReply;

namespace locksim::live {

class HiredisSubscriber : public RedisSubscriber {
 public:
  // Does not connect yet. `timeout` bounds each connect and each
  // confirmation, as HiredisConnection's does its commands.
  HiredisSubscriber(std::string host, int port, Duration timeout, std::string name = "redis");
  ~HiredisSubscriber() override;
  HiredisSubscriber(const HiredisSubscriber&) = delete;
  HiredisSubscriber& operator=(const HiredisSubscriber&) = delete;

  bool subscribe(const std::string& channel) override;
  void unsubscribe(const std::string& channel) override;
  std::optional<std::string> wait_message(const std::string& channel, Duration timeout) override;
  std::string server_name() const override { return name_; }

  // Whether a context is held (for tests of the reconnect).
  bool connected() const { return context_ != nullptr; }

 private:
  struct ContextDeleter {
    void operator()(redisContext* c) const;
  };

  // Connects if needed and subscribes again to every channel held.
  bool ensure_connected();
  // Sends SUBSCRIBE and reads until its confirmation; drops the context on
  // failure.
  bool confirm(const std::string& channel);
  // Reads what the socket holds, waiting up to `timeout` for the first
  // bytes; false when the connection failed (then dropped).
  bool read_for(Duration timeout);
  // Takes one complete reply from what was read, if any; false on a
  // protocol error (the context is dropped).
  bool take_buffered(redisReply** reply);
  // Keeps a message, or notes a confirmation (*confirmed_channel).
  void handle(const redisReply* reply, std::string* confirmed_channel);
  void drop();

  std::string host_;
  int port_;
  Duration timeout_;
  std::string name_;
  std::unique_ptr<redisContext, ContextDeleter> context_;
  std::set<std::string> channels_;
  std::set<std::string> confirmed_;
  std::map<std::string, std::deque<std::string>> kept_;
};

}  // namespace locksim::live
