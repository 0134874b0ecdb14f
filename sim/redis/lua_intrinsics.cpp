// The known scripts and their C++ runs (the contract: lua_intrinsics.h).
#include "sim/redis/lua_intrinsics.h"

#include <exception>

#include "env/argv_pool.h"
#include "env/assert.h"

namespace locksim::sim::redis {
namespace {

// The texts as the lock clients send them (algorithms/set_nx_lua.h's
// kReleaseScript, algorithms/redlock.h's kExtendScript; a test holds them
// equal, so an edit there cannot silently send the script back to Lua).
constexpr const char* kCompareAndDelText =
    "if redis.call(\"get\",KEYS[1]) == ARGV[1] then "
    "return redis.call(\"del\",KEYS[1]) else return 0 end";
constexpr const char* kCompareAndPexpireText =
    "if redis.call(\"get\",KEYS[1]) == ARGV[1] then "
    "return redis.call(\"pexpire\",KEYS[1],ARGV[2]) else return 0 end";

// One redis.call: the reply, or nullopt where the script would raise (an
// error reply, or an exception the Lua run turns into one).
std::optional<Reply> call(const ScriptCommandRunner& runner, const std::vector<std::string>& argv) {
  Reply reply;
  try {
    reply = runner(argv);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  if (reply.is_error() || reply.is_io_error()) return std::nullopt;
  return reply;
}

}  // namespace

Intrinsic intrinsic_of(const std::string& body) {
  if (body == kCompareAndDelText) return Intrinsic::kCompareAndDel;
  if (body == kCompareAndPexpireText) return Intrinsic::kCompareAndPexpire;
  return Intrinsic::kNone;
}

std::optional<Reply> run_intrinsic(Intrinsic kind, std::span<const std::string> keys,
                                   std::span<const std::string> args,
                                   const ScriptCommandRunner& runner,
                                   std::vector<std::string>& scratch) {
  LOCKSIM_ASSERT(kind != Intrinsic::kNone);
  const size_t args_read = kind == Intrinsic::kCompareAndPexpire ? 2 : 1;
  // KEYS[1] nil raises in redis.call; an ARGV item missing is left to Lua
  // too (rare, and the exact reply then is Lua's business).
  if (keys.empty() || args.size() < args_read) return std::nullopt;

  scratch.resize(2);
  argv_pool::overwrite(scratch[0], "get");
  argv_pool::overwrite(scratch[1], keys[0]);
  std::optional<Reply> got = call(runner, scratch);
  if (!got) return std::nullopt;  // WRONGTYPE: the GET wrote nothing
  // Lua's `==` of the converted reply and ARGV[1]: a bulk is a string,
  // equal when its bytes are; nil is false, equal to no string. Any other
  // kind cannot come from GET.
  LOCKSIM_ASSERT_MSG(got->kind == Reply::Kind::kBulk || got->is_nil(), "GET answers a bulk or nil");
  const bool ours = got->kind == Reply::Kind::kBulk && got->text == args[0];
  if (got->kind == Reply::Kind::kBulk) argv_pool::give_back_text(std::move(got->text));
  if (!ours) return Reply::integer_reply(0);

  if (kind == Intrinsic::kCompareAndDel) {
    argv_pool::overwrite(scratch[0], "del");
  } else {
    scratch.resize(3);
    argv_pool::overwrite(scratch[0], "pexpire");
    argv_pool::overwrite(scratch[2], args[1]);
  }
  std::optional<Reply> done = call(runner, scratch);
  // A refused PEXPIRE (ARGV[2] not an integer) wrote nothing; DEL is never refused.
  if (!done) return std::nullopt;
  // The script returns the integer; Lua's number comes back as the same
  // integer (DEL and PEXPIRE answer 0 or 1, exact in a double).
  LOCKSIM_ASSERT_MSG(done->kind == Reply::Kind::kInteger, "DEL and PEXPIRE answer an integer");
  return done;
}

}  // namespace locksim::sim::redis
