// `explain` for a lock that ended stuck while a server whose answer counts
// keeps it for nobody: no client believes it holds it, and the store will
// not give it to anyone until it goes. Part of explain_stuck
// (checkers/explain_stuck.h), kept apart as its own question: how can a
// store keep a lock nobody holds? Two ways the records show:
//   - an unheard grant: the store granted the lock to an acquire whose
//     client never heard of it (the request ran after the client had given
//     up, held by a paused server or a cut link; or its reply was lost);
//   - a revived lock: a failover promoted a replica that had received the
//     lock but not its release (or the undoing of a grant no replica
//     acknowledged), so the lock came back after its holder let go.
#pragma once

#include "checkers/explain.h"

namespace locksim::checkers {

// When `s` (serving at `end`, keeping a lock with an expiry) keeps it for a
// token no acquire was granted, and the history names the acquires that
// may have asked for it: the grant, who asked, what held the request, and
// when the lease runs out. Mechanism::kUnheardGrant. False, with `story`
// untouched, otherwise.
bool explain_unheard_grant(const ExplainInput& in, const ServerLock& s, TimePoint end,
                           Story& story);

// When `s` (serving at `end`) was promoted while keeping a lock that the
// server serving before it had already deleted: the grant, the delete, the
// copy `s` had, the fault that cut the old server off before the delete
// reached `s`, the promotion. Mechanism::kFailoverRevivedLock. False, with
// `story` untouched, otherwise.
bool explain_revived_lock(const ExplainInput& in, const ServerLock& s, TimePoint end, Story& story);

}  // namespace locksim::checkers
