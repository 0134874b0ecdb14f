// The matrix's writers show what a reader needs per cell: violations,
// liveness, and latent findings (a lease exposed that nobody stepped into),
// which a clean-looking cell must not hide.
#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/sweep/sweep.h"
#include "reports/agree_html.h"
#include "reports/matrix.h"
#include "tests/run_summary_builder.h"

namespace locksim::reports {
namespace {

harness::RunSummary run(uint64_t seed, const std::string& finding) {
  return testing::summary_of("set-nx-lua", "pause", seed, finding);
}

// set-nx-lua x pause over seeds 1..`seeds`: the one cell most tests need.
harness::SweepPlan one_cell_plan(uint64_t seeds) {
  harness::SweepPlan plan;
  plan.algorithms = {"set-nx-lua"};
  plan.profiles = {"pause"};
  plan.seed_first = 1;
  plan.seed_last = seeds;
  return plan;
}

Matrix three_runs(const std::string& second) {
  const harness::SweepPlan plan = one_cell_plan(3);
  return build_matrix(plan, {run(1, "none"), run(2, second), run(3, "latent")}, nullptr);
}

TEST(MatrixReport, LatentFindingsAreCountedAndShown) {
  const Matrix m = three_runs("latent");
  ASSERT_EQ(m.cells.size(), 1u);
  EXPECT_EQ(m.cells[0].latent, 2);
  EXPECT_EQ(m.cells[0].safety, 0);
  const std::string md = matrix_markdown(m);
  EXPECT_NE(md.find("| ok 3 ~2 |"), std::string::npos) << md;
  EXPECT_NE(md.find("| latent |"), std::string::npos) << "the details table has the column";
  EXPECT_NE(md.find("| set-nx-lua | pause | 3 | 0 | 0 | 2 |"), std::string::npos) << md;
  const std::string html = matrix_html(m, {});
  EXPECT_NE(html.find("0/3 ~2"), std::string::npos);
  EXPECT_NE(html.find("2 latent"), std::string::npos);
}

TEST(MatrixReport, AViolationStaysFirstAndLatentRunsStillCount) {
  const Matrix m = three_runs("safety");
  EXPECT_EQ(m.cells[0].safety, 1);
  EXPECT_EQ(m.cells[0].latent, 1);
  const std::string md = matrix_markdown(m);
  EXPECT_NE(md.find("| **V** 1/3 (seed 2) ~1 |"), std::string::npos) << md;
}

// Ten seeds with violations at `positions`: the median, over the ten
// starting seeds, of the seeds a sweep needs to reach the next violation.
std::optional<int64_t> median_of(const std::vector<uint64_t>& positions) {
  const harness::SweepPlan plan = one_cell_plan(10);
  std::vector<harness::RunSummary> runs;
  for (uint64_t seed = 1; seed <= 10; ++seed) {
    const bool bad = std::find(positions.begin(), positions.end(), seed) != positions.end();
    runs.push_back(run(seed, bad ? "safety" : "none"));
  }
  return build_matrix(plan, runs, nullptr).cells.at(0).median_seeds_to_violation();
}

TEST(MatrixReport, MedianSeedsToAViolationCountsFromEveryStart) {
  // Starts 1..10 wait 3,2,1,4,3,2,1 and then never: the lower median is 3.
  EXPECT_EQ(median_of({3, 7}), 3);
  EXPECT_EQ(median_of({10}), 5);  // waits 10..1
  EXPECT_EQ(median_of({9}), 5);   // waits 9..1, then never
  EXPECT_EQ(median_of({1}), std::nullopt) << "nine of ten starts never reach one";
  EXPECT_EQ(median_of({}), std::nullopt);
  EXPECT_EQ(median_of({1, 2, 3, 4, 5, 6, 7, 8, 9, 10}), 1);
  const harness::SweepPlan plan = one_cell_plan(3);
  // Starts 1..3 wait 2, 1, never: the median is 2, beside seeds to first (2).
  const Matrix m = build_matrix(plan, {run(1, "none"), run(2, "safety"), run(3, "none")}, nullptr);
  EXPECT_NE(matrix_json(m).find("\"median_seeds_to_violation\": 2"), std::string::npos);
  EXPECT_NE(matrix_markdown(m).find("| 2 | 2 |"), std::string::npos) << matrix_markdown(m);
  EXPECT_NE(matrix_html(m, {}).find("a violation every 2 seeds (median)"), std::string::npos);
}

harness::CellExpectation expecting(const std::string& algorithm, const std::string& profile,
                                   harness::Expected verdict, int64_t seeds_within) {
  harness::CellExpectation e;
  e.algorithm = algorithm;
  e.profile = profile;
  e.verdict = verdict;
  e.seeds_within = seeds_within;
  return e;
}

// A gate over three cells of three kinds, on seeds 1..3: set-nx-lua x pause
// judged (expected safe, clean), redlock x pause not judged (a violation
// expected within 30 seeds, none in 3), redlock x none not gated (any).
Matrix three_kinds_of_cell() {
  harness::SweepPlan plan;
  plan.algorithms = {"set-nx-lua", "redlock"};
  plan.profiles = {"none", "pause"};
  plan.seed_first = 1;
  plan.seed_last = 3;
  harness::Expectations e;
  e.source = "e.json";
  e.cells.push_back(expecting("set-nx-lua", "pause", harness::Expected::kSafe, 0));
  e.cells.push_back(expecting("redlock", "pause", harness::Expected::kViolation, 30));
  e.cells.push_back(expecting("redlock", "none", harness::Expected::kAny, 0));
  std::vector<harness::RunSummary> runs;
  for (const char* a : {"set-nx-lua", "redlock"}) {
    for (const char* p : {"none", "pause"}) {
      for (uint64_t seed = 1; seed <= 3; ++seed) {
        harness::RunSummary r = testing::summary_of(a, p, seed, "none");
        r.index = runs.size();
        runs.push_back(r);
      }
    }
  }
  return build_matrix(plan, runs, &e);
}

// JUnit: a cell the gate did not judge, or does not gate, is skipped (with
// why), never a passing test; the counts say how many.
TEST(MatrixReport, JunitSkipsCellsTheGateDidNotJudge) {
  const std::string junit = matrix_junit(three_kinds_of_cell());
  EXPECT_NE(junit.find("tests=\"4\" failures=\"0\" errors=\"0\" skipped=\"3\""), std::string::npos)
      << junit;
  EXPECT_NE(junit.find("<skipped message=\"not judged: not enough seeds: a violation is expected "
                       "within 30 seeds, the sweep has 3\"/>"),
            std::string::npos)
      << junit;
  EXPECT_NE(junit.find("<skipped message=\"not gated: expected any\"/>"), std::string::npos);
  EXPECT_NE(junit.find("<skipped message=\"not gated: the expectations file does not name"),
            std::string::npos);
  // Without --expect nothing is gated, and nothing is skipped.
  EXPECT_NE(matrix_junit(three_runs("none")).find("skipped=\"0\""), std::string::npos);
}

// matrix.json and matrix.md tell a cell too short to judge from one that
// expects nothing; matrix.json counts both and names the gate's state.
TEST(MatrixReport, NotJudgedIsNotNotGated) {
  const Matrix m = three_kinds_of_cell();
  const nlohmann::json j = nlohmann::json::parse(matrix_json(m));
  EXPECT_EQ(j["cells"][0]["gate"], "not gated");   // set-nx-lua x none: absent
  EXPECT_EQ(j["cells"][1]["gate"], "holds");       // set-nx-lua x pause
  EXPECT_EQ(j["cells"][2]["gate"], "not gated");   // redlock x none: any
  EXPECT_EQ(j["cells"][3]["gate"], "not judged");  // redlock x pause: 3 of 30 seeds
  EXPECT_EQ(j["gate"]["state"], "holds");
  EXPECT_EQ(j["gate"]["cells_gated"], 1);
  EXPECT_EQ(j["gate"]["cells_not_judged"], 1);
  EXPECT_EQ(j["gate"]["cells_not_gated"], 2);
  const std::string md = matrix_markdown(m);
  EXPECT_NE(md.find("| violation | not judged |"), std::string::npos) << md;
  EXPECT_NE(md.find("| any | not gated |"), std::string::npos) << md;
}

// A gate that judged nothing says so in matrix.json as junit.xml and the
// terminal do, not "0 failures".
TEST(MatrixReport, MatrixJsonCarriesANothingJudgedGate) {
  const harness::SweepPlan plan = one_cell_plan(1);
  harness::Expectations e;
  e.cells.push_back(expecting("redlock", "none", harness::Expected::kSafe, 0));
  const Matrix m = build_matrix(plan, {run(1, "none")}, &e);
  ASSERT_EQ(gate_state(m), GateState::kNothingJudged);
  const nlohmann::json j = nlohmann::json::parse(matrix_json(m));
  EXPECT_EQ(j["gate"]["state"], "nothing judged");
  EXPECT_EQ(j["gate"]["nothing_judged"], true);
  EXPECT_EQ(j["gate"]["holds"], false);
}

// A bound of one seed reads "1 seed".
TEST(MatrixReport, OneSeedIsSingular) {
  const harness::SweepPlan plan = one_cell_plan(1);
  harness::Expectations e;
  e.cells.push_back(expecting("set-nx-lua", "pause", harness::Expected::kViolation, 1));
  const Matrix m = build_matrix(plan, {run(1, "none")}, &e);
  EXPECT_EQ(m.cells[0].gate.message, "expected a violation within 1 seed, found none in 1");
}

// matrix.md gives the first liveness finding's replay, as matrix.json and
// matrix.html do; matrix.html has no Counterexamples heading over nothing.
TEST(MatrixReport, MarkdownGivesTheFirstLivenessReplay) {
  const Matrix m = three_runs("liveness");
  EXPECT_NE(matrix_markdown(m).find(
                "- set-nx-lua × pause (liveness): `locksim run --algorithm set-nx-lua --seed 2`"),
            std::string::npos)
      << matrix_markdown(m);
  EXPECT_EQ(matrix_html(three_runs("none"), {}).find("Counterexamples"), std::string::npos);
}

// Latencies are rounded to the unit shown, not cut.
TEST(MatrixReport, LatencyIsRoundedNotTruncated) {
  EXPECT_EQ(latency_text(1'792'000), "1.8ms");
  EXPECT_EQ(latency_text(1'310'720'000), "1311ms");
  EXPECT_EQ(latency_text(850'400), "850us");
  EXPECT_EQ(latency_text(999'600), "1.0ms");
  EXPECT_EQ(latency_text(99'960'000), "100ms");
  EXPECT_EQ(latency_text(-1), "-");
}

// agree.html: one row per scenario, in matrix.html's colours, a differing
// one framed, the timing difference shown, and a scenario live cannot
// express listed with its reason; self-contained.
TEST(AgreeHtml, ShowsEveryRowBothVerdictsTheDifferenceAndWhyNot) {
  auto side = [](const std::string& verdict, nlohmann::ordered_json overlap,
                 nlohmann::ordered_json overlap_ns) {
    return nlohmann::ordered_json{{"verdict", verdict},
                                  {"first_overlap", overlap},
                                  {"first_overlap_ns", overlap_ns},
                                  {"overlaps", 1},
                                  {"acquisitions", 4},
                                  {"nemesis_steps", 2},
                                  {"errors", nlohmann::ordered_json::array()}};
  };
  nlohmann::ordered_json report;
  report["scenarios"] = nlohmann::ordered_json::array();
  report["scenarios"].push_back({{"scenario", "both-violate"},
                                 {"expected", "violation"},
                                 {"simulation", side("violation", "1.029s", 1'029'000'000)},
                                 {"live", side("violation", "1.094s", 1'094'000'000)},
                                 {"agree", true},
                                 {"expressible", true}});
  report["scenarios"].push_back({{"scenario", "they-differ"},
                                 {"expected", nullptr},
                                 {"simulation", side("liveness", nullptr, nullptr)},
                                 {"live", side("safe", nullptr, nullptr)},
                                 {"agree", false},
                                 {"expressible", true}});
  report["scenarios"].push_back(
      {{"scenario", "sim-only"}, {"expressible", false}, {"why", "faults[0]: loss <live>"}});
  report["summary"] = {{"scenarios", 3}, {"expressible", 2}, {"agree", 1}, {"time_scale", "0.2"}};
  const std::string html = agree_html(report);
  EXPECT_NE(html.find("expressible live: 2; agreeing: 1; time scale 0.2"), std::string::npos);
  for (const char* name : {"both-violate", "they-differ", "sim-only"}) {
    EXPECT_NE(html.find(std::string("<tr data-scenario=\"") + name + "\">"), std::string::npos)
        << name;
  }
  EXPECT_NE(html.find("1.029s / 1.094s</td><td>+0.065s"), std::string::npos) << html;
  EXPECT_NE(html.find("<td class=\"liveness gatefail\""), std::string::npos) << html;
  EXPECT_NE(html.find("<b>no</b>"), std::string::npos);
  EXPECT_NE(html.find("faults[0]: loss &lt;live&gt;"), std::string::npos) << "escaped";
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("http"), std::string::npos) << "nothing fetched";
}

}  // namespace
}  // namespace locksim::reports
