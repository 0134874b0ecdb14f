// The gate's second question, the reference's fencing row: what happened to
// the data behind the lock. A cell's expectation may judge it ("data": safe
// or violation), the matrix counts the runs whose guarded data broke, and
// the gate names a data false alarm, a data lost detection, or a cell whose
// runs guarded nothing.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "env/parse.h"
#include "harness/sweep/expectations.h"
#include "harness/sweep/sweep.h"
#include "reports/matrix.h"
#include "tests/run_summary_builder.h"

namespace locksim::reports {
namespace {

using harness::Expectations;
using harness::parse_expectations;

harness::RunSummary run(uint64_t seed, const std::string& finding, const std::string& data) {
  harness::RunSummary r = testing::summary_of("set-nx-lua-fenced", "failover", seed, finding);
  r.data = data;
  return r;
}

Expectations expect(const std::string& cell_json) {
  return parse_expectations(
      nlohmann::json::parse("{\"locksim_expectations\": 1, \"cells\": [" + cell_json + "]}"),
      "e.json");
}

// Four seeds; the lock breaks in seed 2, the data in seeds 3 and 4.
Matrix four_runs(const Expectations& e, const std::string& data = "safe") {
  harness::SweepPlan plan;
  plan.algorithms = {"set-nx-lua-fenced"};
  plan.profiles = {"failover"};
  plan.seed_first = 1;
  plan.seed_last = 4;
  const std::string broken = data.empty() ? "" : "violation";
  return build_matrix(plan,
                      {run(1, "none", data), run(2, "safety", data), run(3, "none", broken),
                       run(4, "safety", broken)},
                      &e);
}

const char* kCell = "\"algorithm\": \"set-nx-lua-fenced\", \"profile\": \"failover\", ";

TEST(DataGate, TheMatrixCountsRunsWhoseDataBroke) {
  const Matrix m = four_runs(expect(std::string("{") + kCell +
                                    "\"verdict\": \"violation\", \"seeds_within\": 2, "
                                    "\"data\": \"violation\", \"data_seeds_within\": 3}"));
  const MatrixCell& c = m.cells.at(0);
  EXPECT_EQ(c.data_runs, 4);
  EXPECT_EQ(c.data_violations, 2);
  EXPECT_EQ(c.seeds_to_first_data, 3);
  EXPECT_TRUE(c.gate.gated && c.gate.holds) << c.gate.message;
  EXPECT_NE(matrix_markdown(m).find("**V** 2/4 (seed 2) data ✗2 ✓"), std::string::npos)
      << matrix_markdown(m);
  EXPECT_NE(matrix_json(m).find("\"expected_data\": \"violation\""), std::string::npos);
  EXPECT_NE(matrix_html(m, {}).find("2 of 4 runs broke the guarded data"), std::string::npos);
}

TEST(DataGate, NamesADataFalseAlarmAndADataLostDetection) {
  const Matrix alarm =
      four_runs(expect(std::string("{") + kCell + "\"verdict\": \"any\", \"data\": \"safe\"}"));
  EXPECT_EQ(alarm.cells.at(0).gate.failure, "data false alarm");
  EXPECT_NE(alarm.cells.at(0).gate.message.find("--seed 3"), std::string::npos)
      << "the first run whose data broke: " << alarm.cells.at(0).gate.message;
  const Matrix lost = four_runs(expect(std::string("{") + kCell +
                                       "\"verdict\": \"any\", \"data\": \"violation\", "
                                       "\"data_seeds_within\": 2}"));
  EXPECT_EQ(lost.cells.at(0).gate.failure, "data lost detection");
  EXPECT_EQ(lost.gate_failures, 1);
  // The lock's own verdict is judged first.
  const Matrix lock = four_runs(expect(std::string("{") + kCell +
                                       "\"verdict\": \"safe\", \"data\": \"violation\", "
                                       "\"data_seeds_within\": 4}"));
  EXPECT_EQ(lock.cells.at(0).gate.failure, "false alarm");
}

TEST(DataGate, ACellWhoseRunsGuardedNothingCannotPassADataExpectation) {
  const Matrix m =
      four_runs(expect(std::string("{") + kCell + "\"verdict\": \"any\", \"data\": \"safe\"}"), "");
  EXPECT_EQ(m.cells.at(0).data_runs, 0);
  EXPECT_EQ(m.cells.at(0).gate.failure, "data not checked");
}

// A lock that never grants (a script whose every acquire errs) passed a
// safe cell: it held 3 of 3 with nothing acquired.
TEST(DataGate, ASafeCellWhoseLockNeverGrantedFails) {
  harness::SweepPlan plan;
  plan.algorithms = {"set-nx-lua-fenced"};
  plan.profiles = {"failover"};
  plan.seed_first = 1;
  plan.seed_last = 2;
  std::vector<harness::RunSummary> runs = {run(1, "none", "safe"), run(2, "none", "safe")};
  const Expectations e = expect(std::string("{") + kCell + "\"verdict\": \"safe\"}");
  EXPECT_TRUE(build_matrix(plan, runs, &e).cells.at(0).gate.holds);
  for (harness::RunSummary& r : runs) r.acquisitions = 0;
  const MatrixCell c = build_matrix(plan, runs, &e).cells.at(0);
  EXPECT_EQ(c.gate.failure, "never acquired");
  EXPECT_NE(c.gate.message.find("none of its 2 runs acquired the lock"), std::string::npos)
      << c.gate.message;
}

TEST(DataGate, BadDataExpectationsNameTheField) {
  const auto error_of = [](const std::string& extra) {
    try {
      expect(std::string("{") + kCell + "\"verdict\": \"any\"" + extra + "}");
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(error_of(", \"data\": \"liveness\"").find("e.json: cells[0].data: expected one of"),
            std::string::npos);
  EXPECT_NE(error_of(", \"data\": \"broken\"").find("cells[0].data: expected one of"),
            std::string::npos);
  EXPECT_NE(error_of(", \"data\": \"violation\"").find("cells[0].data_seeds_within: missing"),
            std::string::npos);
  EXPECT_NE(error_of(", \"data\": \"safe\", \"data_seeds_within\": 3")
                .find("cells[0].data_seeds_within: only a data violation"),
            std::string::npos);
  EXPECT_NE(error_of(", \"data_seeds_within\": 3").find("cells[0].data_seeds_within"),
            std::string::npos);
  EXPECT_EQ(error_of(", \"data\": \"violation\", \"data_seeds_within\": 3"), "no error");
}

TEST(DataGate, RunSummariesCarryTheirDataVerdictThroughRunsJsonl) {
  const harness::RunSummary r = run(3, "none", "violation");
  const auto back = harness::summary_from_json(
      nlohmann::json::parse(harness::summary_to_json(r).dump()), "runs.jsonl:1");
  EXPECT_EQ(back.data, "violation");
  const harness::RunSummary plain = run(1, "none", "");
  const std::string line = harness::summary_to_json(plain).dump();
  EXPECT_EQ(line.find("\"data\""), std::string::npos) << "no resource, no data key";
  auto bad = harness::summary_to_json(r);
  bad["data"] = "maybe";
  EXPECT_THROW(harness::summary_from_json(nlohmann::json::parse(bad.dump()), "x"), ConfigError);
}

}  // namespace
}  // namespace locksim::reports
