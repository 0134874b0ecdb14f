// Where commands write, as a second fresh-eyes QA pass (2026-11-29) found
// it: a folder of the user's where a report file goes was deleted by sweep,
// or ended a whole run as an internal error (exit 3) after the work. Each is
// now bad input before anything runs (one line, exit 2), and nothing of the
// user's is removed.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "tests/locksim_binary.h"

namespace {

namespace fs = std::filesystem;

using locksim::testing::expect_bad_input;
using locksim::testing::locksim;
using locksim::testing::Outcome;

const locksim::testing::ScratchDir scratch_dir("locksim_qa_outputs_");

// DIR with a folder NAME in it holding a file of the user's.
fs::path dir_with_folder(const std::string& dir, const std::string& name) {
  const fs::path d = scratch_dir.path() / dir;
  fs::create_directories(d / name / "sub");
  std::ofstream(d / name / "sub" / "data.txt") << "precious\n";
  return d;
}

// sweep --out removed an earlier sweep's matrix.md with remove_all: a
// folder of that name, and everything in it, went without a word.
TEST(QaOutputs, SweepRefusesAFolderWhereItsReportGoesAndRemovesNothing) {
  const fs::path d = dir_with_folder("sweep_out", "matrix.md");
  expect_bad_input(
      "sweep --seeds 1..2 --algorithms set-nx-lua --profiles none --quiet --out " + d.string(),
      "--out: expected a file to write, got the directory '" + (d / "matrix.md").string() + "'");
  EXPECT_TRUE(fs::exists(d / "matrix.md" / "sub" / "data.txt"));
  EXPECT_FALSE(fs::exists(d / "runs.jsonl")) << "refused before any run";
}

// The same for merge, whose --out is checked once the shards are read.
TEST(QaOutputs, MergeRefusesAFolderWhereItsReportGoes) {
  const fs::path shard = scratch_dir.path() / "shard";
  const Outcome s = locksim(
      "sweep --seeds 1..2 --algorithms set-nx-lua --profiles none --quiet "
      "--out " +
      shard.string());
  ASSERT_EQ(s.exit_code, 0) << s.err;
  const fs::path d = dir_with_folder("merge_out", "junit.xml");
  expect_bad_input("merge --out " + d.string() + " " + shard.string(),
                   "--out: expected a file to write, got the directory");
  EXPECT_TRUE(fs::exists(d / "junit.xml" / "sub" / "data.txt"));
}

// run --out with DIR/result.json a folder ran the whole run, then ended in
// "internal error: cannot write" (exit 3); margin's margin.json the same.
TEST(QaOutputs, RunAndMarginRefuseAFolderWhereTheirFileGoesBeforeTheWork) {
  for (const char* name : {"result.json", "history.edn", "history.jsonl"}) {
    const fs::path d = dir_with_folder(std::string("run_out_") + name, name);
    expect_bad_input(
        "run --duration 2s --quiet --out " + d.string(),
        "--out: expected a file to write, got the directory '" + (d / name).string() + "'");
  }
  const fs::path m = dir_with_folder("margin_out", "margin.json");
  expect_bad_input("margin --algorithm set-nx-lua --fault pause --quiet --out " + m.string(),
                   "--out: expected a file to write, got the directory");
  const fs::path ms = dir_with_folder("margins_out", "margins.md");
  expect_bad_input("margins --algorithms set-nx-lua --quiet --out " + ms.string(),
                   "--out: expected a file to write, got the directory");
}

// merge --expect with a file it then refused (exit 2) had already removed
// the earlier merge's reports and written a new sweep.json and runs.jsonl.
// And a runs.jsonl line not of the sweep (edited, or another sweep's) was a
// broken invariant of the report (exit 70), in merge and in sweep --resume.
TEST(QaOutputs, MergeRefusesBadInputBeforeItTouchesItsOut) {
  const fs::path d = scratch_dir.path() / "merge";
  const std::string sweep =
      "sweep --seeds 1..4 --algorithms set-nx-lua --profiles none,pause "
      "--quiet --shard ";
  ASSERT_EQ(locksim(sweep + "1/2 --out " + (d / "s1").string()).exit_code, 0);
  ASSERT_EQ(locksim(sweep + "2/2 --out " + (d / "s2").string()).exit_code, 0);
  const std::string shards = " " + (d / "s1").string() + " " + (d / "s2").string();
  ASSERT_EQ(locksim("merge --out " + (d / "m").string() + shards).exit_code, 0);
  const std::string report = locksim::testing::slurp(d / "m" / "matrix.md");
  std::ofstream(d / "bad.json")
      << R"({"locksim_expectations": 1, "cells": [{"algorithm": "set-nx-lua", "profile": "none",
                                       "verdict": "maybe"}]})";
  expect_bad_input(
      "merge --out " + (d / "m").string() + " --expect " + (d / "bad.json").string() + shards,
      "cells[0].verdict: expected one of");
  EXPECT_EQ(locksim::testing::slurp(d / "m" / "matrix.md"), report) << "the earlier report stays";

  // Run 0 of shard 1 said to be another seed's.
  std::string runs = locksim::testing::slurp(d / "s1" / "runs.jsonl");
  const size_t line = runs.find("{\"index\":0,");  // lines come in finishing order
  ASSERT_NE(line, std::string::npos) << runs;
  const size_t at = runs.find("\"seed\":1,", line);
  ASSERT_LT(at, runs.find('\n', line)) << runs;
  runs.replace(at, 9, "\"seed\":3,");
  std::ofstream(d / "s1" / "runs.jsonl") << runs;
  expect_bad_input("merge --out " + (d / "m2").string() + shards,
                   ": run 0 is set-nx-lua × none seed 3, but this sweep's run 0 is "
                   "set-nx-lua × none seed 1");
  expect_bad_input(sweep + "1/2 --resume --out " + (d / "s1").string(),
                   ": run 0 is set-nx-lua × none seed 3");
}

}  // namespace
