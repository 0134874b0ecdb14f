// FaultyRedisConnection (env/faulty_redis_connection.h): each fault on its
// own, their order, and the wrapper pattern it is built on, against a
// simulated Redis server so "executed but the reply was lost" can be seen on
// the server itself.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "env/assert.h"
#include "env/faulty_redis_connection.h"
#include "tests/algorithm_test_env.h"

namespace locksim {
namespace {

using algorithms::Argv;
using algorithms::Cluster;
using algorithms::ServerConnection;

// Counts what reaches it, then forwards: shows what a wrapper let through.
class CountingConnection : public RedisConnectionWrapper {
 public:
  using RedisConnectionWrapper::RedisConnectionWrapper;
  Reply command(Argv argv) override {
    ++reached;
    return RedisConnectionWrapper::command(std::move(argv));
  }
  int reached = 0;
};

struct Fixture {
  Cluster cluster{1};
  ServerConnection server{cluster, 0};
  CountingConnection counted{server};
  FaultyRedisConnection faulty{counted};
  Reply on_server(const Argv& argv) { return cluster.run(0, argv); }
};

TEST(FaultyRedisConnection, ForwardsEverythingWhenNoFaultIsSet) {
  Fixture f;
  EXPECT_EQ(f.faulty.command({"SET", "k", "v", "NX", "PX", "1000"}), Reply::ok());
  EXPECT_EQ(f.faulty.command({"GET", "k"}), Reply::bulk("v"));
  EXPECT_EQ(f.faulty.command({"SET", "k", "w", "NX"}), Reply::nil());
  EXPECT_EQ(f.faulty.command({"NOSUCH"}).kind, Reply::Kind::kError);
  EXPECT_EQ(f.counted.reached, 4);
  EXPECT_EQ(f.faulty.server_name(), "redis-1");
  EXPECT_EQ(&f.faulty.target(), &f.counted);
  EXPECT_FALSE(f.faulty.down());
  EXPECT_EQ(f.faulty.replies_to_lose(), 0);
}

TEST(FaultyRedisConnection, DownFailsEveryCommandWithoutReachingTheServer) {
  Fixture f;
  f.faulty.set_down(true);
  EXPECT_TRUE(f.faulty.down());
  EXPECT_EQ(f.faulty.command({"SET", "k", "v"}), Reply::io_error("timeout"));
  EXPECT_EQ(f.faulty.command({"GET", "k"}), Reply::io_error("timeout"));
  EXPECT_EQ(f.counted.reached, 0);
  EXPECT_TRUE(f.on_server({"GET", "k"}).is_nil());  // the SET never arrived

  f.faulty.set_down(false);
  EXPECT_EQ(f.faulty.command({"SET", "k", "v"}), Reply::ok());
  EXPECT_EQ(f.on_server({"GET", "k"}), Reply::bulk("v"));

  // The io-error text is the caller's, e.g. what live mode's nemesis reports.
  Cluster cluster(1);
  ServerConnection server(cluster, 0);
  FaultyRedisConnection cut(server, "injected: connection reset");
  cut.set_down(true);
  EXPECT_EQ(cut.command({"PING"}), Reply::io_error("injected: connection reset"));
  EXPECT_EQ(cut.lost_text(), "injected: connection reset");
}

TEST(FaultyRedisConnection, LostRepliesAreExecutedThenLost) {
  Fixture f;
  f.faulty.lose_next_replies(2);
  EXPECT_EQ(f.faulty.replies_to_lose(), 2);
  EXPECT_EQ(f.faulty.command({"SET", "k", "v"}), Reply::io_error("timeout"));
  EXPECT_EQ(f.on_server({"GET", "k"}), Reply::bulk("v"));  // it landed all the same
  EXPECT_EQ(f.faulty.command({"INCR", "n"}), Reply::io_error("timeout"));
  EXPECT_EQ(f.on_server({"GET", "n"}), Reply::bulk("1"));
  EXPECT_EQ(f.faulty.replies_to_lose(), 0);
  EXPECT_EQ(f.faulty.command({"INCR", "n"}), Reply::integer_reply(2));
  EXPECT_EQ(f.counted.reached, 3);

  // A later call replaces the count; zero cancels it.
  f.faulty.lose_next_replies(5);
  f.faulty.lose_next_replies(0);
  EXPECT_EQ(f.faulty.command({"GET", "k"}), Reply::bulk("v"));
}

TEST(FaultyRedisConnection, FailedCommandsMatchTheirNameCaseInsensitively) {
  Fixture f;
  const Reply readonly = Reply::error("READONLY You can't write against a read only replica.");
  f.faulty.fail_command("set", readonly);
  f.faulty.lose_command("Expire");
  EXPECT_EQ(f.faulty.command({"SET", "k", "v"}), readonly);
  EXPECT_EQ(f.faulty.command({"set", "k", "v"}), readonly);
  EXPECT_EQ(f.faulty.command({"EXPIRE", "k", "10"}), Reply::io_error("timeout"));
  EXPECT_EQ(f.counted.reached, 0);  // none of them reached the server
  EXPECT_TRUE(f.on_server({"GET", "k"}).is_nil());
  // Other commands pass.
  EXPECT_EQ(f.faulty.command({"SETNX", "k", "v"}), Reply::integer_reply(1));
  EXPECT_EQ(f.counted.reached, 1);

  // A new rule for the same name replaces the old one; clearing removes all.
  f.faulty.fail_command("SET", Reply::error("OOM command not allowed"));
  EXPECT_EQ(f.faulty.command({"SET", "k", "v"}), Reply::error("OOM command not allowed"));
  f.faulty.clear_failed_commands();
  EXPECT_EQ(f.faulty.command({"SET", "k", "w"}), Reply::ok());
  EXPECT_EQ(f.faulty.command({"EXPIRE", "k", "10"}), Reply::integer_reply(1));
}

TEST(FaultyRedisConnection, DownComesFirstThenFailedCommandsThenLostReplies) {
  Fixture f;
  f.faulty.fail_command("GET", Reply::error("ERR refused"));
  f.faulty.lose_next_replies(1);
  f.faulty.set_down(true);
  EXPECT_EQ(f.faulty.command({"GET", "k"}), Reply::io_error("timeout"));  // down wins
  EXPECT_EQ(f.faulty.replies_to_lose(), 1);  // nothing reached the server: nothing lost
  f.faulty.set_down(false);
  EXPECT_EQ(f.faulty.command({"GET", "k"}), Reply::error("ERR refused"));  // then the rule
  EXPECT_EQ(f.faulty.replies_to_lose(), 1);
  EXPECT_EQ(f.faulty.command({"SET", "k", "v"}), Reply::io_error("timeout"));  // then the loss
  EXPECT_EQ(f.on_server({"GET", "k"}), Reply::bulk("v"));
  EXPECT_EQ(f.counted.reached, 1);
}

// The pattern itself: a subclass overrides one call and inherits the rest,
// and wrappers stack (here, faults over faults over a counter).
TEST(FaultyRedisConnection, WrappersOverrideOnlyWhatTheyChangeAndStack) {
  class Renamed : public RedisConnectionWrapper {
   public:
    using RedisConnectionWrapper::RedisConnectionWrapper;
    std::string server_name() const override { return "renamed:" + target().server_name(); }
  };
  Fixture f;
  Renamed renamed(f.faulty);
  EXPECT_EQ(renamed.server_name(), "renamed:redis-1");
  EXPECT_EQ(renamed.command({"SET", "k", "v"}), Reply::ok());  // forwarded through every layer

  FaultyRedisConnection outer(renamed, "outer lost");
  f.faulty.lose_next_replies(1);  // the inner layer loses a reply...
  EXPECT_EQ(outer.command({"INCR", "n"}), Reply::io_error("timeout"));
  outer.set_down(true);  // ...the outer one cuts everything off before it
  EXPECT_EQ(outer.command({"INCR", "n"}), Reply::io_error("outer lost"));
  EXPECT_EQ(f.on_server({"GET", "n"}), Reply::bulk("1"));
  EXPECT_EQ(f.counted.reached, 2);
}

TEST(FaultyRedisConnectionDeathTest, BrokenPreconditionsAreInvariantFailures) {
  Fixture f;
  EXPECT_EXIT(f.faulty.lose_next_replies(-1), ::testing::ExitedWithCode(kExitInvariant),
              "invariant broken: n >= 0");
  EXPECT_EXIT(f.faulty.command({}), ::testing::ExitedWithCode(kExitInvariant),
              "invariant broken: !argv.empty");
  EXPECT_EXIT(f.faulty.fail_command("", Reply::error("ERR")),
              ::testing::ExitedWithCode(kExitInvariant), "invariant broken: !name.empty");
}

}  // namespace
}  // namespace locksim
