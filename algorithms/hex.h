// Lowercase hex for the random parts of lock names and tokens.
#pragma once

#include <cstdint>
#include <string>

namespace locksim::algorithms {

// Appends `bits` as 16 lowercase hex digits, zero-padded: what "%016llx"
// prints, without snprintf's parsing of its format (hundreds of
// instructions a call, made on every acquire).
inline void append_hex16(std::string& out, uint64_t bits) {
  char hex[16];
  for (int i = 15; i >= 0; --i, bits >>= 4) hex[i] = "0123456789abcdef"[bits & 0xf];
  out.append(hex, sizeof hex);
}

}  // namespace locksim::algorithms
