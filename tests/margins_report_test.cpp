// `locksim margins` (issue 23): the plan covers every algorithm x every kind
// that applies, the three files are the same bytes on a rerun and for any
// --jobs, the HTML carries both confirming runs of each cell, and bad input
// exits 2 naming the flag.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "algorithms/registry.h"
#include "env/parse.h"
#include "harness/margin/margins.h"
#include "reports/margins_report.h"
#include "tests/locksim_binary.h"

namespace {

namespace fs = std::filesystem;

using locksim::testing::locksim;
using locksim::testing::Outcome;
using locksim::testing::slurp;

const locksim::testing::ScratchDir scratch_dir("locksim_margins_");

TEST(MarginsReport, PlanHasEveryAlgorithmTimesEveryKindThatApplies) {
  std::vector<std::string> names;
  size_t expected = 0;
  for (const auto& spec : locksim::algorithms::all_algorithms()) {
    names.push_back(spec.name);
    expected += locksim::harness::margin::kinds_for(spec.name).size();
  }
  const auto cells = locksim::harness::margin::plan_margins(names, 1);
  EXPECT_EQ(cells.size(), expected);
  for (const auto& c : cells) {
    EXPECT_EQ(c.request.base.workload.hold_min, locksim::harness::margin::kTableHold);
    EXPECT_FALSE(c.lease_note.empty());
  }
  EXPECT_THROW(locksim::harness::margin::plan_margins({"nope"}, 1), locksim::ConfigError);
}

TEST(MarginsReport, RerunsAndAnyJobsGiveTheSameBytes) {
  const std::string args = "margins --algorithms set-nx-lua,redlock,zk-recipe --quiet --out ";
  const fs::path a = scratch_dir.path() / "a";
  const fs::path b = scratch_dir.path() / "b";
  const fs::path c = scratch_dir.path() / "c";
  ASSERT_EQ(locksim(args + a.string() + " --jobs 1").exit_code, 0);
  ASSERT_EQ(locksim(args + b.string() + " --jobs 1").exit_code, 0);
  ASSERT_EQ(locksim(args + c.string() + " --jobs 2").exit_code, 0);
  for (const char* file : {"margins.json", "margins.md", "margins.html"}) {
    SCOPED_TRACE(file);
    const std::string first = slurp(a / file);
    EXPECT_FALSE(first.empty());
    EXPECT_EQ(first, slurp(b / file));
    EXPECT_EQ(first, slurp(c / file));
  }
  const auto j = nlohmann::json::parse(slurp(a / "margins.json"));
  // set-nx-lua 7 kinds, redlock 11, zk-recipe 2.
  ASSERT_EQ(j["cells"].size(), 7u + 11u + 2u);
  for (const auto& cell : j["cells"]) {
    EXPECT_LE(cell["probes"].get<int>(), locksim::harness::margin::kRunsPerMarginMax);
    EXPECT_TRUE(cell.contains("lease_note"));
  }
  EXPECT_EQ(j["cells"][0]["fault"], "pause");
  EXPECT_EQ(j["cells"][0]["outcome"], "found");
  // Every found cell shows both confirming runs in the HTML.
  const std::string html = slurp(a / "margins.html");
  for (const auto& cell : j["cells"]) {
    if (cell["outcome"] != "found") continue;
    for (const char* side : {"below", "above"}) {
      const std::string replay = cell[side]["replay"].get<std::string>();
      const std::string first_fault = replay.substr(0, replay.find(" --fault"));
      EXPECT_NE(html.find(first_fault), std::string::npos) << first_fault;
    }
  }
  // Every cell that broke links its above-the-edge run's timeline, written.
  for (const auto& cell : j["cells"]) {
    if (cell["above"].is_null()) continue;
    const std::string timeline = cell["timeline"].get<std::string>();
    EXPECT_NE(html.find("href=\"" + timeline + "\""), std::string::npos) << timeline;
    EXPECT_NE(slurp(a / timeline).find("<svg"), std::string::npos) << timeline;
    EXPECT_EQ(slurp(a / timeline), slurp(c / timeline)) << timeline;
  }
  EXPECT_NE(html.find("class=\"never\""), std::string::npos);  // redlock server-drift-one
  EXPECT_NE(html.find("class=\"m3\""), std::string::npos);     // a pause: 80 % of the lease
}

// --vary drift-factor: Redlock's quorum and all-masters drift cells at five
// factors, in margins.json's "vary" and plotted in margins.html.
TEST(MarginsReport, VaryDrawsEachMovedCellAtFivePoints) {
  const fs::path out = scratch_dir.path() / "vary";
  ASSERT_EQ(locksim("margins --algorithms redlock --vary drift-factor=0.01..0.03 --quiet "
                    "--jobs 2 --out " +
                    out.string())
                .exit_code,
            0);
  const auto j = nlohmann::json::parse(slurp(out / "margins.json"));
  EXPECT_EQ(j["cells"].size(), 11u);          // the table is unchanged
  ASSERT_EQ(j["vary"]["series"].size(), 3u);  // server-drift, server-drift-all, client-drift
  for (const auto& series : j["vary"]["series"]) {
    ASSERT_EQ(series["points"].size(), 5u);
    EXPECT_EQ(series["points"][0]["value"], "0.01");
    for (const auto& p : series["points"]) EXPECT_EQ(p["outcome"], "found") << p.dump();
  }
  const std::string html = slurp(out / "margins.html");
  EXPECT_NE(html.find("<svg"), std::string::npos);
  EXPECT_NE(html.find("How the margin moves with drift-factor"), std::string::npos);
}

TEST(MarginsReport, BadInputExitsTwoNamingTheFlag) {
  for (const auto& [args, flag] : std::vector<std::pair<std::string, std::string>>{
           {"margins --algorithms nope", "--algorithms"},
           {"margins --algorithms set-nx-lua --jobs 999", "--jobs"},
           {"margins --algorithms set-nx-lua --jobs -1", "--jobs"},
           {"margins --algorithms set-nx-lua --vary ttl=9s..3s", "--vary"},
           {"margins --algorithms set-nx-lua --vary nope=1s..2s", "--vary"},
           {"margins --algorithms set-nx-lua --vary drift-factor=0.01..0.02", "--vary"}}) {
    const Outcome o = locksim(args);
    EXPECT_EQ(o.exit_code, 2) << args << "\n" << o.err;
    EXPECT_EQ(locksim::testing::count_lines(o.err), 1u) << args << "\n" << o.err;
    EXPECT_NE(o.err.find(flag), std::string::npos) << args << "\n" << o.err;
    EXPECT_TRUE(o.out.empty()) << o.out;
  }
}

}  // namespace
