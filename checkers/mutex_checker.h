// The mutual-exclusion checker: did two clients ever believe they held the
// lock at the same instant of true time?
//
// It reads only the ground truth (History::held), not the Jepsen ops (client
// or nemesis: faults change nothing about what it judges). An
// algorithm can return perfectly linearizable-looking replies and still let two
// clients into the critical section (a paused client whose lease expired is
// the classic case), and the truth is what a user of the lock cares about.
#pragma once

#include <string>
#include <vector>

#include "env/time.h"
#include "checkers/check.h"
#include "history/history.h"

namespace locksim::checkers {

// Two held intervals that share some instant of true time.
struct Overlap {
  history::HeldInterval a;  // a.start <= b.start (ties broken by acquire index)
  history::HeldInterval b;
  TimePoint window_start;  // max(a.start, b.start) == b.start
  TimePoint window_end;    // min(a.end, b.end); the window is half-open
};

// A checker's answer, with the evidence a reader needs to believe it.
struct Verdict {
  // kUnknown: the history could not be checked (malformed truth), and no
  // violation was found in the part that could.
  using Kind = Validity;  // every checker answers valid, invalid or unknown (checkers/check.h)
  Kind kind = Kind::kValid;
  std::string checker = "mutual-exclusion";
  // Every overlapping pair, ordered by window start, then by the acquire and
  // release op indices of a and b: the same history always lists the same way.
  std::vector<Overlap> overlaps;
  // One paragraph: what was violated, by which clients, at which op indices,
  // in which window of true time (or why the history is fine / uncheckable).
  std::string explanation;
};


// Checks that no two held intervals overlap in true time.
//
// Intervals are half-open, so [a, b) and [b, c) touch but do not overlap (a
// release and the next acquire at the same nanosecond is a correct hand-over),
// and a zero-length interval overlaps nothing. An interval that ends before it
// starts makes the verdict kUnknown unless a real overlap is found elsewhere.
// O(n log n + k) for n intervals and k overlapping pairs.
Verdict check_mutex(const history::History& history);

}  // namespace locksim::checkers
