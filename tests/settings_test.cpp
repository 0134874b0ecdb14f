// The settings table, row by row, through the real binary: for every setting
// a non-default value given as a flag shows in result.json and the replay
// command, the replay reproduces the history byte for byte, the same value in
// a scenario file gives the same history, and an invalid value exits 2 naming
// the setting as the user wrote it.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "algorithms/registry.h"
#include "harness/run_config.h"
#include "harness/settings.h"
#include "tests/locksim_binary.h"

namespace locksim::harness {
namespace {

using locksim::testing::locksim;
using locksim::testing::Outcome;
using locksim::testing::slurp;
using Json = nlohmann::json;

// Per row: a valid non-default value, an invalid one ("" where the command
// line cannot carry a bad value, as for a bare flag), and what the row needs
// around it to be meaningful (as flags, and as scenario JSON).
struct Example {
  std::string good;
  std::string bad;
  std::string context_flags;
  Json context_json = Json::object();
};

const std::map<std::string, Example>& examples() {
  static const std::map<std::string, Example> table = {
      {"--algorithm", {"naive-setnx", "paxos", "", Json::object()}},
      {"--seed", {"7", "-1", "", Json::object()}},
      {"--duration", {"8s", "0s", "", Json::object()}},
      {"--clients", {"3", "0", "", Json::object()}},
      {"--hold", {"500ms..900ms", "3s..1s", "", Json::object()}},
      {"--retry-pause", {"120ms", "-1s", "", Json::object()}},
      {"--idle", {"1s..2s", "3s..1s", "", Json::object()}},
      {"--hold-within-validity", {"true", "", "", Json::object()}},
      {"--param", {"max-attempts=7", "max-attempts", "", Json::object()}},
      {"--stuck-after", {"4s", "0s", "", Json::object()}},
      {"--schedule", {"fifo", "random", "", Json::object()}},
      {"--workload", {"counter", "bank", "", Json::object()}},
      {"--fencing",
       {"write-check", "read-check", "--workload register",
        Json{{"resource", {{"workload", "register"}}}}}},
      {"--items",
       {"14", "-1", "--workload inventory", Json{{"resource", {{"workload", "inventory"}}}}}},
      {"--masters",
       {"2", "0", "--algorithm redlock",
        Json{{"algorithm", "redlock"}}}},  // one-master locks refuse 2
      {"--replicas", {"1", "9", "", Json::object()}},
      {"--replication-lag", {"40ms", "5", "--replicas 1", Json{{"redis", {{"replicas", 1}}}}}},
      {"--persistence", {"aof-always", "fsync", "", Json::object()}},
      {"--rdb-interval",
       {"7s", "0s", "--persistence rdb", Json{{"redis", {{"persistence", "rdb"}}}}}},
      {"--failover", {"true", "", "--replicas 1", Json{{"redis", {{"replicas", 1}}}}}},
      // Read only with a failover (harness/setting_needs.h), as the two below.
      {"--down-after",
       {"700ms", "0s", "--replicas 1 --failover",
        Json{{"redis", {{"replicas", 1}, {"failover", true}}}}}},
      {"--discovery-delay",
       {"300ms", "-1s", "--replicas 1 --failover",
        Json{{"redis", {{"replicas", 1}, {"failover", true}}}}}},
      {"--timeout", {"none", "never", "", Json::object()}},
      {"--zk-servers", {"5", "2", "", Json::object()}},
      {"--zk-tick", {"500ms", "0s", "", Json::object()}},
      {"--session-timeout", {"6s", "0s", "", Json::object()}},
      {"--zk-sync-limit-ticks", {"3", "0", "", Json::object()}},
      {"--zk-election-delay", {"1s", "-1s", "", Json::object()}},
      {"--zk-reconnect-pause", {"50ms", "0s", "", Json::object()}},
      {"--latency-base", {"1ms", "-1ms", "", Json::object()}},
      {"--latency-jitter-mean", {"2ms", "1", "", Json::object()}},
      {"--loss", {"0.01", "1.5", "", Json::object()}},
      {"--retransmission-limit", {"30s", "0s", "", Json::object()}},
      {"--mysql-service-time", {"1ms", "-1ms", "", Json::object()}},
      {"--lock-wait-timeout", {"3s", "0s", "", Json::object()}},
      {"--mysql-timeout", {"20s", "0s", "", Json::object()}},
      {"--flush-log-at-trx-commit", {"2", "3", "", Json::object()}},
      {"--isolation", {"read-committed", "serializable", "", Json::object()}},
      {"--mysql-replicas", {"2", "9", "", Json::object()}},
      {"--mysql-replication-lag",
       {"50ms", "-1ms", "--mysql-replicas 1", Json{{"mysql", {{"replicas", 1}}}}}},
      {"--semi-sync", {"true", "", "--mysql-replicas 1", Json{{"mysql", {{"replicas", 1}}}}}},
      {"--semi-sync-timeout",
       {"3s", "0s", "--mysql-replicas 1 --semi-sync",
        Json{{"mysql", {{"replicas", 1}, {"semi_sync", true}}}}}},
      {"--mysql-failover", {"true", "", "--mysql-replicas 1", Json{{"mysql", {{"replicas", 1}}}}}},
      {"--mysql-down-after",
       {"700ms", "0s", "--mysql-replicas 1 --mysql-failover",
        Json{{"mysql", {{"replicas", 1}, {"failover", true}}}}}},
      {"--mysql-discovery-delay",
       {"300ms", "-1s", "--mysql-replicas 1 --mysql-failover",
        Json{{"mysql", {{"replicas", 1}, {"failover", true}}}}}},
      {"--profile", {"pause+partition", "pause+paws", "", Json::object()}},
      {"--fault", {"pause c1 at 2s for 1s", "pause c1 sometime", "", Json::object()}},
  };
  return table;
}

// A backend's row is tried on an algorithm of that backend (another
// backend's setting is refused): MySQL's on mysql-center, ZooKeeper's on
// zk-recipe, the rest on the default, set-nx-lua.
Example example_of(const Setting& s) {
  Example ex = examples().at(s.flag);
  const std::string section = backend_section(s);
  const char* algorithm = section == "mysql"       ? "mysql-center"
                          : section == "zookeeper" ? "zk-recipe"
                                                   : nullptr;
  if (algorithm != nullptr) {
    ex.context_flags = std::string("--algorithm ") + algorithm + " " + ex.context_flags;
    ex.context_json["algorithm"] = algorithm;
  }
  return ex;
}

// The algorithm a row's runs use, and whether it has a "ttl" (ZooKeeper's
// recipes lease by session).
std::string algorithm_of(const Example& ex) {
  return ex.context_json.value("algorithm", std::string("set-nx-lua"));
}
bool takes_ttl(const Example& ex) {
  const algorithms::AlgorithmSpec* spec = algorithms::find_algorithm(algorithm_of(ex));
  return spec != nullptr && std::any_of(spec->params.begin(), spec->params.end(),
                                        [](const auto& p) { return p.name == "ttl"; });
}

// Every run here is short, and the non-default values apply to it; the row
// under test is left out (a setting given twice is an error).
std::string base_args(const Setting& tested) {
  std::string out = takes_ttl(example_of(tested)) ? "--ttl 1s" : "";
  if (tested.flag != "--duration") out += " --duration 6s";
  if (tested.flag != "--hold") out += " --hold 200ms..600ms";
  return out;
}

std::filesystem::path temp_dir(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("locksim_settings_" + std::to_string(::getpid()) + "_" + name);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

std::string flag_args(const Setting& s, const std::string& value) {
  if (s.kind == Setting::Kind::kFlag) return s.flag;
  return s.flag + " '" + value + "'";
}

// The value as it sits in scenario JSON (and result.json's params).
Json json_value(const Setting& s, const std::string& value) {
  switch (s.kind) {
    case Setting::Kind::kFlag:
      return value == "true";
    case Setting::Kind::kInteger:
    case Setting::Kind::kNumber:
      return Json::parse(value);
    case Setting::Kind::kList:
      return Json::array({value});
    case Setting::Kind::kParams: {
      const size_t eq = value.find('=');
      return Json{{value.substr(0, eq), value.substr(eq + 1)}};
    }
    case Setting::Kind::kText:
      break;
  }
  return value;
}

// Puts `v` at the dotted path of `j` ("redis.timeout").
void put(Json& j, const std::string& path, const Json& v) {
  const size_t dot = path.find('.');
  if (dot == std::string::npos) {
    j[path] = v;
  } else {
    j[path.substr(0, dot)][path.substr(dot + 1)] = v;
  }
}

const Json& at_path(const Json& j, const std::string& path) {
  const size_t dot = path.find('.');
  return dot == std::string::npos ? j.at(path) : j.at(path.substr(0, dot)).at(path.substr(dot + 1));
}

TEST(Settings, EveryRowHasTestExamples) {
  for (const Setting& s : all_settings()) {
    EXPECT_EQ(examples().count(s.flag), 1u) << s.flag << ": add it to examples() in this test";
    EXPECT_NE(s.help, "") << s.flag;
  }
  EXPECT_EQ(examples().size(), all_settings().size()) << "examples() names a row that is gone";
}

// parse(format(x)) == x for every row's default and example: what replays rely on.
TEST(Settings, FormatReadsBackToTheSameValue) {
  for (const Setting& s : all_settings()) {
    if (s.items) continue;  // lists: each item is given to parse() as written
    RunConfig c;
    s.parse(c, examples().at(s.flag).good, s.flag);
    RunConfig again;
    s.parse(again, s.format(c), s.flag);
    EXPECT_EQ(s.format(again), s.format(c)) << s.flag;
    EXPECT_NE(s.format(c), s.format(RunConfig{}))
        << s.flag << ": the example must not be the default";
  }
}

class EachSetting : public ::testing::TestWithParam<std::string> {};

TEST_P(EachSetting, FlagShowsInResultAndReplayAndReplaysByteForByte) {
  const Setting& s = *find_setting_by_flag(GetParam());
  const Example ex = example_of(s);
  const auto dir = temp_dir(s.flag.substr(2));
  const std::string args = base_args(s) + " " + ex.context_flags + " " + flag_args(s, ex.good);
  const Outcome first = locksim("run " + args + " --quiet --out " + (dir / "a").string());
  ASSERT_TRUE(first.exit_code == 0 || first.exit_code == 1) << args << "\n" << first.err;

  const Json result = Json::parse(slurp(dir / "a" / "result.json"));
  const Json& echoed = s.flag == "--algorithm" ? result.at("algorithm")
                       : s.flag == "--seed"    ? result.at("seed")
                                               : at_path(result.at("params"), s.json_path);
  if (s.kind == Setting::Kind::kParams) {
    EXPECT_EQ(echoed.at("max-attempts"), "7") << echoed.dump();
  } else {
    EXPECT_EQ(echoed, json_value(s, ex.good)) << s.flag << " in result.json: " << echoed.dump();
  }
  const std::string replay = result.at("replay").get<std::string>();
  EXPECT_NE(replay.find(" " + s.flag), std::string::npos) << replay;

  ASSERT_EQ(replay.rfind("locksim run ", 0), 0u) << replay;
  const Outcome again = locksim(replay.substr(std::string("locksim ").size()) + " --quiet --out " +
                                (dir / "b").string());
  EXPECT_EQ(again.exit_code, first.exit_code) << replay << "\n" << again.err;
  EXPECT_EQ(slurp(dir / "b" / "history.jsonl"), slurp(dir / "a" / "history.jsonl")) << replay;
  std::filesystem::remove_all(dir);
}

TEST_P(EachSetting, ScenarioFileGivesTheSameHistoryAsTheFlag) {
  const Setting& s = *find_setting_by_flag(GetParam());
  const Example ex = example_of(s);
  const auto dir = temp_dir("scenario_" + s.flag.substr(2));
  const std::string args = base_args(s) + " " + ex.context_flags + " " + flag_args(s, ex.good);
  const Outcome by_flag = locksim("run " + args + " --quiet --out " + (dir / "a").string());

  Json scenario = ex.context_json;
  if (s.flag != "--duration") scenario["duration"] = "6s";
  if (s.flag != "--hold") scenario["workload"]["hold"] = "200ms..600ms";
  if (takes_ttl(ex)) scenario["params"]["ttl"] = "1s";
  if (s.kind == Setting::Kind::kParams) {
    scenario["params"]["max-attempts"] = "7";
  } else {
    put(scenario, s.json_path, json_value(s, ex.good));
  }
  if (!scenario.contains("algorithm")) scenario["algorithm"] = "set-nx-lua";
  const auto file = dir / "scenario.json";
  std::ofstream(file) << scenario.dump(2);
  const Outcome by_file =
      locksim("run --scenario " + file.string() + " --seed " +
              (s.flag == "--seed" ? ex.good : "1") + " --quiet --out " + (dir / "b").string());
  EXPECT_EQ(by_file.exit_code, by_flag.exit_code) << scenario.dump() << "\n" << by_file.err;
  EXPECT_EQ(slurp(dir / "b" / "history.jsonl"), slurp(dir / "a" / "history.jsonl"))
      << scenario.dump();
  std::filesystem::remove_all(dir);
}

TEST_P(EachSetting, InvalidValueExitsTwoNamingTheFlagOrThePath) {
  const Setting& s = *find_setting_by_flag(GetParam());
  const Example ex = example_of(s);
  if (!ex.bad.empty()) {
    const Outcome o = locksim("run " + ex.context_flags + " " + s.flag + " '" + ex.bad + "'");
    EXPECT_EQ(o.exit_code, 2) << s.flag << " " << ex.bad << "\n" << o.err;
    EXPECT_EQ(locksim::testing::count_lines(o.err), 1u) << o.err;
    EXPECT_NE(o.err.find(s.flag), std::string::npos) << o.err;
  }
  // In a file the bad value is named by its JSON path; a bare flag's bad
  // value there is a string where true/false belongs.
  const auto dir = temp_dir("bad_" + s.flag.substr(2));
  Json scenario = ex.context_json;
  scenario["algorithm"] = algorithm_of(ex);
  std::string path = s.json_path;
  if (s.kind == Setting::Kind::kParams) {
    scenario["params"] = Json{{"max-attempts", Json::array()}};
    path = "params.max-attempts";
  } else if (s.kind == Setting::Kind::kFlag) {
    put(scenario, s.json_path, "yes");
  } else if (s.kind == Setting::Kind::kList) {
    put(scenario, s.json_path, Json::array({ex.bad}));
    path += "[0]";
  } else {
    put(scenario, s.json_path,
        s.kind == Setting::Kind::kText ? Json(ex.bad) : Json::parse(ex.bad, nullptr, false));
  }
  const auto file = dir / "bad.json";
  std::ofstream(file) << scenario.dump();
  const Outcome o = locksim("run --scenario " + file.string());
  EXPECT_EQ(o.exit_code, 2) << scenario.dump() << "\n" << o.err;
  EXPECT_NE(o.err.find(file.string() + ": " + path), std::string::npos) << o.err;
  std::filesystem::remove_all(dir);
}

std::vector<std::string> all_flags() {
  std::vector<std::string> flags;
  for (const Setting& s : all_settings()) flags.push_back(s.flag);
  return flags;
}

INSTANTIATE_TEST_SUITE_P(Table, EachSetting, ::testing::ValuesIn(all_flags()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string name;
                           for (char ch : info.param.substr(2)) name += ch == '-' ? '_' : ch;
                           return name;
                         });

TEST(Settings, ScenarioRunRefusesEverySettingButTheSeed) {
  for (const Setting& s : all_settings()) {
    if (s.flag == "--seed") continue;
    const Example& ex = examples().at(s.flag);
    const Outcome o =
        locksim("run --scenario set-nx-lua-gc-pause " + flag_args(s, ex.good) + " --quiet");
    EXPECT_EQ(o.exit_code, 2) << s.flag;
    EXPECT_NE(o.err.find(s.flag + ": cannot be combined with --scenario"), std::string::npos)
        << o.err;
  }
}

TEST(Settings, HelpListsEveryFlagWithItsDefault) {
  const Outcome o = locksim("run --help");
  EXPECT_EQ(o.exit_code, 0);
  for (const Setting& s : all_settings()) {
    EXPECT_NE(o.out.find(s.flag), std::string::npos) << s.flag;
    if (s.format && s.kind != Setting::Kind::kFlag) {
      EXPECT_NE(o.out.find(s.format(RunConfig{})), std::string::npos) << s.flag;
    }
  }
}

// The reference's table of settings (docs/reference/settings.md, between its
// markers) is exactly `locksim list --settings`, so the docs cannot fall
// behind the table: a row added, renamed or reworded in the code fails here.
TEST(Settings, ReferenceTableIsTheGeneratedOne) {
  const Outcome o = locksim("list --settings");
  ASSERT_EQ(o.exit_code, 0) << o.err;
  const std::string page =
      slurp(std::filesystem::path(LOCKSIM_SOURCE_DIR) / "docs" / "reference" / "settings.md");
  const std::string begin = "<!-- settings:begin -->\n", end = "<!-- settings:end -->";
  const size_t from = page.find(begin);
  const size_t to = page.find(end);
  ASSERT_NE(from, std::string::npos) << "docs/reference/settings.md lost its begin marker";
  ASSERT_NE(to, std::string::npos) << "docs/reference/settings.md lost its end marker";
  ASSERT_LT(from, to);
  EXPECT_EQ(page.substr(from + begin.size(), to - from - begin.size()), o.out)
      << "docs/reference/settings.md's table differs from `locksim list --settings`; paste it "
         "between the markers:\n"
      << o.out;
}

// --fault and --param take every occurrence (docs/reference/settings.md: "except the repeatable
// --param and --fault"); any other setting given twice is refused.
TEST(Settings, RepeatableRowsTakeEveryOccurrenceAndOthersRefuseASecond) {
  const auto dir = temp_dir("repeat");
  const locksim::testing::Outcome two = locksim::testing::locksim(
      "run --algorithm set-nx-lua --duration 6s --fault 'pause c1 at 2s for 1s' "
      "--fault 'pause c2 at 3s for 1s' --out " +
      dir.string());
  ASSERT_TRUE(two.exit_code == 0 || two.exit_code == 1) << two.err;
  const Json result = Json::parse(locksim::testing::slurp(dir / "result.json"));
  int pauses = 0;
  for (const Json& f : result.at("faults")) pauses += f.at("f") == "pause" ? 1 : 0;
  EXPECT_EQ(pauses, 2) << result.at("faults").dump();

  const locksim::testing::Outcome seeds =
      locksim::testing::locksim("run --algorithm set-nx-lua --seed 1 --seed 2");
  EXPECT_EQ(seeds.exit_code, 2);
  EXPECT_NE(seeds.err.find("--seed: expected once, given 2 times"), std::string::npos) << seeds.err;
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace locksim::harness
