// The nemesis of a live run: the same fault schedule a simulated run takes
// (faults/fault_schedule.h), applied to real processes and real bytes at the
// same times, measured from the run's start on the steady clock.
//
//   crash SERVER at T [for D]   SIGKILL; after D, the same binary on the same
//                               port and folder (what its AOF kept is back);
//                               what its replication links still held dies
//                               with it
//   crash CLIENT at T [for D]   the client's life ends (live/client_life.h):
//                               its op in flight completes :info; after D a
//                               new life under a fresh process id
//   pause SERVER at T for D     SIGSTOP, then SIGCONT
//   pause CLIENT at T for D     the client and its tasks stop at their next
//                               Env call (live/client_freeze.h)
//   hang CLIENT at T [for D]    the client's work stops at its next Env call;
//                               its tasks (a watchdog) go on
//   jump SERVER at T +-D        the server's wall clock, through the clock
//   drift SERVER at T PPMppm    shim (live/clock_control.h); its monotonic
//                               clock stays real
//   jump / drift CLIENT         the client's Env clock (live/client_clock.h)
//   partition A|B at T [for D]  the relays (live/tcp_relay.h) of every
//   partition A->B ...          link between the sides (client-server,
//   heal at T                   replica-master, Sentinel-server) hold what
//                               they carry, and deliver it on heal
//   delay A|B at T for D by X   each chunk on those links waits X more
//
// Targets: server and client names ("sentinel" among the servers of a run
// with failover), "@holder" (the client holding the lock when the fault
// fires, read from the live history; none: a skip step, as in the
// simulation) and "@primary" (the master Sentinel names now; without
// failover the first server). Every step is recorded as a :nemesis op, so a
// live history reads as a simulated one.
//
// What live mode cannot express yet, refused before any server starts
// (check_live_faults): loss, faults that wait for a grant ("on
// grant"), links between two clients or between servers that have none (two
// masters), and what a backend refuses itself (a clock fault on mariadbd;
// on ZooKeeper every fault on a client, a server's drift and the quorum's
// links: backend_zookeeper.cpp says why). ZooKeeper runs take a server's
// crash, pause and jump, and partitions and delays between its clients and
// servers, each client reaching each server through a relay of its own.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "env/time.h"
#include "faults/fault_schedule.h"
#include "live/tcp_relay.h"

namespace locksim::live {

// What a live nemesis reads and writes of the run in progress. Thread-safe.
class LiveRunView {
 public:
  virtual ~LiveRunView() = default;
  // True time since the run began (the history's clock).
  virtual Duration elapsed() = 0;
  // The run's length is over: the clients stop where they stand.
  virtual bool stopping() = 0;
  // The steps due at the run's start (0 s) are taken: the clients may begin.
  // Called once by the nemesis, before it waits for anything.
  virtual void nemesis_ready() = 0;
  // The client holding the lock now ("c2"), or "".
  virtual std::string holder() = 0;
  // Records one nemesis step as a :nemesis :info op (Nemesis::StepSink's
  // contract: f, value, note).
  virtual void record_nemesis(std::string_view f, std::vector<std::string> value,
                              std::string_view note) = 0;
  // A step that could not be taken (a server that would not restart): the
  // run's result carries it as an error, so its verdict is not trusted.
  virtual void nemesis_error(const std::string& what) = 0;
  // Client `client` ("c2") crashed now: its op in flight completes :info
  // and its hold ends, as the simulation records a client node's crash; what
  // its dying thread still records is refused (ClientCrashed).
  virtual void client_crashed(const std::string& client) = 0;
};

// The real things a live nemesis acts on.
struct LiveTargets {
  struct Server {
    // A client's crash and restart end its life and let the next begin
    // (live/client_life.h); the nemesis records the crash in the history.
    std::function<void()> crash, restart, pause, resume;
    // A client's hang and its end: its work stops, its tasks go on.
    // abandon: the run is over: this client's thread and tasks end where
    // they stand at their next Env call, recording nothing more (ClientAbandoned).
    std::function<void()> hang, unhang, abandon;
    std::function<void(Duration by)> jump;       // unset: no clock shim
    std::function<void(int64_t ppm)> set_drift;  // likewise
  };
  std::map<std::string, Server> servers;  // by name: "redis-1", "redis-1-r1", "sentinel", ...
  // The server "@primary" names now (unset: the first server; "": none, the
  // step is skipped).
  std::function<std::string()> primary;
  std::vector<std::string> clients;  // "c1", ... in order
  // Each client's crash, restart, pause, resume, jump and set_drift, by name.
  std::map<std::string, Server> client_controls;
  // The relay of each link: (client, server) -> relay, and between
  // servers (replica, its master) and ("sentinel", server).
  std::map<std::pair<std::string, std::string>, TcpRelay*> links;
};

// The clients' names of a live run of `clients` clients: "c1", "c2", ...
// (history::client_label), as faults name them.
std::vector<std::string> live_client_names(int clients);

// Throws ConfigError naming `field_prefix`[i] for the first fault live mode
// cannot apply to a run of `clients` and `servers` (names as in LiveTargets;
// "sentinel" among them when the run has one), whose servers are linked to
// each other only by `server_links` (a replica and its master, Sentinel and
// each server; either way round).
void check_live_faults(const faults::FaultSchedule& schedule,
                       const std::vector<std::string>& clients,
                       const std::vector<std::string>& servers, const std::string& field_prefix,
                       const std::vector<std::pair<std::string, std::string>>& server_links = {});

// Whether a schedule moves the clock of one of `servers` (names as in
// LiveTargets): its servers then run under the clock shim.
bool needs_clock_shim(const faults::FaultSchedule& schedule,
                      const std::vector<std::string>& servers);

// Whether a schedule has faults on links (partition, heal, delay): such a run
// puts a relay on every client-server link.
bool needs_relays(const faults::FaultSchedule& schedule);

// Applies `schedule` until `done` is set (the run's clients have finished):
// first every step due at 0 s, then view.nemesis_ready() (a fault at 0 s is
// in force before any client's first step, as the simulation fires it);
// once the run's length is over with a client still hung it abandons every
// client (a hang for good would otherwise keep its client, and the waiters
// behind it, from ever finishing their step; the simulation cancels them all
// there, as this does), and
// each step at its time, in time order (ties in schedule order, starts before
// ends as the simulation's timers do). Ends every fault still in force when
// done (servers continued and restarted, links healed), so the clients' last
// steps and the servers' shutdown see a whole system. Call on a thread that
// outlives every server it may restart. Precondition: check_live_faults
// accepted the schedule for these targets.
void run_live_nemesis(const faults::FaultSchedule& schedule, const LiveTargets& targets,
                      LiveRunView& view, const std::atomic<bool>& done);

}  // namespace locksim::live
