#include "live/hiredis_subscriber.h"

#include <hiredis/hiredis.h>
#include <poll.h>
#include <sys/time.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <thread>
#include <vector>

#include "env/assert.h"
#include "live/sigpipe_guard.h"

namespace locksim::live {

namespace {

TimePoint steady_now() {
  const auto since = std::chrono::steady_clock::now().time_since_epoch();
  return TimePoint::from_ns(std::chrono::duration_cast<std::chrono::nanoseconds>(since).count());
}

timeval to_timeval(Duration d) {
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(d.ns / 1'000'000'000);
  tv.tv_usec = static_cast<suseconds_t>((d.ns % 1'000'000'000) / 1000);
  if (tv.tv_sec == 0 && tv.tv_usec == 0) tv.tv_usec = 1;  // zero is "no timeout" to hiredis
  return tv;
}

bool is_text(const redisReply* r) {
  return r->type == REDIS_REPLY_STRING || r->type == REDIS_REPLY_STATUS;
}

// Writes what hiredis has buffered; false when the socket failed.
bool flush(redisContext* c) {
  SigpipeGuard guard;
  int done = 0;
  while (done == 0) {
    if (redisBufferWrite(c, &done) != REDIS_OK) return false;
  }
  return true;
}

}  // namespace

void HiredisSubscriber::ContextDeleter::operator()(redisContext* c) const {
  redisFree(c);
}

HiredisSubscriber::HiredisSubscriber(std::string host, int port, Duration timeout, std::string name)
    : host_(std::move(host)), port_(port), timeout_(timeout), name_(std::move(name)) {
  LOCKSIM_ASSERT_MSG(port_ > 0 && port_ < 65536, "a TCP port out of range");
  LOCKSIM_ASSERT_MSG(timeout_ > Duration::zero(), "a live subscriber needs a positive timeout");
}

HiredisSubscriber::~HiredisSubscriber() = default;

void HiredisSubscriber::drop() {
  context_.reset();
  confirmed_.clear();
}

bool HiredisSubscriber::subscribe(const std::string& channel) {
  if (channels_.insert(channel).second) kept_[channel];
  if (!ensure_connected()) return false;
  return confirmed_.count(channel) > 0 || confirm(channel);
}

void HiredisSubscriber::unsubscribe(const std::string& channel) {
  if (channels_.erase(channel) == 0) return;
  kept_.erase(channel);
  if (confirmed_.erase(channel) == 0 || !context_) return;
  const char* argv[] = {"UNSUBSCRIBE", channel.data()};
  const size_t lengths[] = {11, channel.size()};
  // The confirmation is read, and ignored, with the next messages.
  if (redisAppendCommandArgv(context_.get(), 2, argv, lengths) != REDIS_OK ||
      !flush(context_.get())) {
    drop();
  }
}

bool HiredisSubscriber::ensure_connected() {
  if (context_) return true;
  const timeval tv = to_timeval(timeout_);
  std::unique_ptr<redisContext, ContextDeleter> c(
      redisConnectWithTimeout(host_.c_str(), port_, tv));
  if (!c || c->err != 0) return false;
  if (redisSetTimeout(c.get(), tv) != REDIS_OK) return false;
  context_ = std::move(c);
  confirmed_.clear();
  const std::vector<std::string> held(channels_.begin(), channels_.end());
  for (const std::string& channel : held) {
    if (!confirm(channel)) return false;  // dropped the context
  }
  LOCKSIM_ASSERT(context_ && confirmed_ == channels_);
  return true;
}

bool HiredisSubscriber::confirm(const std::string& channel) {
  LOCKSIM_ASSERT(context_ != nullptr);
  const char* argv[] = {"SUBSCRIBE", channel.data()};
  const size_t lengths[] = {9, channel.size()};
  if (redisAppendCommandArgv(context_.get(), 2, argv, lengths) != REDIS_OK ||
      !flush(context_.get())) {
    drop();
    return false;
  }
  const TimePoint deadline = steady_now() + timeout_;
  while (true) {  // every round reads or ends: bounded by the deadline
    redisReply* reply = nullptr;
    if (!take_buffered(&reply)) return false;
    if (reply != nullptr) {
      std::string confirmed;
      handle(reply, &confirmed);
      freeReplyObject(reply);
      if (confirmed == channel) {
        confirmed_.insert(channel);
        return true;
      }
      continue;
    }
    const Duration left = deadline - steady_now();
    if (left <= Duration::zero()) {
      drop();  // no confirmation in time: the connection is no use
      return false;
    }
    if (!read_for(left)) return false;
  }
}

bool HiredisSubscriber::read_for(Duration timeout) {
  LOCKSIM_ASSERT(context_ != nullptr);
  pollfd p{context_->fd, POLLIN, 0};
  const int64_t ms = std::clamp<int64_t>((timeout.ns + 999'999) / 1'000'000, 0, INT_MAX);
  const int n = ::poll(&p, 1, static_cast<int>(ms));
  if (n == 0 || (n < 0 && errno == EINTR)) return true;  // nothing yet
  if (n < 0 || redisBufferRead(context_.get()) != REDIS_OK) {
    drop();  // EOF, a reset: the next wait or subscribe reconnects
    return false;
  }
  return true;
}

bool HiredisSubscriber::take_buffered(redisReply** reply) {
  LOCKSIM_ASSERT(context_ != nullptr);
  void* r = nullptr;
  if (redisReaderGetReply(context_->reader, &r) != REDIS_OK) {
    drop();
    return false;
  }
  *reply = static_cast<redisReply*>(r);
  return true;
}

void HiredisSubscriber::handle(const redisReply* reply, std::string* confirmed_channel) {
  // Pushed replies are ["message", channel, payload], ["subscribe",
  // channel, count] and ["unsubscribe", channel, count].
  if (reply->type != REDIS_REPLY_ARRAY || reply->elements != 3) return;
  const redisReply* kind = reply->element[0];
  const redisReply* channel = reply->element[1];
  if (!is_text(kind) || !is_text(channel)) return;
  const std::string what(kind->str, kind->len);
  const std::string name(channel->str, channel->len);
  if (what == "subscribe") {
    *confirmed_channel = name;
    return;
  }
  if (what != "message" || !is_text(reply->element[2])) return;
  const auto it = kept_.find(name);
  if (it == kept_.end()) return;  // unsubscribed since
  it->second.emplace_back(reply->element[2]->str, reply->element[2]->len);
  if (it->second.size() > kKeptMax) it->second.pop_front();
}

std::optional<std::string> HiredisSubscriber::wait_message(const std::string& channel,
                                                           Duration timeout) {
  LOCKSIM_ASSERT_MSG(timeout >= Duration::zero(), "a wait of negative length");
  LOCKSIM_ASSERT_MSG(channels_.count(channel) > 0, "a wait on a channel never subscribed");
  const TimePoint deadline = steady_now() + timeout;
  std::deque<std::string>& kept = kept_.at(channel);
  while (true) {  // every round takes, reads, sleeps or ends: bounded by the deadline
    redisReply* reply = nullptr;
    while (context_ && kept.empty() && take_buffered(&reply) && reply != nullptr) {
      std::string ignored;
      handle(reply, &ignored);
      freeReplyObject(reply);
    }
    if (!kept.empty()) {
      std::string message = std::move(kept.front());
      kept.pop_front();
      return message;
    }
    const Duration left = deadline - steady_now();
    if (left <= Duration::zero()) return std::nullopt;
    if (!context_ || confirmed_.count(channel) == 0) {
      if (!ensure_connected() || (confirmed_.count(channel) == 0 && !confirm(channel))) {
        std::this_thread::sleep_for(
            std::chrono::nanoseconds(std::min(left, Duration::seconds(1)).ns));
      }
      continue;
    }
    read_for(left);
  }
}

}  // namespace locksim::live
