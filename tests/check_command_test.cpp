// `locksim check` as users and CI see it: exit codes 0 valid, 1 invalid, 2
// unreadable (one line naming where), and the same safety verdict as
// `locksim run` on every shipped scenario's history.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/scenario.h"
#include "tests/locksim_binary.h"

namespace {

namespace fs = std::filesystem;

using locksim::testing::expect_bad_input;
using locksim::testing::locksim;
using locksim::testing::Outcome;
using locksim::testing::slurp;

const locksim::testing::ScratchDir scratch_dir("locksim_check_");

fs::path scratch() {
  return scratch_dir.path();
}

fs::path write(const std::string& name, const std::string& text) {
  return scratch_dir.write(name, text);
}

TEST(CheckCommand, ValidAndInvalidHistories) {
  const fs::path ok = write("ok.edn",
                            "{:process 0, :type :invoke, :f :acquire}\n"
                            "{:process 0, :type :ok, :f :acquire}\n"
                            "{:process 0, :type :invoke, :f :release}\n"
                            "{:process 0, :type :info, :f :release}\n"
                            "{:process 1, :type :invoke, :f :acquire}\n"
                            "{:process 1, :type :ok, :f :acquire}\n");
  const Outcome v = locksim("check " + ok.string());
  EXPECT_EQ(v.exit_code, 0) << v.out << v.err;
  EXPECT_EQ(v.out.rfind("VALID: ", 0), 0u) << v.out;
  EXPECT_NE(v.out.find("built-in   mutex        valid"), std::string::npos) << v.out;

  const fs::path bad = write("bad.edn",
                             "[{:process 0, :type :invoke, :f :acquire}\n"
                             " {:process 0, :type :ok, :f :acquire}\n"
                             " {:process 1, :type :invoke, :f :release}\n"
                             " {:process 1, :type :ok, :f :release}\n"
                             " {:process 2, :type :invoke, :f :acquire}\n"
                             " {:process 2, :type :ok, :f :acquire}]\n");
  const Outcome i = locksim("check " + bad.string());
  EXPECT_EQ(i.exit_code, 0) << "any process may release in Knossos's mutex: " << i.out;
  const Outcome o = locksim("check " + bad.string() + " --model owner-mutex");
  EXPECT_EQ(o.exit_code, 1) << o.out << o.err;
  EXPECT_EQ(o.out.rfind("INVALID: ", 0), 0u) << o.out;
  EXPECT_NE(o.out.find("process 1 released the lock (release op 2, :ok at op 3) but did not "
                       "hold it: process 0 did"),
            std::string::npos)
      << o.out;
  EXPECT_EQ(locksim("check --quiet --model owner-mutex " + bad.string()).out, "");
}

// A --knossos command whose program does not exist is a typo, refused
// before anything runs: a CI job must not pass with its cross-check
// quietly "unknown". So are Knossos's flags without --knossos.
TEST(CheckCommand, AKnossosCommandNotFoundIsBadInput) {
  const fs::path ok = write("ok3.edn",
                            "{:process 0, :type :invoke, :f :acquire}\n"
                            "{:process 0, :type :ok, :f :acquire}\n");
  Outcome o = locksim("check " + ok.string() + " --knossos /nonexistent/knossos.sh");
  EXPECT_EQ(o.exit_code, 2) << o.out << o.err;
  EXPECT_NE(o.err.find("--knossos: expected a command that runs Knossos; '/nonexistent/knossos.sh' "
                       "is not an executable file"),
            std::string::npos)
      << o.err;
  o = locksim("check " + ok.string() + " --knossos 'no-such-knossos-program --flag'");
  EXPECT_EQ(o.exit_code, 2) << o.out << o.err;
  EXPECT_NE(o.err.find("'no-such-knossos-program' is not found on PATH"), std::string::npos)
      << o.err;
  o = locksim("check " + ok.string() + " --knossos-time-limit 5s");
  EXPECT_EQ(o.exit_code, 2) << o.out << o.err;
  EXPECT_NE(o.err.find("--knossos-time-limit: only with --knossos CMD"), std::string::npos)
      << o.err;
  o = locksim("run --knossos-heap 2g");
  EXPECT_EQ(o.exit_code, 2) << o.out << o.err;
  EXPECT_NE(o.err.find("--knossos-heap: only with --knossos CMD"), std::string::npos) << o.err;
}

// A Knossos command that exists but cannot start (its interpreter is
// missing, so sh answers 127): its row says so, claims no time or memory
// (no JVM ran), and the table's columns stay aligned around the long verdict.
TEST(CheckCommand, AKnossosThatCannotStartShowsNoTimeOrMemory) {
  const fs::path ok = write("ok2.edn",
                            "{:process 0, :type :invoke, :f :acquire}\n"
                            "{:process 0, :type :ok, :f :acquire}\n");
  const fs::path script = write("knossos.sh", "#!/nonexistent/interpreter\n");
  fs::permissions(script, fs::perms::owner_all);
  const Outcome o = locksim("check " + ok.string() + " --knossos " + script.string());
  EXPECT_EQ(o.exit_code, 0) << "the built-in checker decides: " << o.out << o.err;
  std::vector<std::string> rows;
  std::istringstream lines(o.out);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("  ", 0) == 0) rows.push_back(line);
  }
  ASSERT_EQ(rows.size(), 3u) << o.out;
  EXPECT_NE(rows[2].find("unknown (command not found: " + script.string() + ")"), std::string::npos)
      << o.out;
  EXPECT_EQ(rows[2].find("JVM"), std::string::npos) << o.out;
  EXPECT_EQ(rows[2].substr(rows[2].size() - 4), "-  -") << o.out;
  const size_t time_end = rows[0].find("time") + 3;  // right-aligned: every row ends it here
  for (const std::string& row : rows) {
    ASSERT_GT(row.size(), time_end + 1) << row;
    EXPECT_NE(row[time_end], ' ') << row;
    EXPECT_EQ(row[time_end + 1], ' ') << row;
  }
}

TEST(CheckCommand, UnreadableInputExits2NamingWhere) {
  const fs::path p = write("broken.edn",
                           "{:process 0, :type :invoke, :f :acquire}\n"
                           "{:process 0, :type :done, :f :acquire}\n");
  expect_bad_input("check " + p.string(),
                   p.string() + ":2:20: :type: expected one of :invoke :ok :fail :info, got :done");
  const fs::path twice = write("twice.edn",
                               "{:process 0, :type :invoke, :f :acquire}\n"
                               "{:process :nemesis, :type :info, :f :kill}\n"
                               "{:process 0, :type :invoke, :f :acquire}\n");
  expect_bad_input("check " + twice.string(),
                   twice.string() +
                       ":3: op index 2: process 0 invokes op 2 while its op 0 is "
                       "still open");
  const fs::path orphan = write("orphan.edn", "{:process 3, :type :ok, :f :release, :index 9}\n");
  expect_bad_input("check " + orphan.string(), "op index 9: process 3 completes op 9");
  expect_bad_input("check /nonexistent.edn", "/nonexistent.edn: cannot open the file");
  expect_bad_input("check " + orphan.string() + " --model fair", "--model: expected one of mutex");
  expect_bad_input("check " + orphan.string() + " --knossos x --knossos-heap lots",
                   "--knossos-heap: expected a JVM heap size");
  expect_bad_input("check " + orphan.string() + " --knossos x --knossos-time-limit 60",
                   "--knossos-time-limit");
  expect_bad_input("check", "history: expected the history");
  // A JSON array was read as EDN and failed with "invalid keyword ':'".
  const fs::path array =
      write("array.json",
            "[\n{\"index\": 0, \"time_ns\": 0, \"process\": 0, \"client\": \"c1\", "
            "\"type\": \"invoke\", \"f\": \"acquire\"}\n]\n");
  expect_bad_input("check " + array.string(),
                   array.string() + ": a JSON array of ops; expected JSON lines");
  // An EDN vector of op maps is still EDN.
  const fs::path vector = write("vector.edn", "[{:process 0, :type :invoke, :f :acquire}]\n");
  EXPECT_EQ(locksim::testing::locksim("check " + vector.string()).exit_code, 0);
}

// The acceptance point: `locksim check` on each shipped scenario's history
// (history.edn and history.jsonl alike) gives the safety verdict `locksim run` gave (a
// liveness-only finding is no safety violation: check says valid).
TEST(CheckCommand, SameSafetyVerdictAsRunOnEveryShippedScenario) {
  int violations = 0;
  for (const auto& b : locksim::harness::builtin_scenario_texts()) {
    for (int seed : {1, 2}) {
      const fs::path out = scratch() / (std::string(b.name) + std::to_string(seed));
      const Outcome run = locksim("run --quiet --scenario " + std::string(b.name) + " --seed " +
                                  std::to_string(seed) + " --out " + out.string());
      ASSERT_LE(run.exit_code, 1) << b.name << run.err;
      const auto result = nlohmann::json::parse(slurp(out / "result.json"));
      const bool safety = result["finding"] == "safety";
      // Either file the run wrote: check tells them apart by content.
      for (const char* file : {"history.edn", "history.jsonl"}) {
        const Outcome check = locksim("check " + (out / file).string());
        EXPECT_EQ(check.exit_code, safety ? 1 : 0)
            << b.name << " seed " << seed << " " << file << "\n"
            << check.out << check.err;
      }
      EXPECT_EQ(result["linearizability"]["verdict"], safety ? "invalid" : "valid") << b.name;
      violations += safety;
    }
  }
  EXPECT_GT(violations, 10);
}

}  // namespace
