// What the tests against real servers (redis-server, mariadbd, ZooKeeper,
// Knossos's JVM) share: the rule for a missing server (skip with the reason
// on a user's machine, fail in CI, so a CI machine without it cannot pass by
// testing nothing), and Ctrl-C on `locksim live` as a user presses it (the
// run's servers gone, their folders removed, whichever backend started them).
#pragma once

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include "locksim_binary.h"

namespace locksim::testing {

// Whether this is CI (CI=true, as GitHub Actions and .ci/run set it).
inline bool in_ci() {
  const char* ci = std::getenv("CI");
  return ci != nullptr && std::string(ci) == "true";
}

// In a TEST body: `reason` is "" when `what` is there; otherwise the test
// skips with it, or fails in CI.
#define LOCKSIM_SKIP_WITHOUT(what, reason)                                \
  do {                                                                    \
    if (const std::string why_missing = (reason); !why_missing.empty()) { \
      if (::locksim::testing::in_ci()) {                                  \
        FAIL() << what << " is required in CI: " << why_missing;          \
      }                                                                   \
      GTEST_SKIP() << what << " not installed: " << why_missing;          \
    }                                                                     \
  } while (0)

struct ServerChild {
  pid_t pid = 0;
  std::string folder;  // the locksim-* temp folder named on its command line
};

// The folder "<...>/locksim-<kind>-XXXXXX" in a NUL-separated command line
// (or one path), or "" when no argument names one.
inline std::string locksim_folder_in(const std::string& cmdline) {
  size_t begin = 0;
  while (begin < cmdline.size()) {  // every round moves past one argument
    size_t end = cmdline.find('\0', begin);
    if (end == std::string::npos) end = cmdline.size();
    const std::string arg = cmdline.substr(begin, end - begin);
    const size_t at = arg.find("/locksim-");
    if (at != std::string::npos) {
      const size_t eq = arg.rfind('=', at);
      const size_t from = eq == std::string::npos ? 0 : eq + 1;
      return arg.substr(from, arg.find('/', at + 1) - from);
    }
    begin = end + 1;
  }
  return "";
}

// The processes called `comm` (as in /proc/PID/stat) whose parent is `parent`.
inline std::vector<ServerChild> server_children(pid_t parent, const std::string& comm) {
  namespace fs = std::filesystem;
  std::vector<ServerChild> out;
  for (const auto& entry : fs::directory_iterator("/proc")) {
    const std::string name = entry.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream stat(entry.path() / "stat");
    std::string pid, stat_comm, state;
    pid_t ppid = 0;
    if (!(stat >> pid >> stat_comm >> state >> ppid) || ppid != parent) continue;
    if (stat_comm != "(" + comm + ")") continue;
    std::ifstream cmd(entry.path() / "cmdline");
    const std::string cmdline((std::istreambuf_iterator<char>(cmd)),
                              std::istreambuf_iterator<char>());
    std::string folder = locksim_folder_in(cmdline);
    // redis-server rewrites its command line ("redis-server 127.0.0.1:PORT")
    // but runs in its --dir.
    std::error_code ec;
    if (folder.empty()) folder = locksim_folder_in(fs::read_symlink(entry.path() / "cwd", ec));
    out.push_back({static_cast<pid_t>(std::stol(pid)), folder});
  }
  return out;
}

// Starts `locksim live ARGS...` (stdout to /dev/null), waits until it has
// `servers` children called `comm`, lets the run go for a second, sends
// SIGINT and checks what a user relies on: exit 130, every server gone, every
// server's folder removed.
inline void expect_ctrl_c_cleans_up(const std::vector<std::string>& args, const std::string& comm,
                                    size_t servers) {
  std::vector<std::string> argv_strings = {LOCKSIM_BINARY, "live"};
  argv_strings.insert(argv_strings.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& a : argv_strings) argv.push_back(a.data());
  argv.push_back(nullptr);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    const int null_fd = ::open("/dev/null", O_WRONLY);
    ::dup2(null_fd, STDOUT_FILENO);
    ::execv(LOCKSIM_BINARY, argv.data());
    ::_exit(127);
  }
  // Seen, and far enough into its start to name its folder: Redis takes its
  // command line over for its process title first thing in main
  // (spt_init), and moves to its --dir only later, loading its
  // configuration; a server seen in between names no folder (once, for
  // redis-sentinel, in a busy ctest).
  std::vector<ServerChild> found;
  const auto started = [&found, servers] {
    return found.size() >= servers &&
           std::all_of(found.begin(), found.end(),
                       [](const ServerChild& s) { return !s.folder.empty(); });
  };
  for (int i = 0; i < 600 && !started(); ++i) {  // up to 60 s on a busy machine
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    found = server_children(child, comm);
  }
  std::this_thread::sleep_for(std::chrono::seconds(1));  // let the run get going
  ASSERT_EQ(::kill(child, SIGINT), 0);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_EQ(found.size(), servers) << comm << " servers seen before Ctrl-C";
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 130);
  for (const ServerChild& s : found) {
    EXPECT_NE(::kill(s.pid, 0), 0) << comm << " " << s.pid << " survived Ctrl-C";
    ASSERT_FALSE(s.folder.empty()) << comm << " names no locksim-* folder";
    EXPECT_FALSE(std::filesystem::exists(s.folder)) << s.folder << " left behind";
  }
}

}  // namespace locksim::testing
