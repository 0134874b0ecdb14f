#include "live/hiredis_connection.h"

#include <hiredis/hiredis.h>
#include <sys/time.h>

#include <strings.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <ctime>

#include "env/assert.h"
#include "live/sigpipe_guard.h"

namespace locksim::live {

namespace {

// A WAIT's own timeout the connection waits for, at most (a day): a run is
// far shorter, and an absurd value must not overflow the timeval.
constexpr int64_t kWaitBlockMsMax = 24 * 3600 * 1000;

timeval to_timeval(Duration d) {
  const int64_t ns = d.ns < 0 ? 0 : d.ns;
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(ns / 1'000'000'000);
  tv.tv_usec = static_cast<suseconds_t>((ns % 1'000'000'000) / 1000);
  // A zero timeval means "no timeout" to hiredis; a run must never hang on a
  // stopped server, so round a tiny timeout up instead.
  if (tv.tv_sec == 0 && tv.tv_usec == 0) tv.tv_usec = 1;
  LOCKSIM_ASSERT(tv.tv_usec >= 0 && tv.tv_usec < 1'000'000 && (tv.tv_sec > 0 || tv.tv_usec > 0));
  return tv;
}

Reply convert(const redisReply* r) {
  LOCKSIM_ASSERT(r != nullptr);
  switch (r->type) {
    case REDIS_REPLY_STATUS:
      return Reply::status(std::string(r->str, r->len));
    case REDIS_REPLY_ERROR:
      return Reply::error(std::string(r->str, r->len));
    case REDIS_REPLY_INTEGER:
      return Reply::integer_reply(r->integer);
    case REDIS_REPLY_STRING:
      return Reply::bulk(std::string(r->str, r->len));
    case REDIS_REPLY_NIL:
      return Reply::nil();
    case REDIS_REPLY_ARRAY: {
      // hiredis itself bounds the nesting depth of what it parses, so this
      // recursion is bounded too.
      std::vector<Reply> elements;
      elements.reserve(r->elements);
      for (size_t i = 0; i < r->elements; ++i) elements.push_back(convert(r->element[i]));
      return Reply::array(std::move(elements));
    }
  }
  // RESP3 types (newer hiredis only): we never send HELLO 3, so a server
  // answers in RESP2; say so instead of guessing a mapping.
  return Reply::error("ERR locksim: unsupported reply type " + std::to_string(r->type));
}

// hiredis reports a socket timeout as the strerror of EAGAIN; name it plainly.
std::string describe_error(const redisContext* c, Duration timeout) {
  std::string what = c->errstr[0] != '\0' ? c->errstr : "unknown error";
  if (c->err == REDIS_ERR_IO &&
      (what == std::strerror(EAGAIN) || what == std::strerror(EWOULDBLOCK))) {
    what = "timeout after " + std::to_string(timeout.to_ms()) + " ms";
  }
  return what;
}

// How long a command may take: the timeout, and for WAIT numreplicas
// timeout-ms also the time the server may block it, as the simulated
// connection allows (sim/redis/redis_node.h, GroupConnection; Redisson's
// synced lock write waits responseTimeout + syncTimeout). A timeout the
// server would reject, or 0 ("forever"), adds nothing.
Duration command_timeout(const std::vector<std::string>& argv, Duration timeout) {
  if (argv.size() != 3 || argv[0].size() != 4 || strncasecmp(argv[0].c_str(), "WAIT", 4) != 0) {
    return timeout;
  }
  int64_t block_ms = 0;
  const auto [end, error] =
      std::from_chars(argv[2].data(), argv[2].data() + argv[2].size(), block_ms);
  if (error != std::errc() || end != argv[2].data() + argv[2].size() || block_ms < 0 ||
      block_ms > kWaitBlockMsMax) {
    return timeout;
  }
  return timeout + Duration::millis(block_ms);
}

}  // namespace

void HiredisConnection::ContextDeleter::operator()(redisContext* c) const {
  redisFree(c);
}

HiredisConnection::HiredisConnection(std::string host, int port, Duration timeout, std::string name)
    : host_(std::move(host)), port_(port), timeout_(timeout), name_(std::move(name)) {
  // The live runner builds these from servers it started itself.
  LOCKSIM_ASSERT_MSG(port_ > 0 && port_ < 65536, "a TCP port out of range");
  LOCKSIM_ASSERT_MSG(timeout_ > Duration::zero(), "a live command needs a positive timeout");
}

HiredisConnection::~HiredisConnection() = default;

std::string HiredisConnection::ensure_connected() {
  if (context_) return "";
  const timeval tv = to_timeval(timeout_);
  std::unique_ptr<redisContext, ContextDeleter> c(
      redisConnectWithTimeout(host_.c_str(), port_, tv));
  if (!c) return "connect: out of memory";
  if (c->err != 0) return "connect: " + describe_error(c.get(), timeout_);
  // The connect timeout does not cover reads and writes; without this a
  // SIGSTOPped server would block the client forever.
  if (redisSetTimeout(c.get(), tv) != REDIS_OK) return "connect: cannot set socket timeout";
  context_ = std::move(c);
  LOCKSIM_ASSERT(context_->err == 0);
  return "";
}

Reply HiredisConnection::command(std::vector<std::string> argv) {
  if (argv.empty()) return Reply::error("ERR locksim: empty command");
  const std::string where = name_ + " (" + host_ + ":" + std::to_string(port_) + "): ";

  if (std::string why = ensure_connected(); !why.empty()) return Reply::io_error(where + why);
  // Pair of ensure_connected: a held context is a usable one (a broken one
  // is dropped below, never kept for the next command).
  LOCKSIM_ASSERT(context_ != nullptr && context_->err == 0);

  std::vector<const char*> args;
  std::vector<size_t> lengths;
  args.reserve(argv.size());
  lengths.reserve(argv.size());
  for (const std::string& a : argv) {
    args.push_back(a.data());
    lengths.push_back(a.size());
  }

  // A blocking command waits longer; every other keeps the usual timeout.
  const Duration timeout = command_timeout(argv, timeout_);
  const bool longer = timeout != timeout_;
  if (longer && redisSetTimeout(context_.get(), to_timeval(timeout)) != REDIS_OK) {
    context_.reset();
    return Reply::io_error(where + "cannot set socket timeout");
  }
  redisReply* raw = nullptr;
  {
    SigpipeGuard guard;
    raw = static_cast<redisReply*>(redisCommandArgv(context_.get(), static_cast<int>(args.size()),
                                                    args.data(), lengths.data()));
  }
  if (raw != nullptr && longer &&
      redisSetTimeout(context_.get(), to_timeval(timeout_)) != REDIS_OK) {
    freeReplyObject(raw);
    context_.reset();
    return Reply::io_error(where + "cannot set socket timeout");
  }
  if (raw == nullptr) {
    // The context is unusable after a transport error (hiredis's contract);
    // drop it so the next command reconnects.
    std::string why = describe_error(context_.get(), timeout);
    context_.reset();
    return Reply::io_error(where + why);
  }
  const std::unique_ptr<redisReply, decltype(&freeReplyObject)> owned(raw, &freeReplyObject);
  Reply reply = convert(owned.get());
  // io_error means "no reply" (the outcome is unknown): never a server answer.
  LOCKSIM_ASSERT(!reply.is_io_error());
  return reply;
}

}  // namespace locksim::live
