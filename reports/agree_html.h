// agree.html: `locksim agree --all`'s report as one self-contained page
// (inline CSS in matrix.html's style, no script, nothing fetched), so it
// opens from a CI artifact as agree.md reads in a terminal.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace locksim::reports {

// The page for `report`, agree.json's document: "summary" (scenarios,
// expressible, agree, time_scale) and "scenarios", each row either
// expressible (scenario, expected or null, simulation and live sides with
// verdict, first_overlap or null, first_overlap_ns or null, overlaps,
// acquisitions, nemesis_steps, errors; agree) or not (scenario, why). Every
// row becomes a table row whose first cell names the scenario; the
// expressible ones first, in report order, then the rest with their reason.
// Precondition: the shape above (the agree command writes it; asserted).
std::string agree_html(const nlohmann::ordered_json& report);

}  // namespace locksim::reports
