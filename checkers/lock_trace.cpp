#include "checkers/lock_trace.h"

#include "env/assert.h"

namespace locksim::checkers {

const char* to_string(ServerLock::Kind kind) {
  switch (kind) {
    case ServerLock::Kind::kDown:
      return "down";
    case ServerLock::Kind::kAbsent:
      return "absent";
    case ServerLock::Kind::kHeld:
      return "held";
    case ServerLock::Kind::kExpired:
      return "expired";
  }
  return "?";
}

bool same_lock(const ServerLock& a, const ServerLock& b) {
  return a.server == b.server && a.kind == b.kind && a.holder == b.holder &&
         a.serving == b.serving && a.expires == b.expires;
}

void apply(std::vector<ServerLock>& states, const LockChange& change) {
  bool found = false;
  for (ServerLock& s : states) {
    if (s.server != change.after.server) continue;
    s = change.after;
    found = true;
  }
  LOCKSIM_ASSERT_MSG(found, "a change names a server of the trace");
}

std::vector<ServerLock> states_at(const LockTrace& trace, TimePoint at) {
  std::vector<ServerLock> out = trace.initial;
  for (const LockChange& c : trace.changes) {
    if (c.at > at) break;
    apply(out, c);
  }
  return out;
}

}  // namespace locksim::checkers
