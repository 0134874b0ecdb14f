// A run drawn as an SVG timeline (the counterexample a person reads):
//   - one lane per client ("c1".."cN"), true time left to right;
//   - each held interval (the ground truth: when the client believed it held
//     the lock) as a bar, class "held";
//   - each overlap of two holders as a red band over both lanes, class
//     "overlap" (data-a / data-b name the clients);
//   - each fault as a marked band on a "nemesis" lane and across the lanes
//     it targets, class "fault" (pause..resume, crash..restart,
//     partition..heal; clock changes as a marker), class "fault";
//   - each client op as a tick, class "op" (colour by :type);
//   - with the lock trace, one lane per lock server, class "server-lock"
//     (held, expired, down), and the story's steps as numbered marks,
//     class "caption";
// every element with a <title> child, which browsers show on hover.
// Pure: the same result gives the same bytes.
#pragma once

#include <string>
#include <string_view>

#include "checkers/explain.h"
#include "harness/run_result.h"

namespace locksim::reports {

// The <svg> element alone (for embedding in a page). With the run's lock
// trace recorded (RunExtras::trace_lock), a lane per lock server shows the
// lock as that server stores it, and the story's steps (checkers/explain.h)
// are numbered marks at their instants.
std::string timeline_svg(const harness::RunResult& result);
std::string timeline_svg(const harness::RunResult& result, const checkers::Story& story);

// A whole self-contained HTML page: the run's verdict, its replay command
// and the timeline (`locksim run --html FILE`).
std::string timeline_page(const harness::RunResult& result);

// Escapes & < > " ' for XML/HTML text and attributes.
std::string xml_escape(std::string_view text);

}  // namespace locksim::reports
