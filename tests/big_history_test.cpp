// A big generated history (100 k ops) through the EDN reader and the
// checker: what the writer wrote is read back op for op, in every shape a
// history file takes (bare op maps, one vector, Jepsen's records, a file on
// disk, whose pages the reader drops as it goes), and the verdict is right
// both ways: valid without a violation, and invalid at the one injected.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "bench/contended_history.h"
#include "checkers/linearizability.h"
#include "history/edn_history.h"
#include "history/history_file.h"
#include "history/history_io.h"

namespace locksim {
namespace {

constexpr int64_t kOps = 100'000;  // over 1 MiB of text: several kTextDoneStep drops
constexpr size_t kNemesisEvery = 1000;

// A file of this test program's own, removed when it goes. (Not
// tests/locksim_binary.h: gcc 12 inlines its command string here into a false
// -Warray-bounds, GCC bug 105329's kind.)
class ScratchFile {
 public:
  ScratchFile(const std::string& name, const std::string& text)
      : path_(std::filesystem::temp_directory_path() /
              ("locksim_big_history_" + std::to_string(::getpid()) + "_" + name)) {
    std::ofstream(path_, std::ios::binary) << text;
  }
  ~ScratchFile() {
    std::error_code ec;
    std::filesystem::remove(path_, ec);
  }
  std::string path() const { return path_.string(); }

 private:
  std::filesystem::path path_;
};

// `locksim check --quiet PATH`'s exit code.
int check_exit_code(const std::string& path) {
  // Appended, not a chain of +: gcc 12 warns falsely on that here (see above).
  std::string command = LOCKSIM_BINARY;
  command.append(" check --quiet '").append(path).append("'");
  const int status = std::system(command.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

history::History generated(bool violate) {
  history::History h;
  h.ops = bench::with_nemesis(bench::contended_history(kOps, 5, 0.01, violate), kNemesisEvery);
  return h;
}

// Every client op of `written`, in order, is the op read at the same place;
// the nemesis ops are counted and skipped; each op's line is its line in a
// file of one op per line.
void expect_read_back(const history::History& written, const history::EdnHistory& read,
                      int line_offset) {
  size_t k = 0;
  int64_t nemesis = 0;
  for (size_t i = 0; i < written.ops.size(); ++i) {
    const history::Op& op = written.ops[i];
    if (!history::is_client_op(op)) {
      ++nemesis;
      continue;
    }
    ASSERT_LT(k, read.ops.size());
    const history::Op& got = read.ops[k];
    ASSERT_EQ(got.index, op.index) << "op " << i;
    ASSERT_EQ(got.time_ns, op.time_ns) << "op " << i;
    ASSERT_EQ(got.process, op.process) << "op " << i;
    ASSERT_EQ(got.type, op.type) << "op " << i;
    ASSERT_EQ(got.f, op.f) << "op " << i;
    ASSERT_EQ(got.client, -1) << "a file's ops have processes only";
    ASSERT_EQ(read.lines[k], static_cast<int>(i) + 1 + line_offset) << "op " << i;
    ++k;
  }
  EXPECT_EQ(k, read.ops.size());
  EXPECT_EQ(read.skipped_ops, nemesis);
  EXPECT_EQ(read.total_ops, static_cast<int64_t>(written.ops.size()));
  EXPECT_GT(nemesis, 0);
}

// Jepsen writes ops as records, #jepsen.history.Op{...}.
std::string as_records(const std::string& edn) {
  std::string out;
  out.reserve(edn.size() + edn.size() / 4);
  for (char c : edn) {
    if (c == '{') out += "#jepsen.history.Op";
    out += c;
  }
  return out;
}

TEST(BigHistory, ReadsBackWhatTheWriterWroteInEveryShape) {
  const history::History h = generated(false);
  const std::string edn = history::to_edn(h);
  ASSERT_GT(edn.size(), 4 * history::kTextDoneStep);
  expect_read_back(h, history::parse_edn_history(edn, "big.edn"), 0);
  expect_read_back(h, history::parse_edn_history("[\n" + edn + "]\n", "big.edn"), 1);
  expect_read_back(h, history::parse_edn_history(as_records(edn), "big.edn"), 0);
  // The `done` offsets grow, stay inside the text, and come about every step.
  size_t last = 0;
  int calls = 0;
  history::parse_edn_history(edn, "big.edn", [&](size_t offset) {
    EXPECT_GE(offset, last + history::kTextDoneStep);
    EXPECT_LE(offset, edn.size());
    last = offset;
    ++calls;
  });
  // At an op's end past each step: one fewer when the overshoots add up.
  const auto steps = static_cast<int>(edn.size() / history::kTextDoneStep);
  EXPECT_GE(calls, steps - 1);
  EXPECT_LE(calls, steps);
  // From a file: mapped, its pages dropped behind the parse.
  const ScratchFile file("read_back.edn", edn);
  expect_read_back(h, history::load_history_file(file.path()), 0);
}

TEST(BigHistory, TheVerdictIsRightBothWays) {
  const history::History valid = generated(false);
  const history::EdnHistory a = history::parse_edn_history(history::to_edn(valid), "valid.edn");
  ASSERT_FALSE(checkers::find_rule_break(a.ops));
  const checkers::LinearizabilityVerdict va = checkers::check_linearizable(a.ops);
  EXPECT_EQ(va.kind, checkers::Verdict::Kind::kValid) << va.explanation;

  // The violation is the last two client ops: another process's acquire
  // invoked and granted while the holder has not released.
  const history::History invalid = generated(true);
  const history::EdnHistory b = history::parse_edn_history(history::to_edn(invalid), "invalid.edn");
  ASSERT_FALSE(checkers::find_rule_break(b.ops));
  const checkers::LinearizabilityVerdict vb = checkers::check_linearizable(b.ops);
  ASSERT_EQ(vb.kind, checkers::Verdict::Kind::kInvalid);
  ASSERT_TRUE(vb.unlinearizable.has_value());
  EXPECT_EQ(vb.unlinearizable->complete_index, b.ops.back().index) << vb.explanation;
  EXPECT_EQ(vb.unlinearizable->f, history::OpF::kAcquire);
  EXPECT_EQ(vb.prefix_end_index, b.ops.back().index);
}

TEST(BigHistory, TheCommandGivesTheVerdictsExitCode) {
  const ScratchFile valid("valid.edn", history::to_edn(generated(false)));
  const ScratchFile invalid("invalid.edn", history::to_edn(generated(true)));
  EXPECT_EQ(check_exit_code(valid.path()), 0);
  EXPECT_EQ(check_exit_code(invalid.path()), 1);
}

}  // namespace
}  // namespace locksim
