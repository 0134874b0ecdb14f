// Command vectors kept for reuse, per thread: a Redis command's arguments
// (std::string) and a MySQL statement's parameters (SqlValue); and, given
// back by the results that hold them, a SELECT's columns and rows
// (SqlResult), a getChildren's names (ZkChildrenResult), a ZooKeeper
// apply's change events (TxnResult) and a follower's batch of the sessions
// its clients touched; below, a statement's text and a script's GET value.
//
// Why: a simulated run sends a command on every lock attempt, and each
// command's vector cost a heap allocation for itself and one for every
// argument longer than the 15 characters a std::string keeps inline (a
// token, a script, a DATETIME). A vector the server is done with comes back
// here, its strings keeping their room, and the next command of the same
// length takes it: commands of one length are mostly of one kind (a SET
// after a SET), so position by position the strings fit again.
//
// Nothing can depend on which vector a command gets: take() gives `n`
// elements and the caller assigns every one. Per thread, because a World and
// its fibers stay on one (a sweep's workers each have their own pools).
#pragma once

#include <array>
#include <cstddef>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "env/assert.h"

namespace locksim::argv_pool {

// Longer commands are not kept (the lock clients send at most 10 arguments).
constexpr size_t kMaxArgs = 12;
// Vectors kept per length: one per command in flight on this thread, a few
// dozen in a run of many clients; beyond it a vector is freed.
constexpr size_t kPerLength = 64;

namespace detail {
template <class T>
struct Pools {
  std::array<std::vector<std::vector<T>>, kMaxArgs + 1> free;
  Pools() {
    for (auto& kept : free) kept.reserve(kPerLength);  // give_back never grows them
  }
};
template <class T>
Pools<T>& this_threads_pools() {
  thread_local Pools<T> pools;
  return pools;
}
}  // namespace detail

// A vector of exactly `n` elements, with unspecified contents.
template <class T = std::string>
std::vector<T> take(size_t n) {
  if (n > 0 && n <= kMaxArgs) {
    auto& kept = detail::this_threads_pools<T>().free[n];
    if (!kept.empty()) {
      std::vector<T> argv = std::move(kept.back());
      kept.pop_back();
      LOCKSIM_ASSERT(argv.size() == n);
      return argv;
    }
  }
  return std::vector<T>(n);
}

// Makes `s` hold `value`, into the room a pooled string kept. Why clear +
// append, not assign: assign(view) is a general replace (it allows the view
// to alias the string) and cost 72 instructions an argument at -O2, 6 % of a
// set-nx-lua run's events; append is a length check and a copy (at -O3 gcc
// makes the two about equal). And why compare first: a pooled vector comes
// back from the command before, nearly always the same command of another
// client (SET lock:r token NX PX 10000), so most of its strings already
// hold their value, and a compare is cheaper than the copy it saves.
inline void overwrite(std::string& s, std::string_view value) {
  if (std::string_view(s) == value) return;
  s.clear();
  s.append(value.data(), value.size());
}
// The same for a bound SQL parameter (SqlValue), which is never NULL here.
inline void overwrite(std::optional<std::string>& v, std::string_view value) {
  if (!v) v.emplace();
  overwrite(*v, value);
}

// A vector from the pool holding `values`, in order, each copied once (the
// command builders algorithms/redis_argv.h and algorithms/sql_params.h).
template <class T>
std::vector<T> filled(std::initializer_list<std::string_view> values) {
  std::vector<T> out = take<T>(values.size());
  size_t i = 0;
  for (const std::string_view value : values) overwrite(out[i++], value);
  return out;
}

// Keeps `argv` for a later take() of its length (or frees it).
template <class T>
void give_back(std::vector<T>&& argv) {
  const size_t n = argv.size();
  if (n == 0 || n > kMaxArgs) return;
  auto& kept = detail::this_threads_pools<T>().free[n];
  if (kept.size() < kPerLength) kept.push_back(std::move(argv));
}

// A statement's text (a simulated MySQL request's SQL), or the value a
// script's GET reads (a token), in a string a past one left here, so that
// the same few texts over and over cost no allocation; give_back_text()
// keeps it for the next. Texts longer than kMaxTextBytes are not kept (the
// lock statements are under 200).
constexpr size_t kMaxTextBytes = 1024;

namespace detail {
inline std::vector<std::string>& this_threads_texts() {
  thread_local std::vector<std::string> texts = [] {
    std::vector<std::string> v;
    v.reserve(kPerLength);  // give_back_text never grows it
    return v;
  }();
  return texts;
}
}  // namespace detail

// A string's inline room: a text that fits costs nothing and is not kept,
// and a kept one never is that small (it would grow on the next long text).
inline size_t inline_text_bytes() {
  return std::string().capacity();
}

inline std::string take_text(std::string_view value) {
  auto& kept = detail::this_threads_texts();
  if (value.size() <= inline_text_bytes() || kept.empty()) return std::string(value);
  std::string text = std::move(kept.back());
  kept.pop_back();
  overwrite(text, value);
  return text;
}

inline void give_back_text(std::string&& text) {
  if (text.capacity() <= inline_text_bytes() || text.capacity() > kMaxTextBytes) return;
  auto& kept = detail::this_threads_texts();
  if (kept.size() < kPerLength) kept.push_back(std::move(text));
}

}  // namespace locksim::argv_pool
