// The two sides of tests/mysql_differential_test.cpp: a script of steps run
// by N sessions of the simulated server (fibers, virtual time) or of a real
// mariadbd (one thread per session, real time), each giving one transcript.
#pragma once

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "env/sql_connection.h"
#include "live/mariadb_connection.h"
#include "sim/mysql/mysql_deployment.h"
#include "sim/network.h"
#include "sim/node.h"
#include "sim/world.h"

namespace locksim::difftest {

struct Step {
  enum class Kind { kStatement, kClose, kWait };
  Kind kind;
  int session;  // 1-based
  std::string sql;
  std::vector<SqlValue> params;
  Duration wait;
};

// The steps a script is written in.
inline Step sql(int session, std::string text, std::vector<SqlValue> params = {}) {
  return Step{Step::Kind::kStatement, session, std::move(text), std::move(params), {}};
}
inline Step close_session(int session) {
  return Step{Step::Kind::kClose, session, "", {}, {}};
}
inline Step wait(Duration d) {
  return Step{Step::Kind::kWait, 0, "", {}, d};
}

inline std::string describe_step(const Step& st) {
  std::string out = "s" + std::to_string(st.session) + ": " + st.sql;
  if (!st.params.empty()) {
    out += " [";
    for (size_t i = 0; i < st.params.size(); ++i)
      out += (i ? ", " : "") + (st.params[i] ? "'" + *st.params[i] + "'" : "NULL");
    out += "]";
  }
  return out;
}

// What a statement answered, without the message (the simulation words its own)
// and with the count of notes and warnings but not their texts.
inline std::string describe_result(const SqlResult& r) {
  if (!r.ok()) return "error " + std::to_string(r.error_number) + " (" + r.sqlstate + ")";
  std::string out = "ok";
  if (!r.columns.empty()) {
    out += " columns=(";
    for (size_t i = 0; i < r.columns.size(); ++i) out += (i ? "," : "") + r.columns[i];
    out += ") rows=[";
    for (size_t k = 0; k < r.rows.size(); ++k) {
      out += k ? " (" : "(";
      for (size_t i = 0; i < r.rows[k].size(); ++i)
        out += (i ? "," : "") + r.rows[k][i].value_or("NULL");
      out += ")";
    }
    out += "]";
  } else {
    out +=
        " affected=" + std::to_string(r.affected_rows) + " id=" + std::to_string(r.last_insert_id);
  }
  // Only when there are any, so a transcript shows where they are.
  return r.warnings == 0 ? out : out + " warnings=" + std::to_string(r.warnings);
}

// The driver both sides share: after each step, every session with an
// unanswered statement is settled (answered, or known to be blocked) and the
// answers are written down in session order.
class Sessions {
 public:
  virtual ~Sessions() = default;
  virtual void post(int s, const Step& step) = 0;  // a statement or a close
  virtual void pass(Duration d) = 0;               // let time pass
  // Waits until session s's outstanding statement answered (returns it) or
  // is waiting for a row lock (nullopt).
  virtual std::optional<SqlResult> settle(int s) = 0;
};

inline std::vector<std::string> run_script(Sessions& io, const std::vector<Step>& steps,
                                           int sessions) {
  std::vector<std::string> t;
  std::vector<std::string> outstanding(static_cast<size_t>(sessions) + 1);  // by session
  for (const Step& st : steps) {
    if (st.kind == Step::Kind::kWait) {
      io.pass(st.wait);
      t.push_back("wait " + std::to_string(st.wait.to_ms()) + " ms");
    } else {
      io.post(st.session, st);
      if (st.kind == Step::Kind::kClose) {
        t.push_back("s" + std::to_string(st.session) + ": close");
      } else {
        outstanding[static_cast<size_t>(st.session)] = describe_step(st);
      }
    }
    for (int s = 1; s <= sessions; ++s) {
      std::string& what = outstanding[static_cast<size_t>(s)];
      if (what.empty()) continue;
      const bool just_sent = st.kind == Step::Kind::kStatement && st.session == s;
      const std::optional<SqlResult> r = io.settle(s);
      if (r) {
        t.push_back((just_sent ? what : "  (earlier) " + what) + " -> " + describe_result(*r));
        what.clear();
      } else if (just_sent) {
        t.push_back(what + " -> blocks");
      }
    }
  }
  return t;
}

// ---- The simulation: one World, the MySQL backend seam, one fiber per session.

class SimSessions : public Sessions {
 public:
  SimSessions(sim::World& world, sim::mysql::MysqlDeployment& db, int sessions)
      : world_(world), slots_(static_cast<size_t>(sessions) + 1) {
    for (int s = 1; s <= sessions; ++s) {
      Slot& slot = slots_[static_cast<size_t>(s)];
      slot.node = std::make_unique<sim::Node>(world, "c" + std::to_string(s));
      slot.conn = std::move(db.connect(*slot.node).sql);
      world.spawn("s" + std::to_string(s), slot.node.get(), [this, s] { serve(s); });
    }
  }
  void post(int s, const Step& step) override { slots_[static_cast<size_t>(s)].job = step; }
  void pass(Duration d) override { world_.sleep(d); }
  std::optional<SqlResult> settle(int s) override {
    // 100 ms of virtual time: far beyond any unblocked statement, far below
    // the 1 s lock wait timeout.
    world_.sleep(Duration::millis(100));
    return std::exchange(slots_[static_cast<size_t>(s)].answer, std::nullopt);
  }
  void stop() { stopping_ = true; }

 private:
  struct Slot {
    std::unique_ptr<sim::Node> node;
    std::unique_ptr<SqlConnection> conn;
    std::optional<Step> job;
    std::optional<SqlResult> answer;
  };
  void serve(int s) {
    Slot& slot = slots_[static_cast<size_t>(s)];
    while (!stopping_) {
      if (!slot.job) {
        world_.sleep(Duration::millis(1));  // polling in virtual time: deterministic
        continue;
      }
      const Step step = *std::exchange(slot.job, std::nullopt);
      if (step.kind == Step::Kind::kClose) {
        slot.conn->close();
        continue;
      }
      slot.answer = slot.conn->query(step.sql, step.params);
    }
  }
  sim::World& world_;
  std::vector<Slot> slots_;
  bool stopping_ = false;
};

inline std::vector<std::string> run_simulated(const std::vector<Step>& steps, int sessions,
                                              Duration lock_wait_timeout,
                                              sim::mysql::Isolation isolation) {
  sim::World world(sim::WorldOptions{.seed = 1});
  sim::Network net(world, world.rng().split("network"));
  sim::mysql::MysqlParams params;
  params.lock_wait_timeout = lock_wait_timeout;
  params.isolation = isolation;
  sim::mysql::MysqlDeployment db(world, net, params);
  SimSessions io(world, db, sessions);
  sim::Node driver(world, "driver");
  std::vector<std::string> transcript;
  world.spawn("driver", &driver, [&] {
    transcript = run_script(io, steps, sessions);
    io.stop();
  });
  world.run_until(TimePoint{} + Duration::seconds(600));
  if (!world.errors().empty()) throw std::runtime_error("simulation: " + world.errors()[0]);
  world.shutdown();
  return transcript;
}

// ---- Real MariaDB: one thread and one libmariadb session per script session.

// The SQL that gives a new live session the script's isolation level and
// innodb_lock_wait_timeout: what a server started with them gives every
// session, without restarting the one mariadbd the scripts share.
inline std::vector<std::string> session_sql(sim::mysql::Isolation isolation,
                                            Duration lock_wait_timeout) {
  return {isolation == sim::mysql::Isolation::kReadCommitted
              ? "SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED"
              : "SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ",
          "SET SESSION innodb_lock_wait_timeout = " +
              std::to_string(lock_wait_timeout.ns / Duration::seconds(1).ns)};
}

class LiveSession {
 public:
  LiveSession(int port, std::vector<std::string> connect_sql)
      : conn_({.host = "127.0.0.1", .port = port, .database = "locksim", .user = "root"},
              Duration::seconds(30), "mariadb"),
        connect_sql_(std::move(connect_sql)),
        thread_([this] { serve(); }) {}
  ~LiveSession() {
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  void post(const Step& step) {
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      job_ = step;
    }
    cv_.notify_all();
  }
  // The answer, if it came within `d`.
  std::optional<SqlResult> answer_within(std::chrono::milliseconds d) {
    std::unique_lock<std::mutex> lock(mutex_);
    cv_.wait_for(lock, d, [this] { return answer_.has_value(); });
    return std::exchange(answer_, std::nullopt);
  }
  unsigned long thread_id() const {
    const std::lock_guard<std::mutex> lock(mutex_);
    return thread_id_;
  }

 private:
  void serve() {
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      cv_.wait(lock, [this] { return stopping_ || job_.has_value(); });
      if (stopping_) return;
      const Step step = *std::exchange(job_, std::nullopt);
      lock.unlock();
      std::optional<SqlResult> r;
      if (step.kind == Step::Kind::kClose) {
        conn_.close();
      } else {
        // Connect first, so the monitor knows which server thread to watch,
        // and set the session's isolation level as the server would.
        if (!conn_.connected()) {
          for (const std::string& sql : connect_sql_) {
            const SqlResult set = conn_.query(sql, {});
            if (!set.ok()) throw std::runtime_error(sql + ": " + set.message);
          }
        }
        {
          const std::lock_guard<std::mutex> id_lock(mutex_);
          thread_id_ = conn_.thread_id();
        }
        r = conn_.query(step.sql, step.params);
      }
      lock.lock();
      if (r) answer_ = std::move(r);
      cv_.notify_all();
    }
  }
  live::MariadbConnection conn_;
  const std::vector<std::string> connect_sql_;
  mutable std::mutex mutex_;
  std::condition_variable cv_;
  std::optional<Step> job_;
  std::optional<SqlResult> answer_;
  unsigned long thread_id_ = 0;
  bool stopping_ = false;
  std::thread thread_;  // last: starts after every member above exists
};

class LiveSessions : public Sessions {
 public:
  LiveSessions(int port, int sessions, const std::vector<std::string>& connect_sql)
      : monitor_({.host = "127.0.0.1", .port = port, .database = "locksim", .user = "root"},
                 Duration::seconds(30), "monitor") {
    for (int s = 0; s < sessions; ++s) {
      sessions_.push_back(std::make_unique<LiveSession>(port, connect_sql));
    }
  }
  void post(int s, const Step& step) override {
    session(s).post(step);
    if (step.kind == Step::Kind::kClose) {
      // A close has no answer; let the server see the socket go.
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
    }
  }
  void pass(Duration d) override { std::this_thread::sleep_for(std::chrono::nanoseconds(d.ns)); }
  std::optional<SqlResult> settle(int s) override {
    // InnoDB refreshes INNODB_TRX only when nobody read it for 100 ms, so
    // look every 150 ms: polling faster would read a stale table forever.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (std::chrono::steady_clock::now() < deadline) {
      if (auto r = session(s).answer_within(std::chrono::milliseconds(150))) return r;
      if (lock_waiting(session(s).thread_id())) {
        // Once more, in case it was granted between the two looks.
        if (auto r = session(s).answer_within(std::chrono::milliseconds(150))) return r;
        if (lock_waiting(session(s).thread_id())) return std::nullopt;
      }
    }
    throw std::runtime_error("session s" + std::to_string(s) +
                             " neither answered nor waited for a lock within 20 s");
  }

 private:
  LiveSession& session(int s) { return *sessions_.at(static_cast<size_t>(s - 1)); }
  // The text protocol with the id spliced in: a bound parameter compared to
  // INNODB_TRX's thread id column matched no row on MariaDB 10.11.
  bool lock_waiting(unsigned long thread_id) {
    const SqlResult r = monitor_.query(
        "SELECT trx_state FROM information_schema.INNODB_TRX WHERE trx_mysql_thread_id = " +
            std::to_string(thread_id),
        {});
    return r.ok() && r.rows.size() == 1 && r.rows[0][0] == SqlValue("LOCK WAIT");
  }
  live::MariadbConnection monitor_;
  std::vector<std::unique_ptr<LiveSession>> sessions_;
};

// Runs the script against the server on `port`, starting from an empty
// t_tag_lock (TRUNCATE also resets AUTO_INCREMENT, as a fresh simulation has it).
inline std::vector<std::string> run_live(const std::vector<Step>& steps, int sessions, int port,
                                         sim::mysql::Isolation isolation,
                                         Duration lock_wait_timeout) {
  live::MariadbConnection setup(
      {.host = "127.0.0.1", .port = port, .database = "locksim", .user = "root"},
      Duration::seconds(30), "setup");
  const SqlResult r = setup.query("TRUNCATE TABLE t_tag_lock", {});
  if (!r.ok()) throw std::runtime_error("TRUNCATE: " + r.message);
  LiveSessions io(port, sessions, session_sql(isolation, lock_wait_timeout));
  return run_script(io, steps, sessions);
}

}  // namespace locksim::difftest
