#include "algorithms/zk_lock.h"

#include <algorithm>
#include <optional>

#include "algorithms/hex.h"
#include "env/assert.h"
#include "env/parse.h"

namespace locksim::algorithms {

namespace {

// Upper bound on turns of one wait loop (a wake-up per watch event or per
// check): far above what a bounded wait produces, so it only stops a bug.
constexpr int kWaitTurnsMax = 1'000'000;
// Curator's guaranteed delete of a waiter's node (LockInternals.deleteOurPath)
// retries until it succeeds or the session ends; here T/4 apart, at most this
// often (10 session timeouts: the session has ended by then or the ensemble
// serves again).
constexpr int kLeaveTriesMax = 40;

std::string hex_guid(Env& env) {
  // One draw per statement: a call's arguments are evaluated in an order C++
  // leaves to the compiler, so two draws as arguments differ between gcc and
  // clang. The low half is drawn first: the order gcc 12 chose, so its
  // histories stay as they were.
  const uint64_t low = env.random();
  const uint64_t high = env.random();
  std::string guid;
  guid.reserve(32);
  append_hex16(guid, high);  // "%016llx%016llx" of (high, low)
  append_hex16(guid, low);
  return guid;
}

// Curator's order of a lock's children: by sequence number, then by name
// (ties only between names that are not ours to break).
bool sorts_before(int64_t seq_a, const std::string& a, int64_t seq_b, const std::string& b) {
  return seq_a != seq_b ? seq_a < seq_b : a < b;
}

// Where our node stands among the lock's children in that order: absent,
// first (we hold the lock), or right behind `before`. Curator sorts the
// children and looks next to ours; one pass finds the same child, the
// greatest of those before ours, and parses each name once where the
// sort parsed two at every comparison (3 % of a zk-curator run).
struct Place {
  bool present = false;
  const std::string* before = nullptr;  // into the children
};
Place place_of(const std::vector<std::string>& children, const std::string& mine) {
  const int64_t my_seq = zk_sequence_of(mine);
  Place p;
  int64_t before_seq = 0;
  for (const std::string& child : children) {
    if (child == mine) {
      p.present = true;
      continue;
    }
    const int64_t seq = zk_sequence_of(child);
    if (!sorts_before(seq, child, my_seq, mine)) continue;
    if (p.before == nullptr || sorts_before(before_seq, *p.before, seq, child)) {
      p.before = &child;
      before_seq = seq;
    }
  }
  return p;
}

}  // namespace

std::string zk_lock_path(const std::string& resource) {
  std::string name = resource;
  std::replace(name.begin(), name.end(), '/', '_');
  return "/locksim/locks/" + name;
}

ZkLock::ZkLock(const Params& p) : params_(p) {
  LOCKSIM_ASSERT_MSG(p.wait > Duration::zero(), "the spec rejects a non-positive wait");
  LOCKSIM_ASSERT_MSG(p.retries_max >= 0, "the spec rejects negative retries");
}

std::string ZkLock::name() const {
  switch (params_.variant) {
    case Variant::kRecipe:
      return "zk-recipe";
    case Variant::kCurator:
      return "zk-curator";
    case Variant::kHerd:
      return "zk-herd";
  }
  return "zk";
}

ZkError ZkLock::make_parents(ZkConnection& zk, const std::string& lock) const {
  // Curator's ZKPaths.mkdirs: each missing component is made persistent;
  // one that exists is only looked at, and NODEEXISTS (made meanwhile) is
  // fine. Bounded by the path's length: one component per step.
  size_t slash = 0;
  while (slash != std::string::npos) {
    slash = lock.find('/', slash + 1);
    const std::string prefix = lock.substr(0, slash);
    const ZkError seen = zk.exists(prefix, false).error;
    if (seen == ZkError::kOk) continue;
    if (seen != ZkError::kNoNode) return seen;
    const ZkError made = zk.create(prefix, "", {}).error;
    if (made != ZkError::kOk && made != ZkError::kNodeExists) return made;
  }
  return ZkError::kOk;
}

ZkLock::Attempt ZkLock::find_protected(ZkConnection& zk, const std::string& lock,
                                       const std::string& prefix) const {
  Attempt out;
  const ZkChildrenResult ch = zk.get_children(lock, false);
  out.error = ch.error;
  if (ch.error != ZkError::kOk) return out;
  for (const std::string& child : ch.children) {
    if (child.rfind(prefix, 0) != 0) continue;
    const std::string path = lock + "/" + child;
    const ZkStatResult st = zk.exists(path, false);
    if (st.error != ZkError::kOk) continue;
    if (st.stat.ephemeral_owner == zk.session_id()) {
      out.node = path;
      out.stat = st.stat;
      return out;
    }
    // Made under an older session: it is going anyway; Curator deletes it.
    zk.remove(path, -1);
  }
  return out;
}

ZkLock::Attempt ZkLock::create_node(Env& env, ZkConnection& zk, const std::string& lock) const {
  const ZkCreateFlags flags{.ephemeral = true, .sequential = true};
  const std::string prefix = curator_rules() ? "_c_" + hex_guid(env) + "-" : "";
  Attempt out;
  const std::string path = lock + "/" + prefix + "lock-";
  // Protected mode, after a lost reply: Curator's retry looks for the node
  // it may have made before it makes another, as one retried step
  // (CreateBuilderImpl), so no create goes out before a lookup has answered.
  bool look_first = false;
  for (int attempt = 0; attempt <= params_.retries_max; ++attempt) {
    if (look_first) {
      Attempt found;
      found.error = zk.connect();
      if (found.error == ZkError::kOk) found = find_protected(zk, lock, prefix);
      if (found.error == ZkError::kConnectionLoss || found.error == ZkError::kOperationTimeout) {
        continue;  // not answered: look again, never create unseen
      }
      if (found.error == ZkError::kOk && !found.node.empty()) return found;
      if (found.error != ZkError::kOk && found.error != ZkError::kNoNode) {
        out.error = found.error;  // an expired session took our node with it
        return out;
      }
    }
    ZkCreateResult r = zk.create(path, "", flags);
    if (r.error == ZkError::kNoNode) {
      // Curator's creatingParentContainersIfNeeded: the parents are made
      // only when the create finds one missing, then the same create is
      // tried once more (the same protected name).
      const ZkError parents = make_parents(zk, lock);
      r = parents == ZkError::kOk ? zk.create(path, "", flags) : ZkCreateResult{parents, {}, {}};
    }
    out.error = r.error;
    if (r.error == ZkError::kOk) {
      out.node = r.path;
      out.stat = r.stat;
      out.unknown = false;
      return out;
    }
    if (r.error != ZkError::kConnectionLoss) return out;
    out.unknown = true;            // the node may exist
    look_first = curator_rules();  // the bare recipe simply creates again
  }
  return out;
}

bool ZkLock::session_lost(Env& env, ZkConnection& zk, const ZkEvent& e,
                          std::optional<TimePoint>& suspended_since) const {
  if (e.type == ZkEventType::kSession) {
    if (e.state == ZkSessionState::kExpired) return true;
    if (e.state == ZkSessionState::kConnecting && !suspended_since) suspended_since = env.now();
    if (e.state == ZkSessionState::kConnected) suspended_since.reset();
  }
  // Curator's LOST: the session timeout ran out, on our clock, since SUSPENDED.
  return curator_rules() && suspended_since &&
         env.now() - *suspended_since >= zk.negotiated_timeout();
}

ZkLock::Turn ZkLock::wait_for_turn(Env& env, ZkConnection& zk, const std::string& lock,
                                   const std::string& node, TimePoint deadline_local) const {
  const bool herd = params_.variant == Variant::kHerd;
  const std::string mine = node.substr(lock.size() + 1);
  std::optional<TimePoint> suspended_since;
  for (int turn = 0; turn < kWaitTurnsMax; ++turn) {
    if (env.now() >= deadline_local) return Turn::kTimedOut;
    ZkChildrenResult ch = zk.get_children(lock, herd);
    if (ch.error == ZkError::kSessionExpired) return Turn::kSessionLost;
    if (ch.error == ZkError::kConnectionLoss) {
      if (curator_rules() && zk.connect() == ZkError::kSessionExpired) return Turn::kSessionLost;
      continue;
    }
    if (ch.error != ZkError::kOk) return Turn::kError;
    const Place place = place_of(ch.children, mine);
    if (!place.present) return Turn::kNodeGone;
    if (place.before == nullptr) return Turn::kHeld;
    const std::string watched = herd ? lock : lock + "/" + *place.before;
    if (!herd) {
      const ZkStatResult st = zk.exists(watched, true);
      if (st.error == ZkError::kNoNode || st.error == ZkError::kConnectionLoss) continue;
      if (st.error == ZkError::kSessionExpired) return Turn::kSessionLost;
      if (st.error != ZkError::kOk) return Turn::kError;
    }
    // Wait for the watch (or the deadline); session events on the way.
    for (int wake = 0; wake < kWaitTurnsMax; ++wake) {
      Duration remaining = deadline_local - env.now();
      if (remaining <= Duration::zero()) break;
      if (suspended_since) remaining = std::min(remaining, zk.negotiated_timeout() / 4);
      const std::optional<ZkEvent> e = zk.next_event(remaining);
      if (!e) {
        if (session_lost(env, zk, ZkEvent{ZkEventType::kDataChanged, "", zk.state()},
                         suspended_since)) {
          return Turn::kSessionLost;
        }
        continue;
      }
      if (e->type == ZkEventType::kSession) {
        if (session_lost(env, zk, *e, suspended_since)) return Turn::kSessionLost;
        continue;
      }
      if (e->path == watched) break;  // our predecessor went (or the children changed)
    }
  }
  return Turn::kError;
}

ZkError ZkLock::leave_queue(Env& env, ZkConnection& zk, const std::string& node) const {
  ZkError e = zk.remove(node, -1);
  for (int tries = 0; curator_rules() && e == ZkError::kConnectionLoss && tries < kLeaveTriesMax;
       ++tries) {
    const ZkError c = zk.connect();
    if (c == ZkError::kSessionExpired) return c;  // the node went with the session
    // A server that lost its leader answers at once: give the ensemble time.
    env.sleep(zk.negotiated_timeout() / 4);
    e = zk.remove(node, -1);
  }
  return e;
}

AcquireResult ZkLock::acquire(Env& env, const std::string& resource) {
  ZkConnection& zk = env.zk();
  const std::string lock = zk_lock_path(resource);
  AcquireResult out;
  const TimePoint started = env.now();
  const TimePoint deadline = started + params_.wait;
  for (int round = 0; round <= params_.retries_max; ++round) {
    ++out.attempts;
    // Any application must open a new session after expiry; Curator does it for us.
    if (zk.state() == ZkSessionState::kExpired) zk.new_session();
    if (curator_rules() && zk.connect() != ZkError::kOk) {
      out.detail = "not connected to ZooKeeper";
      continue;
    }
    const Attempt a = create_node(env, zk, lock);
    if (a.error == ZkError::kSessionExpired) continue;
    if (a.error != ZkError::kOk) {
      out.outcome = a.unknown ? Outcome::kUnknown : Outcome::kFail;
      out.detail = std::string("create: ") + to_string(a.error);
      return out;
    }
    switch (wait_for_turn(env, zk, lock, a.node, deadline)) {
      case Turn::kHeld:
        out.outcome = Outcome::kOk;
        out.lease.resource = resource;
        out.lease.token = a.node;
        out.lease.fence = static_cast<uint64_t>(a.stat.czxid);
        out.lease.acquired_local = started;
        out.lease.validity = Duration::max();  // no TTL: held while the session lives
        return out;
      case Turn::kTimedOut: {
        // Give up and leave the queue, so nobody waits behind us.
        const ZkError e = leave_queue(env, zk, a.node);
        out.outcome = e == ZkError::kOk || e == ZkError::kNoNode || e == ZkError::kSessionExpired
                          ? Outcome::kFail
                          : Outcome::kUnknown;
        out.detail = "timed out waiting for the lock";
        return out;
      }
      case Turn::kSessionLost:
      case Turn::kNodeGone:
        if (curator_rules() && zk.state() != ZkSessionState::kExpired) zk.new_session();
        out.detail = "session lost while waiting";
        continue;
      case Turn::kError:
        out.outcome = Outcome::kUnknown;
        out.detail = "unexpected ZooKeeper error while waiting";
        return out;
    }
  }
  out.outcome = Outcome::kFail;
  if (out.detail.empty()) out.detail = "gave up";
  return out;
}

bool ZkLock::hold(Env& env, const Lease& lease, Duration planned) {
  if (!curator_rules()) return LockAlgorithm::hold(env, lease, planned);
  ZkConnection& zk = env.zk();
  // The connection-state rule: a holder that is not connected stops.
  if (zk.state() != ZkSessionState::kConnected) return false;
  // The work lasts `planned` of true time (LockAlgorithm::hold), but the
  // client has only its own clock, which may jump: a wait that times out
  // has used up all that was left, and the clock is read only to shorten what
  // is left after an event, never to lengthen it (a clock stepped back would
  // otherwise stretch the work, and the hold, by the step).
  const TimePoint start = env.now();
  Duration remaining = planned;
  for (int wake = 0; wake < kWaitTurnsMax; ++wake) {
    if (remaining <= Duration::zero()) return true;
    const std::optional<ZkEvent> e = zk.next_event(remaining);
    if (!e) return true;
    if (e->type == ZkEventType::kSession && zk.state() != ZkSessionState::kConnected) {
      return false;
    }
    remaining = std::min(remaining, planned - (env.now() - start));
  }
  return true;
}

ReleaseResult ZkLock::release(Env& env, const Lease& lease) {
  ZkConnection& zk = env.zk();
  ReleaseResult out;
  for (int attempt = 0; attempt <= params_.retries_max; ++attempt) {
    const ZkError e = zk.remove(lease.token, -1);
    switch (e) {
      case ZkError::kOk:
        out.outcome = Outcome::kOk;
        return out;
      case ZkError::kNoNode:
      case ZkError::kSessionExpired:
        out.outcome = Outcome::kFail;
        out.detail = std::string("our node was already gone: ") + to_string(e);
        return out;
      case ZkError::kConnectionLoss:
        out.outcome = Outcome::kUnknown;
        out.detail = "delete: CONNECTIONLOSS";
        // Curator's guaranteed delete retries; the bare recipe gives up.
        if (!curator_rules()) return out;
        if (zk.connect() == ZkError::kSessionExpired) {
          out.outcome = Outcome::kFail;
          out.detail = "session expired: the node went with it";
          return out;
        }
        continue;
      default:
        out.outcome = Outcome::kUnknown;
        out.detail = std::string("delete: ") + to_string(e);
        return out;
    }
  }
  (void)env;
  return out;
}

}  // namespace locksim::algorithms
