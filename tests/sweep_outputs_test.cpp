// What `locksim sweep` leaves in --out is the report of its own runs, whole:
// a script lock's path in a shrunk file's name, an earlier sweep's files, a
// SIGTERM from a CI timeout or a kill after an earlier interruption must not
// cost the report or leave one that other runs made.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "tests/locksim_binary.h"

namespace {

namespace fs = std::filesystem;
using locksim::testing::locksim;
using locksim::testing::Outcome;
using locksim::testing::slurp;

const locksim::testing::ScratchDir scratch_dir("locksim_sweep_outputs_");

// Enough runs (6,000, about 7 s at --jobs 1) that a signal sent after 30
// more of them lands long before the end, even when the polling shell below
// is slow on a busy machine; the sweep never runs to its end in this test.
const char* kLonger =
    "--algorithms set-nx-lua,naive-setnx --profiles none,pause,crash-restart "
    "--seeds 1..1000 --duration 20s --quiet";
const size_t kLongerRuns = 6000;

int shell(const std::string& cmd) {
  const int status = std::system(cmd.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

size_t lines_of(const fs::path& p) {
  const std::string s = slurp(p);
  return static_cast<size_t>(std::count(s.begin(), s.end(), '\n'));
}

// Starts `sweep ARGS --out DIR`, waits until DIR/runs.jsonl has `more` lines
// beyond those it had before, sends `signal` and returns the sweep's exit
// code; its stderr goes to DIR.err. No timing: the signal follows the runs,
// not the clock. Counting from the lines already there matters for a
// --resume: the earlier sweep may have finished runs after its own signal
// was sent, and an absolute count could then be met before this sweep has
// even started (a kill before it removed the earlier report).
int signal_after(const std::string& args, const fs::path& dir, int more, const char* signal) {
  const std::string runs = (dir / "runs.jsonl").string();
  const std::string count = "$(cat " + runs + " 2>/dev/null | wc -l)";
  return shell("before=" + count + "; " + std::string(LOCKSIM_BINARY) + " sweep " + args +
               " --out " + dir.string() + " 2>" + dir.string() + ".err & pid=$!; while [ \"" +
               count + "\" -lt $((before + " + std::to_string(more) +
               ")) ]; do sleep 0.02; done; kill -" + signal + " $pid; wait $pid; exit $?");
}

// A script lock's name holds '/' and ':'; its shrunk file's name is a slug of
// it, and the report is written.
TEST(SweepOutputs, AScriptLocksPathGivesAShrunkFileAndTheReport) {
  const fs::path dir = scratch_dir.path() / "script";
  const Outcome o = locksim(
      "sweep --algorithms script:examples/scripts/reentrant-hash.json --profiles pause "
      "--seeds 1..3 --shrink --shrink-max-runs 30 --quiet --out " +
          dir.string(),
      LOCKSIM_SOURCE_DIR);
  EXPECT_EQ(o.exit_code, 0) << o.out << o.err;
  const nlohmann::json j = nlohmann::json::parse(slurp(dir / "matrix.json"));
  const nlohmann::json& cell = j["cells"][0];
  ASSERT_TRUE(cell.contains("shrunk")) << cell.dump();
  const std::string file = cell["shrunk"]["file"].get<std::string>();
  EXPECT_EQ(file.rfind("shrunk/script-examples-scripts-reentrant-hash.json-", 0), 0u) << file;
  EXPECT_EQ(file.find(':'), std::string::npos) << file;
  EXPECT_TRUE(fs::exists(dir / file)) << file;
  EXPECT_TRUE(fs::exists(dir / cell["shrunk"]["story_file"].get<std::string>()));
  for (const char* f : {"matrix.md", "matrix.html", "junit.xml"}) {
    EXPECT_TRUE(fs::exists(dir / f)) << f;
  }
}

// A script name in an expectations file that does not load is bad input
// naming the file and the field, as every other bad cell is.
TEST(SweepOutputs, AnUnreadableScriptInExpectationsNamesTheField) {
  const fs::path e = scratch_dir.write(
      "script-expect.json",
      "{\"locksim_expectations\": 1, \"cells\": [{\"algorithm\": \"script:other.json\", "
      "\"profile\": \"none\", \"verdict\": \"safe\"}]}");
  const std::string err = locksim::testing::expect_bad_input(
      "sweep --algorithms set-nx-lua --profiles none --seeds 1..1 --expect " + e.string() +
          " --out " + (scratch_dir.path() / "script-expect").string(),
      e.string() + ": cells[0].algorithm: ");
  EXPECT_NE(err.find("other.json"), std::string::npos) << err;
}

// A sweep without --resume into an earlier sweep's --out leaves none of that
// sweep's histories or shrunk files; --resume keeps the histories of the runs
// it keeps.
TEST(SweepOutputs, ANewSweepLeavesNoEarlierSweepsFiles) {
  const fs::path dir = scratch_dir.path() / "rerun";
  const std::string small =
      "--profiles none --seeds 1..2 --quiet --histories --out " + dir.string();
  ASSERT_EQ(locksim("sweep --algorithms set-nx-lua,naive-setnx " + small).exit_code, 0);
  ASSERT_TRUE(fs::exists(dir / "histories" / "naive-setnx"));
  fs::create_directories(dir / "shrunk");
  std::ofstream(dir / "shrunk" / "naive-setnx-none-seed-1-shrunk.json") << "{}";
  ASSERT_EQ(locksim("sweep --algorithms set-nx-lua " + small).exit_code, 0);
  EXPECT_FALSE(fs::exists(dir / "histories" / "naive-setnx")) << "an earlier sweep's histories";
  EXPECT_FALSE(fs::exists(dir / "shrunk")) << "an earlier sweep's shrunk files";
  EXPECT_TRUE(fs::exists(dir / "histories" / "set-nx-lua" / "none" / "2.jsonl"));
  ASSERT_EQ(locksim("sweep --algorithms set-nx-lua --resume " + small).exit_code, 0);
  EXPECT_TRUE(fs::exists(dir / "histories" / "set-nx-lua" / "none" / "2.jsonl"))
      << "--resume keeps the histories of the runs it keeps";
}

// A merge into an earlier sweep's --out leaves none of that sweep's
// histories or shrunk files beside the merged report; a merge into
// one of its own shards keeps that shard's histories, which are its runs'.
TEST(SweepOutputs, AMergeLeavesNoEarlierSweepsFiles) {
  const fs::path root = scratch_dir.path() / "merge";
  const std::string cell = "--algorithms naive-setnx --profiles pause --seeds 1..4 --quiet ";
  ASSERT_EQ(locksim("sweep " + cell + "--histories --shrink --shrink-max-runs 20 --out " +
                    (root / "old").string())
                .exit_code,
            0);
  ASSERT_TRUE(fs::exists(root / "old" / "shrunk"));
  for (const char* shard : {"1", "2"}) {
    ASSERT_NE(locksim("sweep " + cell + "--histories --shard " + std::string(shard) + "/2 --out " +
                      (root / shard).string())
                  .exit_code,
              2);
  }
  const std::string shards = (root / "1").string() + " " + (root / "2").string();
  ASSERT_EQ(locksim("merge " + shards + " --out " + (root / "old").string()).exit_code, 0);
  for (const char* stale : {"histories", "shrunk"}) {
    EXPECT_FALSE(fs::exists(root / "old" / stale)) << stale << ": an earlier sweep's";
  }
  EXPECT_TRUE(fs::exists(root / "old" / "matrix.md"));
  ASSERT_EQ(locksim("merge " + shards + " --out " + (root / "1").string()).exit_code, 0);
  EXPECT_TRUE(fs::exists(root / "1" / "histories")) << "a shard's own histories are kept";
}

// A signal cuts a run in flight instead of waiting for it: one run of 100
// hours (a minute or more uncut) is dropped, nothing is counted as
// done, and the sweep exits as the signal says. The signal follows
// sweep.json, which the sweep writes once it catches signals.
TEST(SweepOutputs, ASignalCutsARunInFlightAndDropsIt) {
  const fs::path dir = scratch_dir.path() / "inflight";
  const std::string cmd = std::string(LOCKSIM_BINARY) +
                          " sweep --algorithms set-nx-lua --profiles none --seeds 1..1 "
                          "--duration 100h --jobs 1 --quiet --out " +
                          dir.string() + " 2>" + dir.string() + ".err & pid=$!; while [ ! -e " +
                          (dir / "sweep.json").string() +
                          " ] && kill -0 $pid 2>/dev/null; do sleep 0.02; done; sleep 0.5; "
                          "kill -INT $pid; wait $pid; exit $?";
  EXPECT_EQ(shell(cmd), 130);
  EXPECT_NE(slurp(dir.string() + ".err").find("sweep: interrupted (SIGINT)"), std::string::npos);
  EXPECT_EQ(lines_of(dir / "runs.jsonl"), 0u) << "a cut run is not a finished run";
  EXPECT_NE(slurp(dir / "matrix.md").find("Runs: 0 of 1 run"), std::string::npos)
      << slurp(dir / "matrix.md");
}

// SIGTERM (a CI timeout) stops a sweep as Ctrl-C does: the report of what
// is done, exit 143, a line on stderr. A kill -9 after an earlier
// interruption leaves no report at all rather than that interruption's, and
// the report a later SIGTERM writes counts every run in runs.jsonl.
TEST(SweepOutputs, SigtermWritesTheReportAndNoReportOutlivesItsRuns) {
  const fs::path dir = scratch_dir.path() / "sigterm";
  const std::string args = std::string(kLonger) + " --jobs 1";
  ASSERT_EQ(signal_after(args, dir, 30, "INT"), 130);
  ASSERT_TRUE(fs::exists(dir / "matrix.md"));
  EXPECT_EQ(signal_after(args + " --resume", dir, 30, "KILL"), 137);
  EXPECT_FALSE(fs::exists(dir / "matrix.md")) << "the SIGINT's report outlived a later sweep";
  EXPECT_FALSE(fs::exists(dir / "junit.xml"));
  EXPECT_EQ(signal_after(args + " --resume", dir, 30, "TERM"), 143);
  const std::string err = slurp(dir.string() + ".err");
  EXPECT_NE(err.find("sweep: interrupted (SIGTERM)"), std::string::npos) << err;
  const std::string md = slurp(dir / "matrix.md");
  const size_t runs = lines_of(dir / "runs.jsonl");
  EXPECT_LT(runs, kLongerRuns) << "the signal came too late to test anything";
  EXPECT_NE(md.find("Runs: " + std::to_string(runs) + " of " + std::to_string(kLongerRuns) +
                    " runs (INCOMPLETE: "),
            std::string::npos)
      << md;
  const nlohmann::json j = nlohmann::json::parse(slurp(dir / "matrix.json"));
  EXPECT_EQ(j["runs_done"], runs);
}

}  // namespace
