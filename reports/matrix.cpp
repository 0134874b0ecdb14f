#include "reports/matrix.h"

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "env/assert.h"
#include "env/atomic_file.h"
#include "env/parse.h"
#include "harness/run.h"
#include "reports/timeline_svg.h"

namespace locksim::reports {

namespace {

using OJson = nlohmann::ordered_json;

// Below this share of runs with a fault touching a holder, a clean cell is
// no evidence of safety (a pause that hit nobody proves nothing).
constexpr double kCoverageLow = 0.25;

void add_run(MatrixCell& c, const harness::RunSummary& r, uint64_t seed_first) {
  LOCKSIM_ASSERT(r.algorithm == c.algorithm && r.profile == c.profile);
  ++c.runs;
  if (r.seed == seed_first + static_cast<uint64_t>(c.contiguous)) ++c.contiguous;
  if (r.faults > 0) ++c.faulted;
  if (r.fault_touched) ++c.touched;
  c.acquisitions += r.acquisitions;
  c.virtual_ns += r.run_length_ns;
  for (const auto& [bucket, count] : r.latency) c.latency[bucket] += count;
  // Events and wall time count every run of the cell up to the first violation.
  if (!c.first_violation_seed) {
    c.events_to_first += r.events;
    c.wall_ns_to_first += r.wall_ns;
  }
  if (r.never_told > 0) ++c.never_told;
  if (r.finding == "safety") {
    ++c.safety;
    c.violation_positions.push_back(static_cast<int64_t>(r.seed - seed_first + 1));
    if (!c.first_violation_seed) {
      c.first_violation_seed = r.seed;
      c.seeds_to_first = static_cast<int64_t>(r.seed - seed_first + 1);
      c.first_violation_replay = r.replay;
    }
  } else if (r.finding == "liveness") {
    ++c.liveness;
    if (!c.first_liveness_seed) {
      c.first_liveness_seed = r.seed;
      c.first_liveness_replay = r.replay;
    }
  } else if (r.finding == "latent") {
    ++c.latent;
  } else if (r.finding == "unknown") {
    ++c.unknown;
    if (c.first_unknown_replay.empty()) c.first_unknown_replay = r.replay;
  }
  if (!r.data.empty()) ++c.data_runs;
  if (r.data == "violation") {
    ++c.data_violations;
    if (!c.first_data_violation_seed) {
      c.first_data_violation_seed = r.seed;
      c.seeds_to_first_data = static_cast<int64_t>(r.seed - seed_first + 1);
      c.first_data_violation_replay = r.replay;
    }
  }
  LOCKSIM_ASSERT(c.data_violations <= c.data_runs && c.data_runs <= c.runs);
}

void judge(MatrixCell& c, const harness::SweepPlan& plan, const harness::Expectations* e) {
  if (e == nullptr) return;
  const harness::CellExpectation* x = e->find(c.algorithm, c.profile);
  if (x != nullptr) {
    c.expected = to_string(x->verdict);
    if (x->data != harness::Expected::kAny) c.expected_data = to_string(x->data);
    c.note = x->note;
  }
  harness::CellFacts f;
  f.runs = c.runs;
  f.safety = c.safety;
  f.unknown = c.unknown;
  f.first_violation_position = c.seeds_to_first;
  f.seeds_run = c.contiguous;
  f.seeds_planned = static_cast<int64_t>(plan.seeds());
  f.first_violation_replay = c.first_violation_replay;
  f.first_unknown_replay = c.first_unknown_replay;
  f.data_runs = c.data_runs;
  f.data_violations = c.data_violations;
  f.first_data_violation_position = c.seeds_to_first_data;
  f.first_data_violation_replay = c.first_data_violation_replay;
  f.acquisitions = c.acquisitions;
  c.gate = harness::judge_cell(x, f);
}

std::string percent(double share) {
  const auto tenths = static_cast<int64_t>(share * 1000 + 0.5);
  return std::to_string(tenths / 10) + "." + std::to_string(tenths % 10) + "%";
}

OJson cell_json(const MatrixCell& c) {
  OJson j;
  j["algorithm"] = c.algorithm;
  j["profile"] = c.profile;
  j["runs"] = c.runs;
  j["safety_violations"] = c.safety;
  j["liveness_findings"] = c.liveness;
  j["unknown"] = c.unknown;
  j["latent_findings"] = c.latent;
  j["never_told_runs"] = c.never_told;
  j["violation_rate"] = percent(c.violation_rate());
  j["first_violation"] = c.first_violation_seed ? OJson{{"seed", *c.first_violation_seed},
                                                        {"seeds_to_first", c.seeds_to_first},
                                                        {"events_to_first", c.events_to_first},
                                                        {"replay", c.first_violation_replay}}
                                                : OJson();
  const std::optional<int64_t> median = c.median_seeds_to_violation();
  j["median_seeds_to_violation"] = median ? OJson(*median) : OJson();
  if (c.data_runs > 0) {
    j["data"] = {{"runs", c.data_runs},
                 {"violations", c.data_violations},
                 {"first_violation", c.first_data_violation_seed
                                         ? OJson{{"seed", *c.first_data_violation_seed},
                                                 {"seeds_to_first", c.seeds_to_first_data},
                                                 {"replay", c.first_data_violation_replay}}
                                         : OJson()}};
  }
  j["first_liveness"] = c.first_liveness_seed ? OJson{{"seed", *c.first_liveness_seed},
                                                      {"replay", c.first_liveness_replay}}
                                              : OJson();
  if (!c.shrunk_file.empty()) {
    j["shrunk"] = {{"file", c.shrunk_file},
                   {"summary", c.shrunk_summary},
                   {"story_file", c.shrunk_story_file},
                   {"mechanism", c.shrunk_mechanism}};
  } else if (!c.shrunk_error.empty()) {
    j["shrunk"] = {{"error", c.shrunk_error}};
  }
  j["acquire_latency_p50_ns"] = c.latency_quantile_ns(0.5);
  j["acquire_latency_p99_ns"] = c.latency_quantile_ns(0.99);
  j["acquisitions_per_virtual_minute"] =
      static_cast<int64_t>(c.acquisitions_per_virtual_minute() + 0.5);
  j["faulted_runs"] = c.faulted;
  j["fault_coverage"] = percent(c.coverage());
  j["low_coverage"] = c.low_coverage();
  j["expected"] = c.expected.empty() ? OJson() : OJson(c.expected);
  if (!c.expected_data.empty()) j["expected_data"] = c.expected_data;
  j["gate"] = gate_word(c);
  if (!c.gate.message.empty()) j["gate_message"] = c.gate.message;
  if (!c.note.empty()) j["note"] = c.note;
  return j;
}

}  // namespace

int64_t MatrixCell::latency_quantile_ns(double q) const {
  int64_t total = 0;
  for (const auto& [bucket, count] : latency) total += count;
  if (total == 0) return -1;
  const auto rank = static_cast<int64_t>(q * static_cast<double>(total - 1));
  int64_t seen = 0;
  for (const auto& [bucket, count] : latency) {
    seen += count;
    if (seen > rank) return harness::latency_bucket_floor_ns(bucket);
  }
  LOCKSIM_ASSERT_MSG(false, "the rank lies inside the histogram");
  return -1;
}

double MatrixCell::acquisitions_per_virtual_minute() const {
  if (virtual_ns <= 0) return 0;
  return static_cast<double>(acquisitions) * 60e9 / static_cast<double>(virtual_ns);
}

std::optional<int64_t> MatrixCell::median_seeds_to_violation() const {
  LOCKSIM_ASSERT(std::is_sorted(violation_positions.begin(), violation_positions.end()));
  // Waits from each start 1..contiguous; starts past the last violation never
  // reach one and sort last.
  std::vector<int64_t> waits;
  waits.reserve(static_cast<size_t>(contiguous));
  auto next = violation_positions.begin();
  for (int64_t start = 1; start <= contiguous; ++start) {
    while (next != violation_positions.end() && *next < start) ++next;
    if (next == violation_positions.end() || *next > contiguous) break;
    waits.push_back(*next - start + 1);
  }
  const size_t median_rank = contiguous == 0 ? 0 : static_cast<size_t>((contiguous - 1) / 2);
  if (waits.size() <= median_rank) return std::nullopt;
  std::nth_element(waits.begin(), waits.begin() + static_cast<ptrdiff_t>(median_rank), waits.end());
  LOCKSIM_ASSERT(waits[median_rank] >= 1);
  return waits[median_rank];
}

bool MatrixCell::low_coverage() const {
  return profile != "none" && runs > 0 && coverage() < kCoverageLow;
}

Matrix build_matrix(const harness::SweepPlan& plan, const std::vector<harness::RunSummary>& runs,
                    const harness::Expectations* expectations) {
  Matrix m;
  m.plan = plan;
  m.plan.shard_index = m.plan.shard_count = 1;
  for (const auto& a : plan.algorithms) {
    for (const auto& p : plan.profiles) {
      MatrixCell c;
      c.algorithm = a;
      c.profile = p;
      m.cells.push_back(std::move(c));
    }
  }
  uint64_t previous = 0;
  for (const auto& r : runs) {
    LOCKSIM_ASSERT_MSG(m.runs_done == 0 || r.index > previous, "runs sorted by number, once each");
    previous = r.index;
    // read_runs refused a run whose coordinates are not its number's.
    const harness::SweepPlan::Coordinates at = plan.coordinates_of(r.index);
    const size_t cell = at.algorithm * plan.profiles.size() + at.profile;
    LOCKSIM_ASSERT(cell < m.cells.size() && r.seed == at.seed);
    add_run(m.cells[cell], r, plan.seed_first);
    ++m.runs_done;
  }
  m.gated = expectations != nullptr;
  for (auto& c : m.cells) {
    judge(c, plan, expectations);
    if (c.gate.gated) ++m.gated_cells;
    if (!c.gate.holds) ++m.gate_failures;
  }
  return m;
}

GateState gate_state(const Matrix& m) {
  if (!m.gated) return GateState::kNone;
  if (m.gate_failures > 0) return GateState::kFails;
  if (!m.complete() && m.partial_by_request.empty()) return GateState::kIncomplete;
  // A part asked for (a shard) leaves judging to the merge of every part.
  if (m.gated_cells == 0 && m.complete()) return GateState::kNothingJudged;
  return GateState::kHolds;
}

std::string counted(int64_t n, const std::string& noun) {
  LOCKSIM_ASSERT(n >= 0);
  return std::to_string(n) + " " + noun + (n == 1 ? "" : "s");
}

std::string coverage_text(const Matrix& m) {
  const uint64_t planned = m.plan.runs_total();
  LOCKSIM_ASSERT(m.runs_done <= planned);
  if (m.complete()) return counted(static_cast<int64_t>(planned), "run");
  return std::to_string(m.runs_done) + " of " + std::to_string(planned) + " runs (" +
         (m.partial_by_request.empty()
              ? "INCOMPLETE: " + std::to_string(planned - m.runs_done) + " missing"
              : "partial: " + m.partial_by_request) +
         ")";
}

std::string gate_text(const Matrix& m) {
  const std::string judged = std::to_string(m.gated_cells);
  switch (gate_state(m)) {
    case GateState::kNone:
      return "none (no --expect file)";
    case GateState::kFails:
      return "FAILS: " + std::to_string(m.gate_failures) + " of " + judged +
             " judged cells break their expectation";
    case GateState::kIncomplete:
      return "INCOMPLETE: " + std::to_string(m.runs_done) + " of " +
             std::to_string(m.plan.runs_total()) +
             " runs ran; a gate cannot hold on part of a sweep (merge every shard, or pass "
             "--partial for a report of what ran)";
    case GateState::kNothingJudged:
      return "NOTHING JUDGED: no cell of this sweep has a gated expectation it could judge (the "
             "expectations name none of these cells, or want more seeds than ran); a gate "
             "cannot hold on nothing";
    case GateState::kHolds:
      return "holds: " + judged + " of " + judged + " judged cells as expected" +
             (m.complete() ? "" : ", on " + coverage_text(m));
  }
  return "?";
}

std::string unjudged_text(const Matrix& m) {
  if (!m.gated) return "";
  std::string not_judged, ungated;
  int64_t n_not_judged = 0, n_ungated = 0;
  for (const auto& c : m.cells) {
    const std::string name = c.algorithm + " × " + c.profile;
    // No expectation at all, or "any" for both the lock and the data.
    if ((c.expected.empty() || c.expected == "any") && c.expected_data.empty()) {
      ungated += (n_ungated++ == 0 ? "" : ", ") + name;
    } else if (c.gate.not_judged) {
      LOCKSIM_ASSERT(!c.gate.gated && c.gate.message.starts_with("not judged: "));
      // "not judged: WHY" -> "NAME (WHY)"
      not_judged +=
          (n_not_judged++ == 0 ? "" : ", ") + name + " (" + c.gate.message.substr(12) + ")";
    }
  }
  std::string out;
  if (n_not_judged > 0) {
    out += "not judged (" + std::to_string(n_not_judged) + "): " + not_judged;
  }
  if (n_ungated > 0) {
    out += (out.empty() ? "" : "; ") + std::string("not gated, expected any or nothing (") +
           std::to_string(n_ungated) + "): " + ungated;
  }
  return out;
}

namespace {

// The gate as every format states it: its state (the terminal's "gate:"
// word, junit.xml's failing cases), the cells it judged, broke, could not
// judge and did not gate.
OJson gate_json(const Matrix& m) {
  int64_t not_judged = 0, not_gated = 0;
  for (const auto& c : m.cells) {
    if (c.gate.not_judged) ++not_judged;
    if (!c.gate.gated && !c.gate.not_judged) ++not_gated;
  }
  const GateState state = gate_state(m);
  LOCKSIM_ASSERT(m.gated_cells + not_judged + not_gated == static_cast<int64_t>(m.cells.size()));
  return OJson{{"state", gate_state_name(state)},
               {"cells_gated", m.gated_cells},
               {"cells_not_judged", not_judged},
               {"cells_not_gated", not_gated},
               {"failures", m.gate_failures},
               {"holds", state == GateState::kHolds},
               {"incomplete", state == GateState::kIncomplete},
               {"nothing_judged", state == GateState::kNothingJudged},
               {"text", gate_text(m)},
               {"not_judged", unjudged_text(m)}};
}

}  // namespace

const char* gate_state_name(GateState s) {
  switch (s) {
    case GateState::kNone:
      return "none";
    case GateState::kHolds:
      return "holds";
    case GateState::kFails:
      return "fails";
    case GateState::kIncomplete:
      return "incomplete";
    case GateState::kNothingJudged:
      return "nothing judged";
  }
  return "?";
}

std::string gate_word(const MatrixCell& c) {
  if (c.gate.not_judged) return "not judged";
  if (!c.gate.gated) return "not gated";
  return c.gate.holds ? "holds" : c.gate.failure;
}

std::string matrix_json(const Matrix& m) {
  OJson j;
  j["locksim_matrix"] = 1;
  j["sweep"] = harness::plan_to_json(m.plan, false);
  j["runs_done"] = m.runs_done;
  j["runs_planned"] = m.plan.runs_total();
  j["complete"] = m.complete();
  if (!m.partial_by_request.empty()) j["partial_by_request"] = m.partial_by_request;
  j["gate"] = m.gated ? gate_json(m) : OJson();
  OJson cells = OJson::array();
  for (const auto& c : m.cells) cells.push_back(cell_json(c));
  j["cells"] = std::move(cells);
  return j.dump(2) + "\n";
}

std::string timing_json(const Matrix& m) {
  OJson j;
  j["note"] = "real time: differs between machines and runs; not part of the matrix";
  OJson cells = OJson::array();
  for (const auto& c : m.cells) {
    cells.push_back({{"algorithm", c.algorithm},
                     {"profile", c.profile},
                     {"wall_s_to_first_violation",
                      c.first_violation_seed ? OJson(static_cast<double>(c.wall_ns_to_first) / 1e9)
                                             : OJson()}});
  }
  j["cells"] = std::move(cells);
  return j.dump(2) + "\n";
}

void write_matrix_reports(const Matrix& m, const std::string& dir) {
  const std::filesystem::path d(dir);
  std::map<std::string, std::string> timelines;
  for (const auto& c : m.cells) {
    const std::optional<uint64_t> seed =
        c.first_violation_seed ? c.first_violation_seed : c.first_liveness_seed;
    if (!seed) continue;
    // The same seed replays the same run: draw it again rather than keep
    // every history of the sweep.
    harness::RunExtras extras;
    extras.trace_lock = true;  // the server lanes and the story's marks
    const auto report =
        harness::simulate_and_check(m.plan.config_of(c.algorithm, c.profile, *seed), extras);
    LOCKSIM_ASSERT_MSG(report.result.seed == *seed, "the counterexample replays its own seed");
    timelines[c.algorithm + "/" + c.profile] = timeline_svg(report.result);
  }
  write_file_atomically(d / "matrix.json", matrix_json(m));
  write_file_atomically(d / "matrix.md", matrix_markdown(m));
  write_file_atomically(d / "matrix.html", matrix_html(m, timelines));
  write_file_atomically(d / "junit.xml", matrix_junit(m));
  write_file_atomically(d / "timing.json", timing_json(m));
}

}  // namespace locksim::reports
