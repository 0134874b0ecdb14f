// The timing rules of ZooKeeper 3.8 and its C client that the differential
// timing test (zk_differential_timing_test.cpp) holds the simulation and a
// real ensemble to: what is recorded of each, and the checks both must pass.
//
// Rule 1, the tick phase: the leader expires a session at the first multiple
// of tickTime on its own monotonic clock after last + T (ExpiryQueue's
// roundToNextInterval), so expiry instants sit on one grid whose phase has
// nothing to do with when a client connected.
// Rule 2, reconnect after a pause: a client that resumes past its receive
// timeout (2T/3) drops the connection and connects to the next server at
// once, keeping its session; the C client backs off (T/60) only after it
// tried every server of its list ("Delaying connection after exhaustively
// trying all servers", zookeeper.c). When it notices varies: measured with
// SIGSTOP, the C client noticed within milliseconds of the resume in about
// half the pauses and otherwise up to a ping interval (T/3) later, as if its
// I/O thread finished the rest of its poll() wait first; the simulated
// client notices at once. So the rule checked is: noticed within T/3, then
// connected again without a back-off.
// Rule 3, a crashed server: its clients hear the reset at once, and a
// connect to it is refused at once, so the client moves on within
// milliseconds instead of waiting out a timeout.
//
// Times are in ns on one clock per world (true time in the simulation,
// CLOCK_MONOTONIC for the real one); -1 means "did not happen".
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "env/time.h"

namespace locksim::zk_timing {

// The ensemble both worlds run: tick 200 ms, so the session timeout can be
// 4 s (20 ticks), whose T/60 back-off (66 ms) stands well clear of a
// loopback reconnect (a few ms), and a JVM's jitter is small beside a tick.
constexpr int64_t kTickMs = 200;
constexpr int64_t kSessionMs = 4000;
constexpr int64_t kBackoffMs = kSessionMs / 60;  // zookeeper.c: recv_timeout/60
// Paused for 0.7 T: past the client's 2T/3 receive timeout, and short of T
// by more than most late notices (above).
constexpr int64_t kPauseMs = kSessionMs * 7 / 10;
// Sessions silenced at these offsets into a tick (rule 1): spread over it.
constexpr int kSilencedSessions = 5;
// Jitter allowed for a real server and client on a shared 2-core machine.
constexpr int64_t kJitterMs = 40;
// What "at once" means for a step that takes a handshake with the leader (a
// session's creation is a txn, fsynced): far below the 2T/3 (2.7 s) of a
// timeout, which is what the rules tell apart.
constexpr int64_t kAtOnceMs = 500;

constexpr int64_t kMs = 1'000'000;

// Rule 1: sessions silenced one by one; when each was last heard from by its
// client, and when an observer saw its ephemeral node deleted.
struct PhaseRecord {
  int64_t connected_ns = -1;  // the first silenced session's connect
  std::vector<int64_t> last_ns;
  std::vector<int64_t> expired_ns;
};

// Rule 2: one pause of the client, measured from its resume.
struct PauseRecord {
  int64_t to_connecting_ns = -1;
  int64_t to_connected_ns = -1;  // -1: expired, or never reconnected
};

// Rule 3: a server crash seen by a client connected to it, and a fresh
// client whose first server is the crashed one.
struct CrashRecord {
  int64_t to_connecting_ns = -1;  // from the crash to the client's CONNECTING
  int64_t fresh_connect_ns = -1;  // how long the fresh client's connect took
  std::string fresh_connect_error;
};

// Where `t` falls in a tick, in [0, tick).
inline int64_t phase_of(int64_t t_ns) {
  const int64_t tick_ns = kTickMs * kMs;
  return ((t_ns % tick_ns) + tick_ns) % tick_ns;
}

// The distance between two phases, around the tick.
inline int64_t phase_distance(int64_t a_ns, int64_t b_ns) {
  const int64_t d = phase_of(a_ns - b_ns);
  return std::min(d, kTickMs * kMs - d);
}

// Rule 1 for one world: every session expired T to T + 1.5 ticks after its
// last packet (a follower reports touches every half tick), on one grid.
inline void expect_one_grid(const PhaseRecord& r, const std::string& world) {
  ASSERT_EQ(r.last_ns.size(), r.expired_ns.size()) << world;
  for (size_t i = 0; i < r.expired_ns.size(); ++i) {
    ASSERT_GE(r.expired_ns[i], 0) << world << ": session " << i << " never expired";
    const int64_t waited_ms = (r.expired_ns[i] - r.last_ns[i]) / kMs;
    EXPECT_GE(waited_ms, kSessionMs - 5) << world << ": session " << i;
    EXPECT_LE(waited_ms, kSessionMs + kTickMs * 3 / 2 + kJitterMs) << world << ": session " << i;
    EXPECT_LE(phase_distance(r.expired_ns[i], r.expired_ns[0]) / kMs, kJitterMs)
        << world << ": session " << i << " expired off the grid of session 0";
  }
}

// Rule 2 for one world: after each of two pauses (on the first server of
// the list, then on the second) the client notices within a ping interval
// and, its session alive (at least once: a late notice may come after the
// leader expired it), reconnects sooner than any back-off.
inline void expect_pause_rule(const std::vector<PauseRecord>& r, const std::string& world) {
  ASSERT_EQ(r.size(), 2u) << world;
  int reconnected = 0;
  for (size_t i = 0; i < r.size(); ++i) {
    ASSERT_GE(r[i].to_connecting_ns, 0) << world << ": pause " << i << ": no CONNECTING";
    EXPECT_LE(r[i].to_connecting_ns / kMs, kSessionMs / 3 + kJitterMs) << world << ": pause " << i;
    if (r[i].to_connected_ns < 0) continue;
    ++reconnected;
    EXPECT_LT((r[i].to_connected_ns - r[i].to_connecting_ns) / kMs, kBackoffMs - 6)
        << world << ": pause " << i << ": servers of the list are left, so no back-off";
  }
  EXPECT_GE(reconnected, 1) << world << ": every pause lost the session";
}

// Rule 3 for one world: the crash is heard within milliseconds, and a
// connect whose first server is down moves on at once (refused).
inline void expect_crash_rule(const CrashRecord& r, const std::string& world) {
  ASSERT_GE(r.to_connecting_ns, 0) << world << ": the crash was never noticed";
  EXPECT_LE(r.to_connecting_ns / kMs, kJitterMs) << world << ": heard of the crash late";
  EXPECT_EQ(r.fresh_connect_error, "OK") << world;
  EXPECT_LE(r.fresh_connect_ns / kMs, kAtOnceMs) << world << ": a refused connect was waited out";
}

}  // namespace locksim::zk_timing
