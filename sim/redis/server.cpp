// Command dispatch: lookup, arity, and the errors Redis gives before a command
// runs. The command bodies are in commands.cpp.
#include "sim/redis/server.h"

#include <array>
#include <string_view>

#include "env/assert.h"
#include "sim/redis/command_util.h"

namespace locksim::sim::redis {
namespace {

std::string map_newlines(std::string s) {
  for (char& c : s) {
    if (c == '\r' || c == '\n') c = ' ';
  }
  return s;
}

// FNV-1a over the name's lowercase letters: spreads the command names over
// find_any_case's slots, and hashes a name in any letter case as its
// lowercase form.
uint32_t name_hash(std::string_view name) {
  uint32_t h = 2166136261u;
  for (const char c : name) {
    const char lower = c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
    h = (h ^ static_cast<unsigned char>(lower)) * 16777619u;
  }
  return h;
}

bool arity_ok(int arity, size_t argc) {
  return arity > 0 ? argc == static_cast<size_t>(arity) : argc >= static_cast<size_t>(-arity);
}

// Redis' text for an unknown command: the name as typed and the first
// arguments, quoted, cut after 128 characters.
Reply unknown_command(const std::vector<std::string>& argv) {
  constexpr size_t kLimit = 128;
  std::string args;
  for (size_t i = 1; i < argv.size() && args.size() < kLimit; ++i) {
    args += "'" + argv[i].substr(0, kLimit - args.size()) + "' ";
  }
  return Reply::error(map_newlines("ERR unknown command '" + argv[0].substr(0, kLimit) +
                                   "', with args beginning with: " + args));
}

}  // namespace

Server::Server(uint64_t seed) : expire_rng_(Rng(seed).split("active-expire")) {}

Server::~Server() = default;

const std::map<std::string, Server::Command, std::less<>>& Server::command_table() {
  // Arity and flags as in Redis 7.0's command table.
  static const std::map<std::string, Command, std::less<>> table = {
      {"get", {2, false, &Server::cmd_get}},
      {"set", {-3, false, &Server::cmd_set}},
      {"setnx", {3, false, &Server::cmd_setnx}},
      {"getset", {3, false, &Server::cmd_getset}},
      {"del", {-2, false, &Server::cmd_del}},
      {"exists", {-2, false, &Server::cmd_exists}},
      {"expire", {-3, false, &Server::cmd_expire}},
      {"pexpire", {-3, false, &Server::cmd_pexpire}},
      {"expireat", {-3, false, &Server::cmd_expireat}},
      {"pexpireat", {-3, false, &Server::cmd_pexpireat}},
      {"persist", {2, false, &Server::cmd_persist}},
      {"ttl", {2, false, &Server::cmd_ttl}},
      {"pttl", {2, false, &Server::cmd_pttl}},
      {"incr", {2, false, &Server::cmd_incr}},
      {"decr", {2, false, &Server::cmd_decr}},
      {"incrby", {3, false, &Server::cmd_incrby}},
      {"dbsize", {1, false, &Server::cmd_dbsize}},
      {"ping", {-1, false, &Server::cmd_ping}},
      {"eval", {-3, true, &Server::cmd_eval}},
      {"evalsha", {-3, true, &Server::cmd_evalsha}},
      {"script", {-2, true, &Server::cmd_script}},
      {"type", {2, false, &Server::cmd_type}},
      {"hset", {-4, false, &Server::cmd_hset}},
      {"hget", {3, false, &Server::cmd_hget}},
      {"hexists", {3, false, &Server::cmd_hexists}},
      {"hdel", {-3, false, &Server::cmd_hdel}},
      {"hincrby", {4, false, &Server::cmd_hincrby}},
      {"rpush", {-3, false, &Server::cmd_rpush}},
      {"lpop", {-2, false, &Server::cmd_lpop}},
      {"lindex", {3, false, &Server::cmd_lindex}},
      {"lrem", {4, false, &Server::cmd_lrem}},
      {"llen", {2, false, &Server::cmd_llen}},
      {"lrange", {4, false, &Server::cmd_lrange}},
      {"zadd", {-4, false, &Server::cmd_zadd}},
      {"zincrby", {4, false, &Server::cmd_zincrby}},
      {"zscore", {3, false, &Server::cmd_zscore}},
      {"zrem", {-3, false, &Server::cmd_zrem}},
      {"zcard", {2, false, &Server::cmd_zcard}},
      {"zrange", {-4, false, &Server::cmd_zrange}},
      {"publish", {3, false, &Server::cmd_publish}},
      {"wait", {3, true, &Server::cmd_wait}},
  };
  return table;
}

const Server::Command* Server::find_command(std::string_view lowercase_name) {
  const auto& table = command_table();
  auto it = table.find(lowercase_name);
  return it == table.end() ? nullptr : &it->second;
}

const Server::Command* Server::find_any_case(const std::string& name) {
  // Every command on every event passes here, and every redis.call of a
  // script: a hash over the table, built once, instead of the map's string
  // compares down its tree, and no lowercased copy of the name. Open
  // addressing with linear probing; at most half full, so a probe ends
  // after a slot or two. The names are views of the map's keys, which live
  // as long as the program.
  struct Slot {
    std::string_view name;
    const Command* command = nullptr;
  };
  constexpr size_t kSlots = 128;  // a power of two
  static const std::array<Slot, kSlots> slots = [] {
    std::array<Slot, kSlots> built{};
    const auto& table = command_table();
    LOCKSIM_ASSERT_MSG(table.size() * 2 <= kSlots, "the command hash table is over half full");
    for (const auto& [lowercase_name, command] : table) {
      size_t i = name_hash(lowercase_name) % kSlots;
      while (built[i].command != nullptr) i = (i + 1) % kSlots;
      built[i] = Slot{lowercase_name, &command};
    }
    return built;
  }();
  for (size_t i = name_hash(name) % kSlots; slots[i].command != nullptr; i = (i + 1) % kSlots) {
    if (equals_ignoring_case(name, slots[i].name)) return slots[i].command;
  }
  return nullptr;
}

bool Server::implements(const std::string& lowercase_name, bool from_script) {
  const Command* command = find_command(lowercase_name);
  return command != nullptr && !(from_script && command->noscript);
}

Reply Server::execute(const std::vector<std::string>& argv, TimePoint now) {
  // Redis ignores an empty command line; a command vector is never empty in practice.
  if (argv.empty()) return Reply::error("ERR empty command");
  const Command* command = find_any_case(argv[0]);
  if (command == nullptr) return unknown_command(argv);
  if (!arity_ok(command->arity, argv.size())) {
    return Reply::error("ERR wrong number of arguments for '" + lowercase(argv[0]) + "' command");
  }
  return (this->*command->handler)(argv, now.to_ms());
}

Reply Server::execute_from_script(const Argv& argv, int64_t now_ms) {
  // The scripting layer answers an argument-less redis.call itself.
  LOCKSIM_ASSERT(!argv.empty());
  const Command* command = find_any_case(argv[0]);
  if (command == nullptr) return Reply::error("ERR Unknown Redis command called from script");
  if (!arity_ok(command->arity, argv.size())) {
    return Reply::error("ERR Wrong number of args calling Redis command from script");
  }
  if (command->noscript) return Reply::error("ERR This Redis command is not allowed from script");
  return (this->*command->handler)(argv, now_ms);
}

std::vector<std::string> Server::active_expire(TimePoint now) {
  return keyspace_.active_expire(now.to_ms(), expire_rng_);
}

void Server::restore(std::map<std::string, Entry> keys) {
  keyspace_.replace_all(std::move(keys));
}

void Server::flush_all() {
  keyspace_.clear();
  scripting_.restart();
  channels_.clear();  // subscribers are connections, and a restart closed them all
  LOCKSIM_ASSERT(keyspace_.size() == 0 && scripting_.scripts().empty());
}

const Entry* Server::find_typed(const std::string& key, int64_t now_ms, KeyType type,
                                bool* wrong_type) {
  const Entry* entry = keyspace_.find(key, now_ms);
  *wrong_type = entry != nullptr && entry->type() != type;
  return *wrong_type ? nullptr : entry;
}

Entry* Server::find_typed_for_write(const std::string& key, int64_t now_ms, KeyType type,
                                    bool* wrong_type) {
  Entry* entry = keyspace_.find_for_write(key, now_ms);
  *wrong_type = entry != nullptr && entry->type() != type;
  return *wrong_type ? nullptr : entry;
}

}  // namespace locksim::sim::redis
