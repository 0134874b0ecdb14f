// `explain` for a lock that ended stuck while free: a fair lock's queue of
// waiters (checkers/lock_trace.h, ServerLock::queue) still keeps it from
// everyone. Part of explain_stuck (checkers/explain_stuck.h), kept apart as
// its own question.
//
// Redisson's fair lock gives a free lock only to its queue's head, and a
// script drops the head only once its caller's clock has reached the head's
// timeout, written from the head's own clock when it queued. So a head whose
// waiter never asks again (it crashed, or gave up and its cancel never got
// through) keeps the free lock from everyone behind it until their clocks
// pass that timeout: the wait time, plus how far ahead the writer's clock ran.
#pragma once

#include "checkers/explain.h"

namespace locksim::checkers {

// When no server whose answer counts keeps a live lock at `end` and one of
// them keeps a queue: tells whose entry heads it and since when, from which
// clock its timeout was written and when a correct clock reaches it, and why
// its waiter does not take the lock. A waiter that crashed or gave up with
// the entry queued, and a timeout a correct clock had not reached by `end`:
// Mechanism::kDeadWaiterHeadsQueue. Anything else (the waiter still waiting
// at the end, paused or cut off) is told as far as the records go and left
// undetermined. False, with `story` untouched, when no such queue is there.
bool explain_queue_head(const ExplainInput& in, TimePoint end, Story& story);

// When `grant` gave a free lock to its queue's head, an entry whose acquire
// had already ended (crashed, or gave up with the entry queued): the same
// dead waiter's story up to the grant, then the grant itself. A request of
// the dead acquire, held by the network (a partition's retransmissions),
// reached the server after its client had stopped waiting, found its entry
// at the head and took the lock for it: nobody knows of the grant, nobody
// renews it, and it keeps everyone out until its lease runs out.
// Mechanism::kDeadWaiterHeadsQueue. False, with `story` untouched, when the
// grant went to a waiter still waiting or to no queue's head.
bool explain_late_head_grant(const ExplainInput& in, const LockChange& grant, TimePoint end,
                             Story& story);

}  // namespace locksim::checkers
