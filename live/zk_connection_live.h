// ZkConnection through the ZooKeeper C client (libzookeeper_mt), for live
// runs and the differential test.
//
// The C client runs its own I/O and completion threads: it pings, detects a
// dead server, moves to the next one and re-registers watches — the
// behaviour the simulated client library (sim/zookeeper/zk_client.h)
// copies. This class turns its callbacks into the seam's one ordered event
// queue, and maps ZINVALIDSTATE on an expired handle to SESSIONEXPIRED, as
// the seam promises. Live code: real time and real threads.
#pragma once

#include <condition_variable>
#include <deque>
#include <mutex>
#include <string>

#include "env/zk_connection.h"

typedef struct _zhandle zhandle_t;

namespace locksim::live {

class ZkConnectionLive : public ZkConnection {
 public:
  // `hosts`: "127.0.0.1:port,..."; `session_timeout` is what the client asks
  // for. Does not connect until first used.
  ZkConnectionLive(std::string hosts, Duration session_timeout);
  ~ZkConnectionLive() override;
  ZkConnectionLive(const ZkConnectionLive&) = delete;
  ZkConnectionLive& operator=(const ZkConnectionLive&) = delete;

  ZkError connect() override;
  ZkError new_session() override;
  void close() override;
  ZkCreateResult create(const std::string& path, const std::string& data,
                        ZkCreateFlags flags) override;
  ZkError remove(const std::string& path, int32_t version) override;
  ZkStatResult exists(const std::string& path, bool watch) override;
  ZkChildrenResult get_children(const std::string& path, bool watch) override;
  ZkDataResult get_data(const std::string& path, bool watch) override;
  ZkStatResult set_data(const std::string& path, const std::string& data, int32_t version) override;
  ZkError sync(const std::string& path) override;
  std::optional<ZkEvent> next_event(Duration timeout) override;
  ZkSessionState state() const override;
  int64_t session_id() const override;
  Duration negotiated_timeout() const override;
  std::string server_name() const override { return hosts_; }

  // Called from the C client's threads.
  void on_session_event(int state);
  void on_watch_event(int type, const char* path);

 private:
  void start();
  void stop();
  ZkError map(int rc);
  zhandle_t* handle();

  std::string hosts_;
  Duration requested_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  zhandle_t* zh_ = nullptr;
  ZkSessionState state_ = ZkSessionState::kNotStarted;
  std::deque<ZkEvent> events_;
};

}  // namespace locksim::live
