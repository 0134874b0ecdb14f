#include "live/live_env.h"

#include <chrono>
#include <cstdio>
#include <thread>

#include "env/assert.h"

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

// A command of a paused client is neither sent nor seen answered while the
// pause lasts (live/client_freeze.h).
class FrozenConnection : public RedisConnectionWrapper {
 public:
  FrozenConnection(RedisConnection& target, ClientFreeze& freeze)
      : RedisConnectionWrapper(target), freeze_(freeze) {}
  Reply command(std::vector<std::string> argv) override {
    freeze_.wait_while_paused();
    Reply r = target().command(std::move(argv));
    freeze_.wait_while_paused();
    return r;
  }

 private:
  ClientFreeze& freeze_;
};

class FrozenSubscriber : public RedisSubscriber {
 public:
  FrozenSubscriber(RedisSubscriber& target, ClientFreeze& freeze)
      : target_(target), freeze_(freeze) {}
  bool subscribe(const std::string& channel) override {
    freeze_.wait_while_paused();
    const bool ok = target_.subscribe(channel);
    freeze_.wait_while_paused();
    return ok;
  }
  void unsubscribe(const std::string& channel) override {
    freeze_.wait_while_paused();
    target_.unsubscribe(channel);
  }
  std::optional<std::string> wait_message(const std::string& channel, Duration timeout) override {
    freeze_.wait_while_paused();
    std::optional<std::string> m = target_.wait_message(channel, timeout);
    freeze_.wait_while_paused();
    return m;
  }
  std::string server_name() const override { return target_.server_name(); }

 private:
  RedisSubscriber& target_;
  ClientFreeze& freeze_;
};

}  // namespace

LiveEnv::LiveEnv(int client, const std::vector<ServerAddress>& servers, Duration command_timeout,
                 uint64_t seed)
    : LiveEnv(client, servers, command_timeout, client_rng(seed, client),
              std::make_shared<TaskStop>()) {}

LiveEnv::LiveEnv(int client, const std::vector<ServerAddress>& servers, Duration command_timeout,
                 sim::Rng rng, std::shared_ptr<TaskStop> stop)
    : client_(client),
      servers_(servers),
      command_timeout_(command_timeout),
      rng_(rng),
      stop_(std::move(stop)) {
  LOCKSIM_ASSERT(client >= 0);
  connections_.reserve(servers.size());
  for (size_t i = 0; i < servers.size(); ++i) {
    connections_.push_back(std::make_unique<HiredisConnection>(
        servers[i].first, servers[i].second, command_timeout, "redis-" + std::to_string(i + 1)));
    subscribers_.push_back(std::make_unique<HiredisSubscriber>(
        servers[i].first, servers[i].second, command_timeout, "redis-" + std::to_string(i + 1)));
  }
  // Connection i is server i: algorithms address servers by index.
  LOCKSIM_ASSERT(connections_.size() == servers.size() && subscribers_.size() == servers.size());
}

void LiveEnv::set_freeze(std::shared_ptr<ClientFreeze> freeze) {
  LOCKSIM_ASSERT(freeze != nullptr && freeze_ == nullptr);
  freeze_ = std::move(freeze);
  for (size_t i = 0; i < connections_.size(); ++i) {
    frozen_connections_.push_back(std::make_unique<FrozenConnection>(*connections_[i], *freeze_));
    frozen_subscribers_.push_back(std::make_unique<FrozenSubscriber>(*subscribers_[i], *freeze_));
  }
  LOCKSIM_ASSERT(frozen_connections_.size() == connections_.size());
}

void LiveEnv::set_clock(std::shared_ptr<ClientClock> clock) {
  LOCKSIM_ASSERT(clock != nullptr && clock_ == nullptr);
  clock_ = std::move(clock);
}

TimePoint LiveEnv::now() {
  if (freeze_) freeze_->wait_while_paused();
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
  std::unique_lock<std::mutex> lock(stop_->mutex);
  const bool stopped = stop_->changed.wait_for(lock, std::chrono::nanoseconds(d.ns),
                                               [this] { return stop_->stopped; });
  if (stopped) throw TaskStopped{};
  lock.unlock();
  // A timer due during a pause fires when it ends.
  if (freeze_) freeze_->wait_while_paused();
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
      new LiveEnv(client_, servers_, command_timeout_, rng_.split("task/" + name), stop_));
  if (freeze_) env->set_freeze(freeze_);  // the pause stops the whole process
  if (clock_) env->set_clock(clock_);     // and the process has one clock
  auto done = std::make_shared<std::atomic<bool>>(false);
  std::thread thread([env = std::move(env), body = std::move(body), done, name] {
    try {
      body(*env);
    } catch (const TaskStopped&) {
      // The client's Env went: the normal end of a task still running.
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
  return freeze_ ? *frozen_connections_[i] : *connections_[i];
}

RedisSubscriber& LiveEnv::redis_subscriber(size_t i) {
  LOCKSIM_ASSERT_MSG(i < subscribers_.size(), "Env::redis_subscriber(i) past redis_count()");
  return freeze_ ? *frozen_subscribers_[i] : *subscribers_[i];
}

}  // namespace locksim::live
