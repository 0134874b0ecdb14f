// The MySQL lock algorithms' own pieces: parameters, the CRC32 center row,
// DATETIME text, and bad input naming its field.
#include <gtest/gtest.h>

#include "algorithms/mysql_lock.h"
#include "algorithms/registry.h"
#include "env/datetime.h"
#include "env/parse.h"

namespace locksim::algorithms {
namespace {

MysqlLock segmented() {
  MysqlLock::Params p;
  p.version = MysqlLock::Version::kSegmented;
  return MysqlLock(p);
}

TEST(MysqlLock, SegmentedCenterRowIsCrc32Mod100) {
  // zlib.crc32(b"lock:resource") % 100 == 59, crc32(b"abc") % 100 == 78.
  EXPECT_EQ(segmented().center_row("lock:resource"), "center_lock_59");
  EXPECT_EQ(segmented().center_row("abc"), "center_lock_78");
  EXPECT_EQ(MysqlLock(MysqlLock::Params{}).center_row("abc"), "center_lock");
}

TEST(MysqlLock, DatetimeTextRoundTripsToWholeSeconds) {
  const TimePoint t = TimePoint{} + Duration::seconds(31'536'000) + Duration::millis(1500);
  EXPECT_EQ(format_datetime(t), "1971-01-01 00:00:01.500000");
  EXPECT_EQ(parse_datetime("1971-01-01 00:00:01"), TimePoint{} + Duration::seconds(31'536'001));
  EXPECT_EQ(format_datetime(TimePoint{} - Duration::millis(500)), "1969-12-31 23:59:59.500000");
  EXPECT_EQ(format_datetime(TimePoint{} + Duration::seconds(1'795'000'000)),
            "2026-11-18 11:06:40.000000");
}

TEST(MysqlLock, DefaultsAreTheArticles) {
  for (const char* name : {"mysql-v1", "mysql-center", "mysql-segmented"}) {
    const AlgorithmSpec* spec = find_algorithm(name);
    ASSERT_NE(spec, nullptr) << name;
    EXPECT_EQ(spec->backend, "mysql");
    auto algorithm = spec->make({}, "--");
    EXPECT_EQ(algorithm->name(), name);
  }
  EXPECT_EQ(MysqlLock::Params{}.ttl, Duration::seconds(31'536'000));
}

TEST(MysqlLock, BadParametersNameTheField) {
  const AlgorithmSpec* spec = find_algorithm("mysql-center");
  try {
    spec->make({{"ttl", "500ms"}}, "--");
    FAIL() << "a TTL below 1s must be refused";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("--ttl"), std::string::npos) << e.what();
  }
  try {
    spec->make({{"release", "sometimes"}}, "s.json: params.");
    FAIL() << "an unknown release mode must be refused";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("s.json: params.release"), std::string::npos) << e.what();
  }
  try {
    spec->make({{"acquire", "grab"}}, "--");
    FAIL() << "an unknown acquire mode must be refused";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("--acquire"), std::string::npos) << e.what();
  }
  EXPECT_NO_THROW(spec->make({{"ttl", "1s"}, {"release", "blind"}}, "--"));
  EXPECT_NO_THROW(spec->make({{"acquire", "steal"}}, "--"));
}

}  // namespace
}  // namespace locksim::algorithms
