// OwnedProcess, the one owner of each server process a live run or test
// starts: it reaps what exited and says how, stops with or without a grace
// period (also a paused process), hands ownership over on a move, and the
// interrupt path (stop_all_owned) stops every owned process and removes its
// folder while the former owners then stop nothing.
#include "live/owned_processes.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>

namespace locksim::live {
namespace {

namespace fs = std::filesystem;

// A fresh folder for one test's logs, removed at the end.
class OwnedProcessTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = make_temp_dir("locksim-owned-test"); }
  void TearDown() override { fs::remove_all(dir_); }
  std::string log() const { return dir_ + "/log"; }
  std::string dir_;
};

// Waits (bounded: 10 s) for the process to exit; its wait status.
int wait_exited(OwnedProcess& p) {
  for (int i = 0; i < 1000; ++i) {
    int status = 0;
    if (p.exited(&status)) return status;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ADD_FAILURE() << "pid " << p.pid() << " did not exit within 10 s";
  return -1;
}

bool exists(pid_t pid) {
  return ::kill(pid, 0) == 0;
}

TEST_F(OwnedProcessTest, ExitedReapsAndReportsHowItEnded) {
  OwnedProcess p({"/bin/sh", "-c", "echo hello; exit 3"}, log(), "");
  const pid_t pid = p.pid();
  const int status = wait_exited(p);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 3);
  EXPECT_FALSE(p.owned());
  EXPECT_EQ(p.pid(), -1);
  EXPECT_FALSE(exists(pid)) << "not even a zombie is left";
  EXPECT_EQ(log_tail(log()), "hello");
}

TEST_F(OwnedProcessTest, AMissingBinaryExits127AndAnUnwritableLogThrows) {
  OwnedProcess p({"/nonexistent/locksim-server"}, log(), "");
  const int status = wait_exited(p);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 127);
  EXPECT_THROW(OwnedProcess({"/bin/true"}, dir_ + "/no/such/folder/log", ""), std::runtime_error);
}

// With a grace period the server may shut down cleanly (its TERM handler
// runs); without one it is killed at once (the handler never runs).
TEST_F(OwnedProcessTest, StopGivesSigtermItsGraceOrKillsAtOnce) {
  const std::string script = "trap 'echo clean > " + dir_ + "/$0; exit 0' TERM; " + "echo up > " +
                             dir_ + "/$0.up; while :; do sleep 0.02; done";
  OwnedProcess graceful({"/bin/sh", "-c", script, "graceful"}, log(), "");
  OwnedProcess killed({"/bin/sh", "-c", script, "killed"}, dir_ + "/log2", "");
  for (int i = 0;
       i < 1000 && !(fs::exists(dir_ + "/graceful.up") && fs::exists(dir_ + "/killed.up")); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  const pid_t graceful_pid = graceful.pid(), killed_pid = killed.pid();
  graceful.stop(std::chrono::milliseconds(5000));
  killed.stop();
  EXPECT_TRUE(fs::exists(dir_ + "/graceful")) << "the TERM handler did not run";
  EXPECT_FALSE(fs::exists(dir_ + "/killed")) << "SIGKILL cannot be handled";
  EXPECT_FALSE(graceful.owned());
  EXPECT_FALSE(killed.owned());
  EXPECT_FALSE(exists(graceful_pid));
  EXPECT_FALSE(exists(killed_pid));
  killed.stop();  // a second stop: nothing to do
}

TEST_F(OwnedProcessTest, APausedProcessStopsToo) {
  OwnedProcess p({"/bin/sleep", "60"}, log(), "");
  const pid_t pid = p.pid();
  ASSERT_EQ(::kill(pid, SIGSTOP), 0);
  p.stop(std::chrono::milliseconds(2000));
  EXPECT_FALSE(exists(pid));
}

TEST_F(OwnedProcessTest, AMoveHandsOwnershipOver) {
  OwnedProcess a({"/bin/sleep", "60"}, log(), "");
  const pid_t pid = a.pid();
  OwnedProcess b(std::move(a));
  EXPECT_FALSE(a.owned());  // NOLINT(bugprone-use-after-move): that is the point
  EXPECT_EQ(b.pid(), pid);
  OwnedProcess c;
  c = std::move(b);
  EXPECT_EQ(c.pid(), pid);
  EXPECT_TRUE(exists(pid));
  c = OwnedProcess();  // assigning stops what it owned
  EXPECT_FALSE(exists(pid));
}

// What an interrupt does: every owned process killed and reaped, its folder
// removed; the owners afterwards stop nothing (the pid is not theirs now).
TEST_F(OwnedProcessTest, StopAllOwnedStopsEveryOneAndRemovesTheirFolders) {
  const std::string folder_a = make_temp_dir("locksim-owned-a");
  const std::string folder_b = make_temp_dir("locksim-owned-b");
  OwnedProcess a({"/bin/sleep", "60"}, folder_a + "/log", folder_a);
  OwnedProcess b({"/bin/sleep", "60"}, folder_b + "/log", folder_b);
  OwnedProcess c({"/bin/sleep", "60"}, folder_b + "/log2", folder_b);  // shares b's folder
  const pid_t pids[] = {a.pid(), b.pid(), c.pid()};
  EXPECT_EQ(stop_all_owned(), 3);
  for (const pid_t pid : pids) EXPECT_FALSE(exists(pid)) << pid;
  EXPECT_FALSE(fs::exists(folder_a));
  EXPECT_FALSE(fs::exists(folder_b));
  int status = 0;
  EXPECT_TRUE(a.exited(&status)) << "taken over by the interrupt: gone";
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  b.stop();
  EXPECT_EQ(stop_all_owned(), 0);
}

// A server between its crash and its restart has no process, but its
// folder (MariaDB's is 87 MB) must still go with an interrupt; a folder its
// owner removed is forgotten.
TEST_F(OwnedProcessTest, StopAllOwnedRemovesAFolderNoProcessHolds) {
  const std::string down = make_temp_dir("locksim-owned-down");
  const std::string gone = make_temp_dir("locksim-owned-gone");
  remove_temp_dir(gone);
  EXPECT_FALSE(fs::exists(gone));
  EXPECT_EQ(stop_all_owned(), 0);
  EXPECT_FALSE(fs::exists(down));
}

// Ctrl-C while an owner is polling its server (a live run still waiting for
// its ensemble to start): the owner must not see "exited" and race the
// watcher — removing the same folder at once, or ending with its own exit
// code. It waits; the watcher stops the server, removes the folder, and the
// process ends with 130. Run in a forked child: the watcher _exits.
TEST_F(OwnedProcessTest, AnOwnerPollingDuringCtrlCWaitsForTheWatchersExit) {
  const std::string folder = make_temp_dir("locksim-owned-interrupt");
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    stop_owned_on_interrupt();  // this child has one thread until here
    OwnedProcess server({"/bin/sleep", "60"}, folder + "/log", folder);
    ::kill(::getpid(), SIGINT);
    // Polls as fast as it can, for 10 s: far longer than the watcher needs.
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (std::chrono::steady_clock::now() < until) {
      int status = 0;
      if (server.exited(&status)) ::_exit(99);  // raced ahead of the watcher
    }
    ::_exit(98);  // the interrupt never arrived
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 130) << "99: the owner returned; 98: no interrupt";
  EXPECT_FALSE(fs::exists(folder));
  fs::remove_all(folder);  // what a failing child left behind
}

TEST(ServerScratch, FreePortsAndTempFoldersAndLogTails) {
  const int port = pick_free_loopback_port();
  EXPECT_GT(port, 0);
  EXPECT_LT(port, 65536);
  const std::string dir = make_temp_dir("locksim-scratch");
  EXPECT_TRUE(fs::is_directory(dir));
  EXPECT_EQ(fs::path(dir).parent_path(), fs::path(temp_root()));
  EXPECT_EQ(log_tail(dir + "/none"), "(no log)");
  {
    std::FILE* f = std::fopen((dir + "/log").c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fputs("one\r\n\ntwo\nthree\nfour\nfive\n", f);
    std::fclose(f);
  }
  EXPECT_EQ(log_tail(dir + "/log"), "two | three | four | five");
  fs::remove_all(dir);
}

}  // namespace
}  // namespace locksim::live
