// The first hour with the locksim binary (issue 28): what `list` shows,
// where `--html` may write, a setting given twice, `check` on the files a
// run writes, and mistyped flags and names. Bad input is one line on stderr
// naming the field, exit 2, nothing on stdout.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "env/parse.h"
#include "harness/scenario.h"
#include "harness/suggest.h"
#include "tests/locksim_binary.h"

namespace {

namespace fs = std::filesystem;

using locksim::testing::expect_bad_input;
using locksim::testing::locksim;
using locksim::testing::Outcome;
using locksim::testing::slurp;

const locksim::testing::ScratchDir scratch_dir("locksim_cli_input_");

fs::path scratch() {
  return scratch_dir.path();
}

fs::path write(const std::string& name, const std::string& text) {
  return scratch_dir.write(name, text);
}

// --- 5. `locksim list`: one whole summary per scenario ---------------------------

// Each shipped scenario's line ends in its file's own one-line summary, never
// empty and never cut (it was the description up to the first ". ": empty
// for mysql-segmented-clock-skew, "The article's v1: SELECT .." for mysql-v1-deadlock).
TEST(CliInput, ListShowsEveryScenarioSummaryWhole) {
  const Outcome o = locksim("list");
  ASSERT_EQ(o.exit_code, 0) << o.err;
  for (const auto& b : locksim::harness::builtin_scenario_texts()) {
    SCOPED_TRACE(b.name);
    const auto file = nlohmann::json::parse(b.json);
    ASSERT_TRUE(file.contains("summary")) << "every shipped scenario has its one-line summary";
    const std::string summary = file["summary"];
    EXPECT_LE(summary.size(), 80u) << "one line of a listing";
    EXPECT_EQ(summary.back(), '.') << "a whole sentence";
    const size_t at = o.out.find("\n  " + std::string(b.name) + " ");
    ASSERT_NE(at, std::string::npos);
    const std::string line = o.out.substr(at + 1, o.out.find('\n', at + 1) - at - 1);
    const std::string tail = "] " + summary;
    EXPECT_EQ(line.substr(line.size() - std::min(line.size(), tail.size())), tail) << line;
  }
}

TEST(CliInput, FirstSentenceIsNotCutInsideOne) {
  using locksim::harness::first_sentence;
  EXPECT_EQ(first_sentence("The article's v1: SELECT ... FOR UPDATE on the row. Then more."),
            "The article's v1: SELECT ... FOR UPDATE on the row.");
  EXPECT_EQ(first_sentence("A lock, e.g. Redlock, vs. a fenced one. Next."),
            "A lock, e.g. Redlock, vs. a fenced one.");
  EXPECT_EQ(first_sentence("No sentence ends here, 1.5 s in"), "No sentence ends here, 1.5 s in");
  EXPECT_EQ(first_sentence("Stuck? Yes."), "Stuck?");
  EXPECT_EQ(first_sentence("  "), "(no description)");
  EXPECT_EQ(first_sentence(""), "(no description)");
}

TEST(CliInput, ScenarioSummaryFallsBackToTheFirstSentenceAndIsOneLine) {
  using locksim::harness::parse_scenario;
  const auto sc = parse_scenario(
      R"({"algorithm": "set-nx-lua", "description": "SELECT ... FOR UPDATE. More."})", "my.json");
  EXPECT_EQ(sc.summary, "SELECT ... FOR UPDATE.");
  EXPECT_EQ(parse_scenario(R"({"algorithm": "set-nx-lua"})", "my.json").summary,
            "(no description)");
  for (const char* bad : {R"({"algorithm": "set-nx-lua", "summary": ""})",
                          R"({"algorithm": "set-nx-lua", "summary": "two\nlines"})",
                          R"({"algorithm": "set-nx-lua", "summary": 3})"}) {
    try {
      parse_scenario(bad, "my.json");
      ADD_FAILURE() << "accepted " << bad;
    } catch (const locksim::ConfigError& e) {
      EXPECT_EQ(std::string(e.what()).rfind("my.json: summary: expected", 0), 0u) << e.what();
    }
  }
}

// `locksim list NAME` prints the shipped file byte for byte, to copy and change.
TEST(CliInput, ListScenarioPrintsItsFile) {
  for (const auto& b : locksim::harness::builtin_scenario_texts()) {
    const Outcome o = locksim("list " + std::string(b.name));
    ASSERT_EQ(o.exit_code, 0) << b.name << o.err;
    EXPECT_EQ(o.out, b.json) << b.name;
    EXPECT_TRUE(o.err.empty()) << o.err;
  }
  const std::string err = expect_bad_input("list set-nx-lua-gc-paus", "scenario");
  EXPECT_NE(err.find("did you mean set-nx-lua-gc-pause"), std::string::npos) << err;
}

// --- 10. --html is checked before the run, and said when written --------------

TEST(CliInput, UnwritableHtmlIsBadInputBeforeTheRun) {
  // An hour of virtual time: the error must come before any of it runs.
  expect_bad_input("run --duration 1h --html /nonexistent-locksim-dir/run.html", "--html");
  expect_bad_input("run --duration 1h --html " + scratch().string(), "--html");
  EXPECT_FALSE(fs::exists("/nonexistent-locksim-dir"));
}

TEST(CliInput, HtmlRunSaysWhereItWrote) {
  const fs::path page = scratch() / "run.html";
  const Outcome o = locksim("run --duration 5s --html " + page.string());
  EXPECT_EQ(o.exit_code, 0) << o.out << o.err;
  EXPECT_NE(o.out.find("\nwrote " + page.string() + "\n"), std::string::npos) << o.out;
  EXPECT_TRUE(fs::exists(page));
  EXPECT_FALSE(fs::exists(page.string() + ".tmp"));
  const Outcome quiet = locksim("run --duration 5s --quiet --html " + page.string());
  EXPECT_EQ(quiet.exit_code, 0);
  EXPECT_TRUE(quiet.out.empty()) << quiet.out;
}

// --- 11. A parameter given twice ------------------------------------------------

TEST(CliInput, ParameterGivenTwiceIsAnError) {
  expect_bad_input("run --param ttl=2s --param ttl=3s", "'ttl' given twice");
  expect_bad_input("run --ttl 3s --param ttl=2s", "'ttl' given twice");
  expect_bad_input(
      "run --algorithm redlock --param quorum=3 --param drift-factor=0.01 "
      "--param quorum=4",
      "'quorum' given twice");
  expect_bad_input("run --ttl 2s --ttl 3s", "--ttl: expected once, given 2 times");
  expect_bad_input("live --param ttl=2s --ttl 3s", "'ttl' given twice");
  // In a scenario file too: the JSON reader would keep the last of two keys.
  const fs::path twice = write("twice.json", R"({"algorithm": "set-nx-lua", "seed": 1,
      "params": {"ttl": "2s", "ttl": "3s"}})");
  expect_bad_input("run --scenario " + twice.string(),
                   twice.string() + ": params.ttl: given twice");
  const fs::path seed = write("seed.json", R"({"algorithm": "set-nx-lua", "seed": 1, "seed": 2})");
  expect_bad_input("run --scenario " + seed.string(), seed.string() + ": seed: given twice");
  // And in an expectations file: two verdicts for one cell would gate on the last.
  const fs::path expect = write("expect.json", R"({"locksim_expectations": 1, "cells": [
      {"algorithm": "set-nx-lua", "profile": "pause", "verdict": "safe", "verdict": "any"}]})");
  expect_bad_input("sweep --algorithms set-nx-lua --profiles pause --seeds 1..2 --out " +
                       (scratch() / "twice_sweep").string() + " --expect " + expect.string(),
                   "--expect: " + expect.string() + ": cells.verdict: given twice");
  // Different parameters, each once, are fine.
  const Outcome ok = locksim(
      "run --quiet --duration 5s --algorithm redlock --param quorum=3 --param drift-factor=0.01");
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
}

// --- 12. `locksim check` reads what `locksim run --out` writes ----------------------

// Both files of a run, told apart by content (a renamed copy reads the same),
// give the run's safety verdict.
TEST(CliInput, CheckReadsBothHistoryFormatsByContent) {
  for (const char* scenario : {"set-nx-lua-gc-pause", "set-nx-lua-restart-fsync-always"}) {
    SCOPED_TRACE(scenario);
    const fs::path out = scratch() / scenario;
    const Outcome run =
        locksim(std::string("run --quiet --scenario ") + scenario + " --out " + out.string());
    ASSERT_LE(run.exit_code, 1) << run.err;
    const int expected = run.exit_code;
    fs::copy_file(out / "history.jsonl", out / "jsonl-named.edn");
    fs::copy_file(out / "history.edn", out / "edn-named.jsonl");
    std::string headline;
    for (const char* file :
         {"history.edn", "history.jsonl", "jsonl-named.edn", "edn-named.jsonl"}) {
      const Outcome check = locksim("check " + (out / file).string());
      EXPECT_EQ(check.exit_code, expected) << file << "\n" << check.out << check.err;
      EXPECT_TRUE(check.err.empty()) << file << ": " << check.err;
      // The same ops and verdict: the headline differs only in the path.
      std::string h = check.out.substr(0, check.out.find('\n'));
      h.replace(h.find((out / file).string()), (out / file).string().size(), "PATH");
      if (headline.empty()) headline = h;
      EXPECT_EQ(h, headline) << file;
    }
  }
}

TEST(CliInput, CheckRefusesAHistoryWithoutClientOps) {
  expect_bad_input("check " + write("empty.edn", "").string(), "no client ops");
  expect_bad_input("check " + write("blank.jsonl", "\n\n").string(), "no client ops");
  expect_bad_input(
      "check " + write("nemesis.edn", "{:process :nemesis, :type :info, :f :kill}\n").string(),
      "no client ops");
  expect_bad_input(
      "check " + write("nemesis.jsonl",
                       R"({"index":0,"time_ns":5,"process":"nemesis","type":"info","f":"pause",)"
                       R"("value":["c1","1s"]})"
                       "\n")
                     .string(),
      "no client ops");
}

TEST(CliInput, CheckNamesTheJsonLinesFileAndLine) {
  const fs::path p = write("bad.jsonl",
                           "{\"index\":0,\"time_ns\":1,\"process\":0,\"type\":\"invoke\","
                           "\"f\":\"acquire\",\"client\":\"c1\",\"token\":\"\"}\n"
                           "\n"
                           "{\"index\":1,\"time_ns\":2,\"process\":0,\"type\":\"done\","
                           "\"f\":\"acquire\",\"client\":\"c1\",\"token\":\"\"}\n");
  expect_bad_input("check " + p.string(), p.string() + " line 3: field 'type'");
}

// Some editors begin a file with a UTF-8 byte-order mark: JSON lines read as
// EDN then ("expected an op map ... got a symbol"). Either format skips it.
TEST(CliInput, CheckReadsPastAByteOrderMark) {
  const std::string bom = "\xEF\xBB\xBF";
  for (const auto& [name, text] :
       {std::pair{"bom.jsonl", bom + "{\"index\":0,\"time_ns\":1,\"process\":0,\"type\":"
                                     "\"invoke\",\"f\":\"acquire\",\"client\":\"c1\"}\n"},
        std::pair{"bom.edn", bom + "{:process 0, :type :invoke, :f :acquire}\n"}}) {
    const Outcome o = locksim("check " + write(name, text).string());
    EXPECT_EQ(o.exit_code, 0) << name << ": " << o.out << o.err;
  }
}

// "1 client op, 1 nemesis op skipped", not "1 client ops".
TEST(CliInput, CheckCountsOneOpInTheSingular) {
  const fs::path p = write("one.edn",
                           "{:process :nemesis, :type :info, :f :kill}\n"
                           "{:process 0, :type :invoke, :f :acquire}\n");
  const Outcome o = locksim("check " + p.string());
  EXPECT_EQ(o.exit_code, 0) << o.out << o.err;
  EXPECT_NE(o.out.find("(1 client op, 1 nemesis op skipped)"), std::string::npos) << o.out;
}

// --- 13. Mistyped flags, commands and scenario names ----------------------------------

TEST(CliInput, UnknownFlagSuggestsTheNearest) {
  std::string err = expect_bad_input("run --durration 5s", "--durration");
  EXPECT_NE(err.find("did you mean --duration?"), std::string::npos) << err;
  err = expect_bad_input("run --sed=4", "--sed");
  EXPECT_NE(err.find("did you mean --seed"), std::string::npos) << err;
  err = expect_bad_input("sweep --algoritms all --out x", "--algoritms");
  EXPECT_NE(err.find("did you mean --algorithms?"), std::string::npos) << err;
  err = expect_bad_input("check --modle mutex h.edn", "--modle");
  EXPECT_NE(err.find("did you mean --model?"), std::string::npos) << err;
  err = expect_bad_input("rnu --seed 1", "rnu");
  EXPECT_NE(err.find("did you mean run?"), std::string::npos) << err;
  // Nothing near: no guess, a pointer to --help.
  err = expect_bad_input("run --colour blue", "--colour");
  EXPECT_EQ(err.find("did you mean"), std::string::npos) << err;
  EXPECT_NE(err.find("locksim run --help"), std::string::npos) << err;
}

// CLI11 reads an on/off flag's value only after '=', and said "The following
// argument was not expected: true", naming neither the flag nor the fix.
TEST(CliInput, AFlagsValueAfterASpaceNamesTheFlag) {
  std::string err = expect_bad_input("run --algorithm redlock --hold-within-validity true",
                                     "--hold-within-validity");
  EXPECT_NE(err.find("got 'true' after a space (--hold-within-validity, or "
                     "--hold-within-validity=false)"),
            std::string::npos)
      << err;
  err = expect_bad_input("sweep --quiet yes --out x", "--quiet");
  EXPECT_NE(err.find("got 'yes'"), std::string::npos) << err;
  // After '=' it is the flag's value, and a flag before a value-taking flag is fine.
  EXPECT_EQ(locksim("run --quiet --failover=false --seed 2").exit_code, 0);
}

// A word nothing takes was CLI11's "The following argument was not expected".
TEST(CliInput, AStrayArgumentNamesItAndTheCommand) {
  std::string err = expect_bad_input("check a.edn b.edn", "b.edn");
  EXPECT_NE(err.find("b.edn: an argument locksim check does not take (see locksim check --help)"),
            std::string::npos)
      << err;
  err = expect_bad_input("run one two", "one");
  EXPECT_NE(err.find("one: an argument locksim run does not take"), std::string::npos) << err;
}

// A bug report's first line: which locksim ran, built from what.
TEST(CliInput, VersionNamesTheCommitAndTheBuild) {
  const Outcome o = locksim("--version");
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_TRUE(o.err.empty()) << o.err;
  // "unknown commit" only where the source is not a git checkout.
  static const std::regex line(
      R"(locksim \d+\.\d+\.\d+ \((commit [0-9a-f]{7,}(\+changes)?, \d{4}-\d\d-\d\d|unknown commit); )"
      R"(\S+ [0-9.]+, \S+( sanitize=\S+)?\)\n)");
  EXPECT_TRUE(std::regex_match(o.out, line)) << o.out;
  // Only locksim's own: after a command it is a mistake, and says where it belongs.
  const std::string err = expect_bad_input("run --version", "--version");
  EXPECT_NE(err.find("(locksim --version)"), std::string::npos) << err;
}

TEST(CliInput, MistypedScenarioSuggestsAFewNotAll) {
  const std::string err = expect_bad_input("run --scenario redlock-gc-paus", "--scenario");
  EXPECT_NE(err.find("did you mean redlock-gc-pause"), std::string::npos) << err;
  EXPECT_EQ(err.find("zk-recipe-partition"), std::string::npos) << "not all 42: " << err;
  EXPECT_LT(err.size(), 300u) << err;
  const std::string far = expect_bad_input("run --scenario qqqqqqqqqqqqq", "--scenario");
  EXPECT_NE(far.find("see locksim list"), std::string::npos) << far;
}

TEST(CliInput, NearestNamesAreClosestFirstAndFew) {
  using locksim::harness::nearest_names;
  EXPECT_EQ(locksim::harness::edit_distance("kitten", "sitting"), 3u);
  EXPECT_EQ(locksim::harness::edit_distance("", "abc"), 3u);
  const std::vector<std::string> flags = {"--seed", "--duration", "--clients", "--hold"};
  EXPECT_EQ(nearest_names("--durations", flags, 3), std::vector<std::string>{"--duration"});
  EXPECT_EQ(nearest_names("--sed", flags, 3), std::vector<std::string>{"--seed"});
  EXPECT_TRUE(nearest_names("--zzzzzzzzzz", flags, 3).empty());
  EXPECT_EQ(locksim::harness::did_you_mean({"a", "b", "c"}), "did you mean a, b or c?");
}

// --- The small things -----------------------------------------------------------------

// A scenario run says what its file expected beside what it found, and
// what the scenario is about; result.json carries both results.
TEST(CliInput, ScenarioRunShowsExpectedBesideFound) {
  const fs::path out = scratch() / "expected";
  const Outcome o = locksim("run --scenario naive-setnx-crash-between --out " + out.string());
  EXPECT_EQ(o.exit_code, 1) << o.err;
  EXPECT_EQ(o.out.rfind("LIVENESS", 0), 0u) << "the verdict still comes first:\n" << o.out;
  EXPECT_NE(o.out.find("\nscenario naive-setnx-crash-between: expected liveness, found "
                       "liveness\n  The naive lock sets its key with SETNX"),
            std::string::npos)
      << o.out;
  const auto result = nlohmann::json::parse(slurp(out / "result.json"));
  EXPECT_EQ(result["scenario"]["name"], "naive-setnx-crash-between");
  EXPECT_EQ(result["scenario"]["expected"], "liveness");
  EXPECT_EQ(result["scenario"]["found"], "liveness");
  // A run without a scenario has no such key.
  const fs::path plain = scratch() / "plain";
  ASSERT_EQ(locksim("run --quiet --duration 5s --out " + plain.string()).exit_code, 0);
  EXPECT_FALSE(nlohmann::json::parse(slurp(plain / "result.json")).contains("scenario"));
}

// "1 run", not "1 runs"; "s/matrix", not "s//matrix"; no "0ns left" when done.
TEST(CliInput, SweepOutputHasNoWordingSlips) {
  const fs::path out = scratch() / "s";
  const Outcome o = locksim(
      "sweep --algorithms set-nx-lua --profiles none --seeds 1..1 "
      "--duration 5s --jobs 1 --out " +
      out.string() + "/");
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.out.find("wrote " + (out / "matrix.{json,md,html}").string() + ", junit.xml: 1 run "),
            std::string::npos)
      << o.out;
  EXPECT_EQ(o.out.find("//"), std::string::npos) << o.out;
  // The last progress line, when every run is done.
  ASSERT_FALSE(o.err.empty());
  const std::string last = o.err.substr(o.err.rfind('\n', o.err.size() - 2) + 1);
  EXPECT_EQ(last.rfind("sweep: 1/1 runs, ", 0), 0u) << o.err;
  EXPECT_EQ(last.find(" left"), std::string::npos) << o.err;
  EXPECT_NE(last.find(", 0 findings\n"), std::string::npos) << o.err;
}

// What `locksim live` and the settings table say of live mode is what live
// mode does: its own defaults, a seed that does not replay, MariaDB too.
TEST(CliInput, LiveHelpAndTheSettingsTableTellLiveDefaults) {
  const Outcome help = locksim("live --help");
  EXPECT_NE(help.out.find("--duration DURATION=10s"), std::string::npos) << help.out;
  EXPECT_NE(help.out.find("--hold LO..HI=50ms..200ms"), std::string::npos) << help.out;
  EXPECT_EQ(help.out.find("byte for byte"), std::string::npos) << help.out;
  EXPECT_NE(help.out.find("does not replay"), std::string::npos) << help.out;
  EXPECT_EQ(help.out.find("virtual"), std::string::npos) << "live runs in real time\n" << help.out;
  EXPECT_NE(locksim("--help").out.find("mariadbd"), std::string::npos);
  const std::string table = locksim("list --settings").out;
  EXPECT_NE(table.find("(also live; live default `10s`; live: run length in real time"),
            std::string::npos)
      << table;
  EXPECT_NE(table.find("(also live; live default `50ms..200ms`)"), std::string::npos) << table;
}

// The README's output block that follows `marker` (a line of it).
std::string readme_block_after(const std::string& marker) {
  const std::string readme = slurp(fs::path(LOCKSIM_SOURCE_DIR) / "README.md");
  const size_t at = readme.find(marker);
  if (at == std::string::npos) return "(marker not in README.md: " + marker + ")";
  const size_t open = readme.find("```\n", at + marker.size());
  const size_t close = readme.find("\n```", open + 4);
  return readme.substr(open + 4, close + 1 - (open + 4));
}

// The README shows real output: the demo's run and the violating scenario
// print exactly what it pastes, and the violation it explains comes from the
// pause (the first overlap starts after the holder was paused, not before).
TEST(CliInput, TheReadmeExamplesPrintWhatTheReadmeShows) {
  const Outcome demo = locksim("run --algorithm set-nx-lua --seed 42");
  EXPECT_EQ(demo.out, readme_block_after("runs `build-demo/locksim run --algorithm set-nx-lua "
                                         "--seed 42`:"));
  const Outcome broken = locksim("run --scenario set-nx-lua-gc-pause");
  EXPECT_EQ(broken.exit_code, 1);
  // The marker ends the command's own ```sh block; the output block follows.
  EXPECT_EQ(broken.out,
            readme_block_after("build/locksim run --scenario set-nx-lua-gc-pause\n```\n"));
  const size_t pause = broken.out.find("2.000s pause c3 for 12s");
  const size_t first_overlap = broken.out.find("both held the lock in [6.890s");
  EXPECT_NE(pause, std::string::npos);
  EXPECT_NE(first_overlap, std::string::npos) << "after the pause began at 2 s and the 5 s TTL";
}

// --- 6. One name for a client and one number for an op, in every output ---------

// The op number after "acquire op " in `text` from `from` on, or -1.
long long op_after(const std::string& text, const std::string& marker, size_t from = 0) {
  const size_t at = text.find(marker, from);
  if (at == std::string::npos) return -1;
  return std::stoll(text.substr(at + marker.size()));
}

// The overlap line, the history checker's explanation, result.json and
// history.jsonl name the second holder the same way ("c2") and its acquire by
// the same op, whose line in history.jsonl is that client's acquire :ok.
TEST(CliInput, AClientAndItsAcquireHaveOneNameEverywhere) {
  const fs::path out = scratch() / "one_name";
  const Outcome o = locksim(
      "run --algorithm set-nx-lua --seed 1 --duration 20s --clients 3 --fault 'pause @holder at "
      "3s for 15s' --out " +
      out.string());
  ASSERT_EQ(o.exit_code, 1) << o.out << o.err;
  // "  1. c3 (acquire op 8, release op 49) and c2 (acquire op 33, release op 36) both held"
  const size_t line = o.out.find("  1. ");
  ASSERT_NE(line, std::string::npos) << o.out;
  const size_t second = o.out.find(") and ", line);
  ASSERT_NE(second, std::string::npos) << o.out;
  const std::string b_client = o.out.substr(second + 6, o.out.find(' ', second + 6) - second - 6);
  const long long b_acquire = op_after(o.out, "(acquire op ", second);
  ASSERT_GE(b_acquire, 0) << o.out;
  // "history: ... c2 (process 1) acquired the lock (acquire op 33 at 11.860s, invoked at op 32"
  const size_t history = o.out.find("history: ");
  ASSERT_NE(history, std::string::npos) << o.out;
  EXPECT_NE(o.out.find(b_client + " (process ", history), std::string::npos) << o.out;
  EXPECT_EQ(op_after(o.out, "acquired the lock (acquire op ", history), b_acquire) << o.out;

  const auto result = nlohmann::json::parse(slurp(out / "result.json"));
  const auto& b = result["safety"]["overlaps"][0]["b"];
  EXPECT_EQ(b["client"], b_client);
  EXPECT_EQ(b["acquire_index"], b_acquire);
  std::istringstream jsonl(slurp(out / "history.jsonl"));
  std::string row;
  for (long long i = 0; i <= b_acquire && std::getline(jsonl, row); ++i) {
  }
  const auto op = nlohmann::json::parse(row);
  EXPECT_EQ(op["index"], b_acquire);
  EXPECT_EQ(op["client"], b_client);
  EXPECT_EQ(op["type"], "ok");
  EXPECT_EQ(op["f"], "acquire");
}

// --- After a finding, a sweep or a check: one "next:" line ------------------------

std::string next_line(const std::string& out) {
  const size_t at = out.find("\nnext: ");
  if (at == std::string::npos) return "";
  return out.substr(at + 1, out.find('\n', at + 1) - at - 1);
}

// A violating run ends in the commands that draw and shrink this very run:
// drawing prints the same summary and writes the timeline, shrinking gives a
// scenario that still violates. A clean run has no next line.
TEST(CliInput, AFindingEndsInTheCommandThatDrawsIt) {
  const Outcome clean = locksim("run --algorithm set-nx-lua --seed 42 --duration 10s");
  EXPECT_EQ(clean.exit_code, 0) << clean.out << clean.err;
  EXPECT_EQ(next_line(clean.out), "") << clean.out;

  const Outcome broken = locksim("run --scenario set-nx-lua-gc-pause");
  ASSERT_EQ(broken.exit_code, 1) << broken.out << broken.err;
  const std::string next = next_line(broken.out);
  // "next: locksim run ARGS --html timeline.html to see it on a timeline; locksim shrink ARGS for
  // ..."
  const std::string draw = " --html timeline.html to see it on a timeline; locksim shrink ";
  const size_t cut = next.find(draw);
  ASSERT_NE(cut, std::string::npos) << next;
  const std::string args = next.substr(std::string("next: locksim run ").size(),
                                       cut - std::string("next: locksim run ").size());
  EXPECT_EQ(next.substr(cut + draw.size()), args + " for the smallest run that fails the same way");
  const std::string html = (scratch() / "drawn.html").string();
  const Outcome drawn = locksim("run " + args + " --html " + html);
  EXPECT_EQ(drawn.exit_code, 1) << drawn.out << drawn.err;
  EXPECT_EQ(drawn.out.substr(0, drawn.out.find("\nwrote ")),
            broken.out.substr(0, broken.out.find("\nnext: ")));
  const fs::path shrunk = scratch() / "shrunk.json";
  const Outcome shrink = locksim("shrink " + args + " --out " + shrunk.string());
  EXPECT_EQ(shrink.exit_code, 0) << shrink.out << shrink.err;
  EXPECT_EQ(locksim("run --quiet --scenario " + shrunk.string()).exit_code, 1);
  EXPECT_NE(slurp(html).find("<svg"), std::string::npos);
  EXPECT_EQ(next_line(drawn.out), "next: open " + html +
                                      " to see it on a timeline; locksim shrink " + args +
                                      " for the smallest run that fails the same way");
}

TEST(CliInput, ASweepAndAnInvalidCheckSayWhatToOpenNext) {
  const fs::path dir = scratch() / "next_sweep";
  const Outcome sweep =
      locksim("sweep --algorithms set-nx-lua --profiles pause --seeds 1..3 --out " + dir.string());
  EXPECT_EQ(sweep.exit_code, 0) << sweep.out << sweep.err;
  EXPECT_EQ(next_line(sweep.out), "next: open " + (dir / "matrix.html").string() +
                                      " in a browser: each red cell links its first failing "
                                      "seed's timeline");
  const fs::path out = scratch() / "next_check";
  ASSERT_EQ(locksim("run --scenario set-nx-lua-gc-pause --quiet --out " + out.string()).exit_code,
            1);
  const std::string history = (out / "history.edn").string();
  const Outcome invalid = locksim("check " + history);
  EXPECT_EQ(invalid.exit_code, 1) << invalid.out << invalid.err;
  EXPECT_EQ(next_line(invalid.out), "next: locksim check " + history +
                                        " --knossos CMD to have Knossos referee the same history "
                                        "(docs/how-to/knossos.md)");
}

// A hang stops a client's work while its process runs on: a server has no
// work of its own, and the fault says so; a hang without its time is bad.
TEST(CliInput, OnlyAClientCanHang) {
  expect_bad_input(
      "run --quiet --algorithm redisson --fault 'hang redis-1 at 1s for 2s'",
      "--fault[0]: expected a client to hang (cN, @holder or @grantee), got 'redis-1'");
  expect_bad_input("run --quiet --algorithm redisson --fault 'hang c1'", "--fault");
  expect_bad_input("run --quiet --algorithm redisson-leased --ttl -5s", "--ttl");
}

// The fair lock's wait time is a duration from 1 ms to a day.
TEST(CliInput, AFairLockWaitTimeOutOfRangeNamesTheField) {
  expect_bad_input("run --quiet --algorithm redisson-fair --param wait-time=0s",
                   "--param wait-time");
  expect_bad_input("run --quiet --algorithm redisson-fair --param wait-time=1000h",
                   "--param wait-time");
}

}  // namespace
