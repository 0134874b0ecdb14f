// History writers (EDN for Knossos, JSON lines) and the JSON-lines reader.
#include "history/history_io.h"

#include <stdexcept>
#include <string>

#include <gtest/gtest.h>

#include "history/history.h"

namespace locksim::harness {
namespace {

history::Op make_op(int64_t time_ns, int64_t process, history::OpType type, history::OpF f,
                    int client) {
  history::Op op;
  op.time_ns = time_ns;
  op.process = process;
  op.type = type;
  op.f = f;
  op.client = client;
  return op;
}

// Client 0 takes and gives back the lock; client 1 times out acquiring.
history::History small_history() {
  history::HistoryRecorder r;
  r.record(make_op(1000000, 0, history::OpType::kInvoke, history::OpF::kAcquire, 0));
  r.record(make_op(1500000, 1, history::OpType::kInvoke, history::OpF::kAcquire, 1));
  history::Op ok = make_op(2000000, 0, history::OpType::kOk, history::OpF::kAcquire, 0);
  ok.token = "c0-1";
  ok.fence = 7;
  const int64_t ok_index = r.record(ok);
  r.begin_hold(0, 0, TimePoint{2000000}, ok_index);
  history::Op rel = make_op(5000000, 0, history::OpType::kInvoke, history::OpF::kRelease, 0);
  rel.token = "c0-1";
  const int64_t rel_index = r.record(rel);
  r.end_hold(0, TimePoint{5000000}, rel_index, history::HeldInterval::EndReason::kRelease);
  history::Op info = make_op(6000000, 1, history::OpType::kInfo, history::OpF::kAcquire, 1);
  info.detail = "timeout after 5ms: \"quorum\"\n";
  r.record(info);
  history::Op rel_ok = make_op(6000000, 0, history::OpType::kOk, history::OpF::kRelease, 0);
  rel_ok.token = "c0-1";
  r.record(rel_ok);
  return r.finish(TimePoint{10000000});
}

TEST(HistoryIo, EdnIsExactlyWhatKnossosReads) {
  EXPECT_EQ(history::to_edn(small_history()),
            "{:index 0, :time 1000000, :process 0, :type :invoke, :f :acquire, :value nil}\n"
            "{:index 1, :time 1500000, :process 1, :type :invoke, :f :acquire, :value nil}\n"
            "{:index 2, :time 2000000, :process 0, :type :ok, :f :acquire, :value nil}\n"
            "{:index 3, :time 5000000, :process 0, :type :invoke, :f :release, :value nil}\n"
            "{:index 4, :time 6000000, :process 1, :type :info, :f :acquire, :value nil}\n"
            "{:index 5, :time 6000000, :process 0, :type :ok, :f :release, :value nil}\n");
  EXPECT_EQ(history::to_edn(history::History{}), "");
}

TEST(HistoryIo, JsonlHasEveryFieldInFixedOrder) {
  const std::string text = history::to_jsonl(small_history());
  EXPECT_EQ(
      text,
      R"({"index":0,"time_ns":1000000,"process":0,"type":"invoke","f":"acquire","client":"c1","token":""})"
      "\n"
      R"({"index":1,"time_ns":1500000,"process":1,"type":"invoke","f":"acquire","client":"c2","token":""})"
      "\n"
      R"({"index":2,"time_ns":2000000,"process":0,"type":"ok","f":"acquire","client":"c1","token":"c0-1","fence":7})"
      "\n"
      R"({"index":3,"time_ns":5000000,"process":0,"type":"invoke","f":"release","client":"c1","token":"c0-1"})"
      "\n"
      R"({"index":4,"time_ns":6000000,"process":1,"type":"info","f":"acquire","client":"c2","token":"","detail":"timeout after 5ms: \"quorum\"\n"})"
      "\n"
      R"({"index":5,"time_ns":6000000,"process":0,"type":"ok","f":"release","client":"c1","token":"c0-1"})"
      "\n");
}

TEST(HistoryIo, JsonlRoundTrips) {
  history::History h = small_history();
  // Extremes that must survive as integers, not doubles.
  h.ops[2].fence = UINT64_MAX;
  h.ops[5].time_ns = INT64_MAX;
  h.ops[3].process = INT64_MAX;  // process 0's release, invoked and completed as INT64_MAX
  h.ops[5].process = INT64_MAX;
  const history::History back = history::parse_jsonl(history::to_jsonl(h));
  ASSERT_EQ(back.ops.size(), h.ops.size());
  for (size_t i = 0; i < h.ops.size(); ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(back.ops[i].index, h.ops[i].index);
    EXPECT_EQ(back.ops[i].time_ns, h.ops[i].time_ns);
    EXPECT_EQ(back.ops[i].process, h.ops[i].process);
    EXPECT_EQ(back.ops[i].type, h.ops[i].type);
    EXPECT_EQ(back.ops[i].f, h.ops[i].f);
    EXPECT_EQ(back.ops[i].client, h.ops[i].client);
    EXPECT_EQ(back.ops[i].token, h.ops[i].token);
    EXPECT_EQ(back.ops[i].fence, h.ops[i].fence);
    EXPECT_EQ(back.ops[i].detail, h.ops[i].detail);
  }
  EXPECT_TRUE(back.held.empty());
  EXPECT_EQ(history::to_jsonl(back), history::to_jsonl(h));
}

TEST(HistoryIo, ParseSkipsBlankLinesAndCarriageReturns) {
  const history::History h = history::parse_jsonl(
      "\n"
      R"({"index":0,"time_ns":5,"process":0,"type":"invoke","f":"acquire","client":"c1"})"
      "\r\n  \n"
      R"({"index":1,"time_ns":6,"process":0,"type":"ok","f":"acquire","client":"c1","token":"t"})");
  ASSERT_EQ(h.ops.size(), 2u);
  EXPECT_EQ(h.ops[0].token, "");
  EXPECT_EQ(h.ops[1].token, "t");
  EXPECT_FALSE(h.ops[1].fence.has_value());
  EXPECT_TRUE(history::parse_jsonl("").ops.empty());
}

std::string parse_error(const std::string& text) {
  try {
    history::parse_jsonl(text);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "(no error)";
}

const std::string kGood =
    R"({"index":0,"time_ns":5,"process":0,"type":"invoke","f":"acquire","client":"c1"})"
    "\n";

const std::string kGood2 =
    R"({"index":1,"time_ns":6,"process":0,"type":"ok","f":"acquire","client":"c1"})"
    "\n";

TEST(HistoryIo, ParseErrorsNameLineAndField) {
  EXPECT_EQ(
      parse_error(
          kGood + "\n" +
          R"({"index":1,"time_ns":6,"process":0,"type":"done","f":"acquire","client":"c1"})"),
      R"(history.jsonl line 3: field 'type': expected one of invoke|ok|fail|info, got "done")");
  EXPECT_EQ(parse_error(R"({"index":0,"process":0,"type":"ok","f":"acquire","client":"c1"})"),
            "history.jsonl line 1: field 'time_ns': missing");
  EXPECT_EQ(parse_error(
                R"({"index":0,"time_ns":1.5,"process":0,"type":"ok","f":"acquire","client":"c1"})"),
            "history.jsonl line 1: field 'time_ns': expected an integer, got 1.5");
  EXPECT_EQ(
      parse_error(R"({"index":0,"time_ns":1,"process":0,"type":"ok","f":"lock","client":"c1"})"),
      R"(history.jsonl line 1: field 'f': expected one of acquire|release, got "lock")");
  EXPECT_EQ(
      parse_error(R"({"index":0,"time_ns":1,"process":0,"type":"ok","f":"acquire","client":0})"),
      "history.jsonl line 1: field 'client': expected a client label such as \"c1\" (clients "
      "count from c1), got 0");
  for (const char* bad :
       {R"("c0")", R"("c01")", R"("C1")", R"("c")", R"("c1x")", R"("c2147483648")"}) {
    EXPECT_NE(parse_error(
                  std::string(
                      R"({"index":0,"time_ns":1,"process":0,"type":"ok","f":"acquire","client":)") +
                  bad + "}")
                  .find("expected a client label"),
              std::string::npos)
        << bad;
  }
  EXPECT_EQ(
      parse_error(
          R"({"index":0,"time_ns":1,"process":0,"type":"ok","f":"acquire","client":"c1","fence":-3})"),
      "history.jsonl line 1: field 'fence': expected a non-negative integer, got -3");
  EXPECT_EQ(
      parse_error(
          R"({"index":0,"time_ns":1,"process":0,"type":"ok","f":"acquire","client":"c1","token":5})"),
      "history.jsonl line 1: field 'token': expected a string, got 5");
  EXPECT_EQ(
      parse_error(kGood +
                  R"({"index":2,"time_ns":6,"process":0,"type":"ok","f":"acquire","client":"c1"})"),
      "history.jsonl line 2: field 'index': expected 1 (indices are dense and in order), got 2");
  EXPECT_EQ(
      parse_error(kGood +
                  R"({"index":1,"time_ns":4,"process":0,"type":"ok","f":"acquire","client":"c1"})"),
      "history.jsonl line 2: field 'time_ns': goes back in time (4 after 5); ops must be in "
      "true-time order");
  EXPECT_EQ(parse_error(kGood + "[1, 2]"), "history.jsonl line 2: expected a JSON object per line");
  // nlohmann keeps the last of a repeated key; a line of locksim's never repeats one.
  EXPECT_EQ(
      parse_error(
          R"({"index":0,"time_ns":1,"process":0,"type":"invoke","f":"acquire","client":"c1","client":"c2"})"),
      "history.jsonl line 1: client: given twice; give each key once");
  // A colon, a quote or a brace inside a string is no second key.
  EXPECT_EQ(parse_error(kGood + R"({"index":1,"time_ns":6,"process":0,"type":"ok","f":"acquire",)"
                                R"x("client":"c1","token":"a:b \"c\":{d:[e]}"})x"),
            "(no error)");

  const std::string bad_json = parse_error(kGood + kGood2 + "{\"index\": 2,");
  EXPECT_EQ(bad_json.rfind("history.jsonl line 3: invalid JSON: ", 0), 0u) << bad_json;
  EXPECT_EQ(bad_json.find('\n'), std::string::npos) << "one line";
}

TEST(HistoryIo, InvalidUtf8IsReplacedNotThrown) {
  history::History h;
  h.ops.push_back(make_op(0, 0, history::OpType::kInvoke, history::OpF::kAcquire, 0));
  history::Op op = make_op(0, 0, history::OpType::kFail, history::OpF::kAcquire, 0);
  op.index = 1;
  op.detail = "bad \xff byte";
  h.ops.push_back(op);
  std::string text;
  ASSERT_NO_THROW(text = history::to_jsonl(h));
  EXPECT_EQ(history::parse_jsonl(text).ops[1].detail, "bad \xEF\xBF\xBD byte");
}

TEST(HistoryIo, HeldRoundTrips) {
  const history::History h = small_history();
  ASSERT_EQ(h.held.size(), 1u);
  const nlohmann::ordered_json j = history::held_to_json(h);
  EXPECT_EQ(j.dump(),
            R"([{"client":"c1","process":0,"start_ns":2000000,"end_ns":5000000,"acquire_index":2,)"
            R"("release_index":3,"end_reason":"release"}])");
  const std::vector<history::HeldInterval> back = history::held_from_json(j);
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(back[0].client, 0);
  EXPECT_EQ(back[0].start, TimePoint{2000000});
  EXPECT_EQ(back[0].end, TimePoint{5000000});
  EXPECT_EQ(back[0].acquire_index, 2);
  EXPECT_EQ(back[0].release_index, 3);
  EXPECT_EQ(back[0].end_reason, history::HeldInterval::EndReason::kRelease);

  // The same from a plainly parsed result.json (sorted keys).
  nlohmann::json plain = nlohmann::json::parse(j.dump());
  plain[0]["end_reason"] = "run-end";
  EXPECT_EQ(history::held_from_json(plain)[0].end_reason,
            history::HeldInterval::EndReason::kRunEnd);

  plain[0]["end_reason"] = "gone";
  try {
    history::held_from_json(plain);
    FAIL() << "expected an error";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(
        e.what(),
        R"(held[0]: field 'end_reason': expected one of release|crash|run-end, got "gone")");
  }
}

std::string held_error(nlohmann::json held) {
  try {
    history::held_from_json(held);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(HistoryIo, HeldFromJsonRejectsWhatTheRecorderAsserts) {
  nlohmann::json plain = nlohmann::json::parse(history::held_to_json(small_history()).dump());
  nlohmann::json backwards = plain;
  backwards[0]["end_ns"] = 1000000;
  EXPECT_EQ(held_error(backwards),
            "held[0]: field 'end_ns': ends before it starts (1000000 < start_ns 2000000); a held "
            "interval never does");
  // Client c1 again, starting inside its first interval: two leases at once.
  nlohmann::json twice = plain;
  twice.push_back(plain[0]);
  twice[1]["start_ns"] = 4000000;
  twice[1]["end_ns"] = 9000000;
  EXPECT_EQ(held_error(twice),
            "held[1]: overlaps held[0], an interval of the same client c1 ([2000000, 5000000) and "
            "[4000000, 9000000) ns); a client holds at most one lease at a time");
  // Back to back, or another client: fine.
  twice[1]["start_ns"] = 5000000;
  EXPECT_EQ(held_error(twice), "(no error)");
  twice[1]["start_ns"] = 4000000;
  twice[1]["client"] = "c2";
  EXPECT_EQ(held_error(twice), "(no error)");
}

// small_history() with the nemesis at work: c2 (client 1) paused while it
// waits, resumed, and a skipped @holder crash, all at their true times.
history::History history_with_faults() {
  history::HistoryRecorder r;
  r.record(make_op(1000000, 0, history::OpType::kInvoke, history::OpF::kAcquire, 0));
  history::Op pause = history::nemesis_op("pause", {"c2", "3ms"}, "");
  pause.time_ns = 1200000;
  r.record(pause);
  r.record(make_op(1500000, 1, history::OpType::kInvoke, history::OpF::kAcquire, 1));
  history::Op ok = make_op(2000000, 0, history::OpType::kOk, history::OpF::kAcquire, 0);
  ok.token = "c0-1";
  r.begin_hold(0, 0, TimePoint{2000000}, r.record(ok));
  history::Op resume = history::nemesis_op("resume", {"c2"}, "");
  resume.time_ns = 4200000;
  r.record(resume);
  history::Op skip =
      history::nemesis_op("skip", {"crash", "@holder", "1s"}, "nobody holds the lock");
  skip.time_ns = 4200000;
  r.record(skip);
  history::Op heal = history::nemesis_op("heal", {}, "");
  heal.time_ns = 4300000;
  r.record(heal);
  history::Op rel = make_op(5000000, 0, history::OpType::kInvoke, history::OpF::kRelease, 0);
  rel.token = "c0-1";
  r.end_hold(0, TimePoint{5000000}, r.record(rel), history::HeldInterval::EndReason::kRelease);
  return r.finish(TimePoint{10000000});
}

TEST(HistoryIo, NemesisOpsInEdnAsJepsenWritesThem) {
  EXPECT_EQ(
      history::to_edn(history_with_faults()),
      "{:index 0, :time 1000000, :process 0, :type :invoke, :f :acquire, :value nil}\n"
      "{:index 1, :time 1200000, :process :nemesis, :type :info, :f :pause, :value [\"c2\" "
      "\"3ms\"]}\n"
      "{:index 2, :time 1500000, :process 1, :type :invoke, :f :acquire, :value nil}\n"
      "{:index 3, :time 2000000, :process 0, :type :ok, :f :acquire, :value nil}\n"
      "{:index 4, :time 4200000, :process :nemesis, :type :info, :f :resume, :value [\"c2\"]}\n"
      "{:index 5, :time 4200000, :process :nemesis, :type :info, :f :skip, :value [\"crash\" "
      "\"@holder\" \"1s\"]}\n"
      "{:index 6, :time 4300000, :process :nemesis, :type :info, :f :heal, :value []}\n"
      "{:index 7, :time 5000000, :process 0, :type :invoke, :f :release, :value nil}\n");
  // Strings are EDN-escaped, whatever a node is called.
  history::History h;
  history::Op odd = history::nemesis_op("resume", {"a\"b\\c\nd"}, "");
  h.ops.push_back(odd);
  EXPECT_EQ(history::to_edn(h),
            "{:index 0, :time 0, :process :nemesis, :type :info, :f :resume, :value "
            "[\"a\\\"b\\\\c\\nd\"]}\n");
}

TEST(HistoryIo, NemesisOpsInJsonlWithEveryFieldAndRoundTrip) {
  const history::History h = history_with_faults();
  const std::string text = history::to_jsonl(h);
  EXPECT_NE(
      text.find(
          R"({"index":1,"time_ns":1200000,"process":"nemesis","type":"info","f":"pause","value":["c2","3ms"]})"
          "\n"),
      std::string::npos)
      << text;
  EXPECT_NE(
      text.find(
          R"({"index":5,"time_ns":4200000,"process":"nemesis","type":"info","f":"skip","value":["crash","@holder","1s"],"detail":"nobody holds the lock"})"
          "\n"),
      std::string::npos)
      << text;
  EXPECT_NE(
      text.find(
          R"({"index":6,"time_ns":4300000,"process":"nemesis","type":"info","f":"heal","value":[]})"),
      std::string::npos)
      << text;
  const history::History back = history::parse_jsonl(text);
  ASSERT_EQ(back.ops.size(), h.ops.size());
  for (size_t i = 0; i < h.ops.size(); ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(back.ops[i].process, h.ops[i].process);
    EXPECT_EQ(back.ops[i].type, h.ops[i].type);
    EXPECT_EQ(back.ops[i].f, h.ops[i].f);
    EXPECT_EQ(back.ops[i].value, h.ops[i].value);
    EXPECT_EQ(back.ops[i].detail, h.ops[i].detail);
    EXPECT_EQ(history::is_client_op(back.ops[i]), history::is_client_op(h.ops[i]));
  }
  EXPECT_EQ(history::to_jsonl(back), text);
  EXPECT_EQ(history::to_edn(back), history::to_edn(h));
}

const std::string kNemesisPause =
    R"({"index":0,"time_ns":5,"process":"nemesis","type":"info","f":"pause","value":["c1","1s"]})";

TEST(HistoryIo, ParseErrorsForNemesisOps) {
  EXPECT_EQ(parse_error(kNemesisPause), "(no error)");
  EXPECT_EQ(
      parse_error(
          R"({"index":0,"time_ns":5,"process":"nemesis","type":"info","f":"acquire","value":[]})"),
      "history.jsonl line 1: field 'f': expected one of "
      R"(pause|resume|crash|restart|partition|heal|drift|jump|delay|loss|hang|unhang|skip, got "acquire")");
  EXPECT_EQ(parse_error(R"({"index":0,"time_ns":5,"process":"nemesis","type":"info","f":"pause"})"),
            "history.jsonl line 1: field 'value': missing");
  EXPECT_EQ(
      parse_error(
          R"({"index":0,"time_ns":5,"process":"nemesis","type":"info","f":"pause","value":["c1",2]})"),
      R"(history.jsonl line 1: field 'value': expected an array of strings, got ["c1",2])");
  EXPECT_EQ(
      parse_error(
          R"({"index":0,"time_ns":5,"process":"nemesis","type":"info","f":"heal","value":[],"client":"c1"})"),
      "history.jsonl line 1: field 'client': nemesis ops have none");
  EXPECT_EQ(
      parse_error(
          R"({"index":0,"time_ns":5,"process":"nemesis","type":"invoke","f":"heal","value":[]})"),
      "history.jsonl line 1: op 0: the nemesis records :invoke :heal (rule 2: nemesis ops are "
      ":info with a fault keyword)");
  EXPECT_EQ(
      parse_error(R"({"index":0,"time_ns":5,"process":-1,"type":"info","f":"heal"})"),
      R"(history.jsonl line 1: field 'process': expected an integer >= 0 or "nemesis", got -1)");
  EXPECT_EQ(
      parse_error(R"({"index":0,"time_ns":5,"process":"chaos","type":"info","f":"heal"})"),
      R"(history.jsonl line 1: field 'process': expected an integer >= 0 or "nemesis", got "chaos")");
  EXPECT_EQ(
      parse_error(
          R"({"index":0,"time_ns":5,"process":0,"type":"invoke","f":"acquire","client":"c1","value":["x"]})"),
      "history.jsonl line 1: field 'value': client ops have none (acquire and release take no "
      "value)");
}

// Each field fine, the op impossible after the ones before it: bad input
// naming the op and the rule, never an assertion.
TEST(HistoryIo, ParseErrorsNameTheOpAndTheRuleItBreaks) {
  const std::string ok0 =
      R"({"index":0,"time_ns":5,"process":0,"type":"ok","f":"acquire","client":"c1"})";
  EXPECT_EQ(parse_error(ok0),
            "history.jsonl line 1: op 0: process 0 completes :acquire without an open invocation "
            "(rule 4: a completion matches its process's open invocation, and an op is "
            "completed at most once)");
  EXPECT_EQ(
      parse_error(kGood + kGood2 +
                  R"({"index":2,"time_ns":7,"process":0,"type":"ok","f":"acquire","client":"c1"})"),
      "history.jsonl line 3: op 2: process 0 completes :acquire without an open invocation "
      "(rule 4: a completion matches its process's open invocation, and an op is "
      "completed at most once)");
  EXPECT_EQ(
      parse_error(
          kGood +
          R"({"index":1,"time_ns":6,"process":0,"type":"invoke","f":"release","client":"c1"})"),
      "history.jsonl line 2: op 1: process 0 invokes :release while its :acquire (op 0) is "
      "still open (rule 3: at most one open op per process)");
  EXPECT_EQ(parse_error(
                kGood +
                R"({"index":1,"time_ns":6,"process":0,"type":"fail","f":"release","client":"c1"})"),
            "history.jsonl line 2: op 1: process 0 completes :release but its open invocation "
            "(op 0) is :acquire (rule 4: a completion matches its process's open invocation)");
  EXPECT_EQ(
      parse_error(
          kGood +
          R"({"index":1,"time_ns":6,"process":0,"type":"info","f":"acquire","client":"c1"})"
          "\n" +
          R"({"index":2,"time_ns":7,"process":0,"type":"invoke","f":"acquire","client":"c1"})"),
      "history.jsonl line 3: op 2: process 0 records again after an :info op (rule 5: a "
      "process whose op ended in :info never records again; the client continues under a "
      "fresh process)");
  // Nemesis ops between a client's invocation and its completion change nothing.
  EXPECT_EQ(
      parse_error(
          kGood +
          R"({"index":1,"time_ns":5,"process":"nemesis","type":"info","f":"pause","value":["c1","1s"]})"
          "\n" +
          R"({"index":2,"time_ns":6,"process":0,"type":"ok","f":"acquire","client":"c1"})"),
      "(no error)");
}

}  // namespace
}  // namespace locksim::harness
