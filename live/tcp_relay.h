// A TCP relay on loopback in front of one server port: the network faults of
// a live run (partition, one-way partition, delay) applied to real bytes.
//
// Why a relay and not the kernel: the kernel's netem qdisc is refused on the
// machines locksim runs on, and iptables would need root and would drop
// packets (TCP then retransmits on its own schedule). The simulated network
// holds what a cut link carries and delivers it in order on heal
// (sim/network.h); a relay that reads every byte as it arrives and decides
// when to write it on can do exactly that on real sockets.
//
// One relay serves one link: a client (or a replica) connects to port()
// instead of the server's, and the relay opens a connection to the target
// for each connection it accepts. Each direction of each connection is a
// FIFO of chunks, each with the earliest instant it may be written on:
//   - cut(toward_server, toward_client): a cut direction writes nothing; its
//     bytes are kept (the relay still reads them: the sender's kernel would
//     keep retransmitting, and what it sent is on its way) and go on, in
//     order, when the direction is healed;
//   - set_delay(d): each chunk read from now on waits d before it is written,
//     on top of the link's standing lag (set_lag, one way each: a
//     replication link's lag is on the master's side only);
//   - set_handshake(h): a connection accepted from now on passes nothing
//     toward the server until h after its accept (then its lag on top): the
//     SYN / SYN-ACK round trip a link with a standing latency takes before
//     a client can send, which the kernel's own handshake with the relay
//     skips (sim/rpc.h dial sleeps it);
//   - reset(): every connection is closed with RST on both sides (what a
//     cut past TCP's retransmission limit ends in), and the held bytes die.
// A side that closes (EOF) is passed on as a half-close once its bytes are
// written; an error on either side resets both.
//
// A relay made with Cut::kRefuse treats a cut as a dead host rather than a
// silent one: cutting either direction resets every open connection, and a
// connection accepted while cut is reset at once. Sentinel's links use it,
// because the simulated monitor sees a partitioned member as unreachable at
// once (sim/replication.h), while real Sentinel, on a link that merely holds
// its pings, would keep listing the member as healthy for down_after.
//
// Threads: one thread per relay runs the loop; every public function may be
// called from any thread and takes effect within a millisecond. Real time:
// this is live code (the simulation never uses it).
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <thread>

namespace locksim::live {

class TcpRelay {
 public:
  enum class Cut { kHold, kRefuse };  // what a cut does: see the top

  // Listens on a free loopback port and relays each accepted connection to
  // 127.0.0.1:`target_port`. Throws std::runtime_error (socket errors).
  explicit TcpRelay(int target_port, Cut cut_mode = Cut::kHold);
  // Stops the loop and closes every socket (held bytes are dropped).
  ~TcpRelay();
  TcpRelay(const TcpRelay&) = delete;
  TcpRelay& operator=(const TcpRelay&) = delete;

  int port() const { return port_; }
  int target_port() const { return target_port_; }

  // Holds the directions set to true, releases the ones set to false.
  void cut(bool toward_server, bool toward_client);
  void heal() { cut(false, false); }
  // Extra latency for every chunk read from now on (zero: none), both ways,
  // on top of the lag.
  void set_delay(std::chrono::milliseconds extra);
  // A standing latency of the link, toward the server and toward the client
  // (a simulated replication lag), which a delay fault adds to.
  void set_lag(std::chrono::milliseconds toward_server, std::chrono::milliseconds toward_client);
  // The handshake time of connections accepted from now on (zero: none).
  void set_handshake(std::chrono::milliseconds round_trip);
  // Closes every open connection with RST on both sides. New connections
  // are accepted as before.
  void reset();

  // Connections accepted so far (for tests and notes).
  int accepted() const { return accepted_.load(); }

 private:
  struct Loop;
  void run();
  void wake() const;

  const int target_port_;
  const Cut cut_mode_;
  int port_ = 0;
  int listen_fd_ = -1;
  int wake_fds_[2] = {-1, -1};  // a self-pipe: settings changed, or stop
  std::atomic<int> accepted_{0};

  std::mutex mutex_;  // guards the settings below, read by the loop
  bool cut_to_server_ = false;
  bool cut_to_client_ = false;
  std::chrono::milliseconds delay_{0};
  std::chrono::milliseconds lag_to_server_{0};
  std::chrono::milliseconds lag_to_client_{0};
  std::chrono::milliseconds handshake_{0};
  int resets_requested_ = 0;
  bool stopping_ = false;

  std::thread thread_;  // last: started once everything above exists
};

}  // namespace locksim::live
