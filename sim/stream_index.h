// The Network's lookup of a stream by (from node, to node, connection).
//
// Why not std::unordered_map: every message on an implicit peer link (each
// ZooKeeper message, Redis replication) looks its stream up, and the
// standard map's bucket is a 64-bit division by a prime plus a chase through
// a node: about 110 instructions a message. Here a lookup is a multiply, a
// mask and, nearly always, one compare. Open addressing with linear probing
// in a power-of-two table kept at most half full.
//
// Determinism: entries are never removed (a stream lives as long as its
// Network) and the table is never iterated, so the node addresses in the
// key decide only where an entry sits, never an order anyone sees.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "env/assert.h"

namespace locksim::sim {

class Node;
class Stream;

class StreamIndex {
 public:
  struct Key {
    const Node* from;
    const Node* to;
    uint64_t connection;
    bool operator==(const Key&) const = default;
  };

  // The stream kept for `k`, or null.
  Stream* find(const Key& k) const {
    if (slots_.empty()) return nullptr;
    // Ends: the table always has a free slot (at most half full).
    for (size_t i = home(k);; i = (i + 1) & (slots_.size() - 1)) {
      const Slot& s = slots_[i];
      if (s.stream == nullptr) return nullptr;
      if (s.key == k) return s.stream;
    }
  }

  // Keeps `stream` for `k`. Precondition: `k` is absent (asserted).
  void insert(const Key& k, Stream* stream) {
    LOCKSIM_ASSERT(stream != nullptr);
    LOCKSIM_ASSERT_MSG(find(k) == nullptr, "a stream indexed twice");
    if (2 * (size_ + 1) > slots_.size()) grow();
    place(k, stream);
    ++size_;
    // Pair of the insert: what went in is found.
    LOCKSIM_ASSERT(find(k) == stream);
  }

  size_t size() const { return size_; }

 private:
  struct Slot {
    Key key{nullptr, nullptr, 0};
    Stream* stream = nullptr;  // null: a free slot
  };

  // Fibonacci hashing: the multiply spreads the (aligned, so low-bit-poor)
  // addresses into the high bits, which the shift keeps.
  size_t home(const Key& k) const {
    const uint64_t h = (reinterpret_cast<uintptr_t>(k.from) * 0x9e3779b97f4a7c15ULL) ^
                       (reinterpret_cast<uintptr_t>(k.to) * 0xbf58476d1ce4e5b9ULL) ^
                       (k.connection * 0x94d049bb133111ebULL);
    return static_cast<size_t>((h ^ (h >> 32)) & (slots_.size() - 1));
  }

  void place(const Key& k, Stream* stream) {
    size_t i = home(k);
    while (slots_[i].stream != nullptr) i = (i + 1) & (slots_.size() - 1);
    slots_[i] = Slot{k, stream};
  }

  void grow() {
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(old.empty() ? 16 : old.size() * 2, Slot{});
    for (const Slot& s : old) {
      if (s.stream != nullptr) place(s.key, s.stream);
    }
  }

  std::vector<Slot> slots_;  // a power of two in size, or empty
  size_t size_ = 0;
};

}  // namespace locksim::sim
