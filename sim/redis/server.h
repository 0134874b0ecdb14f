// The simulated Redis server: a pure state machine answering command vectors
// as redis-server 7.0 does, byte for byte (tests/redis_differential_test.cpp
// holds it to that against the real server).
//
// Pure means: no network, no fibers, no real time. The node wrapper
// (sim/redis/redis_node.*) delivers each command together with the server
// node's own clock reading `now`, which may drift or jump; every expiry is
// judged against that clock, frozen for the whole command (including a whole
// EVAL script, as Redis freezes time for scripts).
//
// Supported: SET (NX XX GET KEEPTTL EX PX EXAT PXAT), SETNX, GET, GETSET, DEL,
// EXISTS, EXPIRE, PEXPIRE, EXPIREAT, PEXPIREAT (NX XX GT LT), PERSIST, PTTL,
// TTL, INCR, DECR, INCRBY, DBSIZE, PING, EVAL, EVALSHA, SCRIPT LOAD|EXISTS|
// FLUSH|KILL; TYPE; hashes HSET HGET HEXISTS HDEL HINCRBY; lists RPUSH LPOP
// LINDEX LREM LLEN LRANGE; sorted sets ZADD (NX XX GT LT CH INCR) ZSCORE ZREM
// ZRANGE (by rank, REV, WITHSCORES) ZCARD ZINCRBY; PUBLISH; WAIT (answered
// here as by a master without replicas; RedisNode makes it block and count
// its replicas' acknowledgements). These are the commands Redisson's locks
// (RLock, RFencedLock, RedissonFairLock) send. Any other command is an
// unknown command; docs/explanation/redis.md lists what is simplified.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "env/reply.h"
#include "env/time.h"
#include "sim/redis/keyspace.h"
#include "sim/redis/lua_scripting.h"
#include "sim/rng.h"

namespace locksim::sim::redis {

class Server {
 public:
  // `seed` drives the sampling of active expiry. (math.random in scripts
  // follows redis-server 7.0 exactly, so it does not depend on the seed: see
  // lua_scripting.h.)
  explicit Server(uint64_t seed);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Executes one command as Redis 7.0 would at local time `now` (the server
  // node's clock). argv[0] is case-insensitive.
  Reply execute(const std::vector<std::string>& argv, TimePoint now);

  // One run of Redis' active expiry cycle (see Keyspace::active_expire).
  // Returns the deleted keys, so a master can replicate them as DELs.
  std::vector<std::string> active_expire(TimePoint now);

  using Entry = redis::Entry;  // absolute unix-ms expiry on the server clock
  // The keyspace, expired-but-not-yet-collected keys included (as a snapshot
  // of a real server would hold them).
  const std::map<std::string, Entry>& keys() const { return keyspace_.entries(); }
  // Keyspace::version: grows whenever keys() may have changed.
  uint64_t keys_version() const { return keyspace_.version(); }
  ChangeCount& keys_version_count() { return keyspace_.version_count(); }
  // Replaces the keyspace (an RDB/AOF load, a full resync). Scripts are kept.
  void restore(std::map<std::string, Entry> keys);
  // Forgets everything, scripts, subscriptions and the math.random stream
  // included: a crash and restart without persistence.
  void flush_all();
  size_t dbsize() const { return keyspace_.size(); }

  // The cached scripts by sha, e.g. to replicate EVALSHA as EVAL.
  const std::map<std::string, std::string>& scripts() const { return scripting_.scripts(); }
  // Bounds every script (see LuaScripting::kDefaultInstructionLimit).
  void set_script_instruction_limit(uint64_t limit) { scripting_.set_instruction_limit(limit); }
  // Off: every script runs by Lua, the known ones too (sim/redis/lua_intrinsics.h).
  void set_script_intrinsics(bool on) { scripting_.set_intrinsics(on); }

  // Whether a client (from_script false) or a script (true) may call the
  // command `lowercase_name` here: script files are checked against it.
  static bool implements(const std::string& lowercase_name, bool from_script);

  // --- Pub/sub: the subscription registry (commands_pubsub.cpp) ---
  //
  // SUBSCRIBE and UNSUBSCRIBE as server-side bookkeeping, called from C++: a
  // subscriber is whatever the caller numbers (RedisNode numbers them by
  // client connection and delivers over it: redis_node_pubsub.cpp). Channels
  // only: no patterns (PSUBSCRIBE).
  using SubscriberId = uint64_t;
  // True when `subscriber` was not yet subscribed to `channel`.
  bool subscribe(SubscriberId subscriber, const std::string& channel);
  // True when it was.
  bool unsubscribe(SubscriberId subscriber, const std::string& channel);
  // Every channel of `subscriber` (a closed connection); returns how many.
  size_t unsubscribe_all(SubscriberId subscriber);
  size_t subscribers(const std::string& channel) const;
  // How many channels `subscriber` has (SUBSCRIBE's and UNSUBSCRIBE's count).
  size_t channels_of(SubscriberId subscriber) const;

  // One message published here, with whom it reached (in subscriber order).
  struct Publication {
    std::string channel;
    std::string message;
    std::vector<SubscriberId> receivers;
  };
  // Called once per message published on this server (PUBLISH from a client
  // or a script, or publish() below), while the command runs: the node
  // delivers and propagates from it. None set: messages only count.
  using PublicationSink = std::function<void(const Publication&)>;
  void set_publication_sink(PublicationSink sink) { publication_sink_ = std::move(sink); }
  // PUBLISH's body: hands the message to the sink and returns how many
  // subscribers it reached. Also how a replica replays a master's PUBLISH.
  int64_t publish(const std::string& channel, const std::string& message);

  // --- WAIT (commands_pubsub.cpp) ---
  struct WaitRequest {
    int64_t numreplicas = 0;
    int64_t timeout_ms = 0;  // >= 0; 0 means "block until enough replicas acknowledged"
  };
  // waitCommand's argument checks, with redis-server 7.0's error texts.
  // Precondition: argv has WAIT's arity (3).
  static std::variant<WaitRequest, Reply> parse_wait(const std::vector<std::string>& argv);

 private:
  using Argv = std::vector<std::string>;
  using Handler = Reply (Server::*)(const Argv& argv, int64_t now_ms);
  struct Command {
    int arity;      // Redis convention: n exact, -n at least n (name included)
    bool noscript;  // not callable from a script
    Handler handler;
  };
  // Ordered by name; std::less<> looks a name up without making a string.
  static const std::map<std::string, Command, std::less<>>& command_table();
  static const Command* find_command(std::string_view lowercase_name);
  // The command `name` names in any letter case, or nullptr; allocates nothing.
  static const Command* find_any_case(const std::string& name);

  // A command issued by redis.call/redis.pcall inside a script.
  Reply execute_from_script(const Argv& argv, int64_t now_ms);

  // Handlers, in commands.cpp. argv arity is already checked.
  Reply cmd_get(const Argv& argv, int64_t now_ms);
  Reply cmd_set(const Argv& argv, int64_t now_ms);
  Reply cmd_setnx(const Argv& argv, int64_t now_ms);
  Reply cmd_getset(const Argv& argv, int64_t now_ms);
  Reply cmd_del(const Argv& argv, int64_t now_ms);
  Reply cmd_exists(const Argv& argv, int64_t now_ms);
  Reply cmd_expire(const Argv& argv, int64_t now_ms);
  Reply cmd_pexpire(const Argv& argv, int64_t now_ms);
  Reply cmd_expireat(const Argv& argv, int64_t now_ms);
  Reply cmd_pexpireat(const Argv& argv, int64_t now_ms);
  Reply cmd_persist(const Argv& argv, int64_t now_ms);
  Reply cmd_ttl(const Argv& argv, int64_t now_ms);
  Reply cmd_pttl(const Argv& argv, int64_t now_ms);
  // Hashes (t_hash.c), for Redisson-like re-entrant locks; and TYPE.
  Reply cmd_type(const Argv& argv, int64_t now_ms);
  Reply cmd_hset(const Argv& argv, int64_t now_ms);
  Reply cmd_hget(const Argv& argv, int64_t now_ms);
  Reply cmd_hexists(const Argv& argv, int64_t now_ms);
  Reply cmd_hdel(const Argv& argv, int64_t now_ms);
  Reply cmd_hincrby(const Argv& argv, int64_t now_ms);
  // The hash at `key` for a write, created empty if missing; nullptr when
  // the key holds a string (WRONGTYPE).
  std::map<std::string, std::string>* hash_for_write(const std::string& key, int64_t now_ms);
  // Lists (t_list.c), in commands_list.cpp.
  Reply cmd_rpush(const Argv& argv, int64_t now_ms);
  Reply cmd_lpop(const Argv& argv, int64_t now_ms);
  Reply cmd_lindex(const Argv& argv, int64_t now_ms);
  Reply cmd_lrem(const Argv& argv, int64_t now_ms);
  Reply cmd_llen(const Argv& argv, int64_t now_ms);
  Reply cmd_lrange(const Argv& argv, int64_t now_ms);
  // Sorted sets (t_zset.c), in commands_zset.cpp.
  Reply cmd_zadd(const Argv& argv, int64_t now_ms);
  Reply cmd_zincrby(const Argv& argv, int64_t now_ms);
  Reply cmd_zscore(const Argv& argv, int64_t now_ms);
  Reply cmd_zrem(const Argv& argv, int64_t now_ms);
  Reply cmd_zcard(const Argv& argv, int64_t now_ms);
  Reply cmd_zrange(const Argv& argv, int64_t now_ms);
  // zaddGenericCommand, which ZINCRBY shares (`incr` forced on).
  Reply zadd_generic(const Argv& argv, int64_t now_ms, bool incr);
  // PUBLISH and WAIT, in commands_pubsub.cpp.
  Reply cmd_publish(const Argv& argv, int64_t now_ms);
  Reply cmd_wait(const Argv& argv, int64_t now_ms);
  // The live entry at `key` if it holds `type`; else nullptr, with
  // *wrong_type telling a key of another type (WRONGTYPE) from no key. To
  // read (Keyspace::find), or to write through (Keyspace::find_for_write).
  const Entry* find_typed(const std::string& key, int64_t now_ms, KeyType type, bool* wrong_type);
  Entry* find_typed_for_write(const std::string& key, int64_t now_ms, KeyType type,
                              bool* wrong_type);
  Reply cmd_incr(const Argv& argv, int64_t now_ms);
  Reply cmd_decr(const Argv& argv, int64_t now_ms);
  Reply cmd_incrby(const Argv& argv, int64_t now_ms);
  Reply cmd_dbsize(const Argv& argv, int64_t now_ms);
  Reply cmd_ping(const Argv& argv, int64_t now_ms);
  Reply cmd_eval(const Argv& argv, int64_t now_ms);
  Reply cmd_evalsha(const Argv& argv, int64_t now_ms);
  Reply cmd_script(const Argv& argv, int64_t now_ms);

  // Shared bodies.
  Reply expire_generic(const Argv& argv, int64_t now_ms, int64_t base_ms, bool seconds);
  Reply ttl_generic(const Argv& argv, int64_t now_ms, bool in_ms);
  Reply incr_generic(const std::string& key, int64_t increment, int64_t now_ms);
  Reply run_script(const std::string& sha, const Argv& argv, int64_t numkeys, int64_t now_ms);

  Keyspace keyspace_;
  Rng expire_rng_;
  LuaScripting scripting_;
  // channel -> its subscribers; both ordered, so delivery order is the same
  // in every run. A channel without subscribers is not kept.
  std::map<std::string, std::set<SubscriberId>> channels_;
  PublicationSink publication_sink_;
};

}  // namespace locksim::sim::redis
