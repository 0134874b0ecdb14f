// The command bodies of the simulated Redis server, each following the
// corresponding function of Redis 7.0 (t_string.c, expire.c, db.c, eval.c,
// t_hash.c) closely enough to give the same reply and the same error text.
// Lists, sorted sets and pub/sub are in commands_list.cpp, commands_zset.cpp
// and commands_pubsub.cpp.
#include <climits>
#include <optional>
#include <span>

#include "env/argv_pool.h"
#include "env/assert.h"
#include "sim/redis/command_util.h"
#include "sim/redis/server.h"
#include "sim/redis/sha1.h"

namespace locksim::sim::redis {
namespace {

const Reply kNoScript = Reply::error("NOSCRIPT No matching script. Please use EVAL.");

Reply invalid_expire(const std::string& command) {
  return Reply::error("ERR invalid expire time in '" + command + "' command");
}

Reply bulk_or_nil(const Entry* entry) {
  if (entry != nullptr && entry->type() != KeyType::kString) return kWrongType;
  // In a pooled string (env/argv_pool.h): a script's GET gives it back once
  // Lua has its copy (a token is past a string's inline room).
  return entry != nullptr ? Reply::bulk(argv_pool::take_text(entry->value)) : Reply::nil();
}

// Options of SET, parsed as Redis' parseExtendedStringArgumentsOrReply does:
// each option is accepted only if no conflicting one came before it.
struct SetOptions {
  bool nx = false, xx = false, get = false, keepttl = false;
  enum class Unit { kNone, kEx, kPx, kExAt, kPxAt } unit = Unit::kNone;
  const std::string* expire_arg = nullptr;
};

// The expiry unit option `opt` names (EX PX EXAT PXAT, any case), or kNone.
SetOptions::Unit unit_named(const std::string& opt) {
  using Unit = SetOptions::Unit;
  if (equals_ignoring_case(opt, "ex")) return Unit::kEx;
  if (equals_ignoring_case(opt, "px")) return Unit::kPx;
  if (equals_ignoring_case(opt, "exat")) return Unit::kExAt;
  if (equals_ignoring_case(opt, "pxat")) return Unit::kPxAt;
  return Unit::kNone;
}

std::optional<SetOptions> parse_set_options(const std::vector<std::string>& argv) {
  using Unit = SetOptions::Unit;
  SetOptions o;
  for (size_t j = 3; j < argv.size(); ++j) {
    // Matched in place, in any letter case: no lowercased copy per option.
    const std::string& opt = argv[j];
    const bool has_next = j + 1 < argv.size();
    auto expire_allowed = [&](Unit self) {
      return !o.keepttl && has_next && (o.unit == Unit::kNone || o.unit == self);
    };
    if (equals_ignoring_case(opt, "nx") && !o.xx) {
      o.nx = true;
    } else if (equals_ignoring_case(opt, "xx") && !o.nx) {
      o.xx = true;
    } else if (equals_ignoring_case(opt, "get")) {
      o.get = true;
    } else if (equals_ignoring_case(opt, "keepttl") && o.unit == Unit::kNone) {
      o.keepttl = true;
    } else if (const Unit unit = unit_named(opt); unit != Unit::kNone && expire_allowed(unit)) {
      o.unit = unit;
      o.expire_arg = &argv[++j];  // a repeated option overrides: Redis keeps the last
    } else {
      return std::nullopt;
    }
  }
  // What cmd_set relies on: no conflicting pair got through, and an expiry
  // argument comes with its unit.
  LOCKSIM_ASSERT(!(o.nx && o.xx) && !(o.keepttl && o.expire_arg != nullptr));
  LOCKSIM_ASSERT((o.expire_arg != nullptr) == (o.unit != Unit::kNone));
  return o;
}

}  // namespace

Reply Server::cmd_get(const Argv& argv, int64_t now_ms) {
  return bulk_or_nil(keyspace_.find(argv[1], now_ms));
}

Reply Server::cmd_set(const Argv& argv, int64_t now_ms) {
  using Unit = SetOptions::Unit;
  const std::optional<SetOptions> options = parse_set_options(argv);
  if (!options) return kSyntaxError;
  const SetOptions& o = *options;

  // getExpireMillisecondsOrReply.
  std::optional<int64_t> expire_at_ms;
  if (o.expire_arg != nullptr) {
    const std::optional<int64_t> parsed = string2ll(*o.expire_arg);
    if (!parsed) return kNotInteger;
    int64_t ms = *parsed;
    const bool seconds = o.unit == Unit::kEx || o.unit == Unit::kExAt;
    if (ms <= 0 || (seconds && ms > INT64_MAX / 1000)) return invalid_expire("set");
    if (seconds) ms *= 1000;
    if (o.unit == Unit::kEx || o.unit == Unit::kPx) {
      if (__builtin_add_overflow(ms, now_ms, &ms)) return invalid_expire("set");
    }
    if (ms <= 0) return invalid_expire("set");
    expire_at_ms = ms;
  }

  const std::string& key = argv[1];
  const Entry* existing = keyspace_.find(key, now_ms);
  // SET ... GET answers the old value; without GET there is none to copy.
  Reply old_value = o.get ? bulk_or_nil(existing) : Reply::nil();
  if (old_value.is_error()) return old_value;  // SET ... GET on a hash: nothing set
  if ((o.nx && existing != nullptr) || (o.xx && existing == nullptr)) return old_value;
  if (o.keepttl) expire_at_ms = existing != nullptr ? existing->expire_at_ms : std::nullopt;
  keyspace_.put(key, argv[2], expire_at_ms);
  return o.get ? old_value : Reply::ok();
}

Reply Server::cmd_setnx(const Argv& argv, int64_t now_ms) {
  if (keyspace_.find(argv[1], now_ms) != nullptr) return Reply::integer_reply(0);
  keyspace_.put(argv[1], argv[2], std::nullopt);
  return Reply::integer_reply(1);
}

Reply Server::cmd_getset(const Argv& argv, int64_t now_ms) {
  Reply old_value = bulk_or_nil(keyspace_.find(argv[1], now_ms));
  if (old_value.is_error()) return old_value;     // WRONGTYPE: nothing set
  keyspace_.put(argv[1], argv[2], std::nullopt);  // GETSET drops any TTL
  return old_value;
}

Reply Server::cmd_del(const Argv& argv, int64_t now_ms) {
  int64_t deleted = 0;
  for (size_t i = 1; i < argv.size(); ++i) deleted += keyspace_.erase(argv[i], now_ms) ? 1 : 0;
  return Reply::integer_reply(deleted);
}

Reply Server::cmd_exists(const Argv& argv, int64_t now_ms) {
  int64_t count = 0;  // a key named twice counts twice, as in Redis
  for (size_t i = 1; i < argv.size(); ++i) count += keyspace_.find(argv[i], now_ms) ? 1 : 0;
  return Reply::integer_reply(count);
}

Reply Server::cmd_expire(const Argv& argv, int64_t now_ms) {
  return expire_generic(argv, now_ms, now_ms, true);
}
Reply Server::cmd_pexpire(const Argv& argv, int64_t now_ms) {
  return expire_generic(argv, now_ms, now_ms, false);
}
Reply Server::cmd_expireat(const Argv& argv, int64_t now_ms) {
  return expire_generic(argv, now_ms, 0, true);
}
Reply Server::cmd_pexpireat(const Argv& argv, int64_t now_ms) {
  return expire_generic(argv, now_ms, 0, false);
}

// Redis' expireGenericCommand, with the 7.0 options NX XX GT LT.
Reply Server::expire_generic(const Argv& argv, int64_t now_ms, int64_t base_ms, bool seconds) {
  bool nx = false, xx = false, gt = false, lt = false;
  for (size_t j = 3; j < argv.size(); ++j) {
    const std::string& opt = argv[j];
    if (equals_ignoring_case(opt, "nx")) {
      nx = true;
    } else if (equals_ignoring_case(opt, "xx")) {
      xx = true;
    } else if (equals_ignoring_case(opt, "gt")) {
      gt = true;
    } else if (equals_ignoring_case(opt, "lt")) {
      lt = true;
    } else {
      return Reply::error("ERR Unsupported option " + argv[j]);
    }
  }
  if (nx && (xx || gt || lt)) {
    return Reply::error("ERR NX and XX, GT or LT options at the same time are not compatible");
  }
  if (gt && lt) return Reply::error("ERR GT and LT options at the same time are not compatible");

  const std::optional<int64_t> parsed = string2ll(argv[2]);
  if (!parsed) return kNotInteger;
  int64_t when_ms = *parsed;
  if (seconds) {
    if (when_ms > INT64_MAX / 1000 || when_ms < INT64_MIN / 1000) {
      return invalid_expire(lowercase(argv[0]));
    }
    when_ms *= 1000;
  }
  if (when_ms > INT64_MAX - base_ms) return invalid_expire(lowercase(argv[0]));
  when_ms += base_ms;

  const std::string& key = argv[1];
  const Entry* entry = keyspace_.find(key, now_ms);
  if (entry == nullptr) return Reply::integer_reply(0);
  const std::optional<int64_t> current = entry->expire_at_ms;  // none = infinite TTL
  if (nx && current) return Reply::integer_reply(0);
  if (xx && !current) return Reply::integer_reply(0);
  if (gt && (!current || when_ms <= *current)) return Reply::integer_reply(0);
  if (lt && current && when_ms >= *current) return Reply::integer_reply(0);

  // checkAlreadyExpired: a deadline at or before now deletes the key at once.
  if (when_ms <= now_ms) {
    keyspace_.erase(key, now_ms);
  } else {
    keyspace_.set_expire(key, when_ms);
  }
  return Reply::integer_reply(1);
}

Reply Server::cmd_persist(const Argv& argv, int64_t now_ms) {
  const Entry* entry = keyspace_.find(argv[1], now_ms);
  if (entry == nullptr || !entry->expire_at_ms) return Reply::integer_reply(0);
  keyspace_.set_expire(argv[1], std::nullopt);
  return Reply::integer_reply(1);
}

Reply Server::cmd_ttl(const Argv& argv, int64_t now_ms) {
  return ttl_generic(argv, now_ms, false);
}
Reply Server::cmd_pttl(const Argv& argv, int64_t now_ms) {
  return ttl_generic(argv, now_ms, true);
}

Reply Server::ttl_generic(const Argv& argv, int64_t now_ms, bool in_ms) {
  const Entry* entry = keyspace_.find(argv[1], now_ms);
  if (entry == nullptr) return Reply::integer_reply(-2);
  if (!entry->expire_at_ms) return Reply::integer_reply(-1);
  // Redis clamps a negative TTL to 0; here lazy expiry (Keyspace::find) has
  // already removed every key whose deadline passed, so it cannot happen.
  const int64_t ttl_ms = *entry->expire_at_ms - now_ms;
  LOCKSIM_ASSERT_MSG(ttl_ms >= 0, "lazy expiry let a dead key through");
  return Reply::integer_reply(in_ms ? ttl_ms : (ttl_ms + 500) / 1000);
}

Reply Server::cmd_incr(const Argv& argv, int64_t now_ms) {
  return incr_generic(argv[1], 1, now_ms);
}
Reply Server::cmd_decr(const Argv& argv, int64_t now_ms) {
  return incr_generic(argv[1], -1, now_ms);
}
Reply Server::cmd_incrby(const Argv& argv, int64_t now_ms) {
  const std::optional<int64_t> increment = string2ll(argv[2]);
  if (!increment) return kNotInteger;
  return incr_generic(argv[1], *increment, now_ms);
}

// Redis' incrDecrCommand: the value must be a strict integer; the TTL stays.
Reply Server::incr_generic(const std::string& key, int64_t increment, int64_t now_ms) {
  Entry* entry = keyspace_.find_for_write(key, now_ms);
  int64_t old_value = 0;
  if (entry != nullptr && entry->type() != KeyType::kString) return kWrongType;
  if (entry != nullptr) {
    const std::optional<int64_t> parsed = string2ll(entry->value);
    if (!parsed) return kNotInteger;
    old_value = *parsed;
  }
  int64_t new_value = 0;
  if (__builtin_add_overflow(old_value, increment, &new_value)) {
    return Reply::error("ERR increment or decrement would overflow");
  }
  if (entry != nullptr) {
    entry->value = std::to_string(new_value);
  } else {
    keyspace_.put(key, std::to_string(new_value), std::nullopt);
  }
  return Reply::integer_reply(new_value);
}

Reply Server::cmd_dbsize(const Argv& /*argv*/, int64_t /*now_ms*/) {
  return Reply::integer_reply(static_cast<int64_t>(keyspace_.size()));
}

Reply Server::cmd_ping(const Argv& argv, int64_t /*now_ms*/) {
  if (argv.size() > 2) return wrong_arity("ping");
  return argv.size() == 1 ? Reply::status("PONG") : Reply::bulk(argv[1]);
}

// evalGenericCommand's checks of numkeys, shared by EVAL and EVALSHA.
namespace {
std::optional<Reply> check_numkeys(const std::vector<std::string>& argv, int64_t* numkeys) {
  const std::optional<int64_t> parsed = string2ll(argv[2]);
  if (!parsed) return kNotInteger;
  if (*parsed > static_cast<int64_t>(argv.size()) - 3) {
    return Reply::error("ERR Number of keys can't be greater than number of args");
  }
  if (*parsed < 0) return Reply::error("ERR Number of keys can't be negative");
  *numkeys = *parsed;
  return std::nullopt;
}
}  // namespace

Reply Server::cmd_eval(const Argv& argv, int64_t now_ms) {
  int64_t numkeys = 0;
  if (auto error = check_numkeys(argv, &numkeys)) return *error;
  // EVAL caches the script too, so a later EVALSHA finds it.
  LuaScripting::LoadResult loaded = scripting_.load(argv[1]);
  if (loaded.error) return *loaded.error;
  return run_script(loaded.sha, argv, numkeys, now_ms);
}

Reply Server::cmd_evalsha(const Argv& argv, int64_t now_ms) {
  if (argv[1].size() != 40) return kNoScript;
  int64_t numkeys = 0;
  if (auto error = check_numkeys(argv, &numkeys)) return *error;
  const std::string sha = lowercase(argv[1]);  // Redis matches shas case-insensitively
  if (!scripting_.exists(sha)) return kNoScript;
  return run_script(sha, argv, numkeys, now_ms);
}

Reply Server::run_script(const std::string& sha, const Argv& argv, int64_t numkeys,
                         int64_t now_ms) {
  // check_numkeys made sure of it.
  LOCKSIM_ASSERT(numkeys >= 0 && 3 + static_cast<size_t>(numkeys) <= argv.size());
  const std::span<const std::string> all(argv);
  const auto keys = all.subspan(3, static_cast<size_t>(numkeys));
  const auto args = all.subspan(3 + static_cast<size_t>(numkeys));
  // Time is frozen at now_ms for the whole script, as Redis freezes it.
  const LuaScripting::CommandRunner runner = [this, now_ms](const Argv& call_argv) {
    return execute_from_script(call_argv, now_ms);
  };
  return scripting_.run(sha, keys, args, runner);
}

Reply Server::cmd_script(const Argv& argv, int64_t /*now_ms*/) {
  const std::string sub = lowercase(argv[1]);
  if (sub == "load") {
    if (argv.size() != 3) return wrong_arity("script|load");
    LuaScripting::LoadResult loaded = scripting_.load(argv[2]);
    if (loaded.error) return *loaded.error;
    return Reply::bulk(loaded.sha);
  }
  if (sub == "exists") {
    if (argv.size() < 3) return wrong_arity("script|exists");
    std::vector<Reply> found;
    for (size_t i = 2; i < argv.size(); ++i) {
      found.push_back(Reply::integer_reply(scripting_.exists(lowercase(argv[i])) ? 1 : 0));
    }
    return Reply::array(std::move(found));
  }
  if (sub == "flush") {
    const bool mode_ok =
        argv.size() == 2 ||
        (argv.size() == 3 && (lowercase(argv[2]) == "sync" || lowercase(argv[2]) == "async"));
    if (!mode_ok) return Reply::error("ERR SCRIPT FLUSH only support SYNC|ASYNC option");
    scripting_.flush();
    return Reply::ok();
  }
  if (sub == "kill") {
    if (argv.size() != 2) return wrong_arity("script|kill");
    // Scripts run to completion inside one command, so none is ever running.
    return Reply::error("NOTBUSY No scripts in execution right now.");
  }
  std::string shown = argv[1].substr(0, 128);
  for (char& c : shown) {
    if (c == '\r' || c == '\n') c = ' ';
  }
  return Reply::error("ERR unknown subcommand '" + shown + "'. Try SCRIPT HELP.");
}

// --- hashes (t_hash.c) and TYPE ---------------------------------------------

Reply Server::cmd_type(const Argv& argv, int64_t now_ms) {
  const Entry* entry = keyspace_.find(argv[1], now_ms);
  if (entry == nullptr) return Reply::status("none");
  return Reply::status(type_name(entry->type()));
}

std::map<std::string, std::string>* Server::hash_for_write(const std::string& key, int64_t now_ms) {
  Entry* entry = keyspace_.find_for_write(key, now_ms);
  if (entry == nullptr) entry = &keyspace_.create(key, KeyType::kHash);
  return entry->hash ? &*entry->hash : nullptr;
}

Reply Server::cmd_hset(const Argv& argv, int64_t now_ms) {
  if (argv.size() % 2 == 1) return wrong_arity("hset");  // field value pairs
  auto* hash = hash_for_write(argv[1], now_ms);
  if (hash == nullptr) return kWrongType;
  int64_t created = 0;
  for (size_t i = 2; i + 1 < argv.size(); i += 2) {
    created += hash->count(argv[i]) == 0 ? 1 : 0;
    (*hash)[argv[i]] = argv[i + 1];
  }
  return Reply::integer_reply(created);
}

Reply Server::cmd_hget(const Argv& argv, int64_t now_ms) {
  const Entry* entry = keyspace_.find(argv[1], now_ms);
  if (entry == nullptr) return Reply::nil();
  if (!entry->hash) return kWrongType;
  const auto it = entry->hash->find(argv[2]);
  return it == entry->hash->end() ? Reply::nil() : Reply::bulk(it->second);
}

Reply Server::cmd_hexists(const Argv& argv, int64_t now_ms) {
  const Entry* entry = keyspace_.find(argv[1], now_ms);
  if (entry == nullptr) return Reply::integer_reply(0);
  if (!entry->hash) return kWrongType;
  return Reply::integer_reply(entry->hash->count(argv[2]) != 0 ? 1 : 0);
}

// A hash left without fields is deleted, TTL and all, as Redis does.
Reply Server::cmd_hdel(const Argv& argv, int64_t now_ms) {
  Entry* entry = keyspace_.find_for_write(argv[1], now_ms);
  if (entry == nullptr) return Reply::integer_reply(0);
  if (!entry->hash) return kWrongType;
  int64_t deleted = 0;
  for (size_t i = 2; i < argv.size(); ++i) {
    deleted += static_cast<int64_t>(entry->hash->erase(argv[i]));
  }
  if (entry->hash->empty()) keyspace_.erase(argv[1], now_ms);
  return Reply::integer_reply(deleted);
}

// hincrbyCommand: the increment is parsed first (no key is made for a bad
// one); the key keeps its TTL.
Reply Server::cmd_hincrby(const Argv& argv, int64_t now_ms) {
  const std::optional<int64_t> increment = string2ll(argv[3]);
  if (!increment) return kNotInteger;
  auto* hash = hash_for_write(argv[1], now_ms);
  if (hash == nullptr) return kWrongType;
  int64_t old_value = 0;
  const auto it = hash->find(argv[2]);
  if (it != hash->end()) {
    const std::optional<int64_t> parsed = string2ll(it->second);
    if (!parsed) return Reply::error("ERR hash value is not an integer");
    old_value = *parsed;
  }
  int64_t new_value = 0;
  if (__builtin_add_overflow(old_value, *increment, &new_value)) {
    return Reply::error("ERR increment or decrement would overflow");
  }
  (*hash)[argv[2]] = std::to_string(new_value);
  return Reply::integer_reply(new_value);
}

}  // namespace locksim::sim::redis
