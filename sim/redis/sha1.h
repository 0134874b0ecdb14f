// SHA-1 (FIPS 180-4), used only to name Lua scripts the way Redis does.
//
// Why our own: the script cache is keyed by the SHA-1 hex digest of the script
// body (EVALSHA, SCRIPT LOAD, redis.sha1hex), and pulling in a crypto library
// for 80 lines of well-specified code is not worth the dependency. SHA-1 is not
// used here for security.
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
