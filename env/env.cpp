#include "env/env.h"

#include <stdexcept>
#include <string>

#include "env/random.h"

namespace locksim {

ZkConnection& Env::zk() {
  throw std::logic_error(
      "this Env has no ZooKeeper connection (a ZooKeeper algorithm on another backend)");
}

RedisSubscriber& Env::redis_subscriber(size_t i) {
  throw std::logic_error("this Env has no Redis pub/sub connection (asked for server " +
                         std::to_string(i) + ")");
}

SqlConnection& Env::sql() {
  throw std::logic_error("this Env has no MySQL connection (a MySQL algorithm on another backend)");
}

void Env::start_task(const std::string& name, std::function<void(Env&)> /*body*/) {
  throw std::logic_error("this Env cannot start a task (\"" + name +
                         "\"): no process beside the client");
}

bool Env::sleep_unless_stopped(Duration d, TaskStop& stop) {
  if (!stop.requested()) sleep(d);
  return stop.requested();
}

int64_t random_between(Env& env, int64_t lo, int64_t hi) {
  return uniform_between([&env] { return env.random(); }, lo, hi);
}

void sleep_random(Env& env, Duration lo, Duration hi) {
  env.sleep(Duration{random_between(env, lo.ns, hi.ns)});
}

}  // namespace locksim
