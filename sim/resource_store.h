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

#include "env/resource_connection.h"
#include "env/time.h"

namespace locksim::sim {

enum class Workload { kNone, kRegister, kCounter, kInventory };
enum class Fencing { kNone, kWriteCheck, kReadWriteCheck };

const char* to_string(Workload w);  // "none", "register", "counter", "inventory"
const char* to_string(Fencing f);   // "none", "write-check", "read-write-check"
std::optional<Workload> workload_from(const std::string& name);
std::optional<Fencing> fencing_from(const std::string& name);

struct ResourceParams {
  Workload workload = Workload::kNone;  // none: no store node at all
  Fencing fencing = Fencing::kNone;
  int64_t items = 10;  // inventory: the stock at the start (the article's 10 prizes)
  // Client timeout of one access: long enough for any healthy round trip,
  // short enough that a holder cut off from the store gives up within a hold.
  Duration timeout = Duration::millis(500);

  static constexpr int64_t kItemsMax = 1'000'000'000;
};

// One access as the store saw it.
struct StoreAccess {
  int64_t time_ns = 0;  // true time it was executed
  int client = 0;
  int64_t lease_id = -1;
  std::optional<uint64_t> fence;
  ResourceRequest::Kind kind = ResourceRequest::Kind::kRead;
  bool accepted = false;
  int64_t value_before = 0;  // the stored value when it arrived
  int64_t value_after = 0;   // after it (== before unless an accepted write)
  int64_t written = 0;       // a write's value
  std::string detail;        // why rejected
};

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
