#include "live/group_connection.h"

#include "env/assert.h"

namespace locksim::live {

GroupConnection::GroupConnection(const SentinelView& view, size_t group, MemberPorts ports,
                                 Duration timeout)
    : view_(view), group_(group), ports_(std::move(ports)), timeout_(timeout) {
  LOCKSIM_ASSERT(group_ < view_.groups());
  LOCKSIM_ASSERT_MSG(ports_.size() == view_.group(group_).members.size(),
                     "a client has an address for every member of the group");
}

Reply GroupConnection::command(std::vector<std::string> argv) {
  const std::string target = view_.published_primary(group_);
  if (target != target_) {
    // A failover reached the clients: the old connection goes, as the
    // simulated client drops a connection to a node that is no longer
    // published (its blocked WAITs and offsets die with it on the server).
    conn_.reset();
    target_ = target;
    conn_ = std::make_unique<HiredisConnection>("127.0.0.1", ports_.at(target_), timeout_,
                                                server_name());
  }
  LOCKSIM_ASSERT(conn_ != nullptr);
  return conn_->command(std::move(argv));
}

GroupSubscriber::GroupSubscriber(const SentinelView& view, size_t group, MemberPorts ports,
                                 Duration timeout)
    : view_(view), group_(group), ports_(std::move(ports)), timeout_(timeout) {
  LOCKSIM_ASSERT(group_ < view_.groups());
  LOCKSIM_ASSERT(ports_.size() == view_.group(group_).members.size());
}

HiredisSubscriber& GroupSubscriber::follow() {
  const std::string target = view_.published_primary(group_);
  if (target != target_ || sub_ == nullptr) {
    sub_ = std::make_unique<HiredisSubscriber>("127.0.0.1", ports_.at(target), timeout_,
                                               server_name());
    target_ = target;
    // Subscriptions are per connection: held channels move with it. A
    // failure here shows at the next wait, which reconnects and tries again.
    for (const std::string& channel : channels_) (void)sub_->subscribe(channel);
  }
  return *sub_;
}

bool GroupSubscriber::subscribe(const std::string& channel) {
  HiredisSubscriber& sub = follow();
  channels_.insert(channel);
  return sub.subscribe(channel);
}

void GroupSubscriber::unsubscribe(const std::string& channel) {
  channels_.erase(channel);
  follow().unsubscribe(channel);
}

std::optional<std::string> GroupSubscriber::wait_message(const std::string& channel,
                                                         Duration timeout) {
  return follow().wait_message(channel, timeout);
}

}  // namespace locksim::live
