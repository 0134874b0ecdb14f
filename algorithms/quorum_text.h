// What a quorum lock (Redlock, a scripted lock on N masters) reads as its
// quorum, says about a round and decides after the last one, in the words its
// histories and messages use: one place, so the scripted version of Redlock
// writes byte for byte the details the built-in one writes.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "algorithms/lock_algorithm.h"
#include "algorithms/param_reader.h"
#include "env/time.h"

namespace locksim::algorithms {

// The `quorum` parameter: "auto" (0: a majority) or a whole number from 1
// to a sanity bound. Whether it is <= N is the algorithm's check_servers(),
// once the harness knows N: the node count is the run's, not the
// algorithm's. Both say the range the same way ("1 to the 5 redis
// servers"). Throws ConfigError naming the parameter.
size_t read_quorum(const ParamReader& r);

// What a round of acquires found on the masters.
struct QuorumTally {
  size_t locked = 0;       // masters that granted
  size_t io_errors = 0;    // masters that did not answer
  std::string last_error;  // "redis-3: <error>" of the last master that errored
};

// "2 of 5 nodes (quorum 3)".
std::string count_text(size_t count, size_t n, size_t quorum);

// Why a round that ended with `tally` and `validity` did not win.
std::string failed_round_detail(const QuorumTally& tally, size_t n, size_t quorum,
                                Duration validity, Duration elapsed);

// "; unlock got no answer from 2 nodes", or "" when every node answered.
std::string unanswered_unlock_text(size_t unanswered);

// The outcome of an acquire whose every round failed, `may_hold` marking the
// nodes where a key of ours may be left. The token is the same in every
// attempt, so each unlock also covered the SETs of earlier attempts. Keys
// left on fewer than a quorum are no lock (they only delay others until they
// expire): the acquire cleanly did not happen (kFail). On a quorum they are,
// in effect, a lock nobody knows it holds, until the TTL (kUnknown).
Outcome failed_acquire_outcome(const std::vector<bool>& may_hold, size_t quorum);

}  // namespace locksim::algorithms
