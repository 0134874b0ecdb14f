// What `locksim margins` writes: the table of every algorithm x fault kind
// margin, as margins.json for tools, margins.md for a CI summary page and
// margins.html for people. All three come from the same cells and results,
// in plan order, with no wall time and no path in them: the same input gives
// the same bytes, whatever --jobs was.
#pragma once

#include <string>
#include <vector>

#include "harness/margin/margins.h"

namespace locksim::reports {

// {"locksim_margins": 1, "seed", "hold_ns", "cells": [margin.json of each
// cell (margin_report.h) with "lease_note" added after "hold_ns", and
// "timeline" (timeline_path, or null)], "vary": margins_vary.h's vary_json
// (only with --vary)}. Varied cells are in "vary", not in "cells".
std::string margins_json_text(const std::vector<harness::margin::MarginCell>& cells,
                              const std::vector<harness::margin::MarginResult>& results);

// A Markdown table: algorithm, fault, lease, margin, theory, difference, runs;
// then the cells beyond 1 % of theory, and what was not found in range.
std::string margins_markdown(const std::vector<harness::margin::MarginCell>& cells,
                             const std::vector<harness::margin::MarginResult>& results);

// One HTML page: the table, each margin cell coloured by the share of the
// lease the fault takes at the edge (share_of_lease), with both confirming
// runs' replay commands under it and a link to the above-the-edge run's
// timeline; with --vary, a plot per varied series after the table.
std::string margins_html(const std::vector<harness::margin::MarginCell>& cells,
                         const std::vector<harness::margin::MarginResult>& results);

// Where the above-the-edge run of a table cell is drawn, relative to the
// report's directory: "timelines/set-nx-lua-pause.html" (the CLI writes it
// with timeline_page(); margins.html links it).
std::string timeline_path(const harness::margin::MarginResult& m);

// The share of the lease the fault takes at the margin, in [0, 1]: a
// duration's margin / lease; a drift's r / (1 + r) (a clock r fast loses that
// share of every interval). -1 where nothing was found in range.
double share_of_lease(const harness::margin::MarginResult& m);

}  // namespace locksim::reports
