// An LD_PRELOAD library that moves a process's wall clock as locksim says:
// clock_gettime(CLOCK_REALTIME[_COARSE]), gettimeofday and time read the
// fake clock of the control block in the file $LOCKSIM_CLOCK_FILE
// (clock_control_block.h); every other clock (CLOCK_MONOTONIC, CLOCK_BOOTTIME,
// the CPU clocks) is the real one.
//
// Why our own and not libfaketime: Debian's libfaketime hangs Debian's
// redis-server at start-up. This shim does nothing at load but resolve the
// real functions and map one page; it takes no lock, allocates nothing and
// calls nothing that reads a clock, so it cannot recurse or deadlock. Without
// the variable, or with a file it cannot map, it passes every call through.
//
// Which clocks a server reads (docs/how-to/live-mode.md): redis-server's key
// expiry reads the wall clock (mstime(), gettimeofday), so a jump or a drift
// here moves when its keys expire. The monotonic clock is left alone: a
// process that times with it (ZooKeeper's session expiry) is not moved.
#include <dlfcn.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <cstdlib>

#include "live/clock_shim/clock_control_block.h"

namespace {

using ClockGettime = int (*)(clockid_t, struct timespec*);
using Gettimeofday = int (*)(struct timeval*, void*);

ClockGettime real_clock_gettime = nullptr;
Gettimeofday real_gettimeofday = nullptr;
const locksim::live::ClockControlBlock* control = nullptr;

__attribute__((constructor)) void locksim_clock_shim_init() {
  real_clock_gettime = reinterpret_cast<ClockGettime>(dlsym(RTLD_NEXT, "clock_gettime"));
  real_gettimeofday = reinterpret_cast<Gettimeofday>(dlsym(RTLD_NEXT, "gettimeofday"));
  const char* path = std::getenv(locksim::live::kClockFileEnv);
  if (path == nullptr) return;
  const int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  void* page =
      mmap(nullptr, sizeof(locksim::live::ClockControlBlock), PROT_READ, MAP_SHARED, fd, 0);
  close(fd);
  if (page == MAP_FAILED) return;
  control = static_cast<const locksim::live::ClockControlBlock*>(page);
}

bool faked(clockid_t id) {
  return id == CLOCK_REALTIME || id == CLOCK_REALTIME_COARSE;
}

int64_t real_realtime_ns() {
  struct timespec ts {};
  real_clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// The fake wall clock now, read under the seqlock.
int64_t fake_now_ns() {
  const int64_t real = real_realtime_ns();
  if (control == nullptr || control->magic != locksim::live::kClockControlMagic) return real;
  // A writer holds the odd sequence for a few stores: a retry or two at most.
  for (;;) {
    const uint64_t before = __atomic_load_n(&control->seq, __ATOMIC_ACQUIRE);
    if (before % 2 != 0) continue;
    locksim::live::ClockControlBlock copy;
    copy.anchor_real_ns = __atomic_load_n(&control->anchor_real_ns, __ATOMIC_RELAXED);
    copy.anchor_fake_ns = __atomic_load_n(&control->anchor_fake_ns, __ATOMIC_RELAXED);
    copy.rate_ppm = __atomic_load_n(&control->rate_ppm, __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    if (__atomic_load_n(&control->seq, __ATOMIC_RELAXED) == before) {
      return locksim::live::fake_clock_ns(copy, real);
    }
  }
}

}  // namespace

extern "C" int clock_gettime(clockid_t id, struct timespec* ts) {
  if (real_clock_gettime == nullptr) locksim_clock_shim_init();
  if (!faked(id)) return real_clock_gettime(id, ts);
  const int64_t ns = fake_now_ns();
  ts->tv_sec = static_cast<time_t>(ns / 1'000'000'000);
  ts->tv_nsec = static_cast<long>(ns % 1'000'000'000);
  return 0;
}

extern "C" int gettimeofday(struct timeval* tv, void* tz) {
  if (real_gettimeofday == nullptr) locksim_clock_shim_init();
  const int64_t ns = fake_now_ns();
  tv->tv_sec = static_cast<time_t>(ns / 1'000'000'000);
  tv->tv_usec = static_cast<suseconds_t>((ns % 1'000'000'000) / 1000);
  if (tz != nullptr) return real_gettimeofday(nullptr, tz);
  return 0;
}

extern "C" time_t time(time_t* out) {
  if (real_clock_gettime == nullptr) locksim_clock_shim_init();
  const time_t t = static_cast<time_t>(fake_now_ns() / 1'000'000'000);
  if (out != nullptr) *out = t;
  return t;
}
