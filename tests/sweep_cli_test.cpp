// `locksim sweep` and `locksim merge` as CI uses them: the report does not
// depend on threads, shards or interruptions; the gate names what broke;
// bad input is exit 2 naming the field; the HTML renders in a browser.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "tests/locksim_binary.h"

namespace {

namespace fs = std::filesystem;
using locksim::testing::locksim;
using locksim::testing::Outcome;
using locksim::testing::slurp;

const char* kSmall =
    "--algorithms set-nx-lua,naive-setnx --profiles none,pause,crash-restart "
    "--seeds 1..6 --duration 10s --quiet";
// Enough runs (240) and long enough ones (about 1 s in all at --jobs 1, not
// 0.3 s at 20 s each) that a kill sent after 30 or 40 of them lands halfway
// even when the polling shell is slow on a busy machine, not after the end.
const char* kLonger =
    "--algorithms set-nx-lua,naive-setnx --profiles none,pause,crash-restart "
    "--seeds 1..40 --duration 120s --quiet";
const char* kReportFiles[] = {"matrix.json", "matrix.md", "matrix.html", "junit.xml"};

fs::path scratch(const std::string& name) {
  const fs::path p =
      fs::temp_directory_path() / ("locksim_sweep_" + std::to_string(::getpid()) + "_" + name);
  fs::remove_all(p);
  return p;
}

int shell(const std::string& cmd) {
  const int status = std::system(cmd.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

void expect_same_reports(const fs::path& a, const fs::path& b) {
  for (const char* f : kReportFiles) {
    ASSERT_TRUE(fs::exists(a / f)) << a / f;
    EXPECT_EQ(slurp(a / f), slurp(b / f)) << f << " differs between " << a << " and " << b;
  }
}

size_t lines_of(const fs::path& p) {
  const std::string s = slurp(p);
  return static_cast<size_t>(std::count(s.begin(), s.end(), '\n'));
}

// `--histories` keeps every run's history, byte for byte what `locksim run
// --out` writes for the same run: what compares two builds run by run.
TEST(SweepCli, HistoriesAreWhatRunWritesForTheSameRun) {
  const fs::path dir = scratch("hist"), single = scratch("hist_run");
  ASSERT_EQ(locksim(std::string("sweep ") + kSmall + " --jobs 2 --histories --out " + dir.string())
                .exit_code,
            0);
  size_t kept = 0;
  for (const auto& e : fs::recursive_directory_iterator(dir / "histories")) {
    if (e.path().extension() == ".jsonl") ++kept;
    EXPECT_NE(e.path().extension(), ".tmp") << e.path();
  }
  EXPECT_EQ(kept, 36u);  // 2 algorithms x 3 profiles x 6 seeds
  // The run's own replay command, as the sweep wrote it (the drawn workload
  // with it): what a user pastes to see the run again.
  std::string replay;
  std::istringstream runs(slurp(dir / "runs.jsonl"));
  for (std::string line; std::getline(runs, line);) {
    const nlohmann::json j = nlohmann::json::parse(line);
    if (j["algorithm"] == "naive-setnx" && j["profile"] == "crash-restart" && j["seed"] == 4) {
      replay = j["replay"].get<std::string>();
    }
  }
  ASSERT_EQ(replay.rfind("locksim run ", 0), 0u) << replay;
  const Outcome run =
      locksim(replay.substr(std::string("locksim ").size()) + " --quiet --out " + single.string());
  ASSERT_TRUE(run.exit_code == 0 || run.exit_code == 1) << run.err;
  EXPECT_EQ(slurp(dir / "histories" / "naive-setnx" / "crash-restart" / "4.jsonl"),
            slurp(single / "history.jsonl"));
  fs::remove_all(dir);
  fs::remove_all(single);
}

TEST(SweepCli, JobsOneAndTwoGiveTheSameReport) {
  const fs::path one = scratch("j1"), two = scratch("j2");
  EXPECT_EQ(locksim(std::string("sweep ") + kSmall + " --jobs 1 --out " + one.string()).exit_code,
            0);
  EXPECT_EQ(locksim(std::string("sweep ") + kSmall + " --jobs 2 --out " + two.string()).exit_code,
            0);
  expect_same_reports(one, two);
  EXPECT_EQ(lines_of(one / "runs.jsonl"), 36u);
  const std::string md = slurp(one / "matrix.md");
  EXPECT_NE(md.find("Runs: 36 runs."), std::string::npos) << md;
  fs::remove_all(one);
  fs::remove_all(two);
}

// The shards run as separate processes under GNU parallel, as a CI matrix or
// a batch system would run them, then merge into the unsharded report.
TEST(SweepCli, ShardsMergedWithGnuParallelEqualUnsharded) {
  if (shell("command -v parallel >/dev/null 2>&1") != 0) {
    if (std::getenv("CI") != nullptr) FAIL() << "GNU parallel missing (scripts/setup installs it)";
    GTEST_SKIP() << "GNU parallel not installed";
  }
  const fs::path whole = scratch("whole"), shards = scratch("shards"), merged = scratch("merged");
  ASSERT_EQ(locksim(std::string("sweep ") + kSmall + " --jobs 1 --out " + whole.string()).exit_code,
            0);
  const std::string cmd = "parallel --will-cite --halt now,fail=1 -j 3 " +
                          std::string(LOCKSIM_BINARY) + " sweep " + kSmall +
                          " --jobs 1 --shard {}/3 --out " + shards.string() + "/s{} ::: 1 2 3";
  ASSERT_EQ(shell(cmd), 0) << cmd;
  const Outcome m = locksim("merge --out " + merged.string() + " " + (shards / "s1").string() +
                            " " + (shards / "s2").string() + " " + (shards / "s3").string());
  ASSERT_EQ(m.exit_code, 0) << m.err;
  expect_same_reports(whole, merged);
  fs::remove_all(whole);
  fs::remove_all(shards);
  fs::remove_all(merged);
}

// A sweep killed with SIGKILL halfway (no chance to clean up) and resumed
// gives the report an uninterrupted sweep gives.
TEST(SweepCli, KilledThenResumedEqualsUninterrupted) {
  const fs::path whole = scratch("uninterrupted"), killed = scratch("killed");
  ASSERT_EQ(
      locksim(std::string("sweep ") + kLonger + " --jobs 2 --out " + whole.string()).exit_code, 0);
  const std::string runs = (killed / "runs.jsonl").string();
  const std::string cmd = std::string(LOCKSIM_BINARY) + " sweep " + kLonger + " --jobs 1 --out " +
                          killed.string() + " & pid=$!; while [ \"$(cat " + runs +
                          " 2>/dev/null | wc -l)\" -lt 40 ]; do sleep 0.02; done; kill -9 $pid; "
                          "wait $pid; exit 0";
  ASSERT_EQ(shell(cmd), 0);
  const size_t before = lines_of(killed / "runs.jsonl");
  EXPECT_GE(before, 40u);
  EXPECT_LT(before, 240u) << "the kill came too late to test anything";
  const Outcome r =
      locksim(std::string("sweep ") + kLonger + " --jobs 2 --resume --out " + killed.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(lines_of(killed / "runs.jsonl"), 240u) << "only the missing runs were done";
  expect_same_reports(whole, killed);
  fs::remove_all(whole);
  fs::remove_all(killed);
}

TEST(SweepCli, SigintWritesTheReportOfWhatIsDone) {
  const fs::path dir = scratch("sigint");
  const std::string runs = (dir / "runs.jsonl").string();
  const std::string cmd = std::string(LOCKSIM_BINARY) + " sweep " + kLonger + " --jobs 1 --out " +
                          dir.string() + " & pid=$!; while [ \"$(cat " + runs +
                          " 2>/dev/null | wc -l)\" -lt 30 ]; do sleep 0.02; done; kill -INT $pid; "
                          "wait $pid; exit $?";
  EXPECT_EQ(shell(cmd), 130);
  const std::string md = slurp(dir / "matrix.md");
  ASSERT_FALSE(md.empty()) << "the report of the finished runs is written";
  EXPECT_NE(md.find(" of 240 runs (INCOMPLETE: "), std::string::npos) << md;
  EXPECT_EQ(locksim(std::string("sweep ") + kLonger + " --resume --out " + dir.string()).exit_code,
            0);
  EXPECT_NE(slurp(dir / "matrix.md").find("Runs: 240 runs."), std::string::npos);
  fs::remove_all(dir);
}

void expect_bad_input(const std::string& args, const std::string& must_mention) {
  const Outcome o = locksim(args);
  EXPECT_EQ(o.exit_code, 2) << args << "\nstderr: " << o.err;
  EXPECT_EQ(locksim::testing::count_lines(o.err), 1u) << o.err;
  EXPECT_NE(o.err.find(must_mention), std::string::npos) << args << "\nstderr: " << o.err;
}

fs::path write_expectations(const std::string& name, const std::string& cells) {
  const fs::path p = scratch(name + ".json");
  std::ofstream(p) << "{\"locksim_expectations\": 1, \"cells\": [" << cells << "]}";
  return p;
}

TEST(SweepCli, BadInputExits2NamingTheField) {
  const std::string out = " --out " + scratch("bad").string();
  expect_bad_input("sweep --profiles pause,paws" + out, "--profiles");
  expect_bad_input("sweep --algorithms set-nx-lua,paxos" + out, "--algorithms");
  expect_bad_input("sweep --shard 3/2" + out, "--shard");
  expect_bad_input("sweep --seeds 9..1" + out, "--seeds");
  const fs::path cell = write_expectations(
      "badcell", "{\"algorithm\": \"paxos\", \"profile\": \"none\", \"verdict\": \"safe\"}");
  expect_bad_input("sweep --expect " + cell.string() + out, "cells[0].algorithm");
  const fs::path verdict = write_expectations(
      "badverdict", "{\"algorithm\": \"redlock\", \"profile\": \"none\", \"verdict\": \"fine\"}");
  expect_bad_input("sweep --expect " + verdict.string() + out, "cells[0].verdict");
  const fs::path profile = write_expectations(
      "badprofile", "{\"algorithm\": \"redlock\", \"profile\": \"storm\", \"verdict\": \"safe\"}");
  expect_bad_input("sweep --expect " + profile.string() + out, "cells[0].profile");
  fs::remove(cell);
  fs::remove(verdict);
  fs::remove(profile);
}

// Both ways a gate can break, each named with the cell and a replay command;
// a holding gate exits 0 and junit.xml fails exactly the broken cells.
TEST(SweepCli, GateNamesFalseAlarmsAndLostDetections) {
  const fs::path dir = scratch("gate");
  const fs::path wrong = write_expectations(
      "wrong",
      "{\"algorithm\": \"set-nx-lua\", \"profile\": \"pause\", \"verdict\": \"safe\"},"
      "{\"algorithm\": \"set-nx-lua\", \"profile\": \"none\", \"verdict\": \"violation\", "
      "\"seeds_within\": 6}");
  const Outcome o = locksim(
      "sweep --algorithms set-nx-lua --profiles none,pause --seeds 1..6 --duration 20s --quiet "
      "--expect " +
      wrong.string() + " --out " + dir.string());
  EXPECT_EQ(o.exit_code, 1) << o.err;
  EXPECT_NE(o.out.find("false alarm: set-nx-lua × pause"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("locksim run --algorithm set-nx-lua"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("lost detection: set-nx-lua × none"), std::string::npos) << o.out;
  const std::string junit = slurp(dir / "junit.xml");
  EXPECT_NE(junit.find("failures=\"2\""), std::string::npos) << junit;
  const fs::path right = write_expectations(
      "right",
      "{\"algorithm\": \"set-nx-lua\", \"profile\": \"pause\", \"verdict\": \"violation\", "
      "\"seeds_within\": 6},"
      "{\"algorithm\": \"set-nx-lua\", \"profile\": \"none\", \"verdict\": \"safe\"}");
  const Outcome ok = locksim(
      "sweep --algorithms set-nx-lua --profiles none,pause --seeds 1..6 --duration 20s --quiet "
      "--expect " +
      right.string() + " --out " + dir.string());
  EXPECT_EQ(ok.exit_code, 0) << ok.out << ok.err;
  EXPECT_NE(slurp(dir / "junit.xml").find("failures=\"0\""), std::string::npos);
  fs::remove_all(dir);
  fs::remove(wrong);
  fs::remove(right);
}

// The page renders in a real browser (headless Chromium) and the DOM holds
// the first counterexample: its lanes, its held bars and the overlap in red.
TEST(SweepCli, HtmlRendersInHeadlessChromium) {
  const char* browser = nullptr;
  for (const char* b : {"chromium", "chromium-browser"}) {
    if (shell(std::string("command -v ") + b + " >/dev/null 2>&1") == 0) {
      browser = b;
      break;
    }
  }
  if (browser == nullptr) {
    if (std::getenv("CI") != nullptr) FAIL() << "chromium missing (scripts/setup installs it)";
    GTEST_SKIP() << "chromium not installed";
  }
  const fs::path dir = scratch("html");
  ASSERT_EQ(locksim("sweep --algorithms set-nx-lua --profiles pause --seeds 1..4 --duration 20s "
                    "--quiet --out " +
                    dir.string())
                .exit_code,
            0);
  const fs::path dom = dir / "dom.html";
  const std::string cmd = std::string(browser) +
                          " --headless --no-sandbox --disable-gpu --disable-dev-shm-usage "
                          "--user-data-dir=" +
                          (dir / "profile").string() + " --dump-dom file://" +
                          (dir / "matrix.html").string() + " >" + dom.string() + " 2>/dev/null";
  ASSERT_EQ(shell(cmd), 0) << cmd;
  const std::string d = slurp(dom);
  EXPECT_NE(d.find("<table class=\"matrix\">"), std::string::npos) << d.substr(0, 500);
  EXPECT_NE(d.find("id=\"cx-set-nx-lua-pause\""), std::string::npos);
  EXPECT_NE(d.find("<svg"), std::string::npos);
  EXPECT_NE(d.find("data-lane=\"c1\""), std::string::npos);
  EXPECT_NE(d.find("class=\"held\""), std::string::npos);
  EXPECT_NE(d.find("class=\"overlap\""), std::string::npos);
  EXPECT_NE(d.find("class=\"fault\""), std::string::npos);
  EXPECT_NE(d.find("href=\"#cx-set-nx-lua-pause\""), std::string::npos);
  fs::remove_all(dir);
}

// The fenced lock's runs guard a counter whose store checks the token on
// reads and writes (its sweep settings), so the gate can judge the data: a
// pause breaks the lock but not the data; a crash-restart without fsync loses
// the token counter and with it an increment.
TEST(SweepCli, TheFencedLockGuardsACounterAndTheGateJudgesItsData) {
  const fs::path dir = scratch("data");
  const fs::path expectations = write_expectations(
      "data",
      "{\"algorithm\": \"set-nx-lua-fenced\", \"profile\": \"pause\", \"verdict\": "
      "\"violation\", \"seeds_within\": 10, \"data\": \"safe\"},"
      "{\"algorithm\": \"set-nx-lua-fenced\", \"profile\": \"crash-restart\", \"verdict\": "
      "\"any\", \"data\": \"violation\", \"data_seeds_within\": 10}");
  const Outcome o = locksim(
      "sweep --algorithms set-nx-lua-fenced --profiles pause,crash-restart --seeds 1..10 "
      "--duration 20s --quiet --expect " +
      expectations.string() + " --out " + dir.string());
  EXPECT_EQ(o.exit_code, 0) << o.out << o.err;
  const std::string md = slurp(dir / "matrix.md");
  EXPECT_NE(md.find("data ok ✓"), std::string::npos) << md;
  EXPECT_NE(md.find("data ✗"), std::string::npos) << md;
  EXPECT_NE(md.find("(data): `locksim run --algorithm set-nx-lua-fenced"), std::string::npos);
  EXPECT_NE(md.find("--workload counter --fencing read-write-check"), std::string::npos)
      << "the replay carries the resource the sweep gave the run";
  fs::remove_all(dir);
  fs::remove(expectations);
}

// A shard holding none of a cell's seeds (2 seeds in 5 shards) held a
// "safe" expectation on no runs, while another shard held its violation.
TEST(SweepCli, ACellWithNoRunsIsNotJudged) {
  const fs::path dir = scratch("empty_shard"), expectations = scratch("safe.json");
  std::ofstream(expectations)
      << R"({"locksim_expectations": 1, "cells": [)"
      << R"({"algorithm": "set-nx-lua", "profile": "pause", "verdict": "safe"}]})";
  const std::string sweep =
      "sweep --algorithms set-nx-lua --profiles pause --seeds 1..2 --expect " +
      expectations.string() + " --out " + dir.string();
  const Outcome o = locksim(sweep + " --shard 3/5");
  EXPECT_EQ(o.exit_code, 0) << "a shard is a part by request: " << o.out << o.err;
  EXPECT_NE(o.out.find("gate: holds: 0 of 0 judged cells"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("not judged (1): set-nx-lua × pause (none of its 2 seeds ran)"),
            std::string::npos)
      << o.out;
  EXPECT_NE(slurp(dir / "matrix.md").find("| safe | not judged |"), std::string::npos)
      << slurp(dir / "matrix.md");
  fs::remove_all(dir);
  fs::remove(expectations);
}

TEST(SweepCli, RunHtmlDrawsOneRunsTimeline) {
  const fs::path page = scratch("run.html");
  const Outcome o = locksim("run --seed 5 --ttl 1s --hold 2s..3s --quiet --html " + page.string());
  EXPECT_EQ(o.exit_code, 1) << o.err;
  const std::string html = slurp(page);
  EXPECT_NE(html.find("<svg"), std::string::npos);
  EXPECT_NE(html.find("class=\"overlap\""), std::string::npos);
  EXPECT_NE(html.find("replay: <code>locksim run"), std::string::npos);
  fs::remove(page);
}

// A gate cannot hold on half a sweep: a merge missing a shard says so on
// every output and exits 4, unless --partial asks for the part.
TEST(SweepCli, AMergeMissingAShardCannotPassTheGate) {
  const fs::path shards = scratch("half"), merged = scratch("half_merged");
  const std::string expect =
      std::string(" --expect ") + LOCKSIM_SOURCE_DIR + "/expectations/reference.json ";
  ASSERT_EQ(locksim(std::string("sweep ") + kSmall + " --shard 1/2" + expect + "--out " +
                    (shards / "s1").string())
                .exit_code,
            0)
      << "a shard is a part by request";
  const std::string merge = "merge --out " + merged.string() + expect + (shards / "s1").string();
  const Outcome o = locksim(merge);
  EXPECT_EQ(o.exit_code, 4) << o.out << o.err;
  EXPECT_NE(o.out.find("18 of 36 runs"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("gate: INCOMPLETE"), std::string::npos) << o.out;
  EXPECT_EQ(o.out.find("gate: holds"), std::string::npos) << o.out;
  EXPECT_NE(slurp(merged / "matrix.md").find("INCOMPLETE"), std::string::npos);
  EXPECT_NE(slurp(merged / "matrix.html").find("INCOMPLETE"), std::string::npos);
  EXPECT_NE(slurp(merged / "junit.xml").find("type=\"incomplete\""), std::string::npos);
  EXPECT_NE(slurp(merged / "matrix.json").find("\"complete\": false"), std::string::npos);
  const Outcome partial = locksim(merge + " --partial");
  EXPECT_EQ(partial.exit_code, 0) << partial.out << partial.err;
  EXPECT_NE(partial.out.find("on 18 of 36 runs (partial: merge --partial)"), std::string::npos)
      << partial.out;
  const Outcome ungated =
      locksim("merge --out " + merged.string() + " " + (shards / "s1").string());
  EXPECT_EQ(ungated.exit_code, 4) << "no gate, but still a missing part";
  fs::remove_all(shards);
  fs::remove_all(merged);
}

// Fewer seeds than a cell's bound is not a lost detection: the cell is
// listed as not judged, with the ungated cells, on every output.
TEST(SweepCli, TooFewSeedsIsNotJudgedRatherThanALostDetection) {
  const fs::path dir = scratch("few");
  const Outcome o = locksim(
      "sweep --algorithms redlock,zk-curator --profiles server-clock,partition "
      "--seeds 1..5 --expect " +
      std::string(LOCKSIM_SOURCE_DIR) + "/expectations/reference.json --out " + dir.string());
  EXPECT_EQ(o.exit_code, 0) << o.out << o.err;
  const std::string why =
      "redlock × server-clock (not enough seeds: a violation is expected within 30 seeds, the "
      "sweep has 5)";
  EXPECT_NE(o.out.find("not judged (1): " + why), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("not gated, expected any or nothing (1): zk-curator × partition"),
            std::string::npos)
      << o.out;
  EXPECT_EQ(o.out.find("lost detection"), std::string::npos) << o.out;
  EXPECT_NE(slurp(dir / "matrix.md").find(why), std::string::npos);
  EXPECT_NE(slurp(dir / "matrix.html").find(why), std::string::npos);
  fs::remove_all(dir);
}

// A gate that judged no cell would pass any regression: the same exit as a
// sweep missing runs (4), on stdout and in the JUnit file a CI reads. Its
// pair: one judged cell, and the gate holds.
TEST(SweepCli, AGateThatJudgedNoCellCannotHold) {
  const fs::path dir = scratch("nothing_judged");
  const std::string expect =
      std::string(" --expect ") + LOCKSIM_SOURCE_DIR + "/expectations/reference.json --out ";
  // redlock x server-clock wants 30 seeds; 5 judge nothing.
  const std::string sweep = "sweep --algorithms redlock --profiles server-clock --seeds 1..";
  const Outcome o = locksim(sweep + "5" + expect + dir.string());
  EXPECT_EQ(o.exit_code, 4) << o.out << o.err;
  EXPECT_NE(o.out.find("gate: NOTHING JUDGED"), std::string::npos) << o.out;
  EXPECT_NE(slurp(dir / "junit.xml").find("type=\"nothing-judged\""), std::string::npos);
  EXPECT_NE(slurp(dir / "matrix.md").find("NOTHING JUDGED"), std::string::npos);
  const Outcome judged = locksim(sweep + "30" + expect + (dir / "30").string());
  EXPECT_EQ(judged.exit_code, 0) << judged.out << judged.err;
  EXPECT_EQ(slurp(dir / "30" / "junit.xml").find("nothing-judged"), std::string::npos);
  fs::remove_all(dir);
}

}  // namespace
