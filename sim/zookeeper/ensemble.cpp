#include "sim/zookeeper/ensemble.h"

#include <algorithm>
#include <limits>

#include "env/assert.h"

namespace locksim::sim::zookeeper {

namespace {
constexpr TimePoint kNever{std::numeric_limits<int64_t>::max()};
}  // namespace

ZkEnsemble::ZkEnsemble(World& world, Network& net, const ZkParams& params)
    : world_(world), net_(net), params_(params) {
  params_.validate();
  // Each server's tick phase, from a stream of its own split off a copy of
  // the root, so the root and every stream later split from it stay as they
  // were without it.
  Rng root = world_.rng();
  Rng phases = root.split("zookeeper/tick-phase");
  const uint64_t tick_ns = static_cast<uint64_t>(params_.tick.ns);
  for (int id = 1; id <= params_.servers; ++id) {
    const Duration phase{static_cast<int64_t>(phases.below(tick_ns))};
    servers_.push_back(std::make_unique<ZkServer>(world_, net_, *this, id, params_, phase));
  }
  quorum_heard_.assign(servers_.size(), world_.now());
  leader_heard_.assign(servers_.size(), world_.now());
  // The first leader, at once: every log is empty, so the highest id wins.
  ZkServer& first = *servers_.back();
  first.lead(1);
  ++elections_;
  for (auto& s : servers_) {
    if (s.get() != &first) s->follow(first);
  }
  world_.after(params_.tick / 2, [this] { periodic(); });
}

ZkServer& ZkEnsemble::server(int id) {
  LOCKSIM_ASSERT_MSG(id >= 1 && id <= size(), "server ids are 1..N");
  return *servers_[static_cast<size_t>(id - 1)];
}

bool ZkEnsemble::hears(const ZkServer& a, const ZkServer& b) const {
  return a.node().running() && b.node().running() && net_.connected(a.node(), b.node());
}

ZkServer* ZkEnsemble::serving_leader() {
  ZkServer* best = nullptr;
  for (auto& s : servers_) {
    if (!running_leader(*s) || quorum_lapsed(*s)) continue;
    if (quorum_heard_now(*s) < quorum()) continue;
    if (best == nullptr || s->epoch() > best->epoch()) best = s.get();
  }
  return best;
}

bool ZkEnsemble::running_leader(const ZkServer& s) {
  return s.role() == ZkServer::Role::kLeading && s.node().running();
}

int ZkEnsemble::quorum_heard_now(const ZkServer& leader) const {
  int have = 1;
  for (const auto& f : servers_) {
    if (f->role() == ZkServer::Role::kFollowing && f->leader_id() == leader.id() &&
        f->epoch() == leader.epoch() && hears(leader, *f)) {
      ++have;
    }
  }
  return have;
}

bool ZkEnsemble::quorum_lapsed(const ZkServer& leader) const {
  return world_.now() - quorum_heard_[leader.id() - 1] >= params_.sync_limit();
}

uint64_t ZkEnsemble::state_stamp() const {
  // Room below the counters for the count of lapsed leaders: a counter's
  // step and a change of the count can never cancel out.
  constexpr uint64_t kLapsedSpan = 256;
  // Each term only grows, and by one at each change, so the sum moves at
  // every change of any of them.
  uint64_t changes = net_.cut_changes();
  for (const auto& s : servers_) changes += s->answer_changes() + s->node().changes();
  if (changes != lapse_.changes || quorum_heard_writes_ != lapse_.quorums_heard ||
      world_.now() >= lapse_.until) {
    recount_lapsed(changes);
  }
  LOCKSIM_ASSERT(lapse_.lapsed <= servers_.size() && lapse_.lapsed < kLapsedSpan);
  return changes * kLapsedSpan + lapse_.lapsed;
}

void ZkEnsemble::recount_lapsed(uint64_t changes) const {
  lapse_ = LapseCount{changes, quorum_heard_writes_, 0, kNever};
  for (const auto& s : servers_) {
    // serving_leader()'s test of time, for the servers it applies to.
    if (!running_leader(*s)) continue;
    if (quorum_lapsed(*s)) {
      ++lapse_.lapsed;  // stays lapsed until its quorum is heard again
    } else {
      lapse_.until = std::min(lapse_.until, quorum_heard_[s->id() - 1] + params_.sync_limit());
    }
  }
  // Pair of quorum_lapsed(): the earliest lapse to come is ahead.
  LOCKSIM_ASSERT(lapse_.until > world_.now());
}

void ZkEnsemble::periodic() {
  world_.after(params_.tick / 2, [this] { periodic(); });
  for (auto& s : servers_) s->periodic();
  check_leaders();
  check_followers();
  admit_or_elect();
}

void ZkEnsemble::check_leaders() {
  for (auto& s : servers_) {
    if (!running_leader(*s)) continue;
    if (quorum_heard_now(*s) >= quorum()) {
      quorum_heard_[s->id() - 1] = world_.now();
      ++quorum_heard_writes_;
    } else if (quorum_lapsed(*s)) {
      s->stop_serving();
    }
  }
}

void ZkEnsemble::check_followers() {
  for (auto& f : servers_) {
    if (f->role() != ZkServer::Role::kFollowing || !f->node().running()) continue;
    ZkServer& l = server(f->leader_id());
    if (l.role() != ZkServer::Role::kLeading || l.epoch() != f->epoch()) {
      f->stop_serving();  // the leader closed its sockets: noticed at once
    } else if (hears(*f, l)) {
      leader_heard_[f->id() - 1] = world_.now();
    } else if (world_.now() - leader_heard_[f->id() - 1] >= params_.sync_limit()) {
      f->stop_serving();
    }
  }
}

std::vector<ZkServer*> ZkEnsemble::component_of(ZkServer& s,
                                                const std::vector<ZkServer*>& pool) const {
  std::vector<ZkServer*> out{&s};
  // Breadth-first over `pool`; each server joins at most once.
  for (size_t i = 0; i < out.size(); ++i) {
    for (ZkServer* t : pool) {
      if (std::find(out.begin(), out.end(), t) == out.end() && hears(*out[i], *t)) {
        out.push_back(t);
      }
    }
  }
  return out;
}

void ZkEnsemble::admit_or_elect() {
  if (ZkServer* leader = serving_leader()) {
    for (auto& s : servers_) {
      if (s->role() == ZkServer::Role::kLooking && hears(*s, *leader)) {
        s->follow(*leader);
        leader_heard_[s->id() - 1] = world_.now();
      }
    }
    return;
  }
  std::vector<ZkServer*> ready;
  for (auto& s : servers_) {
    if (s->role() == ZkServer::Role::kLooking && s->node().running() &&
        world_.now() - s->role_since() >= params_.election_delay) {
      ready.push_back(s.get());
    }
  }
  for (ZkServer* s : ready) {
    const std::vector<ZkServer*> component = component_of(*s, ready);
    if (static_cast<int>(component.size()) >= quorum()) {
      elect(component);
      return;
    }
  }
}

void ZkEnsemble::elect(const std::vector<ZkServer*>& component) {
  ZkServer* winner = component.front();
  for (ZkServer* s : component) {
    if (s->last_logged_zxid() > winner->last_logged_zxid() ||
        (s->last_logged_zxid() == winner->last_logged_zxid() && s->id() > winner->id())) {
      winner = s;
    }
  }
  int64_t epoch = 0;
  for (auto& s : servers_) epoch = std::max(epoch, s->epoch());
  winner->lead(epoch + 1);
  ++elections_;
  quorum_heard_[winner->id() - 1] = world_.now();
  ++quorum_heard_writes_;
  for (ZkServer* s : component) {
    if (s == winner) continue;
    s->follow(*winner);
    leader_heard_[s->id() - 1] = world_.now();
  }
}

void ZkEnsemble::note_expiry(const SessionExpiry& e) {
  LOCKSIM_ASSERT_MSG(e.deadline_ns > e.last_heard_ns, "a deadline follows the last packet");
  ++expiries_total_;
  if (expiries_.size() < kExpiriesMax) expiries_.push_back(e);
}

}  // namespace locksim::sim::zookeeper
