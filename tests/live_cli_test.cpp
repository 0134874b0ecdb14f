// `locksim live` and `locksim agree` as a user sees them at the edges of a
// run: where a live run ends, what an interrupt leaves behind, what a
// machine without the servers is told. Each test starts real servers
// through the binary and relies on it to stop them.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "live/redis_process.h"
#include "live/zk_process.h"
#include "tests/locksim_binary.h"
#include "tests/real_servers.h"

namespace locksim {
namespace {

namespace fs = std::filesystem;

std::string redis_missing() {
  try {
    (void)live::RedisProcess::start();
    return "";
  } catch (const std::exception& e) {
    return e.what();
  }
}

// Every op of a history.jsonl, as JSON.
std::vector<nlohmann::json> ops_of(const fs::path& jsonl) {
  std::vector<nlohmann::json> out;
  std::ifstream in(jsonl);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) out.push_back(nlohmann::json::parse(line));
  }
  return out;
}

// Runs `locksim ARGS` in the background, waits until `ready` exists (the
// run's sign of progress), then `wait_after` more, sends `signal`, and
// returns the exit code.
int interrupt(const std::string& args, const fs::path& ready, const std::string& wait_after,
              const char* signal) {
  const std::string cmd = std::string(LOCKSIM_BINARY) + " " + args +
                          " >/dev/null 2>&1 & pid=$!; i=0; while [ ! -e " + ready.string() +
                          " ] && [ $i -lt 1200 ]; do sleep 0.1; i=$((i+1)); done; sleep " +
                          wait_after + "; kill -" + signal + " $pid; wait $pid; exit $?";
  const int status = std::system(cmd.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// Holds of 3 s in a 2 s run: the run ends at 2 s as the simulation's does.
// Nothing completes after the end, each client's one acquire is open or
// done before it, and a hold still open then ends with the run.
TEST(LiveCli, ARunEndsAtItsDurationAndRecordsNothingAfter) {
  LOCKSIM_SKIP_WITHOUT("redis-server", redis_missing());
  const testing::ScratchDir dir("locksim-live-end-");
  const fs::path out = dir.path() / "out";
  const testing::Outcome r = testing::locksim(
      "live --duration 2s --hold 3s..3s --clients 2 "
      "--ttl 10s --out " +
      out.string());
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("2.000s of true time"), std::string::npos) << r.out;
  const std::vector<nlohmann::json> ops = ops_of(out / "history.jsonl");
  ASSERT_FALSE(ops.empty());
  int acquired = 0;
  for (const nlohmann::json& op : ops) {
    EXPECT_LT(op["time_ns"].get<int64_t>(), 2'000'000'000) << op.dump();
    if (op["f"] == "acquire" && op["type"] == "ok") ++acquired;
  }
  EXPECT_EQ(acquired, 1) << "one hold of 3 s fills the 2 s run; the other client waits";
  const nlohmann::json result = nlohmann::json::parse(testing::slurp(out / "result.json"));
  EXPECT_EQ(result["counts"]["run_length_ns"].get<int64_t>(), 2'000'000'000) << result.dump();
  EXPECT_FALSE(result.contains("interrupted"));
}

// A run with no command timeout whose server is paused past its end: the
// clients blocked on it returned only when the pause ended (a 3 s run under
// a 60 s pause took 60 s). Every fault now ends with the run. The bound is
// the run's contract (it ends at its length), not a speed.
TEST(LiveCli, ARunEndsAtItsLengthThoughAFaultOutlastsIt) {
  LOCKSIM_SKIP_WITHOUT("redis-server", redis_missing());
  const auto start = std::chrono::steady_clock::now();
  const testing::Outcome r =
      testing::locksim("live --duration 3s --timeout none --fault 'pause redis-1 at 1s for 60s'");
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("3.000s of true time"), std::string::npos) << r.out;
  EXPECT_LT(took, std::chrono::seconds(30)) << "the run waited for the pause to end";
}

// Ctrl-C on a live run with an earlier run's files in --out: the history up
// to the interrupt and a result.json marked interrupted replace them.
TEST(LiveCli, CtrlCWritesWhatRanMarkedInterrupted) {
  LOCKSIM_SKIP_WITHOUT("redis-server", redis_missing());
  const testing::ScratchDir dir("locksim-live-int-");
  const fs::path out = dir.path() / "out";
  ASSERT_EQ(testing::locksim("live --duration 1s --clients 2 --out " + out.string()).exit_code, 0);
  const std::string old_result = testing::slurp(out / "result.json");
  ASSERT_FALSE(old_result.empty());
  // The earlier result.json goes when the run begins: its absence is the sign.
  const std::string cmd = std::string(LOCKSIM_BINARY) + " live --duration 60s --clients 2 --out " +
                          out.string() + " >/dev/null 2>&1 & pid=$!; i=0; while [ -e " +
                          (out / "result.json").string() +
                          " ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done; sleep 3; "
                          "kill -INT $pid; wait $pid; exit $?";
  const int status = std::system(cmd.c_str());
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 130);
  const nlohmann::json result = nlohmann::json::parse(testing::slurp(out / "result.json"));
  ASSERT_TRUE(result.contains("interrupted")) << result.dump();
  EXPECT_EQ(result["interrupted"]["signal"], "SIGINT");
  const int64_t cut = result["counts"]["run_length_ns"].get<int64_t>();
  EXPECT_GT(cut, 0);
  EXPECT_LT(cut, 60'000'000'000LL) << "the run was cut, not run to its end";
  const std::vector<nlohmann::json> ops = ops_of(out / "history.jsonl");
  EXPECT_FALSE(ops.empty()) << "the history up to the interrupt is kept";
  for (const nlohmann::json& op : ops) EXPECT_LE(op["time_ns"].get<int64_t>(), cut);
}

// Ctrl-C on a live ZooKeeper run: the watcher kills the servers before the
// clients close, and each client's I/O thread logged its lost connection
// (18 to 40 ZOO_ERROR lines under the interrupt's one line).
TEST(LiveCli, CtrlCOnZooKeeperSaysOneLine) {
  LOCKSIM_SKIP_WITHOUT("zookeeper", live::ZkEnsembleProcess::missing());
  const testing::ScratchDir dir("locksim-live-zk-int-");
  const fs::path err = dir.path() / "err", out = dir.path() / "stdout";
  // Its first line ("live: ... of real time...") comes before the ensemble
  // starts; 10 s more see it serving.
  const std::string cmd =
      std::string(LOCKSIM_BINARY) + " live --algorithm zk-curator --duration 60s --out " +
      (dir.path() / "out").string() + " >" + out.string() + " 2>" + err.string() +
      " & pid=$!; i=0; while ! grep -q 'real time' " + out.string() +
      " 2>/dev/null && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done; "
      "sleep 10; kill -INT $pid; wait $pid; exit $?";
  const int status = std::system(cmd.c_str());
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 130);
  const std::string text = testing::slurp(err);
  EXPECT_NE(text.find("locksim: interrupted (signal 2); stopped 3 server process(es)"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("ZOO_"), std::string::npos) << text;
}

// Ctrl-C on agree after its simulation: sim/ kept, agree.json says the live
// side was interrupted.
TEST(AgreeCli, CtrlCKeepsTheSimulationAndMarksLiveInterrupted) {
  LOCKSIM_SKIP_WITHOUT("redis-server", redis_missing());
  const testing::ScratchDir dir("locksim-agree-int-");
  const fs::path out = dir.path() / "out";
  const int code = interrupt("agree --scenario set-nx-lua-gc-pause --out " + out.string(),
                             out / "sim" / "result.json", "2", "INT");
  EXPECT_EQ(code, 130);
  EXPECT_TRUE(fs::exists(out / "sim" / "history.edn"));
  const nlohmann::json j = nlohmann::json::parse(testing::slurp(out / "agree.json"));
  EXPECT_EQ(j["interrupted"], "SIGINT") << j.dump();
  EXPECT_EQ(j["live"]["interrupted"], "SIGINT") << j.dump();
  EXPECT_TRUE(j["agree"].is_null());
  EXPECT_FALSE(j["simulation"]["verdict"].is_null());
}

// SIGTERM on agree --all after its first scenario: the report says it is
// INCOMPLETE and lists what did not run.
TEST(AgreeCli, AnInterruptedAllSaysItIsIncomplete) {
  LOCKSIM_SKIP_WITHOUT("redis-server", redis_missing());
  const testing::ScratchDir dir("locksim-agree-all-");
  const fs::path out = dir.path() / "out";
  const int code = interrupt(
      "agree --all --only set-nx-lua-gc-pause,set-nx-lua-partition-late-"
      "grant,redlock-gc-pause --time-scale 0.2 --out " +
          out.string(),
      out / "agree.md", "1", "TERM");
  EXPECT_EQ(code, 143);
  const std::string md = testing::slurp(out / "agree.md");
  EXPECT_NE(md.find("INCOMPLETE: 2 of 3 scenarios not run (interrupted by SIGTERM)"),
            std::string::npos)
      << md;
  EXPECT_EQ(md.find("Not expressible live"), std::string::npos) << "no empty table\n" << md;
  const nlohmann::json j = nlohmann::json::parse(testing::slurp(out / "agree.json"));
  EXPECT_EQ(j["summary"]["not_run"], 2) << j.dump();
  EXPECT_EQ(j["not_run"].size(), 2u) << j.dump();
}

// agree --all --resume keeps the rows --out's report finished, byte for
// byte, and runs the rest; a report of another run is refused before any
// server starts.
TEST(AgreeCli, AResumedAllKeepsWhatFinishedAndRunsTheRest) {
  LOCKSIM_SKIP_WITHOUT("redis-server", redis_missing());
  const testing::ScratchDir dir("locksim-agree-resume-");
  const std::string out = " --out " + (dir.path() / "out").string();
  const std::string first = "agree --all --time-scale 0.1 --only set-nx-lua-gc-pause";
  ASSERT_EQ(testing::locksim(first + out).exit_code, 0);
  const nlohmann::ordered_json before =
      nlohmann::ordered_json::parse(testing::slurp(dir.path() / "out" / "agree.json"));
  const testing::Outcome resumed = testing::locksim(first + ",redlock-gc-pause --resume" + out);
  EXPECT_EQ(resumed.exit_code, 0) << resumed.out << resumed.err;
  EXPECT_NE(resumed.out.find("set-nx-lua-gc-pause: AGREE: both violation (kept from the "
                             "earlier run)"),
            std::string::npos)
      << resumed.out;
  EXPECT_NE(resumed.out.find("redlock-gc-pause: AGREE"), std::string::npos) << resumed.out;
  const nlohmann::ordered_json after =
      nlohmann::ordered_json::parse(testing::slurp(dir.path() / "out" / "agree.json"));
  ASSERT_EQ(after["scenarios"].size(), 2u) << after.dump();
  EXPECT_EQ(after["summary"]["scenarios"], 2);
  // Rows in the shipped order: redlock-gc-pause first, the kept row second.
  EXPECT_EQ(after["scenarios"][1].dump(), before["scenarios"][0].dump());
  locksim::testing::expect_bad_input(
      "agree --all --time-scale 0.2 --only set-nx-lua-gc-pause --resume" + out,
      "--resume: ");  // another time scale
  locksim::testing::expect_bad_input(
      "agree --all --time-scale 0.1 --only redlock-gc-pause --resume" + out,
      "which this run does not (another --only)");
}

// A machine without the servers is told so, not "internal error".
TEST(LiveCli, AMissingServerIsNotAnInternalError) {
  const std::string cmd =
      "env PATH=/nonexistent " + std::string(LOCKSIM_BINARY) + " live --duration 1s 2>&1";
  FILE* pipe = ::popen(cmd.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string text;
  char buf[512];
  while (std::fgets(buf, sizeof buf, pipe) != nullptr) text += buf;
  const int status = ::pclose(pipe);
  EXPECT_EQ(WEXITSTATUS(status), 3) << text;
  EXPECT_NE(text.find("locksim: cannot run live: redis-server not found"), std::string::npos)
      << text;
  EXPECT_EQ(text.find("internal error"), std::string::npos) << text;
}

// A tick real ZooKeeper cannot reach quorum with is refused up front.
TEST(LiveCli, AZooKeeperTickTooShortForLiveIsBadInput) {
  testing::expect_bad_input("live --algorithm zk-curator --zk-tick 1ms --duration 2s", "--zk-tick");
  testing::expect_bad_input("live --algorithm zk-curator --zk-tick 19ms --duration 2s",
                            "at least 20ms");
}

}  // namespace
}  // namespace locksim
