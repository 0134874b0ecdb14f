// SHA-1 (FIPS 180-4), used only to name Lua scripts the way Redis does.
//
// OpenSSL's (libcrypto), as the project uses the kept library for SHA-1.
// SHA-1 is not used here for security.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace locksim::sim::redis {

// The 20-byte digest of `data`.
std::array<uint8_t, 20> sha1(std::string_view data);

// The digest as 40 lowercase hex characters, as Redis prints it.
std::string sha1_hex(std::string_view data);

}  // namespace locksim::sim::redis
