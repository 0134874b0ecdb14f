// Runs the real locksim binary as a user or a CI job would, for tests that
// check what a user relies on: exit codes, stdout, stderr, files written.
#pragma once

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

// `args` is passed through /bin/sh, so quote as in a shell.
inline Outcome locksim(const std::string& args) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("locksim_cli_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string cmd = std::string(LOCKSIM_BINARY) + " " + args + " >" + (dir / "out").string() +
                          " 2>" + (dir / "err").string();
  const int status = std::system(cmd.c_str());
  Outcome o;
  o.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  o.out = slurp(dir / "out");
  o.err = slurp(dir / "err");
  std::filesystem::remove_all(dir);
  return o;
}

inline size_t count_lines(const std::string& s) {
  size_t n = 0;
  for (char c : s) n += c == '\n';
  return n;
}

}  // namespace locksim::testing
