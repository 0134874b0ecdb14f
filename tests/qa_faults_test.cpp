// Faults and settings a third fresh-eyes QA pass (2026-11-30) found ending
// a run in a broken invariant (exit 70): each now runs, or is refused as bad
// input in one line (exit 2).
#include <gtest/gtest.h>

#include <string>

#include "tests/locksim_binary.h"

namespace {

using locksim::testing::expect_bad_input;
using locksim::testing::locksim;
using locksim::testing::Outcome;

// A MySQL client crashed while its connection's handshake was in flight:
// close() asserted a session the handshake had not yet given it.
TEST(QaFaults, AMysqlClientCrashedWhileConnectingRuns) {
  for (const std::string algorithm : {"mysql-v1", "mysql-center", "mysql-segmented"}) {
    for (const std::string at : {"500us", "1ms", "1300us"}) {
      const Outcome o = locksim("run --algorithm " + algorithm + " --fault 'crash c1 at " + at +
                                " for 2s' --duration 10s");
      EXPECT_EQ(o.exit_code, 0) << algorithm << " at " << at << "\n" << o.out << o.err;
      EXPECT_NE(o.out.find("crash c1"), std::string::npos) << o.out;
    }
  }
  // A shipped scenario, time-scaled into the handshake.
  EXPECT_NE(locksim("run --scenario mysql-center-client-crash --time-scale 0.01 --quiet").exit_code,
            70);
}

}  // namespace
