// ResourceConnection: the guarded resource a lock holder works on inside its
// critical section (a register, a counter, an inventory), as the holder sees
// it: one request, one reply, perhaps a timeout.
//
// Why a seam of its own: a lock is only as good as what it protects. The
// simulated store behind it (sim/resource_store.h) checks fencing tokens the
// way Kleppmann's fenced storage does and records, as ground truth, every
// access it accepted or rejected, so the consequence checkers can say what a
// violation did to the data (checkers/consequence_checker.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace locksim {

struct ResourceRequest {
  enum class Kind { kRead, kWrite };
  Kind kind = Kind::kRead;
  int client = 0;  // who asks (0-based), for the store's log
  // The acquire :ok op index of the lease the holder works under: ground-truth
  // metadata for the checkers only. The store never decides anything by it.
  int64_t lease_id = -1;
  std::optional<uint64_t> fence;  // the lease's fencing token, where it has one
  int64_t value = 0;              // what a write stores
};

struct ResourceReply {
  enum class Status { kOk, kRejected, kTimeout };
  Status status = Status::kTimeout;
  int64_t value = 0;   // a read's value; a write's value after it
  std::string detail;  // why rejected ("token 5 < highest seen 6"), or the timeout
};

class ResourceConnection {
 public:
  virtual ~ResourceConnection() = default;
  // One access. Blocks the caller until the reply or the timeout; a request
  // that timed out may still be executed later (the unknown outcome).
  virtual ResourceReply access(const ResourceRequest& request) = 0;
};

}  // namespace locksim
