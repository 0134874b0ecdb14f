// docs/tutorial.md says every output in it is real and that a reader gets the
// same bytes, except for wall-clock times. This test holds it to that: it
// follows the tutorial from top to bottom in a scratch directory, runs each
// `build/locksim ...` command of its ```sh blocks with the real binary, and
// compares what the last command of a block prints with the output block that
// directly follows it. Left alone, the tutorial had drifted from the program
// (a new exposure sentence, a new matrix column, changed violation counts)
// without any test noticing.
//
// The tutorial marks what prose alone cannot say with HTML comments, which a
// Markdown renderer hides, on the line before a block:
//   <!-- doc-test: exit N -->           the next ```sh block's last command exits N
//                                      (unmarked: 0)
//   <!-- doc-test: file NAME -->        the next block is a file the reader saves as NAME
//   <!-- doc-test: excerpt of PATH -->  the next block appears, whole, in the file PATH
//   <!-- doc-test: lines of CMD -->     each line of the next block is a line CMD prints
// An output block with neither a command before it nor a marker fails the
// test, so no unchecked output can come in.
#include <gtest/gtest.h>

#include <filesystem>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "tests/locksim_binary.h"

namespace {

namespace fs = std::filesystem;
using locksim::testing::locksim;
using locksim::testing::Outcome;
using locksim::testing::slurp;

const locksim::testing::ScratchDir scratch_dir("locksim_tutorial_");

struct Block {
  std::string info;    // what follows the opening ```: "sh", "json" or empty
  std::string text;    // the lines between the fences, each ending in '\n'
  std::string marker;  // the doc-test marker on the line before, if any
  bool after_block;    // only blank lines separate it from the block before
  size_t line;         // of its opening fence, 1-based
};

std::vector<Block> blocks_of(const std::string& doc) {
  static const std::regex marker_re(R"(^<!-- doc-test: (.*) -->$)");
  std::vector<Block> blocks;
  std::istringstream in(doc);
  std::string line, previous;
  bool only_blank_since_block = false;
  std::optional<Block> open;
  for (size_t n = 1; std::getline(in, line); ++n) {
    if (open) {
      if (line == "```") {
        blocks.push_back(*open);
        open.reset();
        only_blank_since_block = true;
      } else {
        open->text += line + "\n";
      }
      continue;
    }
    if (line.rfind("```", 0) == 0) {
      std::smatch m;
      const std::string marker =
          std::regex_match(previous, m, marker_re) ? m[1].str() : std::string();
      open = Block{line.substr(3), "", marker, only_blank_since_block, n};
      continue;
    }
    if (!line.empty() && !std::regex_match(line, marker_re)) only_blank_since_block = false;
    previous = line;
  }
  EXPECT_FALSE(open.has_value()) << "an unclosed ``` block";
  return blocks;
}

// What may differ from the tutorial's bytes: how long a sweep, a shrink or a
// check took, and how much memory a check used.
std::string mask_machine(const std::string& s) {
  static const std::vector<std::pair<std::regex, std::string>> masks = {
      {std::regex(R"(( runs) in [0-9.]+ s \([0-9.]+ runs/s\))"), "$1 in T s (R runs/s)"},
      {std::regex(R"(( candidate runs) \([0-9.]+s\))"), "$1 (Ts)"},
      {std::regex(R"((valid|invalid) +[0-9.]+ (us|ms|s) +[0-9]+ MB)"), "$1 T M MB"},
  };
  std::string out = s;
  for (const auto& [re, with] : masks) out = std::regex_replace(out, re, with);
  return out;
}

// The commands of a ```sh block, continuation lines joined.
std::vector<std::string> commands_of(const std::string& text) {
  std::vector<std::string> commands;
  std::istringstream in(text);
  std::string line, joined;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\\') {
      joined += line.substr(0, line.size() - 1);
      continue;
    }
    joined += line;
    if (!joined.empty()) commands.push_back(joined);
    joined.clear();
  }
  return commands;
}

// Runs `build/locksim ARGS` as the reader would, from the scratch directory.
Outcome run_in_scratch(const std::string& command) {
  const std::string prefix = "build/locksim ";
  EXPECT_EQ(command.rfind(prefix, 0), 0u) << command;
  return locksim(command.substr(prefix.size()), scratch_dir.path());
}

bool is_build_step(const std::string& command) {
  return command.rfind("cmake ", 0) == 0 || command.rfind("scripts/", 0) == 0;
}

// Runs an ```sh block and returns what its last command printed (none for a
// block of build steps, which the test's own build has done).
std::optional<Outcome> run_block(const Block& b) {
  std::optional<Outcome> last;
  for (const std::string& command : commands_of(b.text)) {
    if (is_build_step(command)) continue;
    last = run_in_scratch(command);
    // A command before the last of its block must just work.
    EXPECT_NE(last->exit_code, 2) << "line " << b.line << ": " << command << "\n" << last->err;
  }
  if (!last) return std::nullopt;
  int expected = 0;
  if (b.marker.rfind("exit ", 0) == 0) expected = std::stoi(b.marker.substr(5));
  EXPECT_EQ(last->exit_code, expected) << "line " << b.line << ": " << b.text << last->err;
  return last;
}

void check_marked(const Block& b) {
  const fs::path dir = scratch_dir.path();
  if (b.marker.rfind("file ", 0) == 0) {
    scratch_dir.write(b.marker.substr(5), b.text);
  } else if (b.marker.rfind("excerpt of ", 0) == 0) {
    const std::string file = slurp(dir / b.marker.substr(11));
    EXPECT_NE(file.find(b.text), std::string::npos)
        << "line " << b.line << ": not in " << b.marker.substr(11) << ":\n"
        << b.text << "--- the file:\n"
        << file;
  } else if (b.marker.rfind("lines of ", 0) == 0) {
    const Outcome o = run_in_scratch(b.marker.substr(9));
    std::istringstream in(b.text);
    for (std::string line; std::getline(in, line);) {
      EXPECT_NE(("\n" + o.out).find("\n" + line + "\n"), std::string::npos)
          << "line " << b.line << ": " << b.marker.substr(9) << " does not print:\n"
          << line;
    }
  } else {
    ADD_FAILURE() << "line " << b.line << ": an output block the test cannot check (no "
                  << "command before it, no doc-test marker)";
  }
}

TEST(Tutorial, EveryCommandPrintsWhatTheTutorialShows) {
  const std::vector<Block> blocks =
      blocks_of(slurp(fs::path(LOCKSIM_SOURCE_DIR) / "docs" / "tutorial.md"));
  // Pair of the walk below: the tutorial has its commands and outputs.
  ASSERT_GT(blocks.size(), 20u);
  std::optional<Outcome> pending;  // the last command's output, not yet compared
  size_t compared = 0;
  for (const Block& b : blocks) {
    if (b.info == "sh") {
      pending = run_block(b);
      continue;
    }
    if (pending && b.after_block && b.marker.empty() && b.info.empty()) {
      EXPECT_EQ(mask_machine(pending->out), mask_machine(b.text)) << "line " << b.line;
      ++compared;
    } else {
      check_marked(b);
    }
    pending.reset();
  }
  EXPECT_GE(compared, 10u);
}

}  // namespace
