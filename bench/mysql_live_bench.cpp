// The article's workload live against a real mariadbd: v2 (mysql-center)
// against v3 (mysql-segmented), wall-clock time.
//
//   BM_MysqlLiveArticle/center, /segmented — 50 client threads, each locking
//     its own name ("article-00".."article-49") 100 times (acquire, release:
//     5,000 acquires in all), against one fresh mariadbd started here. The
//     article reports about 8 s for v2 and 5 s for v3 (1.6x). Counters:
//     acquires_per_s, and failed acquires (none expected: distinct names).
//
// Distinct names never contend with each other for the lock itself; what v2
// serialises is the one center row every acquire takes FOR UPDATE, and what
// v3 spreads over 100 rows. The center rows are created before the clock
// starts (the first acquires would otherwise race to insert them, the v1
// deadlock, and time that instead). Needs mariadb-server; skipped without.
//
// Run: build/locksim_bench --benchmark_filter=MysqlLive
#include <benchmark/benchmark.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "algorithms/registry.h"
#include "live/mariadb_connection.h"
#include "live/mariadb_process.h"
#include "live/mysql_live_env.h"

namespace locksim {
namespace {

constexpr int kClients = 50;
constexpr int kAcquiresPerClient = 100;
#ifndef LOCKSIM_MYSQL_BENCH_REPETITIONS
#define LOCKSIM_MYSQL_BENCH_REPETITIONS 3
#endif

// The center rows v2 and v3 serialise on, inserted free.
void create_center_rows(const live::MariadbConnection::Address& at) {
  live::MariadbConnection c(at, Duration::seconds(30));
  std::vector<std::string> names = {"center_lock"};
  for (int i = 0; i < 100; ++i) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "center_lock_%02d", i);
    names.emplace_back(buf);
  }
  for (const std::string& n : names) {
    (void)c.query("INSERT INTO t_tag_lock (Flock_name, Fstatus, Fdesc) VALUES (?, 0, 'center')",
                  {n});
  }
}

struct Tally {
  std::atomic<int64_t> ok{0};
  std::atomic<int64_t> failed{0};
  std::atomic<int64_t> attempts{0};  // transactions, retries after a deadlock included
};

// A global status counter of the server (Innodb_deadlocks, ...), or -1.
double server_status(const live::MariadbConnection::Address& at, const std::string& name) {
  live::MariadbConnection c(at, Duration::seconds(30));
  const SqlResult r = c.query("SHOW GLOBAL STATUS LIKE '" + name + "'", {});
  if (!r.ok() || r.rows.size() != 1 || !r.rows[0][1]) return -1;
  return std::stod(*r.rows[0][1]);
}

// One client: kAcquiresPerClient acquire/release pairs of its own lock name.
void client_loop(algorithms::LockAlgorithm& algorithm, const live::MariadbConnection::Address& at,
                 int client, Tally& tally) {
  live::MysqlLiveEnv env(client, at, Duration::seconds(60), 1);
  char name[32];
  std::snprintf(name, sizeof name, "article-%02d", client);
  for (int i = 0; i < kAcquiresPerClient; ++i) {
    const algorithms::AcquireResult a = algorithm.acquire(env, name);
    tally.attempts.fetch_add(a.attempts);
    if (a.outcome != algorithms::Outcome::kOk) {
      tally.failed.fetch_add(1);
      continue;
    }
    tally.ok.fetch_add(1);
    (void)algorithm.release(env, a.lease);
  }
}

void BM_MysqlLiveArticle(benchmark::State& state, const char* algorithm_name) {
  if (const std::string why = live::MariadbProcess::missing(); !why.empty()) {
    state.SkipWithError(("mariadb-server not installed: " + why).c_str());
    return;
  }
  for (auto _ : state) {
    state.PauseTiming();
    // LOCKSIM_MYSQL_BENCH_FLUSH=0|2: innodb_flush_log_at_trx_commit (default 1).
    live::MariadbProcess::Options options;
    if (const char* f = std::getenv("LOCKSIM_MYSQL_BENCH_FLUSH")) {
      options.flush_log_at_trx_commit = std::atoi(f);
    }
    const auto server = live::MariadbProcess::start(options);
    const live::MariadbConnection::Address at{.port = server->port()};
    create_center_rows(at);
    auto algorithm = algorithms::find_algorithm(algorithm_name)->make({}, "--");
    Tally tally;
    state.ResumeTiming();
    const auto start = std::chrono::steady_clock::now();
    std::vector<std::thread> threads;
    for (int c = 0; c < kClients; ++c) {
      threads.emplace_back(client_loop, std::ref(*algorithm), std::cref(at), c, std::ref(tally));
    }
    for (std::thread& t : threads) t.join();
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    state.PauseTiming();
    state.counters["acquires_per_s"] = static_cast<double>(tally.ok.load()) / seconds;
    state.counters["failed"] = static_cast<double>(tally.failed.load());
    state.counters["wall_s"] = seconds;
    state.counters["attempts_per_acquire"] =
        static_cast<double>(tally.attempts.load()) / static_cast<double>(tally.ok.load());
    state.counters["deadlocks"] = server_status(at, "Innodb_deadlocks");
    state.counters["row_lock_waits"] = server_status(at, "Innodb_row_lock_waits");
    // LOCKSIM_MYSQL_BENCH_STATUS=1: InnoDB's account of its latest deadlock.
    if (std::getenv("LOCKSIM_MYSQL_BENCH_STATUS") != nullptr) {
      live::MariadbConnection c(at, Duration::seconds(30));
      const SqlResult r = c.query("SHOW ENGINE INNODB STATUS", {});
      if (r.ok() && !r.rows.empty() && r.rows[0].size() == 3 && r.rows[0][2]) {
        std::fprintf(stderr, "%s\n", r.rows[0][2]->c_str());
      }
    }
    state.ResumeTiming();
  }
}

BENCHMARK_CAPTURE(BM_MysqlLiveArticle, center, "mysql-center")
    ->Iterations(1)
    ->Repetitions(LOCKSIM_MYSQL_BENCH_REPETITIONS)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_MysqlLiveArticle, segmented, "mysql-segmented")
    ->Iterations(1)
    ->Repetitions(LOCKSIM_MYSQL_BENCH_REPETITIONS)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace locksim
