// The backend seam: what a simulated store (Redis, MySQL, ZooKeeper) offers
// the runner, so the runner knows none of them by name.
//
// A deployment is built by the backend from its section of the run's
// settings (harness/backends.h), on the run's World and Network. It then
//   - names its nodes, which is what faults target ("redis-1", "redis-1-r1");
//   - hands each client its connections, from that client's node;
//   - reports the counters a run shows (commands executed, failovers);
//   - answers "would a fresh contender get the lock right now?" for the
//     exposure checker (harness/exposure_monitor.h), from its own state.
// Adding a backend touches its own folder (sim/<backend>/), one connection
// seam in env/, one row list of settings, and the live layer.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "env/redis_connection.h"
#include "env/redis_subscriber.h"
#include "env/sql_connection.h"
#include "env/zk_connection.h"
#include "sim/node.h"

namespace locksim::sim {

// Everything one client may talk to. A backend fills the part it serves.
struct ClientConnections {
  std::vector<std::unique_ptr<RedisConnection>> redis;
  // One pub/sub connection per Redis server, in the order of `redis` (or
  // none); inert until first used.
  std::vector<std::unique_ptr<RedisSubscriber>> redis_subscribers;
  std::unique_ptr<ZkConnection> zk;    // the client's ZooKeeper handle (one session at a time)
  std::unique_ptr<SqlConnection> sql;  // the MySQL backend's session
};

// One line a report shows about the backend, as (key, text): e.g.
// ("zookeeper.negotiated_session_timeout", "10s"). Keys are stable; the
// text is for people.
using BackendNote = std::pair<std::string, std::string>;

struct BackendCounters {
  uint64_t commands = 0;   // commands/statements the servers executed
  int failovers = 0;       // replicas promoted (or leaders elected) during the run
  uint64_t deadlocks = 0;  // transactions a database killed to break a deadlock
};

// The lock as it sits in a backend's store, as its algorithm writes it
// (algorithms::LockAlgorithm::store_shape): what the exposure question asks about.
struct LockProbe {
  std::string key;    // Redis key, MySQL Flock_name, ZooKeeper lock node path
  size_t quorum = 1;  // Redis: masters that must be free for a grant (Redlock's quorum)
  // Redis: the value is the lease's end in unix ms on the writer's clock and
  // the key never expires (GETSET): a correct clock past it may take it over.
  bool value_is_deadline_ms = false;
  // Redis: a fair lock's queue of waiters beside the lock
  // (algorithms::StoreShape::queue_key): a list of waiter ids, head first,
  // and a sorted set scoring each with its timeout. Empty: none, or not
  // asked for (only the lock tracer reads it).
  std::string queue_key{};
  std::string queue_timeouts_key{};
};

// The answer to the exposure question, and how long it stands.
struct LockExposure {
  bool free = false;
  // The earliest true time at which the answer may change with no event in
  // between: a key's expiry reached on its server's clock, a deadline reached
  // by a correct clock. kNoChange: only an event (a write, a crash, a clock
  // step) can change it. Never before the time of asking.
  static constexpr TimePoint kNoChange = TimePoint{Duration::max().ns};
  TimePoint until = kNoChange;
};

// One waiter in a fair lock's queue, as a server stores it.
struct QueuedWaiter {
  std::string id;  // as the queue keeps it: the waiter's token
  // Its timeout as stored: unix ms on the clock of the client that wrote
  // it, which each script compares with its own caller's clock. nullopt:
  // no score (or one too large for a Lua number to count in ms).
  std::optional<int64_t> timeout_ms{};
  // The true time at which a correct clock reads timeout_ms: from then on a
  // correct caller drops this waiter when it heads the queue.
  // LockExposure::kNoChange: no score, or too far ahead to matter.
  TimePoint due = LockExposure::kNoChange;
  bool operator==(const QueuedWaiter&) const = default;
};

// What one server's own store says about the lock now: a lane of the
// timeline and the raw material of `locksim explain` (checkers/explain.h),
// which reads from these how the store stopped protecting a holder (the key
// expired by this server's clock, vanished in a restart, never reached the
// replica that was promoted, was deleted by someone else's release).
struct ServerLockState {
  enum class Kind {
    kDown,     // crashed or frozen: grants nothing, answers nobody
    kAbsent,   // no key, no held row, no lock node
    kHeld,     // held by `holder`
    kExpired,  // still stored, but expired: by this server's clock (a Redis
               // key), by a correct clock (a MySQL deadline, a GETSET value)
  };
  std::string server;  // node name, what faults target
  Kind kind = Kind::kAbsent;
  // Who holds it, as the store keeps it: the value (Redis: the client's
  // token), Fdesc (MySQL: the token), the lowest lock node's path (ZooKeeper:
  // the token). Set for kHeld and kExpired.
  std::string holder;
  bool serving = true;  // a primary, master or serving leader: its answer counts
  // kHeld: the true time at which it expires if nothing changes (a key's
  // expiry on this server's clock, a deadline on a correct clock); kNoChange
  // when only an event ends it (no TTL, a ZooKeeper node).
  TimePoint expires = LockExposure::kNoChange;
  // The fair lock's queue (LockProbe::queue_key), head first: the lock goes
  // only to the head. At most kQueueKeptMax waiters, enough to name the head
  // and those it keeps waiting, and a bound on what each change of a long
  // queue copies; queue_length counts them all. Empty on a down server, and
  // when the probe names no queue.
  static constexpr size_t kQueueKeptMax = 8;
  std::vector<QueuedWaiter> queue{};
  size_t queue_length = 0;
  bool operator==(const ServerLockState&) const = default;
};

class Deployment {
 public:
  virtual ~Deployment() = default;

  // Adds every node of this deployment that a fault may name, by name.
  // Names are unique across the run (the runner checks it).
  virtual void name_nodes(std::map<std::string, Node*>& nodes) = 0;

  // The connections of the client running on `client`. Called once per
  // client, before the run starts; the connections live as long as the
  // deployment and must be destroyed before it.
  virtual ClientConnections connect(Node& client) = 0;

  // What the servers did, read after the run.
  virtual BackendCounters counters() const = 0;

  // The process on `client` crashed (called from the client node's on_crash,
  // before its fibers are cancelled): state its connections keep outside the
  // process (a session's library handle) dies with it.
  virtual void client_crashed(Node& client) { (void)client; }

  // What a report should say about this backend after the run (settings it
  // negotiated, events such as expired sessions), in a fixed order.
  virtual std::vector<BackendNote> notes() const { return {}; }

  // Whether a contender arriving now, with a correct clock, would be granted
  // the lock `probe` describes at once, judged from the servers' own state
  // (expiry by each server's own clock; a crashed or frozen server grants
  // nothing), and until when that answer holds if nothing happens meanwhile.
  // Must have no side effects: no lazy expiry, no counters, no events; the
  // exposure monitor calls it after every event of a hold and at each
  // `until`. nullopt: this backend cannot tell.
  virtual std::optional<LockExposure> lock_free_for_fresh_contender(const LockProbe& probe) {
    (void)probe;
    return std::nullopt;
  }
  // A number that grows whenever lock_free_for_fresh_contender's answer may
  // change other than by time reaching its `until`: a write or expiry on a
  // server, a crash, pause or restart, a clock step or drift, a promotion.
  // It may grow more often than the answer changes, never less; between two
  // equal stamps, before `until`, the answer is the one already given, so
  // the exposure monitor need not ask (it asked after every event, 11 % of
  // a matrix's time). nullopt: this backend does not track it; ask always.
  virtual std::optional<uint64_t> lock_state_stamp() const { return std::nullopt; }
  // Whether lock_state_stamp() is exactly the World's state_changes(): the
  // monitor then reads the World's count itself after every event of a hold,
  // without the virtual call (Redis, MySQL; ZooKeeper adds a count of its own).
  // Such a stamp also moves at every change of any server's lock_states but
  // a held lock's expiry by time alone, which the grant watch and the lock
  // tracer rely on (harness/lock_state_stamp.h).
  virtual bool lock_state_stamp_is_world_count() const { return false; }

  // The lock `probe` describes, as each server stores it now, one entry per
  // server in a fixed order (the order name_nodes's nodes were built in).
  // No side effects, as for lock_free_for_fresh_contender; called after
  // every event of a run that is being explained. Empty: cannot tell.
  virtual std::vector<ServerLockState> lock_states(const LockProbe& probe) {
    (void)probe;
    return {};
  }
  // The same states written over `out`, whose strings keep their room: the
  // lock tracer asks after every event, so a backend that overrides this
  // allocates nothing while the lock stands still. Same answer as lock_states.
  virtual void fill_lock_states(const LockProbe& probe, std::vector<ServerLockState>& out) {
    out = lock_states(probe);
  }

  // What fault profiles (faults/profile.h) may aim at, which know no backend
  // by name: the named nodes that are primaries (masters, leaders: their loss
  // forces a failover) and the ones that are observers, not servers (a
  // failover monitor). Default: every named node is a plain server.
  struct Roles {
    std::vector<std::string> primaries;
    std::vector<std::string> observers;
  };
  virtual Roles roles() const { return {}; }
};

}  // namespace locksim::sim
