#include "sim/redis/sha1.h"

#include <openssl/evp.h>

#include "env/assert.h"

namespace locksim::sim::redis {

std::array<uint8_t, 20> sha1(std::string_view data) {
  std::array<uint8_t, 20> digest{};
  unsigned int size = 0;
  const int ok = EVP_Digest(data.data(), data.size(), digest.data(), &size, EVP_sha1(), nullptr);
  // Pair: OpenSSL says it hashed, and SHA-1's digest is 20 bytes.
  LOCKSIM_ASSERT_MSG(ok == 1 && size == digest.size(), "OpenSSL's SHA-1 failed");
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
