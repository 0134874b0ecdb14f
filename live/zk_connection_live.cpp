#include "live/zk_connection_live.h"

// The synchronous calls exist only in the multi-threaded library, which
// zookeeper.h declares under THREADED.
#define THREADED
#include <zookeeper/zookeeper.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <vector>

#include "live/owned_processes.h"

namespace locksim::live {

namespace {

void session_watcher(zhandle_t*, int type, int state, const char*, void* ctx) {
  if (type == ZOO_SESSION_EVENT) static_cast<ZkConnectionLive*>(ctx)->on_session_event(state);
}

void watch_watcher(zhandle_t*, int type, int, const char* path, void* ctx) {
  if (type != ZOO_SESSION_EVENT) static_cast<ZkConnectionLive*>(ctx)->on_watch_event(type, path);
}

ZkStat to_stat(const Stat& s) {
  ZkStat out;
  out.czxid = s.czxid;
  out.mzxid = s.mzxid;
  out.pzxid = s.pzxid;
  out.ctime_ms = s.ctime;
  out.mtime_ms = s.mtime;
  out.version = s.version;
  out.cversion = s.cversion;
  out.aversion = s.aversion;
  out.ephemeral_owner = s.ephemeralOwner;
  out.data_length = s.dataLength;
  out.num_children = s.numChildren;
  return out;
}

// The C client logs to stderr at INFO by default: every connect would be noise.
struct QuietLog {
  QuietLog() { zoo_set_debug_level(ZOO_LOG_LEVEL_ERROR); }
};

// Its errors go to stderr, but not once an interrupt has begun: the watcher
// kills the servers before the clients close, and each client's I/O thread
// then logged its lost connection, about 40 ZOO_ERROR lines after a Ctrl-C.
void log_line(const char* message) {
  if (interrupt_begun()) return;
  const size_t n = std::strlen(message);
  std::fprintf(stderr, n > 0 && message[n - 1] == '\n' ? "%s" : "%s\n", message);
}

constexpr size_t kPathBufferBytes = 1024;
constexpr int64_t kHandshakeFloorMs = 2000;
constexpr int kDataBufferBytes = 1 << 20;  // ZooKeeper's jute.maxbuffer default

}  // namespace

ZkConnectionLive::ZkConnectionLive(std::string hosts, Duration session_timeout)
    : hosts_(std::move(hosts)), requested_(session_timeout) {
  static QuietLog quiet;
}

ZkConnectionLive::~ZkConnectionLive() {
  stop();
}

void ZkConnectionLive::start() {
  // Called with mu_ not held: zookeeper_init may call back at once.
  zhandle_t* zh =
      zookeeper_init2(hosts_.c_str(), session_watcher, static_cast<int>(requested_.to_ms()),
                      nullptr, this, 0, &log_line);
  std::lock_guard<std::mutex> lock(mu_);
  zh_ = zh;
  if (state_ == ZkSessionState::kNotStarted || state_ == ZkSessionState::kExpired ||
      state_ == ZkSessionState::kClosed) {
    state_ = zh != nullptr ? ZkSessionState::kConnecting : ZkSessionState::kClosed;
  }
}

void ZkConnectionLive::stop() {
  zhandle_t* zh = nullptr;
  {
    std::lock_guard<std::mutex> lock(mu_);
    zh = zh_;
    zh_ = nullptr;
  }
  if (zh != nullptr) zookeeper_close(zh);  // joins the client's threads
}

zhandle_t* ZkConnectionLive::handle() {
  bool start_needed = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    start_needed = state_ == ZkSessionState::kNotStarted;
  }
  if (start_needed) start();
  std::lock_guard<std::mutex> lock(mu_);
  return zh_;
}

void ZkConnectionLive::on_session_event(int state) {
  std::lock_guard<std::mutex> lock(mu_);
  ZkSessionState s = state_;
  if (state == ZOO_CONNECTED_STATE) s = ZkSessionState::kConnected;
  if (state == ZOO_CONNECTING_STATE || state == ZOO_ASSOCIATING_STATE) {
    s = ZkSessionState::kConnecting;
  }
  if (state == ZOO_EXPIRED_SESSION_STATE) s = ZkSessionState::kExpired;
  if (s == state_) return;
  state_ = s;
  ZkEvent e;
  e.type = ZkEventType::kSession;
  e.state = s;
  events_.push_back(e);
  cv_.notify_all();
}

void ZkConnectionLive::on_watch_event(int type, const char* path) {
  ZkEvent e;
  if (type == ZOO_CREATED_EVENT)
    e.type = ZkEventType::kCreated;
  else if (type == ZOO_DELETED_EVENT)
    e.type = ZkEventType::kDeleted;
  else if (type == ZOO_CHANGED_EVENT)
    e.type = ZkEventType::kDataChanged;
  else if (type == ZOO_CHILD_EVENT)
    e.type = ZkEventType::kChildrenChanged;
  else
    return;
  e.path = path != nullptr ? path : "";
  std::lock_guard<std::mutex> lock(mu_);
  events_.push_back(std::move(e));
  cv_.notify_all();
}

ZkError ZkConnectionLive::map(int rc) {
  switch (rc) {
    case ZOK:
      return ZkError::kOk;
    case ZCONNECTIONLOSS:
      return ZkError::kConnectionLoss;
    case ZOPERATIONTIMEOUT:
      return ZkError::kOperationTimeout;
    case ZBADARGUMENTS:
      return ZkError::kBadArguments;
    case ZNONODE:
      return ZkError::kNoNode;
    case ZBADVERSION:
      return ZkError::kBadVersion;
    case ZNOCHILDRENFOREPHEMERALS:
      return ZkError::kNoChildrenForEphemerals;
    case ZNODEEXISTS:
      return ZkError::kNodeExists;
    case ZNOTEMPTY:
      return ZkError::kNotEmpty;
    case ZSESSIONEXPIRED:
      return ZkError::kSessionExpired;
    case ZCLOSING:
      return ZkError::kClosing;
    case ZINVALIDSTATE: {
      std::lock_guard<std::mutex> lock(mu_);
      if (state_ == ZkSessionState::kClosed) return ZkError::kClosing;
      return ZkError::kSessionExpired;
    }
    default:
      return ZkError::kSystemError;
  }
}

ZkError ZkConnectionLive::connect() {
  if (handle() == nullptr) return ZkError::kSystemError;
  std::unique_lock<std::mutex> lock(mu_);
  // The C client retries a handshake whose connect timeout (a fraction of the
  // session timeout) expired, so a small session timeout is given at least
  // kHandshakeFloorMs to get through on a loaded machine.
  const int64_t wait_ns = std::max<int64_t>(requested_.ns, kHandshakeFloorMs * 1'000'000);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::nanoseconds(wait_ns);
  cv_.wait_until(lock, deadline, [this] { return state_ != ZkSessionState::kConnecting; });
  if (state_ == ZkSessionState::kConnected) return ZkError::kOk;
  if (state_ == ZkSessionState::kExpired) return ZkError::kSessionExpired;
  if (state_ == ZkSessionState::kClosed) return ZkError::kClosing;
  return ZkError::kOperationTimeout;
}

ZkError ZkConnectionLive::new_session() {
  stop();
  {
    std::lock_guard<std::mutex> lock(mu_);
    state_ = ZkSessionState::kNotStarted;
    events_.clear();
  }
  return connect();
}

void ZkConnectionLive::close() {
  stop();
  std::lock_guard<std::mutex> lock(mu_);
  state_ = ZkSessionState::kClosed;
}

ZkCreateResult ZkConnectionLive::create(const std::string& path, const std::string& data,
                                        ZkCreateFlags flags) {
  zhandle_t* zh = handle();
  ZkCreateResult out;
  if (zh == nullptr) return {ZkError::kClosing, {}, {}};
  int mode = 0;
  if (flags.ephemeral) mode |= ZOO_EPHEMERAL;
  if (flags.sequential) mode |= ZOO_SEQUENCE;
  std::vector<char> buffer(kPathBufferBytes);
  Stat st{};
  out.error = map(zoo_create2(zh, path.c_str(), data.data(), static_cast<int>(data.size()),
                              &ZOO_OPEN_ACL_UNSAFE, mode, buffer.data(),
                              static_cast<int>(buffer.size()), &st));
  if (out.error == ZkError::kOk) {
    out.path = buffer.data();
    out.stat = to_stat(st);
  }
  return out;
}

ZkError ZkConnectionLive::remove(const std::string& path, int32_t version) {
  zhandle_t* zh = handle();
  if (zh == nullptr) return ZkError::kClosing;
  return map(zoo_delete(zh, path.c_str(), version));
}

ZkStatResult ZkConnectionLive::exists(const std::string& path, bool watch) {
  zhandle_t* zh = handle();
  if (zh == nullptr) return {ZkError::kClosing, {}};
  Stat st{};
  const ZkError e = map(
      zoo_wexists(zh, path.c_str(), watch ? watch_watcher : nullptr, watch ? this : nullptr, &st));
  return {e, e == ZkError::kOk ? to_stat(st) : ZkStat{}};
}

ZkChildrenResult ZkConnectionLive::get_children(const std::string& path, bool watch) {
  zhandle_t* zh = handle();
  if (zh == nullptr) return {ZkError::kClosing, {}, {}};
  String_vector names{};
  Stat st{};
  ZkChildrenResult out;
  out.error = map(zoo_wget_children2(zh, path.c_str(), watch ? watch_watcher : nullptr,
                                     watch ? this : nullptr, &names, &st));
  if (out.error == ZkError::kOk) {
    for (int i = 0; i < names.count; ++i) out.children.emplace_back(names.data[i]);
    out.stat = to_stat(st);
    deallocate_String_vector(&names);
  }
  return out;
}

ZkDataResult ZkConnectionLive::get_data(const std::string& path, bool watch) {
  zhandle_t* zh = handle();
  if (zh == nullptr) return {ZkError::kClosing, {}, {}};
  std::vector<char> buffer(kDataBufferBytes);
  int len = static_cast<int>(buffer.size());
  Stat st{};
  ZkDataResult out;
  out.error = map(zoo_wget(zh, path.c_str(), watch ? watch_watcher : nullptr,
                           watch ? this : nullptr, buffer.data(), &len, &st));
  if (out.error == ZkError::kOk) {
    if (len > 0) out.data.assign(buffer.data(), static_cast<size_t>(len));
    out.stat = to_stat(st);
  }
  return out;
}

ZkStatResult ZkConnectionLive::set_data(const std::string& path, const std::string& data,
                                        int32_t version) {
  zhandle_t* zh = handle();
  if (zh == nullptr) return {ZkError::kClosing, {}};
  Stat st{};
  const ZkError e =
      map(zoo_set2(zh, path.c_str(), data.data(), static_cast<int>(data.size()), version, &st));
  return {e, e == ZkError::kOk ? to_stat(st) : ZkStat{}};
}

namespace {

struct SyncWait {
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  int rc = 0;
};

void sync_done(int rc, const char*, const void* data) {
  auto* w = static_cast<SyncWait*>(const_cast<void*>(data));
  std::lock_guard<std::mutex> lock(w->mu);
  w->rc = rc;
  w->done = true;
  w->cv.notify_all();
}

}  // namespace

ZkError ZkConnectionLive::sync(const std::string& path) {
  zhandle_t* zh = handle();
  if (zh == nullptr) return ZkError::kClosing;
  SyncWait w;
  const int rc = zoo_async(zh, path.c_str(), sync_done, &w);
  if (rc != ZOK) return map(rc);
  // The completion always comes (with ZCONNECTIONLOSS at worst, or on close).
  std::unique_lock<std::mutex> lock(w.mu);
  w.cv.wait(lock, [&w] { return w.done; });
  return map(w.rc);
}

std::optional<ZkEvent> ZkConnectionLive::next_event(Duration timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait_for(lock, std::chrono::nanoseconds(timeout.ns), [this] { return !events_.empty(); });
  if (events_.empty()) return std::nullopt;
  ZkEvent e = std::move(events_.front());
  events_.pop_front();
  return e;
}

ZkSessionState ZkConnectionLive::state() const {
  std::lock_guard<std::mutex> lock(mu_);
  return state_;
}

int64_t ZkConnectionLive::session_id() const {
  std::lock_guard<std::mutex> lock(mu_);
  if (zh_ == nullptr) return 0;
  const clientid_t* id = zoo_client_id(zh_);
  return id != nullptr ? id->client_id : 0;
}

Duration ZkConnectionLive::negotiated_timeout() const {
  std::lock_guard<std::mutex> lock(mu_);
  if (zh_ == nullptr || state_ != ZkSessionState::kConnected) return requested_;
  return Duration::millis(zoo_recv_timeout(zh_));
}

}  // namespace locksim::live
