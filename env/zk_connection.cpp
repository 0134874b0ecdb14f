#include "env/zk_connection.h"

#include <cstdio>
#include <utility>

#include "env/argv_pool.h"

namespace locksim {

ZkChildrenResult& ZkChildrenResult::operator=(ZkChildrenResult&& other) noexcept {
  if (this == &other) return *this;
  if (!children.empty()) give_back_children();
  // Every field: one added to ZkChildrenResult is moved here too.
  error = other.error;
  children = std::move(other.children);
  stat = other.stat;
  return *this;
}

void ZkChildrenResult::give_back_children() noexcept {
  argv_pool::give_back(std::move(children));
}

const char* to_string(ZkError e) {
  switch (e) {
    case ZkError::kOk:
      return "OK";
    case ZkError::kSystemError:
      return "SYSTEMERROR";
    case ZkError::kConnectionLoss:
      return "CONNECTIONLOSS";
    case ZkError::kOperationTimeout:
      return "OPERATIONTIMEOUT";
    case ZkError::kBadArguments:
      return "BADARGUMENTS";
    case ZkError::kApiError:
      return "APIERROR";
    case ZkError::kNoNode:
      return "NONODE";
    case ZkError::kBadVersion:
      return "BADVERSION";
    case ZkError::kNoChildrenForEphemerals:
      return "NOCHILDRENFOREPHEMERALS";
    case ZkError::kNodeExists:
      return "NODEEXISTS";
    case ZkError::kNotEmpty:
      return "NOTEMPTY";
    case ZkError::kSessionExpired:
      return "SESSIONEXPIRED";
    case ZkError::kClosing:
      return "CLOSING";
  }
  return "UNKNOWN";
}

const char* to_string(ZkSessionState s) {
  switch (s) {
    case ZkSessionState::kNotStarted:
      return "not-started";
    case ZkSessionState::kConnecting:
      return "connecting";
    case ZkSessionState::kConnected:
      return "connected";
    case ZkSessionState::kExpired:
      return "expired";
    case ZkSessionState::kClosed:
      return "closed";
  }
  return "unknown";
}

const char* to_string(ZkEventType t) {
  switch (t) {
    case ZkEventType::kCreated:
      return "created";
    case ZkEventType::kDeleted:
      return "deleted";
    case ZkEventType::kDataChanged:
      return "data-changed";
    case ZkEventType::kChildrenChanged:
      return "children-changed";
    case ZkEventType::kSession:
      return "session";
  }
  return "unknown";
}

std::string zk_sequence_suffix(int32_t n) {
  if (n < 0) {  // the counter wrapped, as ZooKeeper's does: printf's sign and padding
    char buf[16];
    std::snprintf(buf, sizeof(buf), "%010d", n);
    return buf;
  }
  // "%010d" by hand for the usual case: snprintf parses its format on every
  // sequential create.
  std::string digits(10, '0');
  for (int i = 9; i >= 0 && n > 0; --i, n /= 10)
    digits[static_cast<size_t>(i)] = static_cast<char>('0' + n % 10);
  return digits;
}

int64_t zk_sequence_of(const std::string& name) {
  constexpr size_t kDigits = 10;
  if (name.size() < kDigits) return -1;
  int64_t v = 0;
  for (size_t i = name.size() - kDigits; i < name.size(); ++i) {
    const char c = name[i];
    if (c < '0' || c > '9') return -1;
    v = v * 10 + (c - '0');
  }
  return v;
}

}  // namespace locksim
