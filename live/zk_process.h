// A real ZooKeeper ensemble (Debian's `zookeeper` package: one JVM per
// server), started on loopback for one test or live run and stopped when its
// owner goes away.
//
// Each server gets free loopback ports (client, quorum, election), its own
// data directory in one temporary folder, and a short tickTime so sessions
// expire in about a second in tests. Every JVM is an OwnedProcess: it gets
// SIGKILL when the thread that started it exits (PR_SET_PDEATHSIG), a SIGINT
// to `locksim live` stops it and removes the folder, and the destructor kills
// and reaps them all, so nothing is left behind, also on error.
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "live/clock_control.h"
#include "live/owned_processes.h"

namespace locksim::live {

class ZkEnsembleProcess {
 public:
  struct Options {
    int servers = 1;    // 1 or 3
    int tick_ms = 100;  // tickTime: sessions may be 2..20 ticks
    // Each JVM under the clock shim (live/clock_shim/), with a control file
    // of its own, so clock(i) can step its wall clock. The JVM honours it:
    // HotSpot 17 reads System.currentTimeMillis (ctime, mtime) with
    // clock_gettime(CLOCK_REALTIME) through libc, which the shim replaces,
    // and System.nanoTime (session expiry, ticks) with CLOCK_MONOTONIC,
    // which the shim leaves real. Test: LiveFaults.TheClockShimMovesZooKeeperCtimeOnly.
    bool clock_shim = false;
  };

  // Starts the servers and returns once a client can create a node through
  // every one of them (a leader was elected). Throws CannotRunLive when java
  // or the zookeeper jar is missing, std::runtime_error with a one-line
  // reason otherwise (no quorum within ~60 s: what each server answers and
  // the tail of its log, the JVM's SLF4J notices left out).
  static std::unique_ptr<ZkEnsembleProcess> start(const Options& options);

  // "127.0.0.1:p1,127.0.0.1:p2,..." for zookeeper_init.
  std::string hosts() const;
  const std::vector<int>& client_ports() const { return ports_; }
  std::vector<pid_t> pids() const;  // -1 for a server that exited
  const std::string& dir() const { return dir_; }

  // A live run's faults on server `i` (0-based; live/live_nemesis.h), from
  // one thread at a time. crash(): SIGKILL, reaped; its data directory (the
  // snapshot and the transaction log) stays. restart(): the same JVM on the
  // same ports and folder, not waiting for it to rejoin (the ensemble elects
  // and resyncs on its own, as the simulated one does); it gets SIGKILL when
  // the calling thread exits (PR_SET_PDEATHSIG). pause()/resume(): SIGSTOP
  // and SIGCONT.
  void crash(size_t i);
  void restart(size_t i);
  void pause(size_t i);
  void resume(size_t i);

  // Server i's wall clock control (0-based): null unless started with
  // clock_shim. A restart keeps it (the same file, the same fake clock).
  ClockControl* clock(size_t i) const { return clocks_.empty() ? nullptr : clocks_.at(i).get(); }

  // Whether this machine has what start() needs ("" if so, else why not).
  static std::string missing();

  // SIGKILL to every JVM (a ZooKeeper server keeps nothing worth a clean
  // shutdown here), reaps them, removes the temp folder. Never throws.
  ~ZkEnsembleProcess();
  ZkEnsembleProcess(const ZkEnsembleProcess&) = delete;
  ZkEnsembleProcess& operator=(const ZkEnsembleProcess&) = delete;

 private:
  ZkEnsembleProcess() = default;
  // Returns once every server reports a mode; throws as start() says.
  void wait_until_ready();
  std::string no_quorum() const;  // wait_until_ready's reason
  Options options_;
  std::vector<OwnedProcess> servers_;
  std::vector<std::vector<std::string>> args_;  // each server's command line, for restart()
  std::vector<int> ports_;
  std::vector<std::unique_ptr<ClockControl>> clocks_;  // empty without the shim
  std::string dir_;
};

}  // namespace locksim::live
