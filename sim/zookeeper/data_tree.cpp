#include "sim/zookeeper/data_tree.h"

#include <cstring>

#include "env/argv_pool.h"
#include "env/assert.h"

namespace locksim::sim::zookeeper {

bool is_write(OpKind k) {
  switch (k) {
    case OpKind::kCreate:
    case OpKind::kDelete:
    case OpKind::kSetData:
    case OpKind::kCreateSession:
    case OpKind::kCloseSession:
      return true;
    case OpKind::kExists:
    case OpKind::kGetChildren:
    case OpKind::kGetData:
    case OpKind::kSync:
      return false;
  }
  return false;
}

DataTree::DataTree() {
  nodes_["/"] = Node{};
}

std::string DataTree::path_problem(const std::string& path, bool sequential) {
  if (path.empty() || path[0] != '/') return "path must start with /";
  if (path == "/") return "";
  if (path.back() == '/' && !sequential) return "path must not end with /";
  size_t begin = 1;
  // Each step moves past one component: bounded by the path's length.
  while (begin < path.size()) {
    size_t end = path.find('/', begin);
    if (end == std::string::npos) end = path.size();
    const std::string_view part = std::string_view(path).substr(begin, end - begin);
    if (part.empty() && end != path.size()) return "empty path component";
    if (part == "." || part == "..") return "relative path component";
    begin = end + 1;
  }
  return "";
}

namespace {

// string_view::rfind(char) steps back one character at a time; memrchr
// looks at a word at once. A lock's paths end in a long sequential name
// ("_c_<guid>-lock-0000000042"), scanned three times per create.
size_t last_slash(std::string_view path) {
  const void* at = path.empty() ? nullptr : memrchr(path.data(), '/', path.size());
  return at == nullptr ? std::string_view::npos
                       : static_cast<size_t>(static_cast<const char*>(at) - path.data());
}

}  // namespace

std::string_view DataTree::parent_of(std::string_view path) {
  const size_t slash = last_slash(path);
  return slash == 0 || slash == std::string_view::npos ? "/" : path.substr(0, slash);
}

std::string_view DataTree::name_of(std::string_view path) {
  const size_t slash = last_slash(path);
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

ZkStat DataTree::stat_of(const Node& n) const {
  ZkStat s = n.stat;
  s.data_length = static_cast<int32_t>(n.data.size());
  s.num_children = static_cast<int32_t>(n.children.size());
  return s;
}

Txn DataTree::prepare(const Request& r, SessionId session, Zxid zxid, int64_t time_ms) const {
  LOCKSIM_ASSERT_MSG(is_write(r.kind), "only writes become transactions");
  LOCKSIM_ASSERT_MSG(zxid > last_zxid_, "zxids grow");
  Txn t;
  t.zxid = zxid;
  t.session = session;
  t.time_ms = time_ms;
  switch (r.kind) {
    case OpKind::kCreate:
      return prepare_create(r, std::move(t));
    case OpKind::kDelete:
      return prepare_delete(r, std::move(t));
    case OpKind::kSetData:
      return prepare_set_data(r, std::move(t));
    case OpKind::kCreateSession:
      LOCKSIM_ASSERT_MSG(!has_session(session), "session ids are never reused");
      t.type = Txn::Type::kCreateSession;
      t.session_timeout = r.session_timeout;
      return t;
    case OpKind::kCloseSession:
      t.type = has_session(session) ? Txn::Type::kCloseSession : Txn::Type::kError;
      t.error = has_session(session) ? ZkError::kOk : ZkError::kSessionExpired;
      return t;
    default:
      break;
  }
  LOCKSIM_ASSERT_MSG(false, "unreachable: every write kind is handled");
  return t;
}

Txn DataTree::prepare_create(const Request& r, Txn t) const {
  auto fail = [&t](ZkError e) {
    t.type = Txn::Type::kError;
    t.error = e;
    return t;
  };
  if (!path_problem(r.path, r.flags.sequential).empty() || r.path == "/") {
    return fail(ZkError::kBadArguments);
  }
  const auto parent = nodes_.find(parent_of(r.path));
  if (parent == nodes_.end()) return fail(ZkError::kNoNode);
  if (parent->second.stat.ephemeral_owner != 0) return fail(ZkError::kNoChildrenForEphemerals);
  std::string path = r.path;
  if (r.flags.sequential) path += zk_sequence_suffix(parent->second.child_creates);
  if (nodes_.count(path) != 0) return fail(ZkError::kNodeExists);
  t.type = Txn::Type::kCreate;
  t.path = std::move(path);
  t.data = r.data;
  t.ephemeral = r.flags.ephemeral;
  return t;
}

Txn DataTree::prepare_delete(const Request& r, Txn t) const {
  t.type = Txn::Type::kError;
  if (!path_problem(r.path, false).empty() || r.path == "/") {
    t.error = ZkError::kBadArguments;
    return t;
  }
  const auto it = nodes_.find(r.path);
  if (it == nodes_.end()) {
    t.error = ZkError::kNoNode;
  } else if (r.version != -1 && r.version != it->second.stat.version) {
    t.error = ZkError::kBadVersion;
  } else if (!it->second.children.empty()) {
    t.error = ZkError::kNotEmpty;
  } else {
    t.type = Txn::Type::kDelete;
    t.path = r.path;
  }
  return t;
}

Txn DataTree::prepare_set_data(const Request& r, Txn t) const {
  t.type = Txn::Type::kError;
  const auto it = nodes_.find(r.path);
  if (!path_problem(r.path, false).empty()) {
    t.error = ZkError::kBadArguments;
  } else if (it == nodes_.end()) {
    t.error = ZkError::kNoNode;
  } else if (r.version != -1 && r.version != it->second.stat.version) {
    t.error = ZkError::kBadVersion;
  } else {
    t.type = Txn::Type::kSetData;
    t.path = r.path;
    t.data = r.data;
    t.version = it->second.stat.version + 1;
  }
  return t;
}

TxnResult DataTree::apply(const Txn& t) {
  LOCKSIM_ASSERT_MSG(t.zxid > last_zxid_, "txns apply in zxid order, each once");
  last_zxid_ = t.zxid;
  TxnResult out;
  switch (t.type) {
    case Txn::Type::kCreate:
      apply_create(t, out);
      break;
    case Txn::Type::kDelete:
      apply_delete(t.path, t.zxid, out);
      out.path = argv_pool::take_text(t.path);
      break;
    case Txn::Type::kSetData:
      apply_set_data(t, out);
      break;
    case Txn::Type::kCreateSession:
      sessions_[t.session] = t.session_timeout;
      break;
    case Txn::Type::kCloseSession: {
      // Ephemerals go in path order: deterministic, and children before
      // parents cannot matter (an ephemeral has no children).
      for (const std::string& path : ephemerals_of(t.session)) apply_delete(path, t.zxid, out);
      sessions_.erase(t.session);
      ephemerals_.erase(t.session);
      break;
    }
    case Txn::Type::kError:
      out.error = t.error;
      break;
  }
  return out;
}

void DataTree::insert_name(Names& set, std::string_view name) {
  if (spares_.names.empty()) {
    set.emplace(name);
    return;
  }
  Names::node_type entry = std::move(spares_.names.back());
  spares_.names.pop_back();
  entry.value().assign(name);
  auto inserted = set.insert(std::move(entry));
  keep(spares_.names, std::move(inserted.node));  // the name was there: nothing changes
}

void TxnResult::give_back() noexcept {
  argv_pool::give_back_text(std::move(path));
  argv_pool::give_back(std::move(events));
}

namespace {

// Appends the two events a create or a delete fires: the node's (`first`)
// and its parent's children changed, in pooled room (TxnResult gives it back).
void add_change_events(TxnResult& out, ZkEventType first, std::string_view path) {
  const size_t at = out.events.size();
  if (at == 0) {
    out.events = argv_pool::take<ChangeEvent>(2);
  } else {
    out.events.resize(at + 2);  // a closed session's second ephemeral and on
  }
  out.events[at].type = first;
  argv_pool::overwrite(out.events[at].path, path);
  out.events[at + 1].type = ZkEventType::kChildrenChanged;
  argv_pool::overwrite(out.events[at + 1].path, DataTree::parent_of(path));
}

}  // namespace

DataTree::Nodes::node_type DataTree::take_node(const std::string& path) {
  if (spares_.nodes.empty()) {
    Nodes one;  // a map entry of its own is had only from a map
    return one.extract(one.emplace(path, Node{}).first);
  }
  Nodes::node_type entry = std::move(spares_.nodes.back());
  spares_.nodes.pop_back();
  entry.key().assign(path);
  return entry;
}

void DataTree::apply_create(const Txn& t, TxnResult& out) {
  auto parent = nodes_.find(parent_of(t.path));
  LOCKSIM_ASSERT_MSG(parent != nodes_.end(), "prepare checked the parent exists");
  LOCKSIM_ASSERT_MSG(nodes_.count(t.path) == 0, "prepare checked the name is free");
  Nodes::node_type entry = take_node(t.path);
  Node& n = entry.mapped();
  // Pair of apply_delete, which deletes only nodes without children.
  LOCKSIM_ASSERT(n.children.empty());
  n.data.assign(t.data);
  n.stat = ZkStat{};
  n.child_creates = 0;
  n.stat.czxid = n.stat.mzxid = n.stat.pzxid = t.zxid;
  n.stat.ctime_ms = n.stat.mtime_ms = t.time_ms;
  n.stat.ephemeral_owner = t.ephemeral ? t.session : 0;
  Node& p = parent->second;
  insert_name(p.children, name_of(t.path));
  ++p.child_creates;
  ++p.stat.cversion;
  p.stat.pzxid = t.zxid;
  if (t.ephemeral) insert_name(ephemerals_for(t.session), t.path);
  out.path = argv_pool::take_text(t.path);
  out.stat = stat_of(n);
  nodes_.insert(std::move(entry));
  add_change_events(out, ZkEventType::kCreated, t.path);
}

DataTree::Names& DataTree::ephemerals_for(SessionId session) {
  auto it = ephemerals_.find(session);
  if (it != ephemerals_.end()) return it->second;
  if (spares_.sessions.empty()) return ephemerals_[session];
  Ephemerals::node_type entry = std::move(spares_.sessions.back());
  spares_.sessions.pop_back();
  entry.key() = session;
  // Pair of apply_delete, which keeps only a session's emptied set.
  LOCKSIM_ASSERT(entry.mapped().empty());
  return ephemerals_.insert(std::move(entry)).position->second;
}

void DataTree::apply_delete(const std::string& path, Zxid zxid, TxnResult& out) {
  const auto it = nodes_.find(path);
  LOCKSIM_ASSERT_MSG(it != nodes_.end() && it->second.children.empty(),
                     "prepare checked the node exists and has no children");
  const SessionId owner = it->second.stat.ephemeral_owner;
  if (owner != 0) {
    const auto mine = ephemerals_.find(owner);
    if (mine != ephemerals_.end()) {
      keep(spares_.names, mine->second.extract(path));
      if (mine->second.empty()) keep(spares_.sessions, ephemerals_.extract(mine));
    }
  }
  keep(spares_.nodes, nodes_.extract(it));
  const auto parent = nodes_.find(parent_of(path));
  LOCKSIM_ASSERT_MSG(parent != nodes_.end(), "a node's parent outlives it");
  Node& p = parent->second;
  const auto name = p.children.find(name_of(path));
  LOCKSIM_ASSERT_MSG(name != p.children.end(), "a node is among its parent's children");
  keep(spares_.names, p.children.extract(name));
  ++p.stat.cversion;
  p.stat.pzxid = zxid;
  add_change_events(out, ZkEventType::kDeleted, path);
}

void DataTree::apply_set_data(const Txn& t, TxnResult& out) {
  auto it = nodes_.find(t.path);
  LOCKSIM_ASSERT_MSG(it != nodes_.end(), "prepare checked the node exists");
  Node& n = it->second;
  n.data = t.data;
  n.stat.version = t.version;
  n.stat.mzxid = t.zxid;
  n.stat.mtime_ms = t.time_ms;
  out.stat = stat_of(n);
  out.events.push_back({ZkEventType::kDataChanged, t.path});
}

ZkStatResult DataTree::exists(const std::string& path) const {
  const auto it = nodes_.find(path);
  if (it == nodes_.end()) return {ZkError::kNoNode, {}};
  return {ZkError::kOk, stat_of(it->second)};
}

ZkChildrenResult DataTree::children(const std::string& path) const {
  const auto it = nodes_.find(path);
  if (it == nodes_.end()) return {ZkError::kNoNode, {}, {}};
  ZkChildrenResult r;
  // Into a pooled vector's strings (ZkChildrenResult gives them back).
  r.children = argv_pool::take<std::string>(it->second.children.size());
  size_t i = 0;
  for (const std::string& name : it->second.children) argv_pool::overwrite(r.children[i++], name);
  r.stat = stat_of(it->second);
  return r;
}

size_t DataTree::child_count(const std::string& path) const {
  const auto it = nodes_.find(path);
  return it == nodes_.end() ? 0 : it->second.children.size();
}

ZkDataResult DataTree::data(const std::string& path) const {
  const auto it = nodes_.find(path);
  if (it == nodes_.end()) return {ZkError::kNoNode, {}, {}};
  return {ZkError::kOk, it->second.data, stat_of(it->second)};
}

std::vector<std::string> DataTree::ephemerals_of(SessionId s) const {
  const auto it = ephemerals_.find(s);
  if (it == ephemerals_.end()) return {};
  return {it->second.begin(), it->second.end()};
}

}  // namespace locksim::sim::zookeeper
