#include "sim/client_env.h"

#include <stdexcept>

#include "env/assert.h"

namespace locksim::sim {

ClientEnv::ClientEnv(World& world, Node& node, Rng rng,
                     std::vector<std::unique_ptr<RedisConnection>> redis)
    : world_(world),
      node_(node),
      rng_(rng),
      redis_(std::move(redis)),
      task_rng_(Rng(rng).split("tasks")) {
  for (const auto& connection : redis_) LOCKSIM_ASSERT(connection != nullptr);
}

RedisConnection& ClientEnv::redis(size_t i) {
  LOCKSIM_ASSERT_MSG(i < redis_.size(), "Env::redis(i) past redis_count()");
  return *redis_[i];
}

RedisSubscriber& ClientEnv::redis_subscriber(size_t i) {
  if (subscribers_.empty()) return Env::redis_subscriber(i);  // throws: none here
  LOCKSIM_ASSERT_MSG(i < subscribers_.size(), "Env::redis_subscriber(i) past redis_count()");
  return *subscribers_[i];
}

void ClientEnv::set_redis_subscribers(std::vector<std::unique_ptr<RedisSubscriber>> subscribers) {
  for (const auto& s : subscribers) LOCKSIM_ASSERT(s != nullptr);
  // Subscriber i listens to the server of connection i.
  LOCKSIM_ASSERT(subscribers.empty() || subscribers.size() == redis_.size());
  subscribers_ = std::move(subscribers);
}

ZkConnection& ClientEnv::zk() {
  if (zk_ == nullptr) return Env::zk();  // throws: no ZooKeeper in this run
  return *zk_;
}

SqlConnection& ClientEnv::sql() {
  if (sql_ == nullptr) return Env::sql();  // throws: no MySQL in this run
  return *sql_;
}

bool ClientEnv::sleep_unless_stopped(Duration d, TaskStop& stop) {
  LOCKSIM_ASSERT_MSG(d >= Duration::zero(), "a negative sleep");
  if (stop.requested()) return true;
  // Shared with the timer, which still fires after this call returned when
  // the stop came first (the waker is unhooked before the call returns).
  auto waiter = std::make_shared<Waiter>();
  World& world = world_;
  world_.after(d, [&world, waiter] { world.signal(*waiter); });
  stop.set_waker([&world, waiter] { world.signal(*waiter); });
  struct Unhook {  // however the wait ends (a crash cancels it), no waker stays
    TaskStop& stop;
    ~Unhook() { stop.set_waker(nullptr); }
  } unhook{stop};
  world_.block(*waiter);
  return stop.requested();
}

void ClientEnv::start_task(const std::string& name, std::function<void(Env&)> body) {
  if (connection_maker_ == nullptr) return Env::start_task(name, std::move(body));  // throws
  LOCKSIM_ASSERT_MSG(body != nullptr, "a task has a body");
  // Runners are bounded by the tasks alive at once: a watchdog ends at its
  // lock's release (sleep_unless_stopped), or after the renewal it is
  // sending then. A client that needs more is a bug.
  constexpr size_t kRunnersMax = 16;
  TaskRunner* runner = nullptr;
  for (auto& r : runners_) {
    if (!r->busy) {
      runner = r.get();
      break;
    }
  }
  if (runner == nullptr) {
    LOCKSIM_ASSERT_MSG(runners_.size() < kRunnersMax, "a client's process runs too many tasks");
    auto made = std::make_unique<TaskRunner>();
    made->env =
        std::make_unique<ClientEnv>(world_, node_, task_rng_.split("runner"), connection_maker_());
    runners_.push_back(std::move(made));
    runner = runners_.back().get();
  }
  LOCKSIM_ASSERT(!runner->busy && runner->job == nullptr);
  runner->job = std::move(body);
  runner->busy = true;
  if (runner->alive) {
    world_.signal(runner->idle);
  } else {
    runner->alive = true;
    runner->idle = Waiter{};
    world_.spawn_task(node_.name() + "/" + name, &node_, [this, runner] { run_tasks(*runner); });
  }
  LOCKSIM_ASSERT(runner->busy && runner->alive);
}

void ClientEnv::run_tasks(TaskRunner& runner) {
  // However the fiber ends (a crash, the end of the run), the runner is free
  // for a fresh fiber.
  struct Ended {
    TaskRunner& r;
    ~Ended() {
      r.alive = false;
      r.busy = false;
      r.job = nullptr;
    }
  } ended{runner};
  while (true) {
    if (!runner.busy) {
      runner.idle.signaled = false;
      world_.block(runner.idle);  // until start_task hands over a job
    }
    LOCKSIM_ASSERT(runner.busy && runner.job != nullptr);
    std::function<void(Env&)> job = std::move(runner.job);
    runner.job = nullptr;
    job(*runner.env);
    runner.busy = false;
  }
}

}  // namespace locksim::sim
