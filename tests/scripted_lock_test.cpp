// Scripted Redis locks (issue 31): a lock given as a script file.
//  - Bad input: every validation error exits 2 with one line naming the
//    file and the field (for Lua, the line), run through the real binary.
//  - Faithfulness: set-nx-lua, naive-setnx and redlock written as files
//    (examples/scripts/) give byte-identical histories to the built-ins, on
//    every shipped scenario of theirs and a sweep of every fault profile.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "algorithms/registry.h"
#include "faults/fault_schedule.h"
#include "faults/profile.h"
#include "harness/run.h"
#include "harness/scenario.h"
#include "harness/script_file.h"
#include "harness/sweep/sweep.h"
#include "history/history_io.h"
#include "tests/locksim_binary.h"
#include "tests/real_servers.h"

namespace locksim::harness {
namespace {

using testing::locksim;
using testing::Outcome;

const testing::ScratchDir scratch_dir("locksim_scripted_");

std::string example(const std::string& file) {
  return std::string(LOCKSIM_SOURCE_DIR) + "/examples/scripts/" + file;
}

// A valid single-master file with `acquire` (and optionally more) replaced.
std::string with_acquire(const std::string& acquire, const std::string& more = "") {
  return R"({"acquire": )" + acquire + more +
         R"(, "release": {"command": ["DEL", "{resource}"], "success": 1}})";
}
const std::string kSetNx =
    R"({"command": ["SET", "{resource}", "{token}", "NX", "PX", "{ttl_ms}"], "success": "OK"})";

struct BadFile {
  const char* what;
  std::string json;
  std::vector<std::string> must_mention;  // besides the file's path
};

std::vector<BadFile> bad_files() {
  return {
      {"not JSON", "{\"acquire\": ", {"invalid JSON"}},
      {"a key twice", R"({"summary": "a", "summary": "b"})", {"summary", "given twice"}},
      {"a summary of two lines",
       with_acquire(kSetNx, R"(, "summary": "one\ntwo")"),
       {"summary: expected one line of text"}},
      {"no acquire",
       R"({"release": {"command": ["DEL", "{resource}"], "success": 1}})",
       {"acquire: missing"}},
      {"no release", R"({"acquire": )" + kSetNx + "}", {"release: missing"}},
      {"unknown top-level field",
       with_acquire(kSetNx, R"(, "acquier": 1)"),
       {"acquier", "unknown field"}},
      {"no success",
       with_acquire(R"({"command": ["SET", "{resource}", "x"]})"),
       {"acquire.success: missing"}},
      {"both command and script",
       with_acquire(R"({"command": ["GET", "k"], "script": "return 1", "success": 1})"),
       {"acquire: expected one of command, script"}},
      {"Lua syntax error",
       with_acquire(R"({"script": "local x = 1\nif x then return 1", "success": 1})"),
       {"acquire.script: line 2: Lua syntax error"}},
      {"Lua calls a command the simulation lacks",
       with_acquire(
           R"({"script": "return 1", "success": 1})",
           R"j(, "renew": {"script": "local a = 1\nreturn redis.call('SADD', KEYS[1], 'x')", "success": 1}, "params": {"renew-period": "1s"})j"),
       {"renew.script: line 2", "'SADD' is not implemented"}},
      {"a command the simulation lacks",
       with_acquire(R"({"command": ["SADD", "{resource}", "{token}"], "success": 1})"),
       {"acquire.command", "'SADD' is not implemented"}},
      {"unknown placeholder",
       with_acquire(R"({"command": ["SET", "{resource}", "{tokn}", "NX"], "success": "OK"})"),
       {"acquire.command[2]", "unknown placeholder {tokn}"}},
      {"a command Redis refuses inside a script",
       with_acquire(R"x({"script": "return redis.call('EVAL', 'return 1', 0)", "success": 1})x"),
       {"acquire.script", "line 1: redis command 'EVAL' is not allowed from a script"}},
      {"a placeholder with spaces",
       with_acquire(R"({"command": ["SET", "{resource}", "{ token }", "NX"], "success": "OK"})"),
       {"acquire.command[2]", "unknown placeholder { token }"}},
      {"empty braces",
       with_acquire(R"({"command": ["SET", "{}", "{token}"], "success": "OK"})"),
       {"acquire.command[1]", "unknown placeholder {}"}},
      {"doubled braces",
       with_acquire(R"({"command": ["SET", "{resource}", "{{token}}"], "success": "OK"})"),
       {"acquire.command[2]", "unknown placeholder {{token}"}},
      {"an unclosed brace",
       with_acquire(R"({"command": ["SET", "{resource", "{token}"], "success": "OK"})"),
       {"acquire.command[1]", "a '{' that is never closed"}},
      {"a stray closing brace",
       with_acquire(R"({"command": ["SET", "lock}", "{token}"], "success": "OK"})"),
       {"acquire.command[1]", "a '}' that closes no placeholder"}},
      {"unknown placeholder in a pattern",
       with_acquire(R"({"command": ["GET", "{resource}"], "success": {"bulk": "{owner}"}})"),
       {"acquire.success.bulk", "unknown placeholder {owner}"}},
      {"a pattern SET cannot match",
       with_acquire(R"({"command": ["SET", "{resource}", "{token}", "NX"], "success": 1})"),
       {"acquire.success", "cannot match", "SET"}},
      {"an element of a reply that is no array",
       with_acquire(
           R"({"command": ["SETNX", "{resource}", "{token}"], "success": {"element": 0, "integer": 1}})"),
       {"acquire.success", "element 0 cannot match"}},
      {"a pattern of two kinds",
       with_acquire(R"({"script": "return 1", "success": {"integer": 1, "nil": true}})"),
       {"acquire.success", "exactly one of"}},
      {"a bad parameter default",
       with_acquire(kSetNx, R"(, "params": {"ttl": "ten"})"),
       {"params.ttl"}},
      {"an unknown parameter",
       with_acquire(kSetNx, R"(, "params": {"tll": "1s"})"),
       {"params.tll", "not a parameter"}},
      {"a renewal without its period",
       with_acquire(
           kSetNx,
           R"(, "renew": {"command": ["PEXPIRE", "{resource}", "{ttl_ms}"], "success": 1})"),
       {"params.renew-period: missing"}},
      {"masters out of range", with_acquire(kSetNx, R"(, "masters": 0)"), {"masters", "from 1"}},
  };
}

TEST(ScriptedLock, EveryValidationErrorExitsTwoNamingFileAndField) {
  int n = 0;
  for (const BadFile& bad : bad_files()) {
    SCOPED_TRACE(bad.what);
    const std::string path = scratch_dir.write("bad" + std::to_string(n++) + ".json", bad.json);
    const Outcome o = locksim("run --algorithm script:" + path + " --duration 1s");
    EXPECT_EQ(o.exit_code, 2) << o.err;
    EXPECT_EQ(testing::count_lines(o.err), 1u) << o.err;
    EXPECT_NE(o.err.find(path), std::string::npos) << o.err;
    for (const std::string& m : bad.must_mention) {
      EXPECT_NE(o.err.find(m), std::string::npos) << "wants '" << m << "' in: " << o.err;
    }
  }
}

// An element pattern on a command that replies with an array (LRANGE,
// ZRANGE) is what the pattern is for; validation refused it on every command.
TEST(ScriptedLock, AnElementOfAnArrayCommandsReplyIsAccepted) {
  const std::string path = scratch_dir.write(
      "lrange.json",
      with_acquire(kSetNx, R"(, "recheck": {"command": ["LRANGE", "{resource}", "0", "-1"],
                                   "success": {"element": 0, "bulk": "{token}"}})"));
  const Outcome o = locksim("run --algorithm script:" + path + " --duration 1s --quiet");
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_TRUE(o.err.empty()) << o.err;
}

TEST(ScriptedLock, AMissingFileExitsTwo) {
  const Outcome o = locksim("run --algorithm script:/nonexistent/lock.json");
  EXPECT_EQ(o.exit_code, 2) << o.err;
  EXPECT_NE(o.err.find("/nonexistent/lock.json: cannot read"), std::string::npos) << o.err;
}

// Found by scenario_fuzz: the script's own error named only the script file,
// not the scenario and field that pointed at it.
TEST(ScriptedLock, AScenarioNamingAMissingScriptNamesItsFileAndField) {
  const std::string path =
      scratch_dir.write("points-at-missing.json", R"({"algorithm": "script:/nonexistent/x.json"})");
  const Outcome o = locksim("run --scenario " + path);
  EXPECT_EQ(o.exit_code, 2) << o.err;
  EXPECT_EQ(testing::count_lines(o.err), 1u) << o.err;
  EXPECT_NE(o.err.find(path + ": algorithm: /nonexistent/x.json: cannot read"), std::string::npos)
      << o.err;
}

TEST(ScriptedLock, ListShowsTheFilesParametersAndParamChangesThem) {
  const Outcome o = locksim("list script:" + example("naive-setnx.json"));
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.out.find("expire-delay"), std::string::npos) << o.out;
  const Outcome bad =
      locksim("run --algorithm script:" + example("naive-setnx.json") + " --param quorum=3");
  EXPECT_EQ(bad.exit_code, 2) << bad.err;
  EXPECT_NE(bad.err.find("quorum: not a parameter"), std::string::npos) << bad.err;
}

// --- faithfulness -------------------------------------------------------------

struct Twin {
  const char* builtin;
  const char* file;
};
const Twin kTwins[] = {{"set-nx-lua", "set-nx-lua.json"},
                       {"naive-setnx", "naive-setnx.json"},
                       {"redlock", "redlock.json"}};

std::string script_name(const Twin& t) {
  install_script_loader();
  return "script:" + example(t.file);
}

// Runs `c` as it is and with the twin's file, and compares the histories.
void expect_same_history(RunConfig c, const Twin& t, const std::string& what) {
  c.algorithm = t.builtin;
  const std::string expected = history::to_jsonl(simulate_and_check(c).result.history);
  c.algorithm = script_name(t);
  ASSERT_NE(algorithms::find_algorithm(c.algorithm), nullptr);
  const SimRunReport r = simulate_and_check(c);
  EXPECT_TRUE(r.result.errors.empty()) << what << ": " << r.result.errors.front();
  EXPECT_EQ(history::to_jsonl(r.result.history), expected) << what;
}

TEST(ScriptedLock, ShippedScenariosGiveByteIdenticalHistories) {
  int compared = 0;
  for (const BuiltinScenario& b : builtin_scenario_texts()) {
    const Scenario s = parse_scenario(b.json, b.name);
    for (const Twin& t : kTwins) {
      if (s.config.algorithm != t.builtin) continue;
      SCOPED_TRACE(b.name);
      expect_same_history(s.config, t, b.name);
      ++compared;
    }
  }
  EXPECT_GE(compared, 18);  // the 18 shipped scenarios of the three, at the time of writing
}

// Seeds per profile in the always-run test: CI's budget (2 seeds x 8
// profiles x 3 algorithms x 2 runs). The issue's 20 seeds of every profile:
// scripts/check-scripted-faithfulness, which sets LOCKSIM_SCRIPTED_SEEDS.
uint64_t profile_seeds() {
  const char* env = std::getenv("LOCKSIM_SCRIPTED_SEEDS");
  return env != nullptr ? std::stoull(env) : 2;
}

TEST(ScriptedLock, ProfileSweepGivesByteIdenticalHistories) {
  SweepPlan plan;
  for (const Twin& t : kTwins) {
    for (const std::string& profile : faults::profile_names()) {
      for (uint64_t seed = 1; seed <= profile_seeds(); ++seed) {
        SCOPED_TRACE(std::string(t.builtin) + " " + profile + " seed " + std::to_string(seed));
        expect_same_history(plan.config_of(t.builtin, profile, seed), t,
                            std::string(t.builtin) + " " + profile);
        if (HasFailure()) return;
      }
    }
  }
}

// --- the re-entrant hash lock (examples/scripts/reentrant-hash.json) ----------

// Its watchdog is what keeps it safe when holds outlast the TTL: the same
// run without the renew step (a renew-period past every hold) breaks.
TEST(ScriptedLock, ReentrantHashWatchdogKeepsLongHoldsSafe) {
  const Scenario s = load_scenario("reentrant-hash-watchdog");
  const SimRunReport renewed = simulate_and_check(s.config);
  EXPECT_EQ(overall_verdict(renewed.result), checkers::Verdict::Kind::kValid)
      << renewed.result.mutex.explanation;
  EXPECT_GT(renewed.result.acquisitions, 3);
  RunConfig unrenewed = s.config;
  unrenewed.algorithm_params["renew-period"] = "1h";
  const SimRunReport broken = simulate_and_check(unrenewed);
  EXPECT_EQ(broken.result.mutex.kind, checkers::Verdict::Kind::kInvalid)
      << "without renewal a 3-5 s hold outlasts the 2 s TTL";
}

// The watchdog is a task beside the work, as Redisson's: a renewal's round
// trip, or its timeout when a partition loses the reply, never lengthens the
// critical section (it ran between the hold's sleeps, and a 10 ms period
// made a 2 s hold last 2.19 s, a lost reply 2.5 s).
TEST(ScriptedLock, RenewalsNeverLengthenAHold) {
  RunConfig c = load_scenario("reentrant-hash-watchdog").config;
  c.workload.clients = 1;
  c.workload.hold_min = c.workload.hold_max = Duration::seconds(2);
  c.duration = Duration::seconds(10);
  for (const char* period : {"10ms", "600ms"}) {
    c.algorithm_params["renew-period"] = period;
    c.faults.events.clear();
    for (const bool cut : {false, true}) {
      if (cut) {
        // The renewals of the first hold lose their replies to a partition.
        c.faults.events = {
            faults::parse_fault("partition c1|redis-1 at 100ms for 1500ms", "--fault")};
      }
      const SimRunReport r = simulate_and_check(c);
      ASSERT_GE(r.result.history.held.size(), 3u) << period;
      for (const history::HeldInterval& h : r.result.history.held) {
        if (h.end_reason != history::HeldInterval::EndReason::kRelease) continue;
        EXPECT_EQ((h.end - h.start).ns, Duration::seconds(2).ns)
            << period << (cut ? ", partitioned" : "");
      }
    }
  }
}

// Gated like any algorithm, by its own expectations file, the way a team
// gates its lock (docs/how-to/script-a-lock.md): a sweep of the shipped file
// against expectations/reentrant-hash.json passes the gate.
TEST(ScriptedLock, ReentrantHashPassesItsOwnGate) {
  const std::string out = scratch_dir.path().string() + "/gate";
  const Outcome o = locksim(
      "sweep --algorithms script:examples/scripts/reentrant-hash.json --profiles "
      "none,pause,client-crash "
      "--seeds 1..10 --jobs 2 --quiet --out " +
      out + " --expect " + LOCKSIM_SOURCE_DIR + "/expectations/reentrant-hash.json");
  EXPECT_EQ(o.exit_code, 0) << o.out << o.err;
}

// The same file against a real redis-server on loopback (started by
// `locksim live` itself): holds outlasting the TTL stay safe there too.
TEST(ScriptedLock, ReentrantHashRunsLiveAgainstRedisServer) {
  LOCKSIM_SKIP_WITHOUT("redis-server", std::system("redis-server --version >/dev/null 2>&1") == 0
                                           ? ""
                                           : "redis-server is not on $PATH");
  const Outcome o = locksim("live --algorithm script:" + example("reentrant-hash.json") +
                            " --duration 3s --clients 2 --hold 2200ms..2500ms");
  EXPECT_EQ(o.exit_code, 0) << o.out << o.err;
  EXPECT_NE(o.out.find("OK: no mutual-exclusion violation"), std::string::npos) << o.out;
}

}  // namespace
}  // namespace locksim::harness
