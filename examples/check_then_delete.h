// check-then-delete: the worked example of docs/how-to/add-an-algorithm.md,
// a Redis lock written outside algorithms/ and registered at run time.
//
// Where it comes from: the release that many hand-written Redis locks use
// before they learn of Lua — "GET the key, and DEL it if it is still ours" —
// which the Redis documentation of SET (its "Patterns" section) warns
// against: the check and the delete are two round trips, so the key may
// change hands between them.
//
// Steps:
//   1. token := a value unique to this acquire.
//   2. SET key token NX PX ttl; "OK" means we hold the lock, nil means
//      someone else does: back off and retry, up to max_attempts.
//   3. Release: GET key; if it is our token, DEL key (a second round trip).
//
// What locksim shows: the holder paused past its TTL is the usual violation;
// and a release whose GET saw our token but whose DEL arrives after the key
// expired and was taken deletes the next holder's lock (the story names it
// `late-release`).
#pragma once

#include <string>

#include "algorithms/algorithm_spec.h"
#include "algorithms/lock_algorithm.h"
#include "algorithms/set_nx_lua.h"

namespace locksim::examples {

// Its acquire (steps 1 and 2) is set-nx-lua's, inherited: a team's own lock
// usually differs from a known one in a single step, and here that is the
// release.
class CheckThenDelete : public algorithms::SetNxLua {
 public:
  static constexpr const char* kName = "check-then-delete";

  // `check_delay`: between the release's GET and its DEL, widening the
  // window in which the key can change hands (0 in the real pattern).
  CheckThenDelete(SetNxLua::Params params, Duration check_delay);

  algorithms::ReleaseResult release(Env& env, const algorithms::Lease& lease) override;
  std::string name() const override { return kName; }

 private:
  Duration check_delay_;
};

// Its registry entry: parameters ttl, max-attempts, retry, check-delay.
const algorithms::AlgorithmSpec& check_then_delete_spec();

}  // namespace locksim::examples
