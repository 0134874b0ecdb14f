// sim::Callback, the type of every event, message and timer: a callable is
// run, moved and destroyed exactly as std::function would, whether its
// captures live inline or in a pooled box (a block from the thread's free
// list, sim/thread_blocks.h). A box given back and taken again must hold
// only the new callable's captures.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "sim/callback.h"

namespace locksim::sim {
namespace {

// A capture of `Bytes` bytes that counts its live copies through `alive`.
template <size_t Bytes>
struct Probe {
  std::shared_ptr<int> alive;  // use_count - 1: the live probes
  std::array<char, Bytes> pad{};
  std::string* out = nullptr;
  void operator()() const { *out += std::string(pad.data(), 1); }
};

template <size_t Bytes>
void runs_moves_and_destroys_once() {
  auto alive = std::make_shared<int>(0);
  std::string out;
  {
    Probe<Bytes> p{alive, {}, &out};
    p.pad[0] = 'x';
    Callback a(std::move(p));
    EXPECT_TRUE(static_cast<bool>(a));
    Callback b(std::move(a));
    EXPECT_FALSE(static_cast<bool>(a));  // NOLINT: moved from on purpose
    EXPECT_EQ(alive.use_count(), 2);     // the probe in b; none left in a
    b();
    b();
    EXPECT_EQ(out, "xx");
    Callback c;
    c = std::move(b);
    EXPECT_TRUE(b == nullptr);  // NOLINT: moved from on purpose
    EXPECT_EQ(alive.use_count(), 2);
    c = nullptr;
    EXPECT_EQ(alive.use_count(), 1);  // destroyed once, when emptied
  }
  EXPECT_EQ(alive.use_count(), 1);
}

TEST(Callback, AnInlineCallableRunsMovesAndIsDestroyedOnce) {
  static_assert(sizeof(Probe<8>) <= Callback::kInlineBytes);
  runs_moves_and_destroys_once<8>();
}

TEST(Callback, ABoxedCallableRunsMovesAndIsDestroyedOnce) {
  static_assert(sizeof(Probe<100>) > Callback::kInlineBytes);
  runs_moves_and_destroys_once<100>();
}

TEST(Callback, ABoxTakenAgainHoldsOnlyTheNewCaptures) {
  // The second callable most likely gets the first's block (the free list is
  // last in, first out): its captures must be its own, not the old bytes.
  std::string out;
  for (char c : std::string("abc")) {
    Probe<100> p{std::make_shared<int>(0), {}, &out};
    p.pad[0] = c;
    Callback cb(std::move(p));
    cb();
  }
  EXPECT_EQ(out, "abc");
}

TEST(CallbackDeathTest, CallingAnEmptyCallbackIsABug) {
  Callback empty;
  EXPECT_DEATH(empty(), "an empty Callback called");
}

}  // namespace
}  // namespace locksim::sim
