// A lock script file is named by its path, but the lock is its bytes. A file
// edited between the runs of one sweep made a report of two locks under one
// name: `--resume` kept the first file's runs beside the second's, `merge`
// joined shards that ran different bytes, and `shrink --sweep` shrank a seed
// of the old lock with the new one. sweep.json now records each file's
// SHA-1, and each of the three refuses a file that changed, naming it.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "tests/locksim_binary.h"

namespace {

namespace fs = std::filesystem;

using locksim::testing::expect_bad_input;
using locksim::testing::locksim;
using locksim::testing::Outcome;

const locksim::testing::ScratchDir scratch_dir("locksim_script_sweep_");

// set-nx-lua as a file, with `attempts` acquire attempts: two values, two locks.
fs::path lock_file(int attempts) {
  return scratch_dir.write(
      "locks/mine.json",
      R"({"params": {"ttl": "10s", "max-attempts": ")" + std::to_string(attempts) + R"("},
        "acquire": {"command": ["SET", "{resource}", "{token}", "NX", "PX", "{ttl_ms}"],
                    "success": "OK"},
        "release": {"command": ["DEL", "{resource}"], "success": 1}})");
}

std::string sweep(const fs::path& file, const std::string& rest) {
  return "sweep --algorithms script:" + file.string() + " --profiles pause --quiet " + rest;
}

TEST(ScriptSweep, ResumeMergeAndShrinkRefuseAFileThatChanged) {
  const fs::path dir = scratch_dir.path();
  const fs::path file = lock_file(20);
  const std::string a = (dir / "a").string(), b = (dir / "b").string();
  ASSERT_NE(locksim(sweep(file, "--seeds 1..4 --shard 1/2 --out " + a)).exit_code, 2);
  const std::string changed = file.string() + " changed since the sweep ran it";

  lock_file(21);
  expect_bad_input(sweep(file, "--seeds 1..4 --shard 1/2 --resume --out " + a),
                   "--resume: " + changed);
  // The cell's name holds the file's path, slashes and all.
  const std::string cell = "--cell script:" + file.string() + "/pause";
  expect_bad_input("shrink --sweep " + a + " " + cell, "--sweep: " + changed);
  ASSERT_NE(locksim(sweep(file, "--seeds 1..4 --shard 2/2 --out " + b)).exit_code, 2);
  expect_bad_input("merge " + a + " " + b + " --out " + (dir / "m").string(),
                   "ran other bytes of a lock file than " + a);

  lock_file(20);  // the bytes the first shard ran: each goes on
  const Outcome resumed = locksim(sweep(file, "--seeds 1..4 --shard 1/2 --resume --out " + a));
  EXPECT_NE(resumed.exit_code, 2) << resumed.err;
  const Outcome shrunk = locksim("shrink --sweep " + a + " " + cell);
  EXPECT_NE(shrunk.exit_code, 2) << shrunk.err;
}

// A lock whose every run ends in a client's exception (a fence its grant
// lacks): no verdict, so no "ok". The sweep exited 0, matrix.md read "ok 3
// ?3" and matrix.html "0/3"; a run with a finding and an exception was
// counted as its finding, and passed a gate expecting it.
TEST(ScriptSweep, RunsThatCouldNotFinishAreUnknownEverywhere) {
  const fs::path file = scratch_dir.write(
      "nofence.json",
      R"js({"acquire": {"keys": ["{resource}"], "args": ["{token}", "{ttl_ms}"],
            "fence": {"element": 1}, "success": {"element": 0, "integer": 1},
            "script": "redis.call('set', KEYS[1], ARGV[1], 'PX', ARGV[2]) return {1}"},
          "release": {"command": ["DEL", "{resource}"], "success": 1}})js");
  const fs::path out = scratch_dir.path() / "unknown";
  const Outcome o = locksim("sweep --algorithms script:" + file.string() +
                            " --profiles none --seeds 1..3 --quiet --out " + out.string());
  EXPECT_EQ(o.exit_code, 3) << o.out << o.err;
  EXPECT_NE(o.out.find("sweep: 3 runs could not finish"), std::string::npos) << o.out;
  const std::string md = locksim::testing::slurp(out / "matrix.md");
  EXPECT_NE(md.find("| unknown ?3 |"), std::string::npos) << md;
  const std::string html = locksim::testing::slurp(out / "matrix.html");
  EXPECT_NE(html.find("0/3 ?3"), std::string::npos);
  EXPECT_NE(html.find("3 unknown (could not finish; first: locksim run"), std::string::npos);
}

}  // namespace
