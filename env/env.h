// Env: everything a lock client may touch, and nothing else.
//
// Modelled on LevelDB's Env: one narrow interface in front of the outside
// world. The simulation's Env (sim/) gives a drifting, jumping local clock,
// virtual sleeps and seeded randomness; the live Env (live/) gives the
// process clock, real sleeps and real servers. Lock algorithms are written
// against this class only, so the same code runs in both.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

#include "env/redis_connection.h"
#include "env/redis_subscriber.h"
#include "env/sql_connection.h"
#include "env/task_stop.h"
#include "env/time.h"
#include "env/zk_connection.h"

namespace locksim {

class Env {
 public:
  virtual ~Env() = default;

  // The client's own local clock. Under faults it drifts and jumps, forward
  // and back: it is what the client *believes* the time is, not the truth.
  virtual TimePoint now() = 0;

  // Blocks the client for d of true time. d must be >= 0.
  virtual void sleep(Duration d) = 0;
  // As sleep(d), but ends early once `stop` is requested (TaskStop::request);
  // returns whether it was. For a task whose owner may cancel it (a released
  // lock's watchdog). `stop` must outlive the call. Default: sleeps all of d
  // and then answers (an Env whose tasks need not end early: live mode
  // reaps finished task threads, it has no limit to run out of).
  virtual bool sleep_unless_stopped(Duration d, TaskStop& stop);

  // 64 uniformly random bits, seeded per client in the simulation.
  virtual uint64_t random() = 0;

  // Connection i (0-based) to the Redis servers this client was given.
  // Precondition: i < redis_count().
  virtual RedisConnection& redis(size_t i) = 0;
  virtual size_t redis_count() const = 0;

  // The client's pub/sub connection to the server of redis(i), one per
  // server for the whole run, as a client library keeps one (Redisson); it
  // connects on first use. Precondition: has_redis_subscriber() and
  // i < redis_count(). The default (an Env without pub/sub: a task's, a
  // test's) throws std::logic_error; an algorithm that can do without asks
  // has_redis_subscriber() first.
  virtual RedisSubscriber& redis_subscriber(size_t i);
  virtual bool has_redis_subscriber() const { return false; }

  // The client's ZooKeeper session handle, for the ZooKeeper recipes.
  // Precondition: has_zk(). The default (an Env without ZooKeeper) throws
  // std::logic_error: a ZooKeeper algorithm run against another backend.
  virtual ZkConnection& zk();
  virtual bool has_zk() const { return false; }

  // The client's MySQL session, for the MySQL lock algorithms.
  // Precondition: has_sql(). The default (an Env without MySQL) throws
  // std::logic_error: a MySQL algorithm run against another backend.
  virtual SqlConnection& sql();
  virtual bool has_sql() const { return false; }

  // A name unique among the clients of one run ("c3"), for lock tokens.
  virtual std::string client_name() const = 0;

  // Starts `body` as a task of the client's process, beside the caller: what
  // a client library runs on a timer thread of its own (Redisson's lock
  // watchdog). It runs while the caller blocks, and it is paused, crashed and
  // ended with the process (never with the caller's work alone); it never
  // outlives the run. It gets an Env of its own for as long as it runs: the
  // same client name and clock, a random stream and connections of its own
  // to the same servers, as a library's connection pool gives its timer.
  // `body` returns to end the task and must let the Env's exceptions pass (a
  // crash or the end of the run ends it with one). `name` is for logs.
  // Default: throws std::logic_error (an Env without tasks).
  virtual void start_task(const std::string& name, std::function<void(Env& task)> body);
};

// Uniform integer in [lo, hi] from env.random(), without std distributions
// (their output differs between standard libraries).
int64_t random_between(Env& env, int64_t lo, int64_t hi);

// Sleeps a uniformly random time in [lo, hi]: the seeded backoff between
// retries, so contenders that collided once do not collide again in step.
void sleep_random(Env& env, Duration lo, Duration hi);

}  // namespace locksim
