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

// A partition healed after the last retransmission a limit off TCP's
// schedule allows (200 ms, then 400 ms: the last by 1 s leaves at 600 ms)
// and before the limit: the network asserted a next retransmission. The
// stream now stays held and breaks at the limit, as the kernel gives up.
TEST(QaFaults, AHealBetweenTheLastRetransmissionAndTheLimitBreaksTheConnection) {
  for (const std::string& flags :
       {std::string("--retransmission-limit 1s --fault 'partition c1|redis-1 at 1s for 900ms'"),
        std::string(
            "--retransmission-limit 500ms --fault 'partition c1|redis-1 at 1s for 450ms'")}) {
    const Outcome o = locksim("run --duration 10s " + flags);
    EXPECT_EQ(o.exit_code, 0) << flags << "\n" << o.out << o.err;
  }
}

// The partition profile drew a delay spike's length from 10 ms to twice
// the delay, and a long cut's from 1 s to the TTL: empty ranges under a
// short TTL, a broken invariant of the draw.
TEST(QaFaults, ThePartitionProfileDrawsUnderAShortTtl) {
  for (const std::string ttl : {"1ms", "2ms", "5ms", "500ms"}) {
    const Outcome o = locksim("run --profile partition --quiet --ttl " + ttl);
    EXPECT_TRUE(o.exit_code == 0 || o.exit_code == 1) << ttl << ": " << o.exit_code << o.err;
  }
  const Outcome o = locksim(
      "run --ttl 500ms --retransmission-limit 1s --duration 10s --profile partition --quiet");
  EXPECT_TRUE(o.exit_code == 0 || o.exit_code == 1) << o.exit_code << o.err;
}

// A pause outlived the crash of its process: a later pause of the
// restarted client ended with the dead process's pause (4 s + 1 s ended at
// 6 s), and a pause of a down client was recorded, with its resume, though
// nothing was paused. Now as a hang: skipped while down, and owing nothing
// to a pause a crash ended.
TEST(QaFaults, APauseEndsWithItsProcess) {
  const Outcome later = locksim(
      "run --duration 10s --fault 'pause c1 at 1s for 5s' --fault 'crash c1 at 2s for 1s' "
      "--fault 'pause c1 at 4s for 1s'");
  EXPECT_NE(later.out.find("4.000s pause c1 for 1s; 5.000s resume c1\n"), std::string::npos)
      << later.out;
  const Outcome down = locksim(
      "run --duration 10s --fault 'crash c1 at 1s for 1s' --fault 'pause c1 at 1.5s for 3s'");
  EXPECT_NE(down.out.find("1.500s skip pause c1 for 3s (down); 2.000s restart c1\n"),
            std::string::npos)
      << down.out;
}

}  // namespace
