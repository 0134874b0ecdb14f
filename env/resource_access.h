// What the guarded resource is and what it recorded: the workload a holder
// runs on it, the fencing check it applies, and one logged access. Shared by
// the simulated store (sim/resource_store.h), which writes the log, and the
// consequence checkers (checkers/consequence_checker.h), which read it: a
// checker reads what the World recorded, never the World itself.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "env/resource_connection.h"
#include "env/time.h"

namespace locksim {

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

}  // namespace locksim
