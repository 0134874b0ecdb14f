// The live Env: the process clock, real sleeps and real Redis servers.
//
// The same algorithm code that runs in the simulation runs here against
// redis-server processes. Live code is exempt from the determinism rule (it
// reads steady_clock and sleeps for real), but randomness still comes from the
// run's seed, so the draws a client makes are the same from run to run even
// though the interleaving is not.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "env/env.h"
#include "live/hiredis_connection.h"
#include "sim/rng.h"

namespace locksim::live {

// One server to connect to: host and port.
using ServerAddress = std::pair<std::string, int>;

class LiveEnv : public Env {
 public:
  // Client `client` (0-based) of a run seeded with `seed`. One connection per
  // server, named "redis-1", "redis-2", ... in the order given; none connects
  // before its first command. `command_timeout` bounds each connect and each
  // command (a stopped server becomes an io_error after that long).
  LiveEnv(int client, const std::vector<ServerAddress>& servers, Duration command_timeout,
          uint64_t seed);

  // steady_clock, as nanoseconds since its (arbitrary) epoch. Never jumps:
  // clock faults in live mode are injected into the servers, not the clients.
  TimePoint now() override;
  void sleep(Duration d) override;
  uint64_t random() override { return rng_.next(); }
  RedisConnection& redis(size_t i) override;
  size_t redis_count() const override { return connections_.size(); }
  std::string client_name() const override { return "c" + std::to_string(client_); }

 private:
  int client_;
  sim::Rng rng_;
  TimePoint last_now_{};  // the last now() reading: it never goes back
  std::vector<std::unique_ptr<HiredisConnection>> connections_;
};

}  // namespace locksim::live
