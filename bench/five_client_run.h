// The benchmarks' standard whole run: 5 clients, 60 s of virtual time, the
// default workload, one seed per iteration. Shared by BM_FiveClientRun and
// BM_PerEventRatio so both measure the same run.
#pragma once

#include <cstdint>
#include <string>

#include "harness/simulation.h"

namespace locksim::bench {

inline harness::PreparedRun five_client_run(const std::string& algorithm, uint64_t seed) {
  harness::RunConfig c;
  c.algorithm = algorithm;
  c.seed = seed;
  c.duration = Duration::seconds(60);
  c.workload.clients = 5;
  return harness::prepare_run(c);
}

}  // namespace locksim::bench
