// The live Env of a ZooKeeper client: the process clock, real sleeps, the
// run's seeded randomness, and one ZooKeeper session through the C client.
// No Redis connections (redis_count() is 0).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "env/env.h"
#include "history/history.h"
#include "live/zk_connection_live.h"
#include "sim/rng.h"

namespace locksim::live {

class ZkLiveEnv : public Env {
 public:
  // Client `client` (0-based) of a run seeded with `seed`, asking `hosts`
  // ("127.0.0.1:port,...") for sessions of `session_timeout`. The hosts are
  // the client's own: the servers' ports, or its relays in front of them
  // when the run cuts or delays its links (backend_zookeeper.cpp).
  ZkLiveEnv(int client, const std::string& hosts, Duration session_timeout, uint64_t seed);

  TimePoint now() override;  // steady_clock: never jumps
  void sleep(Duration d) override;
  uint64_t random() override { return rng_.next(); }
  RedisConnection& redis(size_t i) override;
  size_t redis_count() const override { return 0; }
  ZkConnection& zk() override { return zk_; }
  bool has_zk() const override { return true; }
  std::string client_name() const override { return history::client_label(client_); }

 private:
  int client_;
  sim::Rng rng_;
  ZkConnectionLive zk_;
};

}  // namespace locksim::live
