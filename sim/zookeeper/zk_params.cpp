#include "sim/zookeeper/zk_params.h"

#include <algorithm>

#include "env/parse.h"

namespace locksim::sim::zookeeper {

namespace {

void check_range(const std::string& field, Duration v, Duration lo, Duration hi,
                 const char* expected) {
  if (v < lo || v > hi) {
    throw ConfigError(field + ": expected " + expected + ", got " + format_duration(v));
  }
}

}  // namespace

void ZkParams::validate(const std::string& prefix) const {
  if (servers != 1 && servers != 3 && servers != 5) {
    throw ConfigError(prefix + "servers: expected 1, 3 or 5 (an odd ensemble size), got " +
                      std::to_string(servers));
  }
  check_range(prefix + "tick", tick, Duration::millis(1), kTickMax, "a duration from 1ms to 60s");
  if (session_timeout <= Duration::zero()) {
    throw ConfigError(prefix + "session_timeout: expected a positive duration, got " +
                      format_duration(session_timeout));
  }
  check_range(prefix + "session_timeout", session_timeout, Duration::nanos(1),
              Duration::seconds(3600), "a positive duration up to 1h");
  if (sync_limit_ticks < 1 || sync_limit_ticks > 100) {
    throw ConfigError(prefix + "sync_limit_ticks: expected a whole number from 1 to 100, got " +
                      std::to_string(sync_limit_ticks));
  }
  check_range(prefix + "election_delay", election_delay, Duration::zero(), Duration::seconds(600),
              "a duration from 0s to 10m");
  check_range(prefix + "reconnect_pause", reconnect_pause, Duration::millis(1),
              Duration::seconds(10), "a duration from 1ms to 10s");
}

Duration ZkParams::negotiate(Duration requested) const {
  return std::clamp(requested, min_session_timeout(), max_session_timeout());
}

}  // namespace locksim::sim::zookeeper
