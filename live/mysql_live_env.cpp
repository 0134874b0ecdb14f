#include "live/mysql_live_env.h"

#include <chrono>
#include <stdexcept>
#include <thread>

#include "env/assert.h"
#include "live/run_end.h"

namespace locksim::live {

namespace {

template <typename Clock>
int64_t clock_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch())
      .count();
}

// A statement of a paused client is neither sent nor seen answered while
// the pause lasts (live/client_freeze.h); a crashed client's is not sent,
// nor its answer seen (live/client_life.h).
class FrozenSql : public SqlConnection {
 public:
  FrozenSql(SqlConnection& target, ClientFreeze* freeze, ClientFreeze* hang, const ClientLife* life,
            uint64_t generation)
      : target_(target), freeze_(freeze), hang_(hang), life_(life), generation_(generation) {}
  SqlResult query(const std::string& sql, std::vector<SqlValue> params) override {
    cross();
    SqlResult r = target_.query(sql, std::move(params));
    cross();
    return r;
  }
  void close() override { target_.close(); }
  std::string server_name() const override { return target_.server_name(); }

 private:
  void cross() const {
    if (life_ != nullptr) life_->check(generation_);
    if (freeze_ != nullptr) freeze_->wait_while_paused();
    if (hang_ != nullptr) hang_->wait_while_paused();
    if (life_ != nullptr) life_->check(generation_);
  }

  SqlConnection& target_;
  ClientFreeze* freeze_;
  ClientFreeze* hang_;  // a MySQL client has no tasks: a hang stops it whole
  const ClientLife* life_;
  uint64_t generation_;
};

}  // namespace

void MysqlLiveEnv::set_freeze(std::shared_ptr<ClientFreeze> freeze) {
  LOCKSIM_ASSERT(freeze != nullptr && freeze_ == nullptr);
  freeze_ = std::move(freeze);
  wrap();
}

void MysqlLiveEnv::wrap() {
  frozen_sql_ =
      std::make_unique<FrozenSql>(sql_, freeze_.get(), hang_.get(), life_.get(), life_generation_);
}

void MysqlLiveEnv::set_hang(std::shared_ptr<ClientFreeze> hang) {
  LOCKSIM_ASSERT(hang != nullptr && hang_ == nullptr);
  hang_ = std::move(hang);
  wrap();
}

void MysqlLiveEnv::set_life(std::shared_ptr<ClientLife> life) {
  LOCKSIM_ASSERT(life != nullptr && life_ == nullptr);
  life_ = std::move(life);
  life_generation_ = life_->generation();
  wrap();
}

MysqlLiveEnv::MysqlLiveEnv(int client, const MariadbConnection::Address& address, Duration timeout,
                           uint64_t seed)
    : client_(client),
      rng_(sim::Rng(seed).split("live/c" + std::to_string(client))),
      wall_at_start_ns_(clock_ns<std::chrono::system_clock>()),
      steady_at_start_ns_(clock_ns<std::chrono::steady_clock>()),
      sql_(address, timeout, "mysql-1") {
  LOCKSIM_ASSERT(client >= 0);
}

void MysqlLiveEnv::set_clock(std::shared_ptr<ClientClock> clock) {
  LOCKSIM_ASSERT(clock != nullptr && clock_ == nullptr);
  clock_ = std::move(clock);
}

TimePoint MysqlLiveEnv::now() {
  if (life_) life_->check(life_generation_);
  if (freeze_) freeze_->wait_while_paused();
  if (hang_) hang_->wait_while_paused();
  const int64_t steady = clock_ns<std::chrono::steady_clock>();
  const TimePoint t = TimePoint::from_ns(wall_at_start_ns_ + steady - steady_at_start_ns_);
  if (clock_) return TimePoint::from_ns(t.ns + clock_->skew_ns(steady));
  // The header promises a clock that never goes back: steady_clock is
  // monotone and this Env belongs to one thread.
  LOCKSIM_ASSERT_MSG(t >= last_now_, "the live MySQL client's clock went back");
  last_now_ = t;
  return t;
}

void MysqlLiveEnv::sleep(Duration d) {
  LOCKSIM_ASSERT_MSG(d.ns >= 0, "a sleep is never negative");
  const RunEndCut cut = cut_at_run_end(std::chrono::nanoseconds(d.ns));  // live/run_end.h
  if (life_) {
    life_->sleep(life_generation_, cut.d);  // ends at a crash
  } else if (cut.d.count() > 0) {
    std::this_thread::sleep_for(cut.d);
  }
  if (cut.run_ends) throw ClientAbandoned{};
  // A timer due during a pause fires when it ends.
  if (freeze_) freeze_->wait_while_paused();
  if (hang_) hang_->wait_while_paused();
  if (life_) life_->check(life_generation_);
}

RedisConnection& MysqlLiveEnv::redis(size_t) {
  throw std::logic_error("a MySQL client has no Redis connection");
}

}  // namespace locksim::live
