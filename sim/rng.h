// The seeded generator family: xoshiro256** seeded through splitmix64.
//
// Every component (each client, each server, the network, the nemesis) gets
// its own stream split off the run's root seed by name, so adding a draw in
// one component never shifts the numbers another one sees. That keeps
// counterexamples stable while the code around them changes.
#pragma once

#include <cstdint>
#include <string_view>

#include "env/random.h"
#include "env/time.h"

namespace locksim::sim {

// splitmix64: one step. Used to seed and to derive child seeds.
inline uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

class Rng {
 public:
  explicit Rng(uint64_t seed) {
    uint64_t sm = seed;
    for (auto& word : s_) word = splitmix64(sm);
  }

  // xoshiro256** (Blackman & Vigna, 2018).
  uint64_t next() {
    const uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }

  // A child stream for the named component. Advances this stream by one word,
  // so split children in a fixed order (at construction), never on demand.
  Rng split(std::string_view component) {
    uint64_t h = 0xcbf29ce484222325ULL;  // FNV-1a of the name, mixed with a fresh word
    for (unsigned char c : component) h = (h ^ c) * 0x100000001b3ULL;
    return Rng(next() ^ h);
  }

  uint64_t below(uint64_t n) {
    return uniform_below([this] { return next(); }, n);
  }
  int64_t between(int64_t lo, int64_t hi) {
    return uniform_between([this] { return next(); }, lo, hi);
  }
  // True with probability p (0 <= p <= 1).
  bool chance(double p) { return unit_double(next()) < p; }
  Duration uniform_duration(Duration lo, Duration hi) { return Duration{between(lo.ns, hi.ns)}; }
  Duration exponential(Duration mean) {
    return Duration{static_cast<int64_t>(exponential_from(next(), static_cast<double>(mean.ns)))};
  }

 private:
  static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  uint64_t s_[4];
};

}  // namespace locksim::sim
