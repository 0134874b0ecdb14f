#include "live/tcp_relay.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <deque>
#include <stdexcept>
#include <string>
#include <vector>

#include "env/assert.h"

namespace locksim::live {

namespace {

using Clock = std::chrono::steady_clock;

// Bytes one direction may hold before the relay stops reading it (TCP's own
// flow control then pushes back on the sender, as a full receive window
// would). Far above what a lock workload sends during any cut.
constexpr size_t kHeldBytesMax = 64u << 20;
constexpr size_t kReadChunkBytes = 64u << 10;
// The loop wakes at least this often, so a delayed chunk is never late by
// more (poll's timeout is in whole milliseconds anyway).
constexpr int kPollMaxMs = 100;

bool set_nonblocking(int fd) {
  const int flags = fcntl(fd, F_GETFL, 0);
  return flags >= 0 && fcntl(fd, F_SETFL, flags | O_NONBLOCK) == 0;
}

// Closes with RST rather than FIN: SO_LINGER with a zero timeout.
void close_with_reset(int fd) {
  if (fd < 0) return;
  const linger l{1, 0};
  (void)setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof(l));
  (void)close(fd);
}

sockaddr_in loopback(int port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return a;
}

struct Chunk {
  std::string bytes;
  Clock::time_point due;
};

// One direction of one relayed connection: read from `from`, written to `to`.
struct Direction {
  int from = -1;
  int to = -1;
  std::deque<Chunk> held;
  size_t written = 0;  // bytes of held.front() already written
  size_t held_bytes = 0;
  bool eof = false;      // `from` closed its side
  bool shut = false;     // and that half-close was passed on
  bool blocked = false;  // the last write would block: wait for POLLOUT
  // Nothing read is due before this (the connection's handshake: set_handshake).
  Clock::time_point not_before{};
};

struct Connection {
  int client = -1;
  int server = -1;
  Direction to_server;  // client -> server
  Direction to_client;  // server -> client
  bool dead = false;
};

}  // namespace

struct TcpRelay::Loop {
  int listen_fd = -1;
  int target_port = 0;
  std::vector<Connection> connections;
  bool cut_to_server = false;
  bool cut_to_client = false;
  bool refuse_while_cut = false;  // TcpRelay::Cut::kRefuse
  std::chrono::milliseconds delay_to_server{0};
  std::chrono::milliseconds delay_to_client{0};
  std::chrono::milliseconds handshake{0};
  int resets_done = 0;

  static void kill(Connection& c) {
    close_with_reset(c.client);
    close_with_reset(c.server);
    c.client = c.server = -1;
    c.dead = true;
  }

  // Writes what is due in `d`, unless it is cut. False on a socket error.
  static bool flush(Direction& d, bool cut, Clock::time_point now) {
    d.blocked = false;
    while (!cut && !d.held.empty() && d.held.front().due <= now) {
      const std::string& bytes = d.held.front().bytes;
      const ssize_t n =
          send(d.to, bytes.data() + d.written, bytes.size() - d.written, MSG_NOSIGNAL);
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        d.blocked = true;
        return true;
      }
      if (n < 0) return false;
      d.written += static_cast<size_t>(n);
      if (d.written == bytes.size()) {
        d.held_bytes -= bytes.size();
        d.held.pop_front();
        d.written = 0;
      }
    }
    if (!cut && d.held.empty() && d.eof && !d.shut) {
      (void)shutdown(d.to, SHUT_WR);
      d.shut = true;
    }
    return true;
  }

  // Reads what `d.from` has, to be written `delay` later. False on a socket error.
  static bool fill(Direction& d, std::chrono::milliseconds delay, Clock::time_point now) {
    char buffer[kReadChunkBytes];
    const ssize_t n = recv(d.from, buffer, sizeof(buffer), 0);
    if (n < 0) return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
    if (n == 0) {
      d.eof = true;
      return true;
    }
    // FIFO even when the delay shrinks: never due before the chunk ahead.
    // A chunk sent before the handshake would have ended leaves when it ends.
    Clock::time_point due = std::max(now, d.not_before) + delay;
    if (!d.held.empty()) due = std::max(due, d.held.back().due);
    d.held.push_back({std::string(buffer, static_cast<size_t>(n)), due});
    d.held_bytes += static_cast<size_t>(n);
    return true;
  }

  // Writes what is due everywhere; closes what is done or broken.
  void flush_all(Clock::time_point now) {
    for (Connection& c : connections) {
      if (!flush(c.to_server, cut_to_server, now) || !flush(c.to_client, cut_to_client, now)) {
        kill(c);
      } else if (c.to_server.shut && c.to_client.shut) {
        close(c.client);
        close(c.server);
        c.client = c.server = -1;
        c.dead = true;
      }
    }
    std::erase_if(connections, [](const Connection& c) { return c.dead; });
  }

  // Two entries per connection, client first, after the relay's own two.
  void add_poll_fds(std::vector<pollfd>& fds) const {
    auto events = [](const Direction& in, const Direction& out) {
      short e = 0;
      if (!in.eof && in.held_bytes < kHeldBytesMax) e |= POLLIN;
      if (out.blocked) e |= POLLOUT;
      return e;
    };
    for (const Connection& c : connections) {
      fds.push_back({c.client, events(c.to_server, c.to_client), 0});
      fds.push_back({c.server, events(c.to_client, c.to_server), 0});
    }
  }

  // Reads every readable side (`fds` as add_poll_fds laid them out).
  void read_all(const std::vector<pollfd>& fds, Clock::time_point now) {
    LOCKSIM_ASSERT(fds.size() == 2 + 2 * connections.size());
    constexpr short kReadable = POLLIN | POLLHUP | POLLERR;
    for (size_t i = 0; i < connections.size(); ++i) {
      Connection& c = connections[i];
      const bool ok =
          (!(fds[2 + 2 * i].revents & kReadable) || fill(c.to_server, delay_to_server, now)) &&
          (!(fds[3 + 2 * i].revents & kReadable) || fill(c.to_client, delay_to_client, now));
      if (!ok) kill(c);
    }
  }

  // Accepts what is waiting, each with its own connection to the target.
  // Returns how many were relayed.
  int accept_all() {
    int relayed = 0;
    for (;;) {
      const int client = accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC);
      if (client < 0) return relayed;
      if (refuse_while_cut && (cut_to_server || cut_to_client)) {
        close_with_reset(client);  // a dead host: nobody answers
        continue;
      }
      const int server = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
      const sockaddr_in target = loopback(target_port);
      // A blocking connect on loopback: refused or done at once.
      if (server < 0 ||
          connect(server, reinterpret_cast<const sockaddr*>(&target), sizeof(target)) != 0 ||
          !set_nonblocking(client) || !set_nonblocking(server)) {
        close_with_reset(client);  // the server is down: as its RST would
        if (server >= 0) close(server);
        continue;
      }
      const int one = 1;
      (void)setsockopt(client, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
      (void)setsockopt(server, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
      Connection c;
      c.to_server.not_before = Clock::now() + handshake;
      c.client = c.to_server.from = c.to_client.to = client;
      c.server = c.to_client.from = c.to_server.to = server;
      connections.push_back(std::move(c));
      ++relayed;
    }
  }

  // The poll timeout: until the first due chunk of a direction that may write.
  int timeout_ms(Clock::time_point now) const {
    Clock::duration wait = std::chrono::milliseconds(kPollMaxMs);
    for (const Connection& c : connections) {
      const Direction* dirs[] = {&c.to_server, &c.to_client};
      const bool cuts[] = {cut_to_server, cut_to_client};
      for (int i = 0; i < 2; ++i) {
        if (cuts[i] || dirs[i]->held.empty() || dirs[i]->blocked) continue;
        wait = std::min(wait, std::max(Clock::duration::zero(), dirs[i]->held.front().due - now));
      }
    }
    return static_cast<int>(std::chrono::ceil<std::chrono::milliseconds>(wait).count());
  }
};

TcpRelay::TcpRelay(int target_port, Cut cut_mode) : target_port_(target_port), cut_mode_(cut_mode) {
  LOCKSIM_ASSERT(target_port > 0 && target_port < 65536);
  if (pipe2(wake_fds_, O_NONBLOCK | O_CLOEXEC) != 0) {
    throw std::runtime_error(std::string("tcp relay: pipe: ") + std::strerror(errno));
  }
  listen_fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  sockaddr_in any = loopback(0);
  socklen_t len = sizeof(any);
  if (listen_fd_ < 0 || bind(listen_fd_, reinterpret_cast<sockaddr*>(&any), sizeof(any)) != 0 ||
      listen(listen_fd_, 128) != 0 ||
      getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&any), &len) != 0) {
    const std::string why = std::strerror(errno);
    if (listen_fd_ >= 0) close(listen_fd_);
    close(wake_fds_[0]);
    close(wake_fds_[1]);
    throw std::runtime_error("tcp relay: cannot listen on loopback: " + why);
  }
  port_ = ntohs(any.sin_port);
  LOCKSIM_ASSERT(port_ > 0);
  thread_ = std::thread([this] { run(); });
}

TcpRelay::~TcpRelay() {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake();
  thread_.join();
  close(listen_fd_);
  close(wake_fds_[0]);
  close(wake_fds_[1]);
}

void TcpRelay::wake() const {
  const char byte = 1;
  (void)!write(wake_fds_[1], &byte, 1);  // a full pipe already wakes the loop
}

void TcpRelay::cut(bool toward_server, bool toward_client) {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    cut_to_server_ = toward_server;
    cut_to_client_ = toward_client;
    // A refusing relay's cut kills what is open, as a host's death would.
    if (cut_mode_ == Cut::kRefuse && (toward_server || toward_client)) ++resets_requested_;
  }
  wake();
}

void TcpRelay::set_delay(std::chrono::milliseconds extra) {
  LOCKSIM_ASSERT(extra.count() >= 0);
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    delay_ = extra;
  }
  wake();
}

void TcpRelay::set_lag(std::chrono::milliseconds toward_server,
                       std::chrono::milliseconds toward_client) {
  LOCKSIM_ASSERT(toward_server.count() >= 0 && toward_client.count() >= 0);
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    lag_to_server_ = toward_server;
    lag_to_client_ = toward_client;
  }
  wake();
}

void TcpRelay::set_handshake(std::chrono::milliseconds round_trip) {
  LOCKSIM_ASSERT(round_trip.count() >= 0);
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    handshake_ = round_trip;
  }
  wake();
}

void TcpRelay::reset() {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    ++resets_requested_;
  }
  wake();
}

void TcpRelay::run() {
  Loop loop;
  loop.listen_fd = listen_fd_;
  loop.target_port = target_port_;
  loop.refuse_while_cut = cut_mode_ == Cut::kRefuse;
  std::vector<pollfd> fds;
  for (;;) {
    // Settings first, after the poll that a change wakes: bytes read below
    // were sent after any change made before they were (cut() then send()
    // on one thread holds them).
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      if (stopping_) break;
      loop.cut_to_server = cut_to_server_;
      loop.cut_to_client = cut_to_client_;
      loop.delay_to_server = delay_ + lag_to_server_;
      loop.delay_to_client = delay_ + lag_to_client_;
      loop.handshake = handshake_;
      if (loop.resets_done != resets_requested_) {
        for (Connection& c : loop.connections) Loop::kill(c);
        loop.resets_done = resets_requested_;
        loop.flush_all(Clock::now());  // drops the killed connections
        fds.clear();                   // their fds are no longer valid
      }
    }
    if (!fds.empty()) {
      loop.read_all(fds, Clock::now());
      if (fds[1].revents & POLLIN) accepted_.fetch_add(loop.accept_all());
    }
    loop.flush_all(Clock::now());
    // Poll: the wake pipe, the listener, then two fds per connection.
    fds.clear();
    fds.push_back({wake_fds_[0], POLLIN, 0});
    fds.push_back({listen_fd_, POLLIN, 0});
    loop.add_poll_fds(fds);
    if (poll(fds.data(), fds.size(), loop.timeout_ms(Clock::now())) < 0 && errno != EINTR) {
      break;  // cannot happen with valid fds; the destructor still joins
    }
    if (fds[0].revents & POLLIN) {
      char drain[64];
      while (read(wake_fds_[0], drain, sizeof(drain)) > 0) {
      }
    }
  }
  for (Connection& c : loop.connections) Loop::kill(c);
}

}  // namespace locksim::live
