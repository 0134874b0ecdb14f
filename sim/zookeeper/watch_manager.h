// One server's watches: which connection asked to hear about which path.
//
// As in ZooKeeper, watches live on the server the client is connected to, in
// two tables — data watches (exists and getData; an exists on a missing node
// included) and child watches (getChildren) — and each fires once: a change
// removes every watch it triggers. A connection that had both a data and a
// child watch on a deleted node hears of the deletion once.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "env/zk_connection.h"
#include "sim/zookeeper/data_tree.h"

namespace locksim::sim::zookeeper {

using ConnId = uint64_t;

class WatchManager {
 public:
  void add_data_watch(const std::string& path, ConnId c) { data_[path].insert(c); }
  void add_child_watch(const std::string& path, ConnId c) { child_[path].insert(c); }

  // The notifications `change` fires, by connection in id order, removing the
  // watches it triggered.
  std::vector<std::pair<ConnId, ZkEvent>> trigger(const ChangeEvent& change);

  // Forgets every watch of a connection that went away.
  void remove_connection(ConnId c);

  size_t watch_count() const;

 private:
  static std::set<ConnId> take(std::map<std::string, std::set<ConnId>>& table,
                               const std::string& path);

  std::map<std::string, std::set<ConnId>> data_;
  std::map<std::string, std::set<ConnId>> child_;
};

}  // namespace locksim::sim::zookeeper
