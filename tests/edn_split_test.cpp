// The split read of an EDN history (parse_edn_history_split: two halves on
// two threads) against the one-piece read (parse_edn_history), which is the
// reference: for every input, the same ops, lines and counts, or the same
// error, line and column. Small inputs are cut at every line; a big
// generated history is cut where the command cuts it, clean and with errors
// planted in the second half, at the cut line, in both halves and across it.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "bench/contended_history.h"
#include "env/parse.h"
#include "history/edn_history.h"
#include "history/edn_part.h"
#include "history/history_io.h"

namespace locksim::history {
namespace {

namespace fs = std::filesystem;

// A read's outcome: the history, or its error's one line.
struct Outcome {
  std::optional<EdnHistory> history;
  std::string error;
};

template <class Read>
Outcome outcome(Read read) {
  Outcome o;
  try {
    o.history = read();
  } catch (const ConfigError& e) {
    o.error = e.what();
  }
  return o;
}

Outcome whole(const std::string& text) {
  return outcome([&] { return parse_edn_history(text, "h.edn"); });
}

// Same error, or the same ops (every field a file gives), lines and counts.
void expect_same(const Outcome& want, const Outcome& got, const std::string& what) {
  ASSERT_EQ(want.error, got.error) << what;
  ASSERT_EQ(want.history.has_value(), got.history.has_value()) << what;
  if (!want.history) return;
  const EdnHistory& a = *want.history;
  const EdnHistory& b = *got.history;
  ASSERT_EQ(a.ops.size(), b.ops.size()) << what;
  ASSERT_EQ(a.lines, b.lines) << what;
  EXPECT_EQ(a.total_ops, b.total_ops) << what;
  EXPECT_EQ(a.skipped_ops, b.skipped_ops) << what;
  for (size_t i = 0; i < a.ops.size(); ++i) {
    const Op& x = a.ops[i];
    const Op& y = b.ops[i];
    ASSERT_TRUE(x.index == y.index && x.time_ns == y.time_ns && x.process == y.process &&
                x.type == y.type && x.f == y.f && x.client == y.client)
        << what << ": op " << i;
  }
}

// Every place the text could be cut: just after each of its newlines.
std::vector<size_t> line_starts(const std::string& text) {
  std::vector<size_t> out;
  for (size_t i = 1; i < text.size(); ++i) {
    if (text[i - 1] == '\n') out.push_back(i);
  }
  return out;
}

void expect_every_cut_same(const std::string& text, const std::string& name) {
  const Outcome want = whole(text);
  for (const size_t cut : line_starts(text)) {
    expect_same(want, outcome([&] { return parse_edn_history_cut(text, "h.edn", cut, {}); }),
                name + " cut at byte " + std::to_string(cut));
  }
  // And where the command would cut it, were it big.
  expect_same(want, outcome([&] { return parse_edn_history_split(text, "h.edn", {}, 0); }), name);
}

const char* const kSmall[] = {
    "{:process 0 :type :invoke :f :acquire}\n{:process 0 :type :ok :f :acquire}\n"
    "{:process 0 :type :invoke :f :release}\n{:process 0 :type :ok :f :release}\n",
    "{:index 0 :process 0 :type :invoke :f :acquire}\n{:index 1 :process 0 :type :ok :f "
    ":acquire}\n{:index 2 :process :nemesis :type :info :f :pause :value [\"c1\" \"1s\"]}\n"
    "{:index 3 :process 1 :type :invoke :f :acquire}\n",
    // CRLF line ends.
    "{:process 0, :type :invoke, :f :acquire}\r\n{:process 0, :type :ok, :f :acquire}\r\n",
    // Duplicate and unsorted indices, across lines.
    "{:index 0 :process 0 :type :invoke :f :acquire}\n{:index 1 :process 0 :type :ok :f "
    ":acquire}\n{:index 0 :process 1 :type :invoke :f :acquire}\n",
    "{:index 1 :process 0 :type :invoke :f :acquire}\n{:index 0 :process 0 :type :ok :f "
    ":acquire}\n",
    // :index on some ops only, either way round.
    "{:index 0 :process 0 :type :invoke :f :acquire}\n{:process 0 :type :ok :f :acquire}\n",
    "{:process 0 :type :invoke :f :acquire}\n{:index 1 :process 0 :type :ok :f :acquire}\n",
    // Newlines inside forms: a string, a map over lines, a tag, a discard, comments.
    "{:process 0 :type :invoke :f :acquire :value \"a\n{:process 9}\"}\n{:process 0 :type :ok "
    ":f :acquire}\n",
    "{:process 0\n :type :invoke\n :f :acquire}\n{:process 0 :type :ok :f :acquire}\n",
    "{:process 0 :type :invoke :f :acquire :value\n{:a 1}}\n{:process 0 :type :ok :f :acquire}\n",
    "#jepsen.history.Op\n{:process 0 :type :invoke :f :acquire}\n#jepsen.history.Op{:process 0 "
    ":type :ok :f :acquire}\n",
    "#_\n{:process 7}\n{:process 0 :type :invoke :f :acquire}\n; a comment\n{:process 0 :type "
    ":ok :f :acquire}\n",
    "{:process 0 :type :invoke :f :acquire :value \\\n}\n{:process 0 :type :ok :f :acquire}\n",
    // One vector, or a list, of ops.
    "[\n{:process 0 :type :invoke :f :acquire}\n{:process 0 :type :ok :f :acquire}\n]\n",
    "(\n{:process 0 :type :invoke :f :acquire}\n)\n{:process 1}\n",
    // Errors: a bad field, an unclosed map, a duplicate key, a stray closer.
    "{:process 0 :type :invoke :f :acquire}\n{:process 0 :type :done :f :acquire}\n",
    "{:process 0 :type :invoke :f :acquire}\n{:process 0 :type :ok :f :acquire\n",
    "{:process 0 :type :invoke :f :acquire}\n{:process 0 :type :ok :type :ok :f :acquire}\n",
    "{:process 0 :type :invoke :f :acquire}\n}\n{:process 0 :type :ok :f :acquire}\n",
    "{:process 0 :type :invoke :f :acquire}\n[1 2]\n",
    "{:process -1 :type :invoke :f :acquire}\n{:process 99999999999999999999 :type :ok}\n",
    // Blank and empty.
    "",
    "\n\n\n",
    " ,\n;only a comment\n",
};

TEST(EdnSplit, EveryCutOfSmallInputsGivesTheOnePieceResult) {
  int i = 0;
  for (const char* text : kSmall)
    expect_every_cut_same(text, "kSmall[" + std::to_string(i++) + "]");
}

TEST(EdnSplit, EveryCutOfTheFuzzCorpusGivesTheOnePieceResult) {
  int inputs = 0;
  for (const auto& entry :
       fs::directory_iterator(fs::path(LOCKSIM_SOURCE_DIR) / "fuzz/corpus/edn_history")) {
    std::stringstream ss;
    ss << std::ifstream(entry.path(), std::ios::binary).rdbuf();
    expect_every_cut_same(ss.str(), entry.path().filename().string());
    ++inputs;
  }
  EXPECT_GE(inputs, 10);
}

// The bench's history: 100 k ops (about 8 MB), nemesis ops every 1,000.
std::string big_edn() {
  History h;
  h.ops = bench::with_nemesis(bench::contended_history(100'000, 5, 0.01, false), 1000);
  return to_edn(h);
}

std::string replaced(const std::string& text, const std::string& from, const std::string& to) {
  std::string out;
  size_t done = 0;
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, done)) {
    out.append(text, done, at - done).append(to);
    done = at + from.size();
  }
  return out.append(text, done);
}

// The 1-based line holding byte `at`.
int line_of(const std::string& text, size_t at) {
  return 1 + static_cast<int>(std::count(text.begin(), text.begin() + static_cast<long>(at), '\n'));
}

// `text` with `from` replaced by `to` at its first place at or after `at`,
// and the line of that place.
std::pair<std::string, int> planted(std::string text, size_t at, const std::string& from,
                                    const std::string& to) {
  const size_t k = text.find(from, at);
  EXPECT_NE(k, std::string::npos) << from;
  const int line = line_of(text, k);
  return {text.replace(k, from.size(), to), line};
}

Outcome split(const std::string& text) {
  return outcome([&] { return parse_edn_history_split(text, "h.edn"); });
}

TEST(EdnSplit, ABigHistoryIsCutNearTheMiddleAndReadTheSame) {
  const std::string edn = big_edn();
  ASSERT_GE(edn.size(), kSplitBytesMin);
  // The shapes the command meets: locksim's own, without :index (positions
  // then count across the cut), CRLF, and Jepsen's records.
  const std::pair<std::string, std::string> shapes[] = {
      {"locksim", edn},
      {"no :index", replaced(replaced(edn, "{:index ", "{:i "), ", :time", " :time")},
      {"CRLF", replaced(edn, "\n", "\r\n")},
      {"records", replaced(edn, "{:index", "#jepsen.history.Op{:index")},
  };
  for (const auto& [name, text] : shapes) {
    const size_t cut = edn_split_point(text);
    ASSERT_NE(cut, std::string::npos) << name;
    EXPECT_NEAR(static_cast<double>(cut), static_cast<double>(text.size()) / 2, 200) << name;
    const Outcome want = whole(text);
    ASSERT_TRUE(want.history.has_value()) << name << ": " << want.error;
    EXPECT_EQ(want.history->ops.size(), 100'000u) << name;
    expect_same(want, split(text), name);
  }
}

TEST(EdnSplit, ErrorsInABigHistoryAreTheOnePieceReadsWhereverTheyAre) {
  const std::string edn = big_edn();
  const size_t cut = edn_split_point(edn);
  ASSERT_NE(cut, std::string::npos);
  const size_t late = cut + (edn.size() - cut) / 2;
  struct Case {
    std::string name;
    std::pair<std::string, int> text_and_line;  // the line the error must name; 0: any
  };
  const auto bad_f = planted(edn, late, ":f :", ":f :y");
  const auto missing = [](std::pair<std::string, int> p) { return std::make_pair(p.first, 0); };
  const std::vector<Case> cases = {
      {"second half", planted(edn, late, ":type :ok", ":type :done")},
      {"the cut line", planted(edn, cut, ":type :", ":type :x")},
      {"both halves", planted(bad_f.first, 1000, ":f :", ":f :z")},
      // The first half's op 5 at line 6; the error names the second use.
      {"an index of the first half reused in the second",
       planted(edn, late, "{:index ", "{:index 5, :j ")},
      {"an unclosed map before the cut", missing(planted(edn, cut - 2, "}", " "))},
      {"no :index in the second half", planted(edn, late, "{:index ", "{:i ")},
      {"two maps run together across the cut", missing(planted(edn, cut - 2, "}\n{", "\n"))},
  };
  for (const Case& c : cases) {
    const auto& [text, line] = c.text_and_line;
    const Outcome want = whole(text);
    ASSERT_FALSE(want.error.empty()) << c.name;
    expect_same(want, split(text), c.name);
    if (line > 0) {
      // Not just equal: the line the one-piece read names is the real one.
      EXPECT_NE(want.error.find("h.edn:" + std::to_string(line) + ":"), std::string::npos)
          << c.name << ": " << want.error;
    }
  }
}
TEST(EdnSplit, AFileWithoutNewlinesOrOfNothingIsReadInOnePiece) {
  const std::string flat = replaced(big_edn(), "}\n", "} ");
  EXPECT_EQ(edn_split_point(flat), std::string::npos);
  expect_same(whole(flat), split(flat), "no newlines");
  EXPECT_EQ(edn_split_point(""), std::string::npos);
  EXPECT_EQ(edn_split_point("", 0), std::string::npos);
  expect_same(whole(""), split(""), "empty");
  const Outcome empty = split("");
  ASSERT_TRUE(empty.history.has_value());
  EXPECT_EQ(empty.history->total_ops, 0);
}

TEST(EdnSplit, BothHalvesGiveTheirBytesBack) {
  const std::string edn = big_edn();
  const size_t cut = edn_split_point(edn);
  std::mutex m;
  std::vector<std::pair<size_t, size_t>> ranges;
  const EdnHistory h = parse_edn_history_split(edn, "h.edn", [&](size_t begin, size_t end) {
    const std::lock_guard<std::mutex> lock(m);
    ranges.emplace_back(begin, end);
  });
  EXPECT_EQ(h.ops.size(), 100'000u);
  std::sort(ranges.begin(), ranges.end());
  ASSERT_GE(ranges.size(), 4u);
  // Each half's ranges chain from its start: 0 and the cut.
  size_t reach[2] = {0, cut};
  for (const auto& [begin, end] : ranges) {
    EXPECT_LE(begin, end);
    EXPECT_LE(end, edn.size());
    const int half = begin < cut ? 0 : 1;
    EXPECT_EQ(begin, reach[half]) << "ranges of a half are contiguous";
    reach[half] = end;
  }
  EXPECT_GT(reach[0], history::kTextDoneStep);
  EXPECT_LE(reach[0], cut);
  EXPECT_GT(reach[1], cut + history::kTextDoneStep);
}

// A text whose :index values do not increase is read again from its start
// (see TextDone): the ranges start again too, never backwards.
TEST(EdnSplit, ARereadGivesItsBytesBackFromTheStartAgain) {
  const std::string edn = big_edn();
  const size_t late = edn.size() * 3 / 4;
  // An index used twice (an error), and one out of order but unique (none).
  for (const std::string index : {"5", "99999999"}) {
    const std::string text = planted(edn, late, "{:index ", "{:index " + index + ", :j ").first;
    int calls = 0;
    std::mutex m;
    const Outcome got = outcome([&] {
      return parse_edn_history_split(text, "h.edn", [&](size_t begin, size_t end) {
        const std::lock_guard<std::mutex> lock(m);
        EXPECT_LE(begin, end);
        EXPECT_LE(end, text.size());
        ++calls;
      });
    });
    const Outcome want = whole(text);
    EXPECT_EQ(want.error.empty(), index != "5") << want.error;
    expect_same(want, got, index);
    EXPECT_GT(calls, 8);
  }
}

// Flat op maps (on one line, spaced by ' ' and ',', atoms only) take a fast
// path (Reader::read_flat_map); the same text spaced by tabs takes the long
// one, with the same columns (a tab is one column). Both must read alike.
const char* const kFlat[] = {
    "{:process 0 :type :invoke :f :acquire :index 123456789012345678 :time -12}\n",
    "{:process 0 :type :invoke :f :acquire :index 1234567890123456789}\n",
    "{:process 0 :type :invoke :f :acquire :index 99999999999999999999}\n",
    "{:process 0 :type :invoke :f :acquire :process 1}\n",
    "{:process -0 :type :invoke :f :release}\n{:process 007 :type :ok :f :release}\n",
    "{:process -3 :type :invoke :f :release}\n",
    "{:process 1 :type :invoke :f :acquire :a true :b false :c nil :d :e :g -}\n",
    "{:process 1 :type :invoke :f :acquire :a}\n",
    "{:process 1, :type :invoke, :f :acquire, :a :: }\n",
    "{:process 1 :type :invoke :f : }\n",
    "{:process 1 :type :invoke :f :acquire 5 6 nil 7 true 8}\n",
    "{:process :nemesis :type :info :f :crash}\n",
    "{:process 1.5 :type :invoke :f :acquire}\n",
    "{:process 1 :type :invoke :f :acquire :time +5}\n",
    "{:process 1 :type :invoke :f :acquire :time 5N}\n",
    "{:process 1 :type \"ok\" :f :acquire}\n",
    ("{:process 1 :type :invoke :f :acquire :a 1 :b 2 :c 3 :d 4 :e 5 :g 6 :h 7 :i 8 :j 9 :k 10 "
     ":l 11 :m 12 :n 13}\n"),
    "{}\n{ }\n",
    "{:a 1}\n",
    "{:process 1 :type :invoke :f :acquire :index 3}\n{:process 1 :type :ok :f :acquire}\n",
};

TEST(EdnFlatMap, ReadsAsTheLongWayDoes) {
  std::vector<std::string> texts(std::begin(kFlat), std::end(kFlat));
  for (const char* text : kSmall) texts.emplace_back(text);
  History h;
  h.ops = bench::with_nemesis(bench::contended_history(2'000, 5, 0.05, true), 100);
  texts.push_back(to_edn(h));
  int errors = 0;
  int tabbed_texts = 0;
  for (const std::string& text : texts) {
    const std::string tabbed = replaced(text, " ", "\t");
    tabbed_texts += tabbed != text ? 1 : 0;
    const Outcome fast = whole(text);
    errors += fast.error.empty() ? 0 : 1;
    expect_same(whole(tabbed), fast, text.substr(0, 60));
  }
  EXPECT_GE(errors, 10);  // the error cases are errors
  EXPECT_GE(tabbed_texts, 40);
}

}  // namespace
}  // namespace locksim::history
