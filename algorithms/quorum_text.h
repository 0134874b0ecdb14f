// What a quorum lock (Redlock, a scripted lock on N masters) says about a
// round, in the words its histories use: one place, so the scripted version of
// Redlock writes byte for byte the details the built-in one writes.
#pragma once

#include <cstddef>
#include <string>

#include "env/time.h"

namespace locksim::algorithms {

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

}  // namespace locksim::algorithms
