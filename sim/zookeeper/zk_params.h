// The simulated ZooKeeper deployment's parameters: one plain struct, each
// field with its default, its valid range and why.
//
// A scenario's "zookeeper" section maps onto it field by field; validate()
// rejects a bad value with a ConfigError naming `zookeeper.<field>`.
#pragma once

#include <string>

#include "env/time.h"

namespace locksim::sim::zookeeper {

struct ZkParams {
  // Ensemble size: 1, 3 or 5. Odd, because a majority of an even ensemble
  // tolerates no more failures than the odd one below it; 5 is where
  // production ensembles stop (more servers slow every write).
  int servers = 3;
  // tickTime, ZooKeeper's unit of time (zoo_sample.cfg: 2000 ms). Sessions
  // are clamped to [2, 20] ticks and expire on tick boundaries. Range: 1 ms
  // to kTickMax.
  Duration tick = Duration::seconds(2);
  static constexpr Duration kTickMax = Duration::seconds(60);
  // The session timeout every client asks for. The server clamps it silently
  // to [2, 20] x tick (minSessionTimeout / maxSessionTimeout defaults) and the
  // client adopts the result. Any positive duration up to 1 h.
  Duration session_timeout = Duration::seconds(10);
  // syncLimit (zoo_sample.cfg: 5): how many ticks a follower goes without
  // hearing its leader, or a leader without hearing a quorum, before it gives
  // up and starts an election. Range: 1 to 100.
  int sync_limit_ticks = 5;
  // How long an election takes once a reachable majority is looking (the
  // rounds of Fast Leader Election with finalizeWait 200 ms, plus syncing):
  // no server serves meanwhile. Range: 0 to 10 min.
  Duration election_delay = Duration::millis(500);
  // The client library's back-off once every server of its list failed in a
  // row, so a client facing an ensemble with no quorum does not spin; it
  // tries the next server at once otherwise. (The C client's is the session
  // timeout / 60: 166 ms at 10 s.) Range: 1 ms to 10 s.
  Duration reconnect_pause = Duration::millis(100);

  // Throws ConfigError naming `prefix + field` ("zookeeper.servers") for the
  // first bad field.
  void validate(const std::string& prefix = "zookeeper.") const;

  Duration min_session_timeout() const { return tick * 2; }
  Duration max_session_timeout() const { return tick * 20; }
  // What the server grants for a requested timeout.
  Duration negotiate(Duration requested) const;
  Duration sync_limit() const { return tick * sync_limit_ticks; }
};

}  // namespace locksim::sim::zookeeper
