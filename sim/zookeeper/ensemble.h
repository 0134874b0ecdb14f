// The ensemble: its servers, and who leads.
//
// Who leads is decided here, every half tick, from who can hear whom (both
// nodes running — not paused, not crashed — and the link between them not
// cut), instead of by simulating Fast Leader Election's message rounds; the
// election's duration is the election_delay parameter. The rules are
// ZooKeeper's:
//   - a leader that has not heard a quorum (itself included) of its
//     followers for syncLimit steps down, and a follower that has not heard
//     its leader for syncLimit (or whose leader stepped down) gives up: both
//     go LOOKING and reset their client connections;
//   - when no leader serves, servers that have been LOOKING for
//     election_delay and form a reachable majority elect the one with the
//     highest logged zxid (ties: the highest id) in a new epoch; it commits
//     its whole log (ZAB: a committed txn was logged by a quorum, and every
//     majority shares a member with that quorum, so the winner has it);
//   - a LOOKING server that hears a serving leader joins it (taking its state,
//     as ZooKeeper's SNAP sync does), dropping any txn only it had logged.
// A paused server does not change its own role while paused: it finds out
// when it resumes, as a real one does, and may serve stale reads until then.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "sim/network.h"
#include "sim/world.h"
#include "sim/zookeeper/zk_params.h"
#include "sim/zookeeper/zk_server.h"

namespace locksim::sim::zookeeper {

// One session the leader expired: what a report needs to say why. Times are
// on the expiring leader's monotonic clock (ns from its own origin, its tick
// phase before the run began, at its drift), where the deadline was
// computed; `at` is true time.
struct SessionExpiry {
  SessionId session = 0;
  int leader_id = 0;
  int64_t last_heard_ns = 0;  // the last packet the leader heard of it
  int64_t deadline_ns = 0;    // (floor((last + T) / tick) + 1) * tick
  TimePoint at{};
};

class ZkEnsemble {
 public:
  // Builds params.servers servers named zk-1..zk-N and elects the first
  // leader at once (the ensemble is up before any client starts): the one
  // with the highest id, as Fast Leader Election picks among equal zxids.
  // Precondition: params validated.
  ZkEnsemble(World& world, Network& net, const ZkParams& params);
  ZkEnsemble(const ZkEnsemble&) = delete;
  ZkEnsemble& operator=(const ZkEnsemble&) = delete;

  int size() const { return static_cast<int>(servers_.size()); }
  int quorum() const { return size() / 2 + 1; }
  ZkServer& server(int id);  // 1-based
  const ZkParams& params() const { return params_; }
  World& world() { return world_; }
  Network& network() { return net_; }

  // The leader that serves now (leading, running, and has heard a quorum
  // within syncLimit), or nullptr. No side effects.
  ZkServer* serving_leader();
  // Whether a and b can exchange messages now.
  bool hears(const ZkServer& a, const ZkServer& b) const;
  // Moves whenever serving_leader()'s answer, or the leader's tree, may have
  // changed (Deployment::lock_state_stamp): the sum of what those read --
  // each server's answer_changes() (role, epoch, leader, the leader's
  // applies), its node's changes() (running or not), the network's
  // cut_changes() (who hears whom) -- and, below it, how many leaders have
  // gone syncLimit without a quorum. That count is what time alone changes:
  // with the rest fixed it only grows, so the stamp moves at the first event
  // after a leader's time runs out, where asking after every event would
  // have seen it. Not the World's state_changes(): a follower's applies and
  // each quorum heard move that on most events, and neither changes the
  // answer (a refreshed quorum only moves a lapse later; the count below
  // sees it when it comes).
  uint64_t state_stamp() const;

  ConnId next_conn_id() { return ++conn_ids_; }
  // Session ids only need to be unique in the run.
  SessionId next_session_id() { return ++session_ids_; }
  int elections() const { return elections_; }

  // Sessions expired so far, in order; the first kExpiriesMax only (a report
  // lists a few, and a run that expires more is told by the count).
  void note_expiry(const SessionExpiry& e);
  const std::vector<SessionExpiry>& expiries() const { return expiries_; }
  int64_t expiries_total() const { return expiries_total_; }
  static constexpr size_t kExpiriesMax = 1000;

  // When the leader last heard a quorum (updated by the ensemble).
  TimePoint quorum_heard_at(int id) const { return quorum_heard_[id - 1]; }

 private:
  void periodic();
  void check_leaders();
  void check_followers();
  void admit_or_elect();
  void elect(const std::vector<ZkServer*>& component);
  std::vector<ZkServer*> component_of(ZkServer& s, const std::vector<ZkServer*>& pool) const;
  // A running server in the leading role (serving or not).
  static bool running_leader(const ZkServer& s);
  // The leader itself and the followers of its epoch it hears now.
  int quorum_heard_now(const ZkServer& leader) const;
  // The leader has gone syncLimit without hearing a quorum: it serves no
  // more (serving_leader), and the next check stops it (check_leaders).
  bool quorum_lapsed(const ZkServer& leader) const;

  World& world_;
  Network& net_;
  ZkParams params_;
  std::vector<std::unique_ptr<ZkServer>> servers_;
  std::vector<TimePoint> quorum_heard_;  // by id - 1: leaders
  uint64_t quorum_heard_writes_ = 0;     // writes to quorum_heard_ (state_stamp)
  // state_stamp's count of lapsed leaders, kept while nothing it reads
  // changed and no leader's time ran out: recounting after every event cost
  // more than the rest of the stamp.
  struct LapseCount {
    uint64_t changes = UINT64_MAX;        // the stamp's sum when counted
    uint64_t quorums_heard = UINT64_MAX;  // quorum_heard_writes_ then
    uint64_t lapsed = 0;
    TimePoint until{};  // the earliest lapse still to come then
  };
  mutable LapseCount lapse_;
  void recount_lapsed(uint64_t changes) const;
  std::vector<TimePoint> leader_heard_;  // by id - 1: followers
  ConnId conn_ids_ = 0;
  SessionId session_ids_ = 0;
  int elections_ = 0;
  std::vector<SessionExpiry> expiries_;
  int64_t expiries_total_ = 0;
};

}  // namespace locksim::sim::zookeeper
