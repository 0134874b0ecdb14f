// The simulated ZooKeeper ensemble against a real one (Debian's zookeeper
// 3.8, started here on loopback): the same operation sequences through the
// same ZkConnection seam must give the same results and error codes.
//
// Covered: sequential numbering per parent (after deletes, with a plain
// child in the way), NODEEXISTS / NONODE / NOTEMPTY / BADVERSION, exists and
// getChildren watches firing once on the events the recipe uses, ephemeral
// nodes gone after their session closes, and the session-timeout clamp.
// Not covered here: timing (when sessions expire, how a client reconnects
// after a pause or a server's crash): zk_differential_timing_test.cpp, with
// the real clients in forked processes.
//
// Skips (with a message) when zookeeper is not installed, except when CI=true:
// then it fails, so a CI machine without it cannot pass while testing nothing.
// One JVM is started for the whole file (each start takes seconds).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "live/zk_connection_live.h"
#include "live/zk_process.h"
#include "real_servers.h"
#include "sim/network.h"
#include "sim/world.h"
#include "sim/zookeeper/deployment.h"

namespace locksim {
namespace {

constexpr int kTickMs = 100;

std::string stat_text(const ZkStat& s) {
  return " version=" + std::to_string(s.version) + " cversion=" + std::to_string(s.cversion) +
         " children=" + std::to_string(s.num_children) +
         " length=" + std::to_string(s.data_length) +
         " ephemeral=" + (s.ephemeral_owner != 0 ? "yes" : "no");
}

// Every event `c` has within `wait`, as text.
std::string events(ZkConnection& c, Duration wait) {
  std::string out;
  for (int i = 0; i < 16; ++i) {
    const auto e = c.next_event(i == 0 ? wait : Duration::millis(50));
    if (!e) break;
    if (e->type == ZkEventType::kSession) continue;  // connection chatter differs
    out += std::string(out.empty() ? "" : " ") + to_string(e->type) + " " + e->path;
  }
  return out.empty() ? "(none)" : out;
}

// The script: what each step returned, one line per step. `a`, `b` and `c`
// are three sessions on one ensemble; `pause` lets notifications arrive.
std::vector<std::string> script(ZkConnection& a, ZkConnection& b, ZkConnection& c, Duration pause) {
  std::vector<std::string> t;
  auto create = [&](ZkConnection& z, const std::string& path, ZkCreateFlags f) {
    const ZkCreateResult r = z.create(path, "x", f);
    t.push_back("create " + path + " -> " + to_string(r.error) + " " + r.path +
                (r.error == ZkError::kOk ? stat_text(r.stat) : ""));
  };
  const ZkCreateFlags seq{.ephemeral = false, .sequential = true};
  for (ZkConnection* z : {&a, &b, &c})
    t.push_back(std::string("connect -> ") + to_string(z->connect()));
  // Sequential numbering: creates count, deletes do not, a plain child in the way blocks.
  create(a, "/d", {});
  create(a, "/d/a-", seq);
  create(b, "/d/a-", seq);
  t.push_back(std::string("delete a-0 -> ") + to_string(a.remove("/d/a-0000000000", -1)));
  create(a, "/d/a-", seq);
  create(a, "/d/a-0000000004", {});
  create(a, "/d/a-", seq);
  create(b, "/d/a-", seq);
  create(a, "/d/b-", seq);  // another prefix, the same parent counter
  create(a, "/e", {});
  create(a, "/e/a-", seq);  // another parent, its own counter
  {
    ZkChildrenResult ch = a.get_children("/d", false);
    std::sort(ch.children.begin(), ch.children.end());
    std::string names;
    for (const auto& n : ch.children) names += " " + n;
    t.push_back(std::string("children /d -> ") + to_string(ch.error) + names + stat_text(ch.stat));
  }
  // Errors.
  t.push_back(std::string("delete /d -> ") + to_string(a.remove("/d", -1)));
  t.push_back(std::string("delete bad version -> ") + to_string(a.remove("/d/a-0000000001", 7)));
  t.push_back(std::string("delete missing -> ") + to_string(a.remove("/nope", -1)));
  create(a, "/nope/x", {});
  create(a, "/d", {});
  t.push_back(std::string("set_data missing -> ") + to_string(a.set_data("/nope", "y", -1).error));
  // Watches: exists on a missing node, then on an existing one; children.
  t.push_back(std::string("b exists /w watch -> ") + to_string(b.exists("/w", true).error));
  create(a, "/w", {});
  t.push_back("b events -> " + events(b, pause));
  t.push_back(std::string("b exists /w watch -> ") + to_string(b.exists("/w", true).error));
  t.push_back(std::string("b children /d watch -> ") + to_string(b.get_children("/d", true).error));
  t.push_back(std::string("a set_data /w -> ") + to_string(a.set_data("/w", "y", 0).error));
  t.push_back(std::string("a create /d/x -> ") + to_string(a.create("/d/x", "", {}).error));
  t.push_back("b events -> " + events(b, pause));
  // Fired once: more changes, no more events.
  t.push_back(std::string("a set_data /w -> ") + to_string(a.set_data("/w", "z", -1).error));
  t.push_back(std::string("a delete /d/x -> ") + to_string(a.remove("/d/x", -1)));
  t.push_back("b events -> " + events(b, pause));
  // getData watch, then the node's deletion.
  t.push_back(std::string("b get_data /w watch -> ") + to_string(b.get_data("/w", true).error));
  t.push_back(std::string("a delete /w -> ") + to_string(a.remove("/w", -1)));
  t.push_back("b events -> " + events(b, pause));
  // Ephemerals go with their session; the watcher hears it.
  create(c, "/eph", {.ephemeral = true});
  t.push_back(std::string("a exists /eph watch -> ") + to_string(a.exists("/eph", true).error));
  c.close();
  t.push_back("a events -> " + events(a, pause));
  t.push_back(std::string("a exists /eph -> ") + to_string(a.exists("/eph", false).error));
  t.push_back(std::string("c create after close -> ") + to_string(c.create("/z", "", {}).error));
  return t;
}

// The negotiated timeouts for requests of 150 ms, 1 s and 100 s (tick 100 ms):
// below the floor of two ticks, between, and above the ceiling of twenty.
// 150 ms, not smaller: the C client's connect timeout is a fraction of the
// session timeout asked for, and a few milliseconds expire on a loaded CI
// machine before the handshake.
std::vector<Duration> asked() {
  return {Duration::millis(150), Duration::seconds(1), Duration::seconds(100)};
}

struct SimResults {
  std::vector<std::string> transcript;
  std::vector<Duration> negotiated;
};

SimResults run_sim() {
  SimResults out;
  sim::World world(sim::WorldOptions{.seed = 1});
  sim::Network net(world, world.rng().split("network"));
  sim::zookeeper::ZkParams p;
  p.servers = 1;
  p.tick = Duration::millis(kTickMs);
  p.session_timeout = Duration::seconds(2);
  sim::zookeeper::ZkDeployment d(world, net, p);
  std::vector<std::unique_ptr<sim::Node>> nodes;
  std::vector<std::unique_ptr<sim::zookeeper::ZkClient>> clients;
  for (int i = 0; i < 6; ++i) {
    nodes.push_back(std::make_unique<sim::Node>(world, "c" + std::to_string(i + 1)));
    clients.push_back(d.connect_client(*nodes.back(), world.rng().split("c" + std::to_string(i))));
  }
  for (size_t i = 0; i < asked().size(); ++i) clients[3 + i]->request_timeout(asked()[i]);
  world.spawn("script", nodes[0].get(), [&] {
    out.transcript = script(*clients[0], *clients[1], *clients[2], Duration::millis(300));
    for (size_t i = 0; i < asked().size(); ++i) {
      clients[3 + i]->connect();
      out.negotiated.push_back(clients[3 + i]->negotiated_timeout());
    }
  });
  world.run_until(TimePoint{} + Duration::seconds(60));
  EXPECT_TRUE(world.errors().empty());
  world.shutdown();
  return out;
}

TEST(ZkDifferential, SimulatedEnsembleAnswersAsZooKeeper38Does) {
  LOCKSIM_SKIP_WITHOUT("zookeeper", live::ZkEnsembleProcess::missing());
  const SimResults sim = run_sim();
  std::unique_ptr<live::ZkEnsembleProcess> zk;
  try {
    zk = live::ZkEnsembleProcess::start({.servers = 1, .tick_ms = kTickMs});
  } catch (const std::exception& e) {
    FAIL() << "cannot start zookeeper: " << e.what();
  }
  std::vector<std::string> real;
  {
    live::ZkConnectionLive a(zk->hosts(), Duration::seconds(2));
    live::ZkConnectionLive b(zk->hosts(), Duration::seconds(2));
    live::ZkConnectionLive c(zk->hosts(), Duration::seconds(2));
    real = script(a, b, c, Duration::millis(300));
  }
  // LOCKSIM_ZK_TRACE=1 shows what real ZooKeeper answered, step by step.
  if (std::getenv("LOCKSIM_ZK_TRACE") != nullptr) {
    for (const std::string& line : real) std::cerr << "  " << line << "\n";
  }
  ASSERT_EQ(sim.transcript.size(), real.size());
  for (size_t i = 0; i < real.size(); ++i) {
    EXPECT_EQ(sim.transcript[i], real[i]) << "step " << i;
  }
  ASSERT_EQ(sim.negotiated.size(), asked().size());
  for (size_t i = 0; i < asked().size(); ++i) {
    // The C client's connect timeout scales with the session timeout asked
    // for, so a small one can expire before the handshake on a loaded
    // machine (error -7): what is compared is the negotiated value, so a
    // timed-out handshake is tried again (up to 20 times).
    std::unique_ptr<live::ZkConnectionLive> n;
    ZkError connected = ZkError::kOperationTimeout;
    for (int attempt = 0; attempt < 20 && connected != ZkError::kOk; ++attempt) {
      n = std::make_unique<live::ZkConnectionLive>(zk->hosts(), asked()[i]);
      connected = n->connect();
    }
    ASSERT_EQ(connected, ZkError::kOk) << "asked for " << asked()[i].to_ms() << " ms";
    EXPECT_EQ(sim.negotiated[i], n->negotiated_timeout())
        << "asked for " << asked()[i].to_ms() << " ms";
  }
}

}  // namespace
}  // namespace locksim
