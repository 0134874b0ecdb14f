#include "sim/redis/sha1.h"

#include "env/assert.h"

namespace locksim::sim::redis {
namespace {

uint32_t rotl32(uint32_t x, int k) {
  return (x << k) | (x >> (32 - k));
}

// Processes one 64-byte block into the running state `h`.
void compress(uint32_t h[5], const uint8_t* block) {
  uint32_t w[80];
  for (int i = 0; i < 16; ++i) {
    w[i] = (uint32_t{block[4 * i]} << 24) | (uint32_t{block[4 * i + 1]} << 16) |
           (uint32_t{block[4 * i + 2]} << 8) | uint32_t{block[4 * i + 3]};
  }
  for (int i = 16; i < 80; ++i) w[i] = rotl32(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1);

  uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4];
  for (int i = 0; i < 80; ++i) {
    uint32_t f = 0;
    uint32_t k = 0;
    if (i < 20) {
      f = (b & c) | (~b & d);
      k = 0x5a827999;
    } else if (i < 40) {
      f = b ^ c ^ d;
      k = 0x6ed9eba1;
    } else if (i < 60) {
      f = (b & c) | (b & d) | (c & d);
      k = 0x8f1bbcdc;
    } else {
      f = b ^ c ^ d;
      k = 0xca62c1d6;
    }
    const uint32_t temp = rotl32(a, 5) + f + e + k + w[i];
    e = d;
    d = c;
    c = rotl32(b, 30);
    b = a;
    a = temp;
  }
  h[0] += a;
  h[1] += b;
  h[2] += c;
  h[3] += d;
  h[4] += e;
}

}  // namespace

std::array<uint8_t, 20> sha1(std::string_view data) {
  uint32_t h[5] = {0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476, 0xc3d2e1f0};
  const auto* bytes = reinterpret_cast<const uint8_t*>(data.data());
  const size_t full_blocks = data.size() / 64;
  for (size_t i = 0; i < full_blocks; ++i) compress(h, bytes + 64 * i);

  // Padding: 0x80, zeros, then the message length in bits as a big-endian
  // 64-bit number, filling one or two final blocks.
  uint8_t tail[128] = {};
  const size_t rest = data.size() - 64 * full_blocks;
  for (size_t i = 0; i < rest; ++i) tail[i] = bytes[64 * full_blocks + i];
  tail[rest] = 0x80;
  const size_t tail_len = rest + 1 + 8 <= 64 ? 64 : 128;
  const uint64_t bit_len = static_cast<uint64_t>(data.size()) * 8;
  for (int i = 0; i < 8; ++i) tail[tail_len - 1 - i] = static_cast<uint8_t>(bit_len >> (8 * i));
  compress(h, tail);
  if (tail_len == 128) compress(h, tail + 64);

  std::array<uint8_t, 20> digest{};
  for (int i = 0; i < 5; ++i) {
    for (int j = 0; j < 4; ++j) digest[4 * i + j] = static_cast<uint8_t>(h[i] >> (24 - 8 * j));
  }
  return digest;
}

std::string sha1_hex(std::string_view data) {
  static constexpr char kHex[] = "0123456789abcdef";
  const auto digest = sha1(data);
  std::string out;
  out.reserve(40);
  for (uint8_t byte : digest) {
    out += kHex[byte >> 4];
    out += kHex[byte & 0xf];
  }
  LOCKSIM_ASSERT(out.size() == 40);
  return out;
}

}  // namespace locksim::sim::redis
