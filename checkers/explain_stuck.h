// `explain` for a lock that ended stuck (a liveness finding): what the store
// still keeps at the end and why nobody can take it. Part of
// checkers/explain.h, kept apart as its own question.
#pragma once

#include "checkers/explain.h"

namespace locksim::checkers {

// Sets story.finding, mechanism and steps. Precondition: the liveness
// verdict is invalid.
void explain_stuck(const ExplainInput& in, Story& story);

}  // namespace locksim::checkers
