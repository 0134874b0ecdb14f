// Flags and files a second fresh-eyes QA pass (2026-11-29) found accepted
// with no effect, refused in misleading words, or ending in an invariant or
// an internal error: each is now one line naming the field, exit 2.
#include <gtest/gtest.h>

#include <string>
#include <utility>

#include "tests/locksim_binary.h"

namespace {

using locksim::testing::expect_bad_input;
using locksim::testing::locksim;
using locksim::testing::Outcome;

const locksim::testing::ScratchDir scratch_dir("locksim_qa_flags_");

// A lock script file NAME: `head` (its first keys, each ending in a comma)
// and the acquire step `acquire`, released by a plain DEL. Its path.
std::string script_file(const std::string& name, const std::string& head,
                        const std::string& acquire) {
  return scratch_dir
      .write(name,
             "{" + head + "\n  \"acquire\": " + acquire +
                 ",\n  \"release\": {\"command\": [\"DEL\", \"{resource}\"], \"success\": 1}\n}\n")
      .string();
}

// --fencing without --workload ran as a run without it, and said nothing.
TEST(QaFlags, AFencingCheckWithoutAStoreIsRefused) {
  expect_bad_input("run --fencing write-check",
                   "--fencing: the guarded store checks tokens, but there is no store; expected "
                   "--workload register, counter or inventory beside it");
  EXPECT_EQ(locksim("run --fencing write-check --workload counter --duration 2s --quiet").exit_code,
            0);
}

// The static scan of command names refused valid scripts: a call named in
// a comment or a string, or a name built by concatenation, runs nothing
// the scan can judge. A literal call of an unknown command is still refused.
TEST(QaFlags, TheCommandScanReadsOnlyCode) {
  const std::string set = R"(return redis.call('set', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]))";
  const std::string step_head = R"({"keys": ["{resource}"], "args": ["{token}", "{ttl_ms}"], )"
                                R"("success": "OK", "script": ")";
  int n = 0;
  for (const std::string& lua :
       {"-- we used to call redis.call('sadd', KEYS[1]) here\\n" + set,
        R"(--[[ redis.call('sadd') ]] )" + set, R"(local doc = \"redis.call('sadd')\"\n)" + set,
        std::string(R"(return redis.call('S'..'ET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]))")}) {
    const std::string file =
        script_file("scan" + std::to_string(++n) + ".json", "", step_head + lua + "\"}");
    const Outcome o = locksim("run --algorithm script:" + file + " --duration 2s --quiet");
    EXPECT_EQ(o.exit_code, 0) << lua << "\n" << o.err;
  }
  const std::string bad =
      script_file("scan_bad.json", "", step_head + "return redis.call('sadd', KEYS[1])\"}");
  expect_bad_input("run --algorithm script:" + bad, "redis command 'sadd' is not implemented");
}

// A bound on a search that does not run was accepted without a word.
TEST(QaFlags, ShrinkMaxRunsWithoutShrinkIsRefused) {
  expect_bad_input("sweep --seeds 1..2 --shrink-max-runs 10 --out " +
                       (scratch_dir.path() / "no_shrink").string(),
                   "--shrink-max-runs: only with --shrink, whose search it bounds");
}

// '-1s' has its unit; the sign is what is wrong.
TEST(QaFlags, ANegativeDurationIsToldByItsSign) {
  expect_bad_input("run --ttl -1s", "--ttl: expected a duration of zero or more, without a sign");
  expect_bad_input("run --fault 'pause c1 at -5s for 1s'",
                   "--fault[0]: expected a duration of zero or more, without a sign, got '-5s'");
  // Of several faults, the one that cannot be read is named by its index.
  expect_bad_input("run --fault 'pause c1 at 1s for 2s' --fault 'pause c1 at 5 for 1s'",
                   "--fault[1]: expected a duration with a unit");
}

// A setting with a range says it for every value outside it: '-5s' was told
// "zero or more" (then 0s was refused) and a huge one "below 10^9 seconds"
// (the limit is 7 days); the ZooKeeper tick's 0s got the run's 7 days.
TEST(QaFlags, ADurationOutsideItsRangeIsToldTheRange) {
  for (const char* value : {"-5s", "0s", "200h", "100000000000000000000h"}) {
    expect_bad_input(
        std::string("run --duration ") + value,
        std::string("--duration: expected a positive duration up to 7 days, got '") + value + "'");
  }
  for (const char* value : {"0s", "-1ms", "100h"}) {
    expect_bad_input(std::string("run --algorithm zk-recipe --zk-tick ") + value,
                     "--zk-tick: expected a duration from 1ms to 1m");
  }
  expect_bad_input("run --duration 5x", "--duration: expected a duration with a unit");
}

// A script file asking for 65 masters loaded, then broke an invariant
// (exit 70) when the run built its deployment.
TEST(QaFlags, AScriptAsksForNoMoreMastersThanARunBuilds) {
  const std::string file =
      script_file("wide.json", R"("masters": 65,)",
                  R"({"command": ["SET", "{resource}", "{token}", "NX", "PX", "{ttl_ms}"], )"
                  R"("success": "OK"})");
  expect_bad_input("run --algorithm script:" + file,
                   "masters: expected a whole number from 1 to 64");
}

// A lock that never grants has no margin: it was "internal error" (exit 3).
TEST(QaFlags, MarginOfALockThatNeverGrantsIsBadInput) {
  const std::string file = script_file(
      "never.json", "", R"json({"script": "return redis.error_reply('boom')", "success": 1})json");
  expect_bad_input("margin --fault pause --algorithm script:" + file,
                   "expected a lock the lone client can hold; it never held it");
}

// A 100,000-item pattern overflowed the stack inside Lua's C matcher and
// killed locksim (exit 139): a pattern past 4 KiB is the call's error reply.
TEST(QaFlags, AHugePatternIsAnErrorReplyNotACrash) {
  const std::string file = script_file(
      "pattern.json", "",
      R"json({"script": "return string.find('', string.rep('a*', 100000))", "success": 1})json");
  const std::string out = (scratch_dir.path() / "pattern").string();
  const Outcome o = locksim("run --algorithm script:" + file +
                            " --seed 1 --duration 3s --clients 1 --quiet --out " + out);
  EXPECT_EQ(o.exit_code, 0) << o.err;
  const std::string history = locksim::testing::slurp(out + "/history.jsonl");
  EXPECT_NE(history.find("a pattern of 200000 bytes: locksim's scripts allow at most 4096"),
            std::string::npos)
      << history;
}

// margin --help named run's outputs and run's hold, and left kinds out.
TEST(QaFlags, MarginHelpSaysWhatMarginDoes) {
  const Outcome o = locksim("margin --help");
  ASSERT_EQ(o.exit_code, 0) << o.err;
  for (const char* kind :
       {"client-drift", "server-clock-step-all", "server-clock-step-one", "delay-spike",
        "write margin.json and margin.html here", "--hold LO..HI=2s..2s"}) {
    EXPECT_NE(o.out.find(kind), std::string::npos) << kind << "\n" << o.out;
  }
  EXPECT_EQ(o.out.find("history.edn"), std::string::npos) << o.out;
}

// Two parameters in one --param were read as one, whose value was blamed
// on --ttl ("expected a duration ..., got '10s,max-attempts=5'").
TEST(QaFlags, TwoParametersInOneParamAreNamedAsSuch) {
  expect_bad_input("run --param ttl=10s,max-attempts=5",
                   "--param: expected one NAME=VALUE, got 'ttl=10s,max-attempts=5'");
}

// The program named itself by its path ("unknown flag for build/locksim (see
// build/locksim --help)"), whichever path it was run by.
TEST(QaFlags, TheProgramCallsItselfLocksim) {
  const Outcome o = locksim("--no-such-flag");
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_NE(o.err.find("unknown flag for locksim (see locksim --help)"), std::string::npos)
      << o.err;
}

// A fence element that is not an integer was read as "no token": a fenced
// lock ran unfenced without a word. A granting reply without its fence is
// now a client error, and the run's verdict unknown.
TEST(QaFlags, AGrantWithoutItsFenceIsAClientError) {
  const std::string step =
      R"js({"keys": ["{resource}"], "args": ["{token}", "{ttl_ms}"], "fence": {"element": 1},
        "success": {"element": 0, "integer": 1},
        "script": "if redis.call('set', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then )js";
  const std::string bad =
      script_file("fence_bad.json", "", step + R"(return {1, 'seven'} end return {0}"})");
  const Outcome o = locksim("run --algorithm script:" + bad + " --duration 5s");
  EXPECT_EQ(o.exit_code, 3) << o.out << o.err;
  EXPECT_NE(o.out.find("acquire.fence: element 1: expected an integer >= 0, got \"seven\""),
            std::string::npos)
      << o.out;
  const std::string good =
      script_file("fence_good.json", "", step + R"(return {1, 7} end return {0}"})");
  EXPECT_EQ(locksim("run --algorithm script:" + good + " --duration 5s --quiet").exit_code, 0);
}

// A scenario's simulation-only network.loss was ignored live, and `agree`
// compared a lossy simulated network with loopback as if the lock differed.
TEST(QaFlags, AgreeRefusesASettingLiveCannotApply) {
  const std::string file =
      scratch_dir.write("simonly.json", R"({"algorithm": "set-nx-lua", "network": {"loss": 0.01}})")
          .string();
  expect_bad_input("agree --scenario " + file,
                   file + ": network.loss: simulation-only (live runs on real TCP");
}

}  // namespace
