// The EDN history reader: locksim's own files round-trip, Jepsen's shapes
// are read, nemesis ops are skipped, and every malformed input is one
// ConfigError naming the line and column.
#include "history/edn_history.h"

#include <string>

#include <gtest/gtest.h>

#include "checkers/knossos.h"
#include "env/parse.h"
#include "harness/run.h"
#include "harness/run_config.h"
#include "history/history_io.h"

namespace locksim::harness {
namespace {

std::string error_of(const std::string& text) {
  try {
    history::parse_edn_history(text, "h.edn");
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "no error";
}

TEST(EdnHistory, ReadsLocksimsOwnHistoryBack) {
  RunConfig c;
  c.algorithm = "set-nx-lua";
  c.seed = 7;
  c.duration = Duration::seconds(20);
  c.algorithm_params["ttl"] = "1s";  // holds past the TTL: :info releases, violations
  const history::History h = simulate_and_check(c).result.history;
  ASSERT_GT(h.ops.size(), 20u);
  for (const std::string& text : {history::to_edn(h), checkers::knossos_edn(h.ops)}) {
    const history::EdnHistory e = history::parse_edn_history(text, "history.edn");
    size_t k = 0;
    for (const history::Op& op : h.ops) {
      if (!history::is_client_op(op)) continue;
      ASSERT_LT(k, e.ops.size());
      const history::Op& got = e.ops[k++];
      EXPECT_EQ(got.index, op.index);
      EXPECT_EQ(got.time_ns, op.time_ns);
      EXPECT_EQ(got.process, op.process);
      EXPECT_EQ(got.type, op.type);
      EXPECT_EQ(got.f, op.f);
      EXPECT_EQ(got.client, -1);
    }
    EXPECT_EQ(k, e.ops.size());
  }
}

TEST(EdnHistory, ReadsAVectorAListAndJepsenRecords) {
  const std::string maps =
      "{:process 0, :type :invoke, :f :acquire}\n{:process 0, :type :ok, :f :acquire}\n";
  for (const std::string& text :
       {maps, "[" + maps + "]", "(" + maps + ")",
        std::string("[#jepsen.history.Op{:index 0, :time 5, :type :invoke, :process 0, :f "
                    ":acquire, :value nil}\n#jepsen.history.Op{:index 1, :time 9, :type :ok, "
                    ":process 0, :f :acquire, :value nil}]")}) {
    const history::EdnHistory e = history::parse_edn_history(text, "h.edn");
    ASSERT_EQ(e.ops.size(), 2u) << text;
    EXPECT_EQ(e.ops[1].index, 1);
    EXPECT_EQ(e.ops[1].type, history::OpType::kOk);
    EXPECT_EQ(e.lines[1], 2);
  }
}

TEST(EdnHistory, SkipsNemesisAndOtherNonClientOps) {
  const history::EdnHistory e = history::parse_edn_history(
      "{:process :nemesis, :type :info, :f :start-partition, :value [:isolated {\"n1\" "
      "#{\"n2\"}}]}\n"
      "{:process 0, :type :invoke, :f :acquire}\n"
      "{:process :checker, :type :whatever, :f 12}\n"
      "{:process 0, :type :ok, :f :acquire}\n",
      "h.edn");
  ASSERT_EQ(e.ops.size(), 2u);
  EXPECT_EQ(e.skipped_ops, 2);
  EXPECT_EQ(e.total_ops, 4);
  EXPECT_EQ(e.ops[0].index, 1);  // without :index, the position in the file
  EXPECT_EQ(e.ops[1].index, 3);
  EXPECT_EQ(e.lines[1], 4);
}

TEST(EdnHistory, ReadsAllOfEdnInValues) {
  const history::EdnHistory e = history::parse_edn_history(
      "; a comment\n#_{:discarded true}\n"
      "{:process 0, :type :invoke, :f :acquire, :value {:s \"a\\\"b\\n\\u00e9\", :c [\\a \\newline "
      "\\u0041 \\é], :n [1 -2 +3 4N 1.5 -2e10 3.0M 1/3 ##Inf ##-Inf ##NaN "
      "123456789012345678901234], "
      ":t #inst \"2024-01-01T00:00:00Z\", :set #{1 2 3}, :sym foo/bar, :b [true false nil], "
      ":nested ((([[{}]])))}, :error :timeout, :node \"n1\"}\n"
      "{:process 0, :type :info, :f :acquire, :time 5}",
      "h.edn");
  ASSERT_EQ(e.ops.size(), 2u);
  EXPECT_EQ(e.ops[1].type, history::OpType::kInfo);
  EXPECT_EQ(e.ops[1].time_ns, 5);
  EXPECT_EQ(history::parse_edn_history("", "h.edn").ops.size(), 0u);
  EXPECT_EQ(history::parse_edn_history(" ,\n[]\n", "h.edn").ops.size(), 0u);
}

TEST(EdnHistory, MalformedInputIsOneLineWithLineAndColumn) {
  const std::string ok0 = "{:process 0, :type :invoke, :f :acquire}\n";
  struct Case {
    std::string text;
    std::string expected;
  };
  const Case cases[] = {
      {ok0 + "{:process 0, :type :done, :f :acquire}",
       "h.edn:2:20: :type: expected one of :invoke :ok :fail :info, got :done"},
      {ok0 + "{:process 0, :f :acquire}", "h.edn:2:1: op map: missing :type (one of :invoke"},
      {ok0 + "{:type :ok, :f :acquire}", "h.edn:2:1: op map: missing :process"},
      {ok0 + "{:process 0, :type :ok, :f :read}",
       "h.edn:2:28: :f: expected one of :acquire :release, got :read"},
      {"{:process -3, :type :ok, :f :acquire}", "h.edn:1:11: :process: expected an integer >= 0"},
      // Skipped, a client op of "process 1" could turn an invalid history valid.
      {"{:process \"1\", :type :ok, :f :acquire}",
       "h.edn:1:11: :process: expected an integer >= 0 (a client) or a keyword such as :nemesis, "
       "got \"1\""},
      {"{:process 1.5, :type :ok, :f :acquire}", "h.edn:1:11: :process: expected an integer"},
      {"{:process 0, :type :invoke, :f :acquire", "expected '}' to close a map opened at 1:1"},
      {"{:process 0, :type :invoke, :f}", "h.edn:1:1: a map with a key but no value"},
      {"[{:process 0, :type :invoke, :f :acquire}", "to close the collection of ops opened at 1:1"},
      {"[] {:process 0}", "h.edn:1:4: expected end of input after the collection of ops"},
      {"{:process 0, :type :invoke, :f :acquire, :value \"abc", "h.edn:1:49: a string opened"},
      {"{:process 0, :type :invoke, :f :acquire, :value \\bogus}",
       "h.edn:1:49: unknown character literal '\\bogus'"},
      {"{:process 0, :type :invoke, :f :acquire, :value 12ab}",
       "h.edn:1:49: invalid number '12ab'"},
      {"{:process 0, :type :invoke, :f :acquire, :value \"\\q\"}", "unknown escape '\\q'"},
      {"{:process 0, :type :invoke, :f :acquire}}", "h.edn:1:41: unexpected '}' with nothing open"},
      {"[1]",
       "h.edn:1:2: expected an op map such as {:process 0, :type :invoke, :f :acquire}, "
       "got an integer"},
      {"{:index 0, :process 0, :type :invoke, :f :acquire}\n{:process 0, :type :ok, :f :acquire}",
       "h.edn:2:1: op map: missing :index"},
      {"{:index 4, :process 0, :type :invoke, :f :acquire}\n{:index 4, :process 0, :type :ok, :f "
       ":acquire}",
       "h.edn:2:9: :index: 4 is used twice (also by the op at line 1)"},
      {"{:process 0, :process 1, :type :invoke, :f :acquire}",
       "h.edn:1:14: duplicate key :process in an op map"},
      {"{:process 0, :type :invoke, :f :acquire, :time 1.5}",
       "h.edn:1:48: :time: expected an "
       "integer"},
      // Jepsen's times count from the test's start, its indices from 0.
      {"{:process 0, :type :invoke, :f :acquire, :time -5}",
       "h.edn:1:48: :time: expected an integer >= 0 (nanoseconds since the test began), got -5"},
      {"{:index -1, :process 0, :type :invoke, :f :acquire}",
       "h.edn:1:9: :index: expected an integer >= 0, got -1"},
      {"{:process 99999999999999999999, :type :invoke, :f :acquire}",
       "h.edn:1:11: :process: expected an integer from 0 to 9223372036854775807 (a client), got "
       "99999999999999999999"},
      {"{:process 0, :type :invoke, :f :acquire, :value #_}", "expected a form after #_"},
      {"{:process 0, :type :invoke, :f :acquire, :value ##Foo}", "unknown symbolic value '##Foo'"},
      {"{:process 0, :type :invoke, :f :acquire, :value #12 x}", "expected a tag symbol after '#'"},
      {"{:process 0, :type :invoke, :f :acquire, :value ::x}", "invalid keyword '::x'"},
      {std::string(300, '[') + std::string(300, ']'), "collections nested deeper than 200 levels"},
  };
  for (const Case& c : cases) {
    const std::string e = error_of(c.text);
    EXPECT_NE(e.find(c.expected), std::string::npos) << "input: " << c.text << "\ngot: " << e;
    EXPECT_EQ(e.find('\n'), std::string::npos) << e;
  }
}

TEST(EdnHistory, LoadNamesTheFileItCannotRead) {
  try {
    history::load_edn_history("/nonexistent/history.edn");
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()), "/nonexistent/history.edn: cannot open the file");
  }
  try {
    history::load_edn_history("/tmp");
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()), "/tmp: expected a history file, got a directory");
  }
}

}  // namespace
}  // namespace locksim::harness
