#include "live/sentinel_watch.h"

#include <charconv>
#include <utility>

#include "env/assert.h"
#include "live/hiredis_connection.h"

namespace locksim::live {

namespace {

using Clock = std::chrono::steady_clock;

// A question to Sentinel gets this long: it answers from memory in
// microseconds, and a paused or cut-off Sentinel must not hold the watcher.
constexpr Duration kAskTimeout = Duration::millis(200);

std::optional<int> parse_port(const std::string& text) {
  int port = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), port);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return port;
}

// Whether one entry of SENTINEL replicas (a flat field, value, ... list)
// describes a replica Sentinel can reach: its flags name no s_down, o_down
// or disconnected.
bool listed_healthy(const Reply& replica) {
  for (size_t i = 0; i + 1 < replica.elements.size(); i += 2) {
    if (replica.elements[i].text != "flags") continue;
    const std::string& flags = replica.elements[i + 1].text;
    return flags.find("s_down") == std::string::npos && flags.find("o_down") == std::string::npos &&
           flags.find("disconnected") == std::string::npos;
  }
  return false;
}

}  // namespace

SentinelView::SentinelView(std::vector<Group> groups) : groups_(std::move(groups)) {
  for (const Group& g : groups_) {
    LOCKSIM_ASSERT_MSG(!g.members.empty(), "a group has its master");
    states_.push_back(State{.published = g.members[0],
                            .seen = g.members[0],
                            .seen_at = Clock::now(),
                            .replicas = static_cast<int>(g.members.size()) - 1});
  }
}

SentinelView::~SentinelView() {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  stop_changed_.notify_all();
  if (watcher_.joinable()) watcher_.join();
}

void SentinelView::watch(int sentinel_port, std::map<int, std::string> member_of_port,
                         Duration discovery_delay) {
  LOCKSIM_ASSERT_MSG(!watcher_.joinable(), "one watcher per view");
  LOCKSIM_ASSERT(sentinel_port > 0 && discovery_delay >= Duration::zero());
  watcher_ = std::thread([this, sentinel_port, map = std::move(member_of_port), discovery_delay] {
    run(sentinel_port, map, discovery_delay);
  });
}

std::string SentinelView::published_primary(size_t g) const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return states_.at(g).published;
}

std::string SentinelView::current_primary(size_t g) const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return states_.at(g).seen;
}

int SentinelView::replicas_listed(size_t g) const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return states_.at(g).replicas;
}

void SentinelView::run(int sentinel_port, const std::map<int, std::string>& member_of_port,
                       Duration discovery_delay) {
  HiredisConnection sentinel("127.0.0.1", sentinel_port, kAskTimeout, "sentinel");
  std::unique_lock<std::mutex> lock(mutex_);
  // Bounded by the run: the destructor sets stopping_.
  while (!stopping_) {
    lock.unlock();
    for (size_t g = 0; g < groups_.size(); ++g) {
      poll(g, sentinel, member_of_port, discovery_delay);
    }
    lock.lock();
    stop_changed_.wait_for(lock, kPollPeriod, [this] { return stopping_; });
  }
}

void SentinelView::poll(size_t g, HiredisConnection& sentinel,
                        const std::map<int, std::string>& member_of_port,
                        Duration discovery_delay) {
  const std::string& name = groups_[g].name;
  const Reply master = sentinel.command({"SENTINEL", "get-master-addr-by-name", name});
  const Reply replicas = sentinel.command({"SENTINEL", "replicas", name});
  const auto now = Clock::now();
  const std::lock_guard<std::mutex> lock(mutex_);
  State& s = states_[g];
  if (replicas.kind == Reply::Kind::kArray) {
    int healthy = 0;
    for (const Reply& r : replicas.elements) healthy += listed_healthy(r) ? 1 : 0;
    s.replicas = healthy;
  }
  if (master.kind == Reply::Kind::kArray && master.elements.size() == 2) {
    const std::optional<int> port = parse_port(master.elements[1].text);
    const auto it = port ? member_of_port.find(*port) : member_of_port.end();
    if (it != member_of_port.end() && it->second != s.seen) {
      s.seen = it->second;
      s.seen_at = now;
    }
  }
  if (s.seen != s.published && now - s.seen_at >= std::chrono::nanoseconds(discovery_delay.ns)) {
    s.published = s.seen;
    failovers_.fetch_add(1);
  }
  // Pair of the constructor: clients are only ever told of a member.
  LOCKSIM_ASSERT(!s.published.empty());
}

}  // namespace locksim::live
