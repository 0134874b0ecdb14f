// The --vary part of the margins report (issue 23): the margin measured at
// each value of one setting, beside the theory there, as margins.json's
// "vary" key, a list in margins.md, and a small SVG plot per series in
// margins.html (measured points and the theory line, self-contained: no
// script, no external file). A series is the cells of one algorithm and
// fault kind that plan_margins() put after the table, in plan order.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/margin/margins.h"

namespace locksim::reports {

// {"param": "ttl", "series": [{"algorithm", "fault", "points": [{"value",
// "x", "outcome", "margin_ns" | "margin_ppm", "theory_..."}]}]}; null when
// no cell was varied.
nlohmann::ordered_json vary_json(const std::string& param,
                                 const std::vector<harness::margin::MarginCell>& cells,
                                 const std::vector<harness::margin::MarginResult>& results);

// "## How the margin moves with ttl" and a line per series; "" without --vary.
std::string vary_markdown(const std::string& param,
                          const std::vector<harness::margin::MarginCell>& cells,
                          const std::vector<harness::margin::MarginResult>& results);

// An <h2> and one <svg> per series; "" without --vary.
std::string vary_html(const std::string& param,
                      const std::vector<harness::margin::MarginCell>& cells,
                      const std::vector<harness::margin::MarginResult>& results);

}  // namespace locksim::reports
