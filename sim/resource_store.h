// The guarded resource: a simulated storage server that lock holders read and
// write inside their critical section, with Kleppmann's fencing check.
//
// Workloads (what one holder does, harness/workload.cpp):
//   register  — writes its own value once, at the end of its work;
//   counter   — reads v at the start, writes v + 1 at the end;
//   inventory — reads the stock s at the start, and at the end sells one
//               item (writes s - 1) if s > 0. The store starts with `items`.
// Fencing (what the store checks, against the highest token it has seen):
//   none             — accepts everything;
//   write-check      — rejects a write whose token is lower than the highest
//                      token of an accepted write; reads are not checked and
//                      do not raise the bar (so a stale read slips through);
//   read-write-check — checks and records reads too.
// A request without a token (the algorithm has none: Redlock) cannot be
// checked and is accepted; the report says so rather than pretending.
//
// The store is a pure step function (execute(request, now)), so it is tested
// without a network; every access is logged with the true time, accepted or
// not — the ground truth the consequence checkers read. It is durable: a
// crash-restart of its node keeps its state (a database, not a cache).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "env/resource_access.h"
#include "env/resource_connection.h"
#include "env/time.h"

namespace locksim::sim {

class ResourceStore {
 public:
  explicit ResourceStore(const ResourceParams& params);

  // Executes one access at true time `now`: checks the token as the fencing
  // mode says, applies an accepted write, logs it. Never yields.
  ResourceReply execute(const ResourceRequest& request, TimePoint now);

  int64_t value() const { return value_; }
  const std::vector<StoreAccess>& log() const { return log_; }
  const ResourceParams& params() const { return params_; }

  // Bound on the log (Tiger Style): a run's holders make far fewer accesses.
  static constexpr size_t kLogMax = 10'000'000;

 private:
  // "" when `request` passes the fencing check, else why it does not.
  std::string fencing_refusal(const ResourceRequest& request) const;

  ResourceParams params_;
  int64_t value_ = 0;
  std::optional<uint64_t> highest_;  // highest token the check has recorded
  std::vector<StoreAccess> log_;
};

}  // namespace locksim::sim
