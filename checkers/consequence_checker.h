// The consequence checkers: what a broken (or fenced) lock did to the data
// behind it. They read the guarded store's log (sim/resource_store.h), the
// ground truth of every access it accepted or rejected, never the lock ops.
//
// Three findings, each with its evidence:
//   - stale write accepted: the store accepted a write of a lease after it had
//     already accepted an access (read or write) of a newer lease (acquired
//     later, in true time). A correct lock plus a correct fencing check never
//     lets that happen; a lost token counter (failover) or a check on writes
//     alone does;
//   - lost update (counter): increments the store accepted that are not in
//     its final value — a write that read a value already overwritten;
//   - oversell (inventory): more items sold (accepted sales) than there were.
// Leases are ordered by their acquire :ok op index (StoreAccess::lease_id):
// the order in which the lock was handed out, in true time.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "checkers/mutex_checker.h"
#include "env/resource_access.h"

namespace locksim::checkers {

struct StaleWrite {
  StoreAccess write;  // the accepted write of the older lease
  StoreAccess newer;  // the newer lease's access the store had accepted before it
};

struct LostUpdate {
  StoreAccess write;   // an accepted increment that overwrote a newer value
  int64_t overwritten = 0;  // increments it wiped out: value_before + 1 - written
};

struct ConsequenceVerdict {
  Verdict::Kind kind = Verdict::Kind::kValid;
  std::string checker = "consequences";
  bool active = false;  // a store ran (workload other than none)
  Workload workload = Workload::kNone;
  Fencing fencing = Fencing::kNone;
  int64_t reads_accepted = 0;
  int64_t writes_accepted = 0;
  int64_t rejected = 0;  // accesses the fencing check refused
  // Accepted accesses that carried no fencing token: the algorithm has none,
  // so a fencing check could not act on them (Redlock).
  int64_t unfenced_accesses = 0;
  int64_t final_value = 0;
  std::vector<StaleWrite> stale_writes;     // in the store's order
  std::vector<LostUpdate> lost_updates;     // counter
  int64_t lost_increments = 0;              // counter: writes_accepted - final_value
  int64_t items = 0;                        // inventory: stock at the start
  int64_t sold = 0;                         // inventory: accepted sales
  int64_t oversold = 0;                     // max(0, sold - items)
  std::vector<StoreAccess> oversales;  // inventory: the sales beyond `items`
  std::string explanation;                  // one paragraph, with the first piece of evidence
};

// Judges the store's log. `log` must be in execution order (as the store
// writes it). With workload none (no store), the verdict is valid and inactive.
ConsequenceVerdict check_consequences(const ResourceParams& params,
                                      const std::vector<StoreAccess>& log);

// "no fencing token (the algorithm hands out none; the store checked nothing)"
// when a fencing check ran on unfenced accesses, else "".
std::string fencing_note(const ConsequenceVerdict& v);

}  // namespace locksim::checkers
