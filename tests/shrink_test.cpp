// `locksim shrink` (issue 22): the generic searches against planted answers,
// the config-level search against a fake run, the scenario writer's round
// trip, and the command itself on a real failing seed: the file it writes
// replays with the same finding, is 1-minimal in faults, comes out the same
// byte for byte twice, and bad input is one line with exit 2.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <string>
#include <tuple>
#include <vector>

#include "checkers/check.h"
#include "env/parse.h"
#include "faults/fault_schedule.h"
#include "harness/run.h"
#include "harness/scenario.h"
#include "harness/settings.h"
#include "harness/shrink/search.h"
#include "harness/shrink/shrink.h"
#include "tests/locksim_binary.h"

namespace {

namespace fs = std::filesystem;
namespace shrink = locksim::harness::shrink;

using locksim::Duration;
using locksim::harness::RunConfig;
using locksim::testing::locksim;
using locksim::testing::Outcome;
using locksim::testing::slurp;

const locksim::testing::ScratchDir scratch_dir("locksim_shrink_");

fs::path scratch() {
  return scratch_dir.path();
}

// --- 1. The generic searches --------------------------------------------------

bool contains_all(const std::vector<size_t>& subset, const std::vector<size_t>& needed) {
  return std::all_of(needed.begin(), needed.end(), [&](size_t i) {
    return std::find(subset.begin(), subset.end(), i) != subset.end();
  });
}

// Ten items of which two together cause the failure: ddmin keeps exactly
// those two, and no question it asks is about a subset it already had.
TEST(ShrinkSearch, DdminFindsThePlantedPair) {
  const std::vector<size_t> culprits = {2, 7};
  int asked = 0;
  const auto kept = shrink::ddmin(10, [&](const std::vector<size_t>& s) {
    ++asked;
    return contains_all(s, culprits);
  });
  EXPECT_EQ(kept, culprits);
  EXPECT_LE(asked, 40) << "ddmin is O(n^2) at worst and far less for two culprits";
}

// Either of two items alone fails: ddmin keeps one of them (1-minimal: a
// set of one whose removal, the empty set, passes).
TEST(ShrinkSearch, DdminKeepsOneOfTwoAlternatives) {
  const auto kept = shrink::ddmin(
      8, [](const std::vector<size_t>& s) { return contains_all(s, {3}) || contains_all(s, {5}); });
  ASSERT_EQ(kept.size(), 1u);
  EXPECT_TRUE(kept[0] == 3 || kept[0] == 5);
}

// A failure that needs no item at all is said in one question.
TEST(ShrinkSearch, DdminAsksAboutTheEmptySetFirst) {
  int asked = 0;
  const auto kept = shrink::ddmin(6, [&](const std::vector<size_t>&) {
    ++asked;
    return true;
  });
  EXPECT_TRUE(kept.empty());
  EXPECT_EQ(asked, 1);
}

// Three culprits among 20, and the result is 1-minimal by its own check:
// each single removal passes.
TEST(ShrinkSearch, DdminResultIsOneMinimal) {
  const std::vector<size_t> culprits = {0, 11, 19};
  auto fails = [&](const std::vector<size_t>& s) { return contains_all(s, culprits); };
  const auto kept = shrink::ddmin(20, fails);
  EXPECT_EQ(kept, culprits);
  for (size_t i = 0; i < kept.size(); ++i) {
    std::vector<size_t> less = kept;
    less.erase(less.begin() + static_cast<ptrdiff_t>(i));
    EXPECT_FALSE(fails(less));
  }
}

// A planted threshold: fails from 1234 ns up. On a grid of 1 it is found
// exactly; on a grid of 100 the first grid point above it; `hi` off the grid
// stays the last point.
TEST(ShrinkSearch, BisectionFindsThePlantedThreshold) {
  auto fails = [](int64_t v) { return v >= 1234; };
  EXPECT_EQ(shrink::smallest_failing(0, 5000, 1, fails), 1234);
  EXPECT_EQ(shrink::smallest_failing(0, 5000, 100, fails), 1300);
  EXPECT_EQ(shrink::smallest_failing(1000, 1250, 100, fails), 1250);  // the grid ends at hi
  EXPECT_EQ(shrink::smallest_failing(0, 1234, 1, fails), 1234);
  int asked = 0;
  const int64_t v = shrink::smallest_failing(100, 20'000, 100, [&](int64_t x) {
    ++asked;
    return x >= 5'100;
  });
  EXPECT_EQ(v, 5'100);
  EXPECT_LE(asked, 8) << "log2(199) questions";
  // The mirror image, for a later start: fails up to 777.
  EXPECT_EQ(shrink::largest_failing(0, 5000, 1, [](int64_t x) { return x <= 777; }), 777);
  EXPECT_EQ(shrink::largest_failing(50, 5000, 100, [](int64_t x) { return x <= 777; }), 700);
}

// --- 2. The config-level search, against a fake run ------------------------------

RunConfig fake_failing_config() {
  RunConfig c;
  c.seed = 9;
  c.duration = Duration::seconds(20);
  for (const char* f : {"pause c3 at 1s for 4s", "pause @holder at 2s for 12s",
                        "jump redis-1 at 3s +20s", "crash redis-1 at 4s for 1s"}) {
    c.faults.events.push_back(locksim::faults::parse_fault(f, "test"));
  }
  return c;
}

// Planted: the run fails when it has a pause of @holder of at least 3.2 s
// that starts by 6 s, a clock jump of at least 7 s, at least two clients and
// a run of at least 9 s.
bool planted_fails(const RunConfig& c) {
  bool pause = false, jump = false;
  for (const auto& e : c.faults.events) {
    pause |= e.kind == locksim::faults::FaultKind::kPause && e.node == "@holder" &&
             e.duration >= Duration::millis(3200) && e.at <= Duration::seconds(6);
    jump |= e.kind == locksim::faults::FaultKind::kJumpClock && e.jump >= Duration::seconds(7);
  }
  return pause && jump && c.workload.clients >= 2 && c.duration >= Duration::seconds(9);
}

std::vector<std::string> described(const RunConfig& c) {
  std::vector<std::string> out;
  for (const auto& e : c.faults.events) out.push_back(e.describe());
  return out;
}

TEST(ShrinkSearch, ShrinksAPlantedFailureToItsCause) {
  const RunConfig failing = fake_failing_config();
  ASSERT_TRUE(planted_fails(failing));
  int runs_seen = 0;
  shrink::Options o;
  o.on_run = [&](int runs, const RunConfig& smallest) {
    runs_seen = runs;
    EXPECT_TRUE(planted_fails(smallest)) << "the progress shows a failing config";
  };
  const shrink::Result r = shrink::shrink(failing, planted_fails, o);
  EXPECT_EQ(r.stopped, shrink::Stopped::kDone);
  EXPECT_TRUE(r.one_minimal);
  EXPECT_TRUE(planted_fails(r.smallest));
  EXPECT_EQ(described(r.smallest), (std::vector<std::string>{"pause @holder at 6s for 3200ms",
                                                             "jump redis-1 at 8900ms +7s"}))
      << "each fault as late as it still fails: the pause by 6 s, the jump anywhere";
  EXPECT_EQ(r.smallest.workload.clients, 2);
  EXPECT_EQ(r.smallest.duration, Duration::seconds(9));
  EXPECT_EQ(r.smallest.workload.hold_min, r.smallest.workload.hold_max) << "narrower holds";
  EXPECT_EQ(r.smallest.seed, failing.seed);
  EXPECT_EQ(r.runs, runs_seen);
  EXPECT_LE(r.runs, 300);
  // Deterministic: the same input and answers, the same result.
  const shrink::Result again = shrink::shrink(failing, planted_fails, o);
  EXPECT_EQ(locksim::harness::settings_to_json(again.smallest),
            locksim::harness::settings_to_json(r.smallest));
  EXPECT_EQ(again.runs, r.runs);
}

// A bound reached, or a stop requested, ends the search with a config that
// failed (the input, at worst) and says why it stopped.
TEST(ShrinkSearch, StopsAtTheBoundWithTheSmallestSoFar) {
  const RunConfig failing = fake_failing_config();
  shrink::Options o;
  o.runs_max = 3;
  const shrink::Result r = shrink::shrink(failing, planted_fails, o);
  EXPECT_EQ(r.stopped, shrink::Stopped::kRunsMax);
  EXPECT_EQ(r.runs, 3);
  EXPECT_FALSE(r.one_minimal);
  EXPECT_TRUE(planted_fails(r.smallest));
  EXPECT_LE(r.smallest.faults.events.size(), failing.faults.events.size());

  std::atomic<bool> stop{true};
  shrink::Options stopped;
  stopped.stop = &stop;
  const shrink::Result none = shrink::shrink(failing, planted_fails, stopped);
  EXPECT_EQ(none.stopped, shrink::Stopped::kInterrupted);
  EXPECT_EQ(none.runs, 0);
  EXPECT_EQ(described(none.smallest), described(failing));
}

// --- 3. The finding kept, and the profile's faults made explicit ------------------

locksim::checkers::Check invalid(locksim::checkers::Kind kind) {
  return locksim::checkers::check_of("x", locksim::checkers::Validity::kInvalid, kind, "why", true);
}

TEST(ShrinkFinding, SafetyConsequenceAndLivenessAreKeptApart) {
  using locksim::checkers::Kind;
  const std::vector<locksim::checkers::Check> safety = {invalid(Kind::kSafety)};
  const std::vector<locksim::checkers::Check> data = {invalid(Kind::kConsequence)};
  const std::vector<locksim::checkers::Check> stuck = {invalid(Kind::kLiveness)};
  const std::vector<locksim::checkers::Check> both = {invalid(Kind::kLiveness),
                                                      invalid(Kind::kSafety)};
  const std::vector<locksim::checkers::Check> damage = {invalid(Kind::kSafety),
                                                        invalid(Kind::kConsequence)};
  EXPECT_EQ(shrink::finding_of(safety), shrink::Finding::kSafety);
  EXPECT_EQ(shrink::finding_of(data), shrink::Finding::kConsequence);
  EXPECT_EQ(shrink::finding_of(stuck), shrink::Finding::kLiveness);
  EXPECT_EQ(shrink::finding_of(both), shrink::Finding::kSafety);
  EXPECT_EQ(shrink::finding_of(damage), shrink::Finding::kConsequence)
      << "a run that damaged its data is about its data";
  EXPECT_EQ(shrink::finding_of({}), shrink::Finding::kNone);
  EXPECT_TRUE(shrink::keeps_finding(shrink::Finding::kSafety, both));
  EXPECT_FALSE(shrink::keeps_finding(shrink::Finding::kSafety, data));
  EXPECT_FALSE(shrink::keeps_finding(shrink::Finding::kConsequence, safety));
  EXPECT_TRUE(shrink::keeps_finding(shrink::Finding::kLiveness, stuck));
  EXPECT_FALSE(shrink::keeps_finding(shrink::Finding::kLiveness, both))
      << "a run with both replays as a violation, not as the liveness it was shrunk from";
}

// The drawn faults become explicit faults after the config's own, targets
// as drawn (@holder stays @holder), and the run is the same run.
TEST(ShrinkFinding, MaterializedProfileFaultsReplayTheSameRun) {
  RunConfig c;
  c.algorithm = "set-nx-lua";
  c.profile = "pause";
  c.seed = 1;
  c.faults.events.push_back(locksim::faults::parse_fault("jump c5 at 1s +1ms", "test"));
  const auto original = locksim::harness::simulate_and_check(c);
  ASSERT_FALSE(original.result.profile_faults.events.empty());
  const RunConfig explicit_faults = shrink::materialized(locksim::harness::prepare_run(c).config(),
                                                         original.result.profile_faults);
  EXPECT_TRUE(explicit_faults.profile.empty());
  ASSERT_EQ(explicit_faults.faults.events.size(), 1 + original.result.profile_faults.events.size());
  EXPECT_EQ(explicit_faults.faults.events[0].describe(), "jump c5 at 1s +1ms");
  for (const auto& e : explicit_faults.faults.events) {
    EXPECT_EQ(locksim::faults::parse_fault(e.describe(), "test").describe(), e.describe())
        << "each fault reads back as written";
  }
  const auto replay = locksim::harness::simulate_and_check(explicit_faults);
  EXPECT_EQ(replay.result.events, original.result.events);
  EXPECT_EQ(replay.result.client_ops, original.result.client_ops);
  EXPECT_EQ(std::string(locksim::checkers::finding(replay.result.checks)),
            locksim::checkers::finding(original.result.checks));
}

// --- 4. The scenario writer -------------------------------------------------------

// Every shipped scenario, written back, reads as the same config.
TEST(ShrinkScenarioFile, RoundTripsEveryShippedScenario) {
  for (const auto& b : locksim::harness::builtin_scenario_texts()) {
    SCOPED_TRACE(b.name);
    const auto sc = locksim::harness::parse_scenario(b.json, b.name);
    const std::string text = locksim::harness::scenario_file_text(sc);
    const auto back = locksim::harness::parse_scenario(text, "written");
    EXPECT_EQ(locksim::harness::settings_to_json(back.config),
              locksim::harness::settings_to_json(sc.config));
    EXPECT_EQ(back.name, sc.name);
    EXPECT_EQ(back.description, sc.description);
    EXPECT_EQ(back.expect, sc.expect);
    EXPECT_EQ(locksim::harness::scenario_file_text(back), text);
  }
}

// --- 5. The command on a real failing run ----------------------------------------------

// set-nx-lua under the pause profile, seed 1: a holder paused past its TTL
// (two drawn pauses; docs/cli.md shows this very shrink).
const char* const kFailingRun = "--algorithm set-nx-lua --profile pause --seed 1";

// The shrunk scenario: replays through `locksim run --scenario` with the same
// finding, has no more faults than the profile drew, and is 1-minimal: each
// fault removed, the run no longer fails.
TEST(ShrinkCommand, ShrunkScenarioReplaysAndIsOneMinimal) {
  const fs::path out = scratch() / "shrunk.json";
  const Outcome o = locksim(std::string("shrink ") + kFailingRun + " --out " + out.string());
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(
      o.out.find("kept its safety finding and its cause, pause-outlasted-lease: faults 2 -> "),
      std::string::npos)
      << o.out;
  EXPECT_NE(o.out.find("replay: locksim run --scenario " + out.string()), std::string::npos);

  const Outcome replay = locksim("run --scenario " + out.string());
  EXPECT_EQ(replay.exit_code, 1) << replay.out;
  EXPECT_NE(replay.out.find("expected violation, found violation"), std::string::npos)
      << replay.out;

  const auto sc = locksim::harness::parse_scenario(slurp(out), out.string());
  EXPECT_EQ(sc.expect, locksim::harness::Scenario::Expect::kViolation);
  EXPECT_NE(sc.description.find("made explicit"), std::string::npos) << sc.description;
  EXPECT_NE(sc.description.find("1-minimal"), std::string::npos) << sc.description;
  const auto& faults = sc.config.faults.events;
  ASSERT_GE(faults.size(), 1u);
  EXPECT_LE(faults.size(), 2u);
  EXPECT_TRUE(sc.config.profile.empty());
  EXPECT_LE(sc.config.workload.clients, 5);
  for (size_t i = 0; i < faults.size(); ++i) {
    RunConfig less = sc.config;
    less.faults.events.erase(less.faults.events.begin() + static_cast<ptrdiff_t>(i));
    const auto r = locksim::harness::simulate_and_check(less);
    EXPECT_FALSE(shrink::keeps_finding(shrink::Finding::kSafety, r.result.checks))
        << "without " << faults[i].describe() << " the run still fails: not 1-minimal";
  }
}

// The same input twice: the same bytes (no wall time in the file); on
// stdout when no --out is given, the report then on stderr.
TEST(ShrinkCommand, SameInputSameBytes) {
  const fs::path out = scratch() / "once.json";
  const Outcome first = locksim(std::string("shrink ") + kFailingRun + " --out " + out.string());
  ASSERT_EQ(first.exit_code, 0) << first.err;
  const Outcome second = locksim(std::string("shrink ") + kFailingRun);
  ASSERT_EQ(second.exit_code, 0) << second.err;
  EXPECT_EQ(second.out, slurp(out));
  EXPECT_NE(second.err.find("kept its safety finding"), std::string::npos) << second.err;
}

// --max-runs ends the search early and still writes a failing scenario.
TEST(ShrinkCommand, MaxRunsWritesTheSmallestSoFar) {
  const fs::path out = scratch() / "bounded.json";
  const Outcome o =
      locksim(std::string("shrink ") + kFailingRun + " --max-runs 2 --out " + out.string());
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.out.find("in 2 candidate runs"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("stopped at --max-runs 2"), std::string::npos) << o.out;
  const Outcome replay = locksim("run --quiet --scenario " + out.string());
  EXPECT_EQ(replay.exit_code, 1);
  EXPECT_NE(slurp(out).find("stopped at --max-runs 2"), std::string::npos);
}

// A sweep cell's first failing seed, read from the sweep's own files.
TEST(ShrinkCommand, ShrinksASweepCell) {
  const fs::path sweep = scratch() / "sweep";
  const Outcome s = locksim(
      "sweep --algorithms set-nx-lua --profiles none,pause --seeds 1..2 "
      "--jobs 1 --quiet --out " +
      sweep.string());
  ASSERT_EQ(s.exit_code, 0) << s.err;
  const fs::path out = scratch() / "cell.json";
  const Outcome o = locksim("shrink --sweep " + sweep.string() + " --cell set-nx-lua/pause --out " +
                            out.string());
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.out.find("--cell set-nx-lua/pause (seed 1)"), std::string::npos) << o.out;
  EXPECT_EQ(locksim("run --quiet --scenario " + out.string()).exit_code, 1);

  // The cell with no failing seed, and a cell the sweep does not have.
  auto bad = [](const Outcome& b, const std::string& mention) {
    EXPECT_EQ(b.exit_code, 2) << b.out << b.err;
    EXPECT_EQ(locksim::testing::count_lines(b.err), 1u) << b.err;
    EXPECT_NE(b.err.find(mention), std::string::npos) << b.err;
    EXPECT_TRUE(b.out.empty()) << b.out;
  };
  bad(locksim("shrink --sweep " + sweep.string() + " --cell set-nx-lua/none"),
      "--cell set-nx-lua/none: no failing seed in ");
  bad(locksim("shrink --sweep " + sweep.string() + " --cell redlock/pause"),
      "--cell: no cell 'redlock/pause' in ");
  bad(locksim("shrink --sweep " + sweep.string() + " --cell set-nx-lua"),
      "--cell: expected ALGORITHM/PROFILE");
  bad(locksim("shrink --sweep " + sweep.string() + " --cell set-nx-lua/pause --seed 3"),
      "--seed: cannot be combined with --sweep");
}

// Bad input: one line on stderr naming the problem, exit 2, nothing on stdout.
TEST(ShrinkCommand, BadInputIsOneLine) {
  auto bad = [](const std::string& args, const std::string& mention) {
    const Outcome o = locksim(args);
    EXPECT_EQ(o.exit_code, 2) << args << "\n" << o.out << o.err;
    EXPECT_EQ(locksim::testing::count_lines(o.err), 1u) << args << "\n" << o.err;
    EXPECT_NE(o.err.find(mention), std::string::npos) << args << "\n" << o.err;
    EXPECT_TRUE(o.out.empty()) << args << "\n" << o.out;
  };
  bad("shrink --algorithm set-nx-lua --seed 3 --duration 10s",
      "locksim: --seed 3: run shows no finding to shrink (verdict: valid)");
  bad("shrink --scenario set-nx-lua-restart-fsync-always",
      "--scenario set-nx-lua-restart-fsync-always (seed 1): run shows no finding to shrink");
  const fs::path broken = scratch() / "broken.json";
  std::ofstream(broken) << "{\"algorithm\": \"set-nx-lua\", \"duration\": 5}";
  bad("shrink --scenario " + broken.string(), broken.string() + ": duration: expected");
  bad("shrink --scenario no-such-scenario", "--scenario: expected a shipped scenario name");
  bad("shrink --sweep " + (scratch() / "nowhere").string() + " --cell set-nx-lua/pause",
      "--sweep: no ");
  bad("shrink --cell set-nx-lua/pause", "--cell: needs --sweep DIR");
  bad(std::string("shrink ") + kFailingRun + " --max-runs -1", "--max-runs: expected 0..100000");
  bad(std::string("shrink ") + kFailingRun + " --out " + scratch().string(),
      "--out: expected a file to write, got the directory");
}

// `sweep --shrink`: every cell with a counterexample gets a shrunk scenario
// that replays with a finding, the reports link it, and a second sweep writes
// the same files byte for byte.
// Fewer servers where the algorithm allows: Redlock keeps its finding with
// three masters instead of five, ZooKeeper's with one server instead of
// three; the file says so and replays.
TEST(ShrinkCommand, ShrinksTheServersTheFindingDoesNotNeed) {
  for (const auto& [scenario, key, servers] :
       {std::tuple{"redlock-gc-pause", "\"masters\": 3", "servers 5 -> 3"},
        std::tuple{"zk-recipe-gc-pause", "\"servers\": 1", "servers 3 -> 1"}}) {
    const fs::path out = scratch() / (std::string(scenario) + "-small.json");
    const Outcome o =
        locksim(std::string("shrink --scenario ") + scenario + " --out " + out.string());
    ASSERT_EQ(o.exit_code, 0) << o.err;
    EXPECT_NE(o.out.find(servers), std::string::npos) << o.out;
    EXPECT_NE(slurp(out).find(key), std::string::npos) << slurp(out);
    EXPECT_EQ(locksim("run --quiet --scenario " + out.string()).exit_code, 1) << scenario;
  }
  // A failover needs its replica: the shrunk scenario keeps it.
  const fs::path out = scratch() / "failover-small.json";
  ASSERT_EQ(locksim("shrink --scenario set-nx-lua-failover --out " + out.string()).exit_code, 0);
  EXPECT_NE(slurp(out).find("\"replicas\": 1"), std::string::npos) << slurp(out);
}

TEST(ShrinkCommand, SweepShrinksEachCounterexampleAndLinksIt) {
  std::string first_md;
  for (const char* name : {"sweep_shrink_a", "sweep_shrink_b"}) {
    const fs::path dir = scratch() / name;
    const Outcome o = locksim(
        "sweep --quiet --shrink --algorithms set-nx-lua,redlock --profiles none,pause --seeds 1..3 "
        "--out " +
        dir.string());
    ASSERT_EQ(o.exit_code, 0) << o.out << o.err;
    const std::string md = slurp(dir / "matrix.md");
    const std::string html = slurp(dir / "matrix.html");
    int linked = 0;
    for (const auto& entry : fs::directory_iterator(dir / "shrunk")) {
      const std::string file = "shrunk/" + entry.path().filename().string();
      EXPECT_NE(md.find("](" + file + ")"), std::string::npos) << file << "\n" << md;
      if (entry.path().extension() == ".txt") {
        // Its story (locksim explain): linked from matrix.md, shown in matrix.html.
        const std::string story = slurp(entry.path());
        EXPECT_NE(md.find("why: [pause-outlasted-lease](" + file + ")"), std::string::npos) << md;
        EXPECT_NE(story.find("mechanism: pause-outlasted-lease"), std::string::npos) << story;
        EXPECT_NE(html.find("<pre class=\"story\">explain: two holders"), std::string::npos);
        continue;
      }
      EXPECT_NE(html.find("href=\"" + file + "\""), std::string::npos) << file;
      EXPECT_EQ(locksim("run --quiet --scenario " + entry.path().string()).exit_code, 1) << file;
      ++linked;
    }
    EXPECT_EQ(linked, 2) << md;  // set-nx-lua x pause and redlock x pause break within 3 seeds
    const std::string shrunk_md = md.substr(md.find("## First counterexample"));
    if (first_md.empty()) {
      first_md = shrunk_md;
    } else {
      EXPECT_EQ(shrunk_md, first_md);
    }
  }
}

}  // namespace
