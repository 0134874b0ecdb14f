// Runs the real locksim binary as a user or a CI job would, for tests that
// check what a user relies on: exit codes, stdout, stderr, files written.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace locksim::testing {

struct Outcome {
  int exit_code = -1;
  std::string out;
  std::string err;
};

inline std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// `args` is passed through /bin/sh, so quote as in a shell. With `cwd`, the
// binary runs there, as a user's command in that folder would (relative
// paths in `args` are then relative to it).
inline Outcome locksim(const std::string& args, const std::filesystem::path& cwd = {}) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("locksim_cli_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  // Appended piece by piece: gcc 12 warns (-Warray-bounds, a known false
  // positive) on this chain of operator+ in some test files.
  std::string cmd;
  if (!cwd.empty()) {
    cmd += "cd '";
    cmd += cwd.string();
    cmd += "' && ";
  }
  cmd += LOCKSIM_BINARY;
  cmd += ' ';
  cmd += args;
  cmd += " >";
  cmd += (dir / "out").string();
  cmd += " 2>";
  cmd += (dir / "err").string();
  const int status = std::system(cmd.c_str());
  Outcome o;
  o.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  o.out = slurp(dir / "out");
  o.err = slurp(dir / "err");
  std::filesystem::remove_all(dir);
  return o;
}

// A directory of the test program's own, under the system's temp directory,
// named by `prefix` and the process id (so two test programs running at once
// never share one), removed with everything in it when the object dies. Hold
// one at namespace scope: it goes when the test program ends.
class ScratchDir {
 public:
  explicit ScratchDir(const std::string& prefix)
      : path_(std::filesystem::temp_directory_path() / (prefix + std::to_string(::getpid()))) {}
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  ~ScratchDir() {
    std::error_code ec;  // a failed clean-up must not fail the tests
    std::filesystem::remove_all(path_, ec);
  }

  // The directory, created on first use.
  const std::filesystem::path& path() const {
    std::filesystem::create_directories(path_);
    return path_;
  }
  // Writes `text` to the file `name` in it (its folders made) and returns its path.
  std::filesystem::path write(const std::string& name, const std::string& text) const {
    const std::filesystem::path p = path() / name;
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << text;
    return p;
  }

 private:
  std::filesystem::path path_;
};

inline size_t count_lines(const std::string& s) {
  size_t n = 0;
  for (char c : s) n += c == '\n';
  return n;
}

// The project's rule for bad input, asserted: exit 2, one line on stderr
// that mentions `must_mention`, nothing on stdout, no C++ terminate message.
// Returns stderr, for tests that say more about the line.
inline std::string expect_bad_input(const std::string& args, const std::string& must_mention) {
  const Outcome o = locksim(args);
  EXPECT_EQ(o.exit_code, 2) << args << "\nstdout: " << o.out << "\nstderr: " << o.err;
  EXPECT_EQ(count_lines(o.err), 1u) << args << "\nstderr: " << o.err;
  EXPECT_NE(o.err.find(must_mention), std::string::npos) << args << "\nstderr: " << o.err;
  EXPECT_EQ(o.err.find("terminate"), std::string::npos) << o.err;
  EXPECT_TRUE(o.out.empty()) << args << "\nstdout: " << o.out;
  return o.err;
}

}  // namespace locksim::testing
