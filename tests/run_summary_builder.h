// A run summary as a sweep would record it, for tests of the matrix and the
// gate that build their runs by hand: seed `seed` of algorithm x profile,
// run number seed - 1 (a one-cell plan starting at seed 1), 3 acquisitions
// in 20 s, one fault that touched a holder, and a replay naming the seed.
#pragma once

#include <cstdint>
#include <string>

#include "harness/sweep/sweep.h"

namespace locksim::testing {

inline harness::RunSummary summary_of(const std::string& algorithm, const std::string& profile,
                                      uint64_t seed, const std::string& finding) {
  harness::RunSummary r;
  r.index = seed - 1;
  r.algorithm = algorithm;
  r.profile = profile;
  r.seed = seed;
  r.finding = finding;
  r.acquisitions = 3;
  r.run_length_ns = 20'000'000'000;
  r.faults = 1;
  r.fault_touched = true;
  r.replay = "locksim run --algorithm " + algorithm + " --seed " + std::to_string(seed);
  return r;
}

}  // namespace locksim::testing
