// Command dispatch: lookup, arity, and the errors Redis gives before a command
// runs. The command bodies are in commands.cpp.
#include "sim/redis/server.h"

#include <algorithm>
#include <array>
#include <cstring>
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

// A command name as find_any_case compares it: its length and its first
// kFoldedBytes bytes, each ORed with 0x20, in two words. OR 0x20 makes a
// letter lowercase, and only a letter folds onto a lowercase letter, so a
// name of lowercase letters (every name in the table) folds equal to exactly
// its spellings in any letter case: two word compares instead of a byte loop.
struct FoldedName {
  size_t size = 0;
  uint64_t head = 0, tail = 0;
  bool operator==(const FoldedName&) const = default;
};
constexpr size_t kFoldedBytes = 16;

FoldedName fold(std::string_view name) {
  std::array<char, kFoldedBytes> bytes{};
  std::memcpy(bytes.data(), name.data(), std::min(name.size(), kFoldedBytes));
  FoldedName folded{name.size(), 0, 0};
  std::memcpy(&folded.head, bytes.data(), sizeof folded.head);
  std::memcpy(&folded.tail, bytes.data() + sizeof folded.head, sizeof folded.tail);
  constexpr uint64_t kLower = 0x2020'2020'2020'2020;
  folded.head |= kLower;
  folded.tail |= kLower;
  return folded;
}

// Spreads folded names over find_any_case's slots (multiplicative hashing).
size_t slot_of(const FoldedName& f, size_t slots) {
  const uint64_t h = (f.head * 0x9E37'79B9'7F4A'7C15u) ^ (f.tail * 0xC2B2'AE3D'27D4'EB4Fu) ^ f.size;
  return static_cast<size_t>(h >> 32) % slots;
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
  // after a slot or two.
  struct Slot {
    FoldedName name;
    const Command* command = nullptr;
  };
  constexpr size_t kSlots = 128;
  static const std::array<Slot, kSlots> slots = [] {
    std::array<Slot, kSlots> built{};
    const auto& table = command_table();
    LOCKSIM_ASSERT_MSG(table.size() * 2 <= kSlots, "the command hash table is over half full");
    for (const auto& [lowercase_name, command] : table) {
      // What fold() relies on to tell the names apart.
      LOCKSIM_ASSERT_MSG(lowercase_name.size() <= kFoldedBytes, "a command name past the fold");
      LOCKSIM_ASSERT_MSG(std::all_of(lowercase_name.begin(), lowercase_name.end(),
                                     [](char c) { return c >= 'a' && c <= 'z'; }),
                         "a command name that is not lowercase letters");
      const FoldedName folded = fold(lowercase_name);
      size_t i = slot_of(folded, kSlots);
      while (built[i].command != nullptr) i = (i + 1) % kSlots;
      built[i] = Slot{folded, &command};
    }
    return built;
  }();
  if (name.size() > kFoldedBytes) return nullptr;  // longer than any command
  const FoldedName folded = fold(name);
  for (size_t i = slot_of(folded, kSlots); slots[i].command != nullptr; i = (i + 1) % kSlots) {
    if (slots[i].name == folded) return slots[i].command;
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

namespace {

// `entry` if it holds `type`; else nullptr, with *wrong_type telling a key
// of another type from no key (find_typed's rule, for either lookup).
template <typename E>
E* of_type(E* entry, KeyType type, bool* wrong_type) {
  *wrong_type = entry != nullptr && entry->type() != type;
  return *wrong_type ? nullptr : entry;
}

}  // namespace

const Entry* Server::find_typed(const std::string& key, int64_t now_ms, KeyType type,
                                bool* wrong_type) {
  return of_type(keyspace_.find(key, now_ms), type, wrong_type);
}

Entry* Server::find_typed_for_write(const std::string& key, int64_t now_ms, KeyType type,
                                    bool* wrong_type) {
  return of_type(keyspace_.find_for_write(key, now_ms), type, wrong_type);
}

}  // namespace locksim::sim::redis
