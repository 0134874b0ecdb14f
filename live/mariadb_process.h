// A real mariadbd (Debian's mariadb-server), started on loopback for one test
// or live run with a fresh data directory, and stopped when its owner goes.
//
// Why its own server: a live run must own the database it locks in (a fresh
// t_tag_lock, settings of its choosing), must not collide with a system
// MariaDB or with other runs, and must leave nothing behind.
//
// Fast starts: mariadb-install-db takes seconds, so it runs once per machine
// (per mariadbd binary and uid) into a template data directory under $TMPDIR,
// built in a scratch folder and renamed into place (atomic: concurrent first
// starts never see half a template). Each start copies the template (~20 MB)
// into its own temp folder, starts mariadbd on a free 127.0.0.1 port with
// small caches (the defaults memset hundreds of MB at start-up), waits until
// it answers, and creates database `locksim` with the article's t_tag_lock.
// A start costs about 0.3 s of CPU (1-2 s of wall time on a loaded 2-core
// machine).
//
// Security is off on purpose: --skip-grant-tables (any user, no password) on
// loopback only, and --user=root where we are root (CI), since mariadbd
// otherwise refuses to run as root.
//
// Ownership: the server gets SIGKILL when the thread that started it exits
// (PR_SET_PDEATHSIG), and is registered with owned_processes.h, so a SIGINT
// to `locksim live` stops it and removes its folder; the destructor kills,
// reaps and removes. Nothing is left behind, also on error.
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>

#include "live/owned_processes.h"

namespace locksim::live {

class MariadbProcess {
 public:
  struct Options {
    // innodb_lock_wait_timeout in whole seconds (the server's unit), >= 1.
    int lock_wait_timeout_s = 50;
    // innodb_flush_log_at_trx_commit: 1 (durable, MariaDB's default), 2 or 0.
    int flush_log_at_trx_commit = 1;
    // transaction_isolation of every session: REPEATABLE-READ (the default)
    // or READ-COMMITTED, as mariadbd spells it.
    std::string transaction_isolation = "REPEATABLE-READ";
  };

  // Starts the server and returns once database `locksim` holds an empty
  // t_tag_lock. Throws std::runtime_error with a one-line reason (mariadbd or
  // mariadb-install-db missing; it did not come up within ~30 s: with the
  // tail of its error log).
  static std::unique_ptr<MariadbProcess> start(const Options& options);

  int port() const { return port_; }
  pid_t pid() const { return server_.pid(); }
  const std::string& dir() const { return dir_; }  // temp folder (datadir, log); removed with it

  // A live run's faults (live/live_nemesis.h), as RedisProcess's: SIGKILL
  // (InnoDB keeps what its redo log had flushed: all commits with
  // flush_log_at_trx_commit=1, up to the last second's with 0 or 2); a
  // restart on the same port and datadir that returns once the server,
  // after its crash recovery, answers (throws std::runtime_error when it
  // will not); SIGSTOP and SIGCONT. A restarted server dies with the thread
  // that restarted it.
  void crash();
  void restart();
  bool running() const { return server_.owned(); }
  void pause();
  void resume();

  // Whether this machine has what start() needs ("" if so, else why not).
  static std::string missing();

  // The CREATE TABLE start() runs: the article's definition, verbatim.
  static const char* create_table_sql();

  // SIGKILL (a test database keeps nothing worth a clean shutdown), reaps the
  // child, removes the temp folder. Never throws.
  ~MariadbProcess();
  MariadbProcess(const MariadbProcess&) = delete;
  MariadbProcess& operator=(const MariadbProcess&) = delete;

 private:
  MariadbProcess() = default;
  OwnedProcess server_;  // owns nothing until started
  Options options_;      // what restart() starts again with
  int port_ = 0;
  std::string dir_;
};

}  // namespace locksim::live
