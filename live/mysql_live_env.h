// The live Env of a MySQL lock client: the wall clock (the article's
// `new Date()`), real sleeps, the run's seeded randomness, and one session
// with a real mariadbd through libmariadb. No Redis connections.
#pragma once

#include <cstdint>
#include <string>

#include <memory>
#include "env/env.h"
#include "history/history.h"

#include "live/client_clock.h"
#include "live/client_freeze.h"
#include "live/client_life.h"
#include "live/mariadb_connection.h"
#include "sim/rng.h"

namespace locksim::live {

class MysqlLiveEnv : public Env {
 public:
  // Client `client` (0-based) of a run seeded with `seed`, with one session
  // to `address` whose connect and reads are bounded by `timeout`.
  MysqlLiveEnv(int client, const MariadbConnection::Address& address, Duration timeout,
               uint64_t seed);

  // Unix time in ns, as the wall clock read once at construction plus the
  // steady clock since: the lock code writes it into DATETIME columns (so the
  // table reads as real dates), and it never jumps back, as an NTP step
  // would make the real wall clock do in the middle of a run.
  TimePoint now() override;
  void sleep(Duration d) override;
  uint64_t random() override { return rng_.next(); }
  RedisConnection& redis(size_t i) override;
  size_t redis_count() const override { return 0; }
  SqlConnection& sql() override { return frozen_sql_ ? *frozen_sql_ : sql_; }
  bool has_sql() const override { return true; }
  std::string client_name() const override { return history::client_label(client_); }

  // From now on this client stops at each Env call while `freeze` is paused
  // (live/client_freeze.h). Call before the client's first step.
  void set_freeze(std::shared_ptr<ClientFreeze> freeze);
  // From now on now() reads `clock`'s skew on top (clock faults on this
  // client); it may then step back.
  void set_clock(std::shared_ptr<ClientClock> clock);
  // From now on every Env call throws ClientCrashed once `life` is crashed
  // (live/client_life.h), and a sleep ends early for it. Call before the
  // client's first step.
  void set_life(std::shared_ptr<ClientLife> life);
  // From now on the client stops at each Env call while `hang` is paused.
  void set_hang(std::shared_ptr<ClientFreeze> hang);

 private:
  void wrap();  // sql_ behind whichever of freeze, hang and life are set

  int client_;
  sim::Rng rng_;
  int64_t wall_at_start_ns_;
  int64_t steady_at_start_ns_;
  TimePoint last_now_{};
  MariadbConnection sql_;
  std::shared_ptr<ClientFreeze> freeze_;
  std::shared_ptr<ClientFreeze> hang_;
  std::shared_ptr<ClientLife> life_;
  uint64_t life_generation_ = 0;  // the life this Env was made in
  std::shared_ptr<ClientClock> clock_;
  std::unique_ptr<SqlConnection> frozen_sql_;  // sql_ behind the freeze and the life
};

}  // namespace locksim::live
