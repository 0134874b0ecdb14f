#include "env/faulty_redis_connection.h"

#include <utility>

#include "env/assert.h"

namespace locksim {
namespace {

// Redis reads command names case-insensitively; the rules are keyed by the
// upper-case name so "expire" and "EXPIRE" are one command.
std::string upper(std::string s) {
  for (char& c : s) {
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
  }
  return s;
}

}  // namespace

FaultyRedisConnection::FaultyRedisConnection(RedisConnection& target, std::string lost_text)
    : RedisConnectionWrapper(target), lost_text_(std::move(lost_text)) {}

void FaultyRedisConnection::lose_next_replies(int n) {
  LOCKSIM_ASSERT_MSG(n >= 0, "a count of replies to lose");
  replies_to_lose_ = n;
}

void FaultyRedisConnection::fail_command(const std::string& name, Reply reply) {
  LOCKSIM_ASSERT_MSG(!name.empty(), "a command name to fail");
  failed_commands_[upper(name)] = std::move(reply);
}

void FaultyRedisConnection::lose_command(const std::string& name) {
  fail_command(name, Reply::io_error(lost_text_));
}

Reply FaultyRedisConnection::command(std::vector<std::string> argv) {
  LOCKSIM_ASSERT_MSG(!argv.empty(), "a command has a name");
  if (down_) return Reply::io_error(lost_text_);
  if (!failed_commands_.empty()) {
    const auto rule = failed_commands_.find(upper(argv[0]));
    if (rule != failed_commands_.end()) return rule->second;
  }
  Reply reply = RedisConnectionWrapper::command(std::move(argv));
  if (replies_to_lose_ > 0) {
    --replies_to_lose_;
    return Reply::io_error(lost_text_);
  }
  return reply;
}

}  // namespace locksim
