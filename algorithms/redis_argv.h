// A Redis command vector for RedisConnection::command, each argument copied
// into it once, into a vector (and strings) a past command left in the
// thread's pool when there is one (env/argv_pool.h).
//
// Why not {"SET", key, token, "NX", "PX", ttl}: a braced list of
// std::string builds every argument twice, first into the
// initializer_list (whose elements can only be copied, never moved) and
// then into the vector, so a token or a script text costs two heap copies
// per command; the lock clients send one on every attempt. Here the list
// holds views and only the vector owns copies. A braced list still
// evaluates its elements left to right (function arguments would not, and
// an argument that draws a random number or reads a clock must come in the
// same order under every compiler). Views of temporaries (std::to_string
// inside the braces) are safe: they live to the end of the call's full
// expression, and the copies are made before it returns.
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "env/argv_pool.h"

namespace locksim::algorithms {

inline std::vector<std::string> redis_argv(std::initializer_list<std::string_view> args) {
  return argv_pool::filled<std::string>(args);
}

}  // namespace locksim::algorithms
