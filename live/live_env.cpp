#include "live/live_env.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <thread>

#include "env/assert.h"
#include "live/run_end.h"

namespace locksim::live {

namespace {

// Each client's stream is split off the run's root by name, as in the
// simulation, so client 3's draws do not depend on how many clients there are.
sim::Rng client_rng(uint64_t seed, int client) {
  sim::Rng root(seed);
  return root.split("live/c" + std::to_string(client));
}

// Thrown out of a task's sleep when its client's Env goes: ends the task.
struct TaskStopped {};

// How often a sleeping client looks whether it crashed: the resolution of
// a crash that lands in a sleep (a hold, a retry pause).
constexpr std::chrono::milliseconds kLifeSlice{2};

// The boundary of every Env call of a client that may be paused or crashed:
// a paused client waits there (live/client_freeze.h), a crashed one throws
// ClientCrashed (live/client_life.h).
struct Boundary {
  ClientFreeze* freeze = nullptr;    // null: never paused
  ClientFreeze* hang = nullptr;      // the client's own Env only: its tasks go on
  const ClientLife* life = nullptr;  // null: never crashed
  uint64_t generation = 0;           // the life this Env belongs to

  void cross() const {
    if (life != nullptr) life->check(generation);
    if (freeze != nullptr) freeze->wait_while_paused();
    if (hang != nullptr) hang->wait_while_paused();
    // A crash during the pause: the frozen client never wakes.
    if (life != nullptr) life->check(generation);
  }
};

// A command of a paused client is neither sent nor seen answered while the
// pause lasts; a crashed client's is not sent, nor its reply seen.
class FrozenConnection : public RedisConnectionWrapper {
 public:
  FrozenConnection(RedisConnection& target, Boundary boundary)
      : RedisConnectionWrapper(target), boundary_(boundary) {}
  Reply command(std::vector<std::string> argv) override {
    boundary_.cross();
    Reply r = target().command(std::move(argv));
    boundary_.cross();
    return r;
  }

 private:
  Boundary boundary_;
};

class FrozenSubscriber : public RedisSubscriber {
 public:
  FrozenSubscriber(RedisSubscriber& target, Boundary boundary)
      : target_(target), boundary_(boundary) {}
  bool subscribe(const std::string& channel) override {
    boundary_.cross();
    const bool ok = target_.subscribe(channel);
    boundary_.cross();
    return ok;
  }
  void unsubscribe(const std::string& channel) override {
    boundary_.cross();
    target_.unsubscribe(channel);
  }
  std::optional<std::string> wait_message(const std::string& channel, Duration timeout) override {
    boundary_.cross();
    std::optional<std::string> m = target_.wait_message(channel, timeout);
    boundary_.cross();
    return m;
  }
  std::string server_name() const override { return target_.server_name(); }

 private:
  RedisSubscriber& target_;
  Boundary boundary_;
};

}  // namespace

LiveEnv::LiveEnv(int client, const std::vector<ServerAddress>& servers, Duration command_timeout,
                 uint64_t seed)
    : LiveEnv(client, servers, nullptr, command_timeout, client_rng(seed, client),
              std::make_shared<TaskStop>()) {}

LiveEnv::LiveEnv(int client, GroupRoutes routes, Duration command_timeout, uint64_t seed)
    : LiveEnv(client, {}, std::make_shared<const GroupRoutes>(std::move(routes)), command_timeout,
              client_rng(seed, client), std::make_shared<TaskStop>()) {}

LiveEnv::LiveEnv(int client, const std::vector<ServerAddress>& servers,
                 std::shared_ptr<const GroupRoutes> routes, Duration command_timeout, sim::Rng rng,
                 std::shared_ptr<TaskStop> stop)
    : client_(client),
      servers_(servers),
      routes_(std::move(routes)),
      command_timeout_(command_timeout),
      rng_(rng),
      stop_(std::move(stop)) {
  LOCKSIM_ASSERT(client >= 0);
  LOCKSIM_ASSERT_MSG(routes_ == nullptr || servers.empty(), "servers or groups, not both");
  for (size_t i = 0; i < servers.size(); ++i) {
    connections_.push_back(std::make_unique<HiredisConnection>(
        servers[i].first, servers[i].second, command_timeout, "redis-" + std::to_string(i + 1)));
    subscribers_.push_back(std::make_unique<HiredisSubscriber>(
        servers[i].first, servers[i].second, command_timeout, "redis-" + std::to_string(i + 1)));
  }
  if (routes_ != nullptr) {
    LOCKSIM_ASSERT(routes_->view != nullptr && routes_->ports.size() == routes_->view->groups());
    for (size_t g = 0; g < routes_->ports.size(); ++g) {
      connections_.push_back(
          std::make_unique<GroupConnection>(*routes_->view, g, routes_->ports[g], command_timeout));
      subscribers_.push_back(
          std::make_unique<GroupSubscriber>(*routes_->view, g, routes_->ports[g], command_timeout));
    }
  }
  // Connection i is server (or group) i: algorithms address servers by index.
  LOCKSIM_ASSERT(connections_.size() == subscribers_.size());
}

void LiveEnv::wrap_connections() {
  const Boundary boundary{
      .freeze = freeze_.get(), .life = life_.get(), .generation = life_ ? life_generation_ : 0};
  frozen_connections_.clear();
  frozen_subscribers_.clear();
  for (size_t i = 0; i < connections_.size(); ++i) {
    frozen_connections_.push_back(std::make_unique<FrozenConnection>(*connections_[i], boundary));
    frozen_subscribers_.push_back(std::make_unique<FrozenSubscriber>(*subscribers_[i], boundary));
  }
  LOCKSIM_ASSERT(frozen_connections_.size() == connections_.size());
}

void LiveEnv::set_freeze(std::shared_ptr<ClientFreeze> freeze) {
  LOCKSIM_ASSERT(freeze != nullptr && freeze_ == nullptr);
  freeze_ = std::move(freeze);
  wrap_connections();
}

void LiveEnv::set_hang(std::shared_ptr<ClientFreeze> hang) {
  LOCKSIM_ASSERT(hang != nullptr && hang_ == nullptr);
  hang_ = std::move(hang);
  wrap_connections();
}

void LiveEnv::set_life(std::shared_ptr<ClientLife> life) {
  LOCKSIM_ASSERT(life != nullptr && life_ == nullptr);
  life_ = std::move(life);
  life_generation_ = life_->generation();
  wrap_connections();
}

void LiveEnv::set_clock(std::shared_ptr<ClientClock> clock) {
  LOCKSIM_ASSERT(clock != nullptr && clock_ == nullptr);
  clock_ = std::move(clock);
}

TimePoint LiveEnv::now() {
  if (life_) life_->check(life_generation_);
  if (freeze_) freeze_->wait_while_paused();
  if (hang_) hang_->wait_while_paused();
  if (life_) life_->check(life_generation_);
  const int64_t steady = ClientClock::steady_ns();
  if (clock_) return TimePoint::from_ns(steady + clock_->skew_ns(steady));
  const TimePoint t = TimePoint::from_ns(steady);
  // The header promises a clock that never jumps: steady_clock is monotone,
  // and this Env belongs to one thread, so its readings never go back.
  LOCKSIM_ASSERT_MSG(t >= last_now_, "steady_clock went back");
  last_now_ = t;
  return t;
}

LiveEnv::~LiveEnv() {
  if (tasks_.empty()) return;
  {
    const std::lock_guard<std::mutex> lock(stop_->mutex);
    stop_->stopped = true;
  }
  stop_->changed.notify_all();
  for (Task& t : tasks_) t.thread.join();
}

void LiveEnv::sleep(Duration d) {
  LOCKSIM_ASSERT_MSG(d >= Duration::zero(), "an algorithm slept a negative time");
  // A real sleep that ends early when the client's Env goes (a task's only).
  // A crashed client's sleep ends at the crash, in slices short enough that
  // a task's stop is not missed for long either. A client's sleep ends at
  // the run's end (live/run_end.h).
  const RunEndCut cut = cut_at_run_end(std::chrono::nanoseconds(d.ns));
  const auto end = std::chrono::steady_clock::now() + cut.d;
  std::unique_lock<std::mutex> lock(stop_->mutex);
  for (;;) {  // bounded by `end`
    const auto left = end - std::chrono::steady_clock::now();
    const auto slice = life_ ? std::min<std::chrono::nanoseconds>(left, kLifeSlice) : left;
    if (stop_->changed.wait_for(lock, slice, [this] { return stop_->stopped; })) {
      throw TaskStopped{};
    }
    if (life_) life_->check(life_generation_);
    if (std::chrono::steady_clock::now() >= end) break;
  }
  lock.unlock();
  if (cut.run_ends) throw ClientAbandoned{};
  // A timer due during a pause (or a hang of the client's work) fires when it ends.
  if (freeze_) freeze_->wait_while_paused();
  if (hang_) hang_->wait_while_paused();
  if (life_) life_->check(life_generation_);
}

void LiveEnv::start_task(const std::string& name, std::function<void(Env&)> body) {
  LOCKSIM_ASSERT_MSG(body != nullptr, "a task has a body");
  // Reap the tasks that returned, so a long run keeps a handful of threads.
  for (size_t i = 0; i < tasks_.size();) {
    if (tasks_[i].done->load()) {
      tasks_[i].thread.join();
      tasks_.erase(tasks_.begin() + static_cast<std::ptrdiff_t>(i));
    } else {
      ++i;
    }
  }
  auto env = std::unique_ptr<LiveEnv>(
      new LiveEnv(client_, servers_, routes_, command_timeout_, rng_.split("task/" + name), stop_));
  if (freeze_) env->set_freeze(freeze_);  // the pause stops the whole process
  if (clock_) env->set_clock(clock_);     // and the process has one clock
  if (life_) {
    // A task dies with the life it was started in.
    env->life_ = life_;
    env->life_generation_ = life_generation_;
    env->wrap_connections();
  }
  auto done = std::make_shared<std::atomic<bool>>(false);
  std::thread thread([env = std::move(env), body = std::move(body), done, name] {
    try {
      body(*env);
    } catch (const TaskStopped&) {
      // The client's Env went: the normal end of a task still running.
    } catch (const ClientCrashed&) {
      // Its client crashed: the task died with it.
    } catch (const ClientAbandoned&) {
      // The run ended with its client abandoned (a hang): so does the task.
    } catch (const std::exception& e) {
      std::fprintf(stderr, "locksim: task %s of %s: %s\n", name.c_str(), env->client_name().c_str(),
                   e.what());
    }
    done->store(true);
  });
  tasks_.push_back(Task{std::move(thread), std::move(done)});
}

RedisConnection& LiveEnv::redis(size_t i) {
  LOCKSIM_ASSERT_MSG(i < connections_.size(), "Env::redis(i) past redis_count()");
  return frozen_connections_.empty() ? *connections_[i] : *frozen_connections_[i];
}

RedisSubscriber& LiveEnv::redis_subscriber(size_t i) {
  LOCKSIM_ASSERT_MSG(i < subscribers_.size(), "Env::redis_subscriber(i) past redis_count()");
  return frozen_subscribers_.empty() ? *subscribers_[i] : *frozen_subscribers_[i];
}

}  // namespace locksim::live
