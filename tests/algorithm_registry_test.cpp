// The algorithm registry (algorithms/registry.h): every entry builds with its
// defaults, parameters are read, and bad values name the field.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "algorithms/getset_timestamp.h"
#include "algorithms/naive_setnx.h"
#include "algorithms/redisson_fair_lock.h"
#include "algorithms/redlock.h"
#include "algorithms/registry.h"
#include "env/parse.h"

namespace locksim::algorithms {
namespace {

std::unique_ptr<LockAlgorithm> build(const std::string& name, ParamValues values = {}) {
  const AlgorithmSpec* spec = find_algorithm(name);
  EXPECT_NE(spec, nullptr) << name;
  return spec->make(values, "--");
}

std::string config_error(const std::string& name, ParamValues values) {
  try {
    build(name, values);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(Registry, EveryAlgorithmBuildsWithItsDefaults) {
  for (const char* name :
       {"set-nx-lua", "naive-setnx", "getset-timestamp", "redlock", "redisson", "redisson-leased",
        "redisson-fenced", "redisson-fair", "zk-recipe", "zk-curator", "zk-herd"}) {
    const std::unique_ptr<LockAlgorithm> a = build(name);
    ASSERT_NE(a, nullptr);
    EXPECT_EQ(a->name(), name);
  }
  EXPECT_EQ(algorithm_names(),
            "set-nx-lua, set-nx-lua-fenced, naive-setnx, getset-timestamp, redlock, redisson, "
            "redisson-leased, redisson-fenced, redisson-fair, mysql-v1, mysql-center, "
            "mysql-segmented, zk-recipe, zk-curator, zk-herd");

  const auto naive = build("naive-setnx");
  const NaiveSetnx::Params& np = dynamic_cast<NaiveSetnx&>(*naive).params();
  EXPECT_EQ(np.ttl, Duration::seconds(10));
  EXPECT_EQ(np.retry.max_attempts, 20);
  EXPECT_EQ(np.retry.retry_min, Duration::millis(50));
  EXPECT_EQ(np.retry.retry_max, Duration::millis(150));
  EXPECT_EQ(np.expire_delay, Duration::zero());

  const auto getset = build("getset-timestamp");
  const GetsetTimestamp::Params& gp = dynamic_cast<GetsetTimestamp&>(*getset).params();
  EXPECT_EQ(gp.ttl, Duration::seconds(10));
  EXPECT_EQ(gp.retry.max_attempts, 20);

  const auto redlock = build("redlock");
  const Redlock::Params& rp = dynamic_cast<Redlock&>(*redlock).params();
  EXPECT_EQ(rp.ttl, Duration::seconds(10));
  EXPECT_EQ(rp.quorum, 0u);
  EXPECT_EQ(rp.drift_factor, 0.01);
  EXPECT_EQ(rp.retry.max_attempts, 3);
  EXPECT_EQ(rp.retry.retry_min, Duration::millis(50));
  EXPECT_EQ(rp.retry.retry_max, Duration::millis(200));

  const auto fair = build("redisson-fair");
  const RedissonFairLock::Params& fp = dynamic_cast<RedissonFairLock&>(*fair).params();
  EXPECT_EQ(fp.watchdog_timeout, Duration::seconds(30));
  EXPECT_EQ(fp.wait_time, Duration::seconds(300));  // Redisson's threadWaitTime, 5 minutes
  EXPECT_EQ(fp.retry.max_attempts, 60);
}

TEST(Registry, ParamsAreRead) {
  const auto naive = build("naive-setnx", {{"expire-delay", "3s"}, {"ttl", "1500ms"}});
  EXPECT_EQ(dynamic_cast<NaiveSetnx&>(*naive).params().expire_delay, Duration::seconds(3));
  const auto redlock =
      build("redlock", {{"quorum", "4"}, {"drift-factor", "0"}, {"max-attempts", "7"}});
  const Redlock::Params& rp = dynamic_cast<Redlock&>(*redlock).params();
  EXPECT_EQ(rp.quorum, 4u);
  EXPECT_EQ(rp.drift_factor, 0.0);
  EXPECT_EQ(rp.retry.max_attempts, 7);
}

TEST(Registry, BadValuesNameTheField) {
  EXPECT_EQ(config_error("redlock", {{"drift-factor", "1.5"}}),
            "--drift-factor: expected a number in [0, 1), got '1.5'");
  for (const char* bad : {"1", "-0.1", "nan", "inf", "abc", "", "0.5x"}) {
    EXPECT_EQ(config_error("redlock", {{"drift-factor", bad}}).rfind("--drift-factor: ", 0), 0u)
        << bad;
  }
  for (const char* bad : {"0", "-1", "x", "3.5", "1001"}) {
    EXPECT_EQ(config_error("redlock", {{"quorum", bad}}).rfind("--quorum: ", 0), 0u) << bad;
  }
  EXPECT_EQ(config_error("redlock", {{"ttl", "0s"}}).rfind("--ttl: ", 0), 0u);
  EXPECT_EQ(config_error("redlock", {{"retry", "2s..1s"}}).rfind("--retry: ", 0), 0u);
  EXPECT_EQ(config_error("naive-setnx", {{"expire-delay", "soon"}}).rfind("--expire-delay: ", 0),
            0u);
  EXPECT_EQ(config_error("naive-setnx", {{"ttl", "10"}}).rfind("--ttl: ", 0), 0u);
  EXPECT_EQ(config_error("getset-timestamp", {{"max-attempts", "0"}}).rfind("--max-attempts: ", 0),
            0u);
  EXPECT_EQ(
      config_error("getset-timestamp", {{"quorum", "3"}}).rfind("--quorum: not a parameter", 0),
      0u);
  // The fair lock's wait time: positive, at most a day.
  for (const char* bad : {"0s", "-5s", "25h", "300", "soon"}) {
    EXPECT_EQ(config_error("redisson-fair", {{"wait-time", bad}}).rfind("--wait-time: ", 0), 0u)
        << bad;
  }
  EXPECT_EQ(config_error("redisson-fair", {{"wait-time", "25h"}}),
            "--wait-time: expected a duration from 1ms to 24h, got '25h'");
  EXPECT_EQ(
      config_error("redisson-fair", {{"watchdog-timeout", "2ms"}}).rfind("--watchdog-timeout: ", 0),
      0u);
}

}  // namespace
}  // namespace locksim::algorithms
