#include "live/clock_control.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include "env/assert.h"

namespace locksim::live {

namespace {

int64_t real_wall_ns() {
  struct timespec ts {};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

}  // namespace

ClockControl::ClockControl(std::string path) : path_(std::move(path)) {
  const int fd = open(path_.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0 || ftruncate(fd, sizeof(ClockControlBlock)) != 0) {
    const std::string why = std::strerror(errno);
    if (fd >= 0) close(fd);
    throw std::runtime_error("clock shim: cannot create " + path_ + ": " + why);
  }
  void* page = mmap(nullptr, sizeof(ClockControlBlock), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (page == MAP_FAILED) throw std::runtime_error("clock shim: cannot map " + path_);
  block_ = static_cast<ClockControlBlock*>(page);
  const int64_t now = real_wall_ns();
  write(now, now, 0);
  __atomic_store_n(&block_->magic, kClockControlMagic, __ATOMIC_RELEASE);
}

ClockControl::~ClockControl() {
  if (block_ != nullptr) munmap(block_, sizeof(ClockControlBlock));
}

void ClockControl::write(int64_t real_ns, int64_t fake_ns, int64_t ppm) {
  const uint64_t seq = __atomic_load_n(&block_->seq, __ATOMIC_RELAXED);
  LOCKSIM_ASSERT(seq % 2 == 0);  // one writer, under mutex_ (or the constructor)
  __atomic_store_n(&block_->seq, seq + 1, __ATOMIC_RELAXED);
  __atomic_thread_fence(__ATOMIC_RELEASE);
  __atomic_store_n(&block_->anchor_real_ns, real_ns, __ATOMIC_RELAXED);
  __atomic_store_n(&block_->anchor_fake_ns, fake_ns, __ATOMIC_RELAXED);
  __atomic_store_n(&block_->rate_ppm, ppm, __ATOMIC_RELAXED);
  __atomic_store_n(&block_->seq, seq + 2, __ATOMIC_RELEASE);
}

void ClockControl::jump(Duration by) {
  const std::lock_guard<std::mutex> lock(mutex_);
  const int64_t real = real_wall_ns();
  write(real, fake_clock_ns(*block_, real) + by.ns, block_->rate_ppm);
}

void ClockControl::set_drift(int64_t ppm) {
  LOCKSIM_ASSERT(ppm > -1'000'000 && ppm < 1'000'000);
  const std::lock_guard<std::mutex> lock(mutex_);
  const int64_t real = real_wall_ns();
  write(real, fake_clock_ns(*block_, real), ppm);
}

int64_t ClockControl::fake_now_ns() const {
  return fake_clock_ns(*block_, real_wall_ns());
}

std::string clock_shim_library() {
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const std::filesystem::path beside = self.parent_path() / "liblocksim_clock_shim.so";
    if (std::filesystem::exists(beside)) return beside.string();
  }
#ifdef LOCKSIM_CLOCK_SHIM
  if (std::filesystem::exists(LOCKSIM_CLOCK_SHIM)) return LOCKSIM_CLOCK_SHIM;
#endif
  throw std::runtime_error(
      "clock shim: liblocksim_clock_shim.so not found beside the executable or in the build");
}

}  // namespace locksim::live
