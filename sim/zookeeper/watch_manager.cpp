#include "sim/zookeeper/watch_manager.h"

namespace locksim::sim::zookeeper {

std::set<ConnId> WatchManager::take(std::map<std::string, std::set<ConnId>>& table,
                                    const std::string& path) {
  const auto it = table.find(path);
  if (it == table.end()) return {};
  std::set<ConnId> out = std::move(it->second);
  table.erase(it);
  return out;
}

std::vector<std::pair<ConnId, ZkEvent>> WatchManager::trigger(const ChangeEvent& change) {
  std::set<ConnId> who;
  switch (change.type) {
    case ZkEventType::kCreated:
    case ZkEventType::kDataChanged:
      who = take(data_, change.path);
      break;
    case ZkEventType::kDeleted: {
      who = take(data_, change.path);
      const std::set<ConnId> children = take(child_, change.path);
      who.insert(children.begin(), children.end());
      break;
    }
    case ZkEventType::kChildrenChanged:
      who = take(child_, change.path);
      break;
    case ZkEventType::kSession:
      break;
  }
  std::vector<std::pair<ConnId, ZkEvent>> out;
  for (ConnId c : who) {
    ZkEvent e;
    e.type = change.type;
    e.path = change.path;
    out.emplace_back(c, e);
  }
  return out;
}

void WatchManager::remove_connection(ConnId c) {
  for (auto* table : {&data_, &child_}) {
    for (auto it = table->begin(); it != table->end();) {
      it->second.erase(c);
      it = it->second.empty() ? table->erase(it) : std::next(it);
    }
  }
}

size_t WatchManager::watch_count() const {
  size_t n = 0;
  for (const auto& [path, conns] : data_) n += conns.size();
  for (const auto& [path, conns] : child_) n += conns.size();
  return n;
}

}  // namespace locksim::sim::zookeeper
