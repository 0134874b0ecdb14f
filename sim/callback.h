// A move-only `void()` callable that keeps small captures inline: the type of
// every event, message and timer on the simulation's hot path.
//
// Why not std::function: libstdc++ keeps a callable inline only if it is
// trivially copyable and at most 16 bytes, so nearly every event of a run (a
// lambda holding `this`, a shared_ptr and a deadline) cost a malloc and a
// free. Here anything up to kInlineBytes whose move cannot throw lives in
// the object; only larger captures (a reply carrying its payload) go to a
// block of their size from the thread's free list (sim/thread_blocks.h), so
// even they cost no malloc in a run's steady state. Behaviour is
// std::function's: calling an empty Callback is a broken invariant
// (asserted), never a silent no-op.
#pragma once

#include <cstddef>
#include <new>
#include <type_traits>
#include <utility>

#include "env/assert.h"
#include "sim/thread_blocks.h"

namespace locksim::sim {

class Callback {
 public:
  // Room for the usual capture: a few pointers, a deadline and a
  // std::function or shared_ptr (which are 32 and 16 bytes).
  static constexpr size_t kInlineBytes = 56;

  Callback() noexcept = default;
  Callback(std::nullptr_t) noexcept {}  // NOLINT: as std::function
  template <
      class F, class D = std::decay_t<F>,
      class = std::enable_if_t<!std::is_same_v<D, Callback> && std::is_invocable_r_v<void, D&>>>
  Callback(F&& f) {  // NOLINT: implicit, as std::function
    if constexpr (kInline<D>) {
      ::new (static_cast<void*>(buf_)) D(std::forward<F>(f));
      ops_ = &kInlineOps<D>;
    } else {
      *reinterpret_cast<D**>(buf_) = new_in_block<D>(std::forward<F>(f));
      ops_ = &kBoxedOps<D>;
    }
  }
  Callback(Callback&& o) noexcept { take(o); }
  Callback& operator=(Callback&& o) noexcept {
    if (this != &o) {
      reset();
      take(o);
    }
    return *this;
  }
  Callback& operator=(std::nullptr_t) noexcept {
    reset();
    return *this;
  }
  Callback(const Callback&) = delete;
  Callback& operator=(const Callback&) = delete;
  ~Callback() { reset(); }

  explicit operator bool() const noexcept { return ops_ != nullptr; }
  friend bool operator==(const Callback& c, std::nullptr_t) noexcept { return c.ops_ == nullptr; }

  void operator()() {
    LOCKSIM_ASSERT_MSG(ops_ != nullptr, "an empty Callback called");
    ops_->invoke(buf_);
  }

 private:
  struct Ops {
    void (*invoke)(void* buf);
    void (*move_to)(void* from, void* to) noexcept;  // leaves `from` destroyed
    void (*destroy)(void* buf) noexcept;
  };

  template <class D>
  static constexpr bool kInline =
      sizeof(D) <= kInlineBytes &&
      alignof(D) <= alignof(std::max_align_t) && std::is_nothrow_move_constructible_v<D>;

  template <class D>
  static constexpr Ops kInlineOps{[](void* b) { (*std::launder(static_cast<D*>(b)))(); },
                                  [](void* from, void* to) noexcept {
                                    D* f = std::launder(static_cast<D*>(from));
                                    ::new (to) D(std::move(*f));
                                    f->~D();
                                  },
                                  [](void* b) noexcept { std::launder(static_cast<D*>(b))->~D(); }};
  // A boxed callable: its block joins the free list of whichever thread
  // destroys it (sim/thread_blocks.h).
  template <class D>
  static constexpr Ops kBoxedOps{
      [](void* b) { (**static_cast<D**>(b))(); },
      [](void* from, void* to) noexcept { *static_cast<D**>(to) = *static_cast<D**>(from); },
      [](void* b) noexcept { delete_in_block(*static_cast<D**>(b)); }};

  void take(Callback& o) noexcept {
    ops_ = std::exchange(o.ops_, nullptr);
    if (ops_ != nullptr) ops_->move_to(o.buf_, buf_);
  }
  void reset() noexcept {
    if (ops_ != nullptr) std::exchange(ops_, nullptr)->destroy(buf_);
  }

  alignas(std::max_align_t) unsigned char buf_[kInlineBytes];
  const Ops* ops_ = nullptr;
};

}  // namespace locksim::sim
