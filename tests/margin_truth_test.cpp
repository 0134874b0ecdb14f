// What `locksim margin` and `margins` say is true (QA report 2026-11-29,
// items 11-15): the edge is found to a stated resolution, not to the
// bisection's 1 % step; a drift is scanned below its bisected edge, since
// drift is not monotone; the theory's printed arithmetic evaluates to its
// value; sizes and leases are named as they are; a lock that WAITs for its
// replica is not held to crash - grant; cli.md's kind table lists exactly
// the algorithms the binary takes for each kind.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "algorithms/registry.h"
#include "env/parse.h"
#include "harness/margin/margin.h"
#include "harness/margin/margins.h"
#include "reports/margin_report.h"
#include "reports/margins_report.h"

namespace {

using locksim::Duration;
using locksim::harness::margin::Bisection;
using locksim::harness::margin::Kind;
using locksim::harness::margin::MarginResult;

MarginResult measure(const std::string& algorithm, Kind kind, uint64_t seed,
                     Duration hold = Duration::seconds(2)) {
  locksim::harness::margin::MarginRequest request;
  request.base.algorithm = algorithm;
  request.base.seed = seed;
  request.base.workload.hold_min = hold;
  request.base.workload.hold_max = hold;
  request.kind = kind;
  locksim::harness::margin::set_default_range(request);
  return locksim::harness::margin::measure_margin(request);
}

// Item 12: the edge is the adjacent pair 1 ms apart, not the 1 % bisection's
// 7.968 s / 8.046 s, and a theory inside that millisecond is said to agree.
TEST(MarginTruth, PauseEdgeIsFoundToOneMillisecondAndAgreesWithinIt) {
  const MarginResult m = measure("set-nx-lua", Kind::kPause, 1);
  ASSERT_EQ(m.outcome, Bisection::Outcome::kFound);
  EXPECT_EQ(m.resolution, Duration::millis(1).ns);
  EXPECT_EQ(m.above->size - m.below->size, Duration::millis(1).ns);
  EXPECT_EQ(m.theory, Duration::seconds(8).ns);
  EXPECT_TRUE(locksim::harness::margin::within_resolution(m))
      << "holds " << m.below->size << ", breaks " << m.above->size;
  EXPECT_LE(m.probes, 20);  // 2 ends, 15 halvings of 20 s, the fault-free run
  const std::string summary = locksim::reports::margin_summary(m);
  EXPECT_NE(
      summary.find("holds at " + locksim::harness::margin::format_size(m.kind, m.below->size) +
                   " and breaks at "),
      std::string::npos)
      << summary;
  EXPECT_NE(summary.find("to 1ms"), std::string::npos) << summary;
  EXPECT_NE(summary.find("within the search's 1ms resolution"), std::string::npos) << summary;
  const auto j = locksim::reports::margin_to_json(m);
  EXPECT_EQ(j["resolution_ns"], Duration::millis(1).ns);
  EXPECT_EQ(j["difference"]["within_resolution"], true);
}

// Item 13: seed 1's client drift breaks at 10412-10420 ppm, holds at
// 10421-10444 and breaks again from 10445: the scan below the bisected edge
// finds the lower island, and nothing from 9900 ppm to 10411 ppm breaks.
TEST(MarginTruth, DriftIsScannedBelowTheBisectedEdge) {
  const MarginResult m = measure("redlock", Kind::kClientDrift, 1);
  ASSERT_EQ(m.outcome, Bisection::Outcome::kFound);
  ASSERT_TRUE(m.scan.has_value());
  EXPECT_TRUE(m.scan->found_lower);
  EXPECT_GE(m.scan->bisected, 10'445);
  EXPECT_EQ(m.above->size, 10'412);
  EXPECT_EQ(m.below->size, 10'411);
  EXPECT_EQ(m.resolution, 1);
  EXPECT_LE(m.scan->runs, locksim::harness::margin::kDriftScanRunsMax);
  EXPECT_LE(m.probes, locksim::harness::margin::kRunsPerMarginMax);
  const std::string summary = locksim::reports::margin_summary(m);
  EXPECT_NE(summary.find("smaller drifts were not tried"), std::string::npos) << summary;
}

// Item 14: a slow clock is not printed as "+N ppm", and the formula's
// numbers evaluate to the value printed after it.
TEST(MarginTruth, ClientDriftReadsSlowAndItsFormulaEvaluatesToItsValue) {
  EXPECT_EQ(locksim::harness::margin::format_size(Kind::kClientDrift, 10'497), "10497ppm slow");
  const MarginResult m = measure("redlock", Kind::kClientDrift, 1);
  ASSERT_TRUE(m.theory.has_value()) << m.theory_formula;
  const std::string summary = locksim::reports::margin_summary(m);
  EXPECT_EQ(summary.find("+" + std::to_string(m.above->size) + "ppm"), std::string::npos)
      << summary;
  // "... = (1 - A s / B s) x 1e6, rounded up": ceil((1 - A / B) x 1e6).
  const std::string& f = m.theory_formula;
  const size_t open = f.rfind("(1 - ");
  ASSERT_NE(open, std::string::npos) << f;
  std::istringstream in(f.substr(open + 5));
  double a = 0, b = 0;
  char s1 = 0, slash = 0;
  in >> a >> s1 >> slash >> b;
  ASSERT_EQ(slash, '/') << f;
  EXPECT_EQ(static_cast<int64_t>(std::ceil((1.0 - a / b) * 1e6 - 1e-6)), *m.theory) << f;
}

// Item 14: Redisson's lease is a watchdog timeout, not a session with ticks.
TEST(MarginTruth, RedissonRowsNameTheWatchdogTimeout) {
  for (const std::string algorithm : {"redisson", "redisson-fenced", "redisson-fair"}) {
    const auto cells = locksim::harness::margin::plan_margins({algorithm}, 1);
    ASSERT_FALSE(cells.empty());
    EXPECT_EQ(cells.front().lease_note, "watchdog timeout 30s (the default)") << algorithm;
  }
  const MarginResult m = measure("redisson", Kind::kPause, 1);
  const std::string summary = locksim::reports::margin_summary(m);
  EXPECT_NE(summary.find("watchdog timeout 30s"), std::string::npos) << summary;
  EXPECT_EQ(summary.find("ttl 30s"), std::string::npos) << summary;
}

// Item 14: a sub-millisecond exposure reads in microseconds.
TEST(MarginTruth, ShortSpansReadInMicroseconds) {
  EXPECT_EQ(locksim::format_span(522'000), "522us");
  EXPECT_EQ(locksim::format_span(1'500), "1.5us");
  EXPECT_EQ(locksim::format_span(300), "300ns");
  EXPECT_EQ(locksim::format_span(8'046'000'000), "8.046s");
}

// Item 11: Redisson WAITs for its replica before it believes a grant, so a
// lag past the crash leaves no holder (the acquire ends unknown): theory is
// never, and the search agrees, instead of a silent 0.5 s theory.
TEST(MarginTruth, ARedissonGrantWaitsForItsReplicaSoFailoverLagNeverBreaksIt) {
  const MarginResult m = measure("redisson-leased", Kind::kFailoverLag, 1);
  EXPECT_EQ(m.outcome, Bisection::Outcome::kNeverBreaks);
  EXPECT_FALSE(m.theory.has_value());
  EXPECT_EQ(m.theory_formula.rfind("never: ", 0), 0u) << m.theory_formula;
  const MarginResult plain = measure("set-nx-lua", Kind::kFailoverLag, 1);
  EXPECT_EQ(plain.theory, Duration::millis(500).ns);
}

// Item 15: every row of cli.md's margin kind table names exactly the
// algorithms margin takes that kind for (kinds_for), no more, no fewer.
TEST(MarginTruth, CliMdKindTableListsWhatTheBinaryTakes) {
  std::ifstream in(std::string(LOCKSIM_SOURCE_DIR) + "/docs/reference/cli.md");
  ASSERT_TRUE(in.good());
  std::map<std::string, std::set<std::string>> documented;  // kind -> algorithms
  std::string line;
  bool in_table = false;
  while (std::getline(in, line)) {
    if (line.rfind("| kind | algorithms |", 0) == 0) in_table = true;
    if (!in_table) continue;
    if (line.rfind("|", 0) != 0) break;
    if (line.rfind("| `", 0) != 0) continue;
    const size_t kind_end = line.find('`', 3);
    const std::string kind = line.substr(3, kind_end - 3);
    const size_t cell = line.find("| ", kind_end) + 2;
    const std::string names = line.substr(cell, line.find(" |", cell) - cell);
    std::istringstream list(names);
    std::string name;
    while (std::getline(list, name, ',')) {
      name.erase(0, name.find_first_not_of(' '));
      documented[kind].insert(name);
    }
  }
  ASSERT_FALSE(documented.empty());
  std::map<std::string, std::set<std::string>> taken;
  for (const auto& spec : locksim::algorithms::all_algorithms()) {
    for (const Kind k : locksim::harness::margin::kinds_for(spec.name)) {
      taken[to_string(k)].insert(spec.name);
    }
  }
  EXPECT_EQ(documented, taken);
}

}  // namespace
