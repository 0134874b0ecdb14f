// History writers (EDN for Knossos, JSON lines) and the JSON-lines reader.
#include "harness/history_io.h"

#include <stdexcept>
#include <string>

#include <gtest/gtest.h>

#include "harness/history.h"

namespace locksim::harness {
namespace {

Op make_op(int64_t time_ns, int64_t process, OpType type, OpF f, int client) {
  Op op;
  op.time_ns = time_ns;
  op.process = process;
  op.type = type;
  op.f = f;
  op.client = client;
  return op;
}

// Client 0 takes and gives back the lock; client 1 times out acquiring.
History small_history() {
  HistoryRecorder r;
  r.record(make_op(1000000, 0, OpType::kInvoke, OpF::kAcquire, 0));
  r.record(make_op(1500000, 1, OpType::kInvoke, OpF::kAcquire, 1));
  Op ok = make_op(2000000, 0, OpType::kOk, OpF::kAcquire, 0);
  ok.token = "c0-1";
  ok.fence = 7;
  const int64_t ok_index = r.record(ok);
  r.begin_hold(0, 0, TimePoint{2000000}, ok_index);
  Op rel = make_op(5000000, 0, OpType::kInvoke, OpF::kRelease, 0);
  rel.token = "c0-1";
  const int64_t rel_index = r.record(rel);
  r.end_hold(0, TimePoint{5000000}, rel_index, HeldInterval::EndReason::kRelease);
  Op info = make_op(6000000, 1, OpType::kInfo, OpF::kAcquire, 1);
  info.detail = "timeout after 5ms: \"quorum\"\n";
  r.record(info);
  Op rel_ok = make_op(6000000, 0, OpType::kOk, OpF::kRelease, 0);
  rel_ok.token = "c0-1";
  r.record(rel_ok);
  return r.finish(TimePoint{10000000});
}

TEST(HistoryIo, EdnIsExactlyWhatKnossosReads) {
  EXPECT_EQ(to_edn(small_history()),
            "{:index 0, :time 1000000, :process 0, :type :invoke, :f :acquire, :value nil}\n"
            "{:index 1, :time 1500000, :process 1, :type :invoke, :f :acquire, :value nil}\n"
            "{:index 2, :time 2000000, :process 0, :type :ok, :f :acquire, :value nil}\n"
            "{:index 3, :time 5000000, :process 0, :type :invoke, :f :release, :value nil}\n"
            "{:index 4, :time 6000000, :process 1, :type :info, :f :acquire, :value nil}\n"
            "{:index 5, :time 6000000, :process 0, :type :ok, :f :release, :value nil}\n");
  EXPECT_EQ(to_edn(History{}), "");
}

TEST(HistoryIo, JsonlHasEveryFieldInFixedOrder) {
  const std::string text = to_jsonl(small_history());
  EXPECT_EQ(
      text,
      R"({"index":0,"time_ns":1000000,"process":0,"type":"invoke","f":"acquire","client":0,"token":""})"
      "\n"
      R"({"index":1,"time_ns":1500000,"process":1,"type":"invoke","f":"acquire","client":1,"token":""})"
      "\n"
      R"({"index":2,"time_ns":2000000,"process":0,"type":"ok","f":"acquire","client":0,"token":"c0-1","fence":7})"
      "\n"
      R"({"index":3,"time_ns":5000000,"process":0,"type":"invoke","f":"release","client":0,"token":"c0-1"})"
      "\n"
      R"({"index":4,"time_ns":6000000,"process":1,"type":"info","f":"acquire","client":1,"token":"","detail":"timeout after 5ms: \"quorum\"\n"})"
      "\n"
      R"({"index":5,"time_ns":6000000,"process":0,"type":"ok","f":"release","client":0,"token":"c0-1"})"
      "\n");
}

TEST(HistoryIo, JsonlRoundTrips) {
  History h = small_history();
  // Extremes that must survive as integers, not doubles.
  h.ops[2].fence = UINT64_MAX;
  h.ops[5].time_ns = INT64_MAX;
  h.ops[5].process = INT64_MIN;
  const History back = parse_jsonl(to_jsonl(h));
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
  EXPECT_EQ(to_jsonl(back), to_jsonl(h));
}

TEST(HistoryIo, ParseSkipsBlankLinesAndCarriageReturns) {
  const History h = parse_jsonl(
      "\n"
      R"({"index":0,"time_ns":5,"process":0,"type":"invoke","f":"acquire","client":0})"
      "\r\n  \n"
      R"({"index":1,"time_ns":6,"process":0,"type":"ok","f":"acquire","client":0,"token":"t"})");
  ASSERT_EQ(h.ops.size(), 2u);
  EXPECT_EQ(h.ops[0].token, "");
  EXPECT_EQ(h.ops[1].token, "t");
  EXPECT_FALSE(h.ops[1].fence.has_value());
  EXPECT_TRUE(parse_jsonl("").ops.empty());
}

std::string parse_error(const std::string& text) {
  try {
    parse_jsonl(text);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "(no error)";
}

const std::string kGood =
    R"({"index":0,"time_ns":5,"process":0,"type":"invoke","f":"acquire","client":0})"
    "\n";

const std::string kGood2 =
    R"({"index":1,"time_ns":6,"process":0,"type":"ok","f":"acquire","client":0})"
    "\n";

TEST(HistoryIo, ParseErrorsNameLineAndField) {
  EXPECT_EQ(
      parse_error(kGood + "\n" +
                  R"({"index":1,"time_ns":6,"process":0,"type":"done","f":"acquire","client":0})"),
      R"(history.jsonl line 3: field 'type': expected one of invoke|ok|fail|info, got "done")");
  EXPECT_EQ(parse_error(R"({"index":0,"process":0,"type":"ok","f":"acquire","client":0})"),
            "history.jsonl line 1: field 'time_ns': missing");
  EXPECT_EQ(
      parse_error(R"({"index":0,"time_ns":1.5,"process":0,"type":"ok","f":"acquire","client":0})"),
      "history.jsonl line 1: field 'time_ns': expected an integer, got 1.5");
  EXPECT_EQ(parse_error(R"({"index":0,"time_ns":1,"process":0,"type":"ok","f":"lock","client":0})"),
            R"(history.jsonl line 1: field 'f': expected one of acquire|release, got "lock")");
  EXPECT_EQ(
      parse_error(R"({"index":0,"time_ns":1,"process":0,"type":"ok","f":"acquire","client":-1})"),
      "history.jsonl line 1: field 'client': expected an integer in [0, 2147483647], got -1");
  EXPECT_EQ(
      parse_error(
          R"({"index":0,"time_ns":1,"process":0,"type":"ok","f":"acquire","client":0,"fence":-3})"),
      "history.jsonl line 1: field 'fence': expected a non-negative integer, got -3");
  EXPECT_EQ(
      parse_error(
          R"({"index":0,"time_ns":1,"process":0,"type":"ok","f":"acquire","client":0,"token":5})"),
      "history.jsonl line 1: field 'token': expected a string, got 5");
  EXPECT_EQ(
      parse_error(kGood +
                  R"({"index":2,"time_ns":6,"process":0,"type":"ok","f":"acquire","client":0})"),
      "history.jsonl line 2: field 'index': expected 1 (indices are dense and in order), got 2");
  EXPECT_EQ(
      parse_error(kGood +
                  R"({"index":1,"time_ns":4,"process":0,"type":"ok","f":"acquire","client":0})"),
      "history.jsonl line 2: field 'time_ns': goes back in time (4 after 5); ops must be in "
      "true-time order");
  EXPECT_EQ(parse_error(kGood + "[1, 2]"), "history.jsonl line 2: expected a JSON object per line");

  const std::string bad_json = parse_error(kGood + kGood2 + "{\"index\": 2,");
  EXPECT_EQ(bad_json.rfind("history.jsonl line 3: invalid JSON: ", 0), 0u) << bad_json;
  EXPECT_EQ(bad_json.find('\n'), std::string::npos) << "one line";
}

TEST(HistoryIo, InvalidUtf8IsReplacedNotThrown) {
  History h;
  Op op = make_op(0, 0, OpType::kFail, OpF::kAcquire, 0);
  op.detail = "bad \xff byte";
  h.ops.push_back(op);
  std::string text;
  ASSERT_NO_THROW(text = to_jsonl(h));
  EXPECT_EQ(parse_jsonl(text).ops[0].detail, "bad \xEF\xBF\xBD byte");
}

TEST(HistoryIo, HeldRoundTrips) {
  const History h = small_history();
  ASSERT_EQ(h.held.size(), 1u);
  const nlohmann::ordered_json j = held_to_json(h);
  EXPECT_EQ(j.dump(),
            R"([{"client":0,"process":0,"start_ns":2000000,"end_ns":5000000,"acquire_index":2,)"
            R"("release_index":3,"end_reason":"release"}])");
  const std::vector<HeldInterval> back = held_from_json(j);
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(back[0].client, 0);
  EXPECT_EQ(back[0].start, TimePoint{2000000});
  EXPECT_EQ(back[0].end, TimePoint{5000000});
  EXPECT_EQ(back[0].acquire_index, 2);
  EXPECT_EQ(back[0].release_index, 3);
  EXPECT_EQ(back[0].end_reason, HeldInterval::EndReason::kRelease);

  // The same from a plainly parsed result.json (sorted keys).
  nlohmann::json plain = nlohmann::json::parse(j.dump());
  plain[0]["end_reason"] = "run-end";
  EXPECT_EQ(held_from_json(plain)[0].end_reason, HeldInterval::EndReason::kRunEnd);

  plain[0]["end_reason"] = "gone";
  try {
    held_from_json(plain);
    FAIL() << "expected an error";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(
        e.what(),
        R"(held[0]: field 'end_reason': expected one of release|crash|run-end, got "gone")");
  }
}

}  // namespace
}  // namespace locksim::harness
