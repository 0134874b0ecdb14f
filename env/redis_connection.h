// One client's connection to one Redis server.
//
// Takes a real command vector ({"SET", key, value, "NX", "PX", "30000"}) and
// returns the RESP-shaped reply. The simulated server (sim/redis/) and hiredis
// (live/) both sit behind it, so lock algorithms speak real Redis and
// the simulated server can be checked against redis-server command by command.
#pragma once

#include <string>
#include <vector>

#include "env/reply.h"

namespace locksim {

class RedisConnection {
 public:
  virtual ~RedisConnection() = default;

  // Sends one command and waits for its reply. Blocks the calling client (a
  // fiber in the simulation, a thread live). Never throws for server or
  // transport trouble: a timeout or a broken link is Reply::Kind::kIoError.
  // May throw sim::Cancelled when the simulation tears the client down.
  // `argv` is taken by value: the simulation keeps it with the request in
  // flight, so a temporary ({"GET", key}) reaches the server without a copy.
  virtual Reply command(std::vector<std::string> argv) = 0;

  // Human-readable name of the server ("redis-1"), for messages.
  virtual std::string server_name() const = 0;

  // How many replicas the client's configuration lists behind this server
  // now (Sentinel's list of the master's replicas, which Redisson reads to
  // decide whether to follow a lock write with WAIT). Reading it sends
  // nothing. Default 0: a lone server (live mode starts no replicas).
  virtual int replicas() const { return 0; }
};

}  // namespace locksim
