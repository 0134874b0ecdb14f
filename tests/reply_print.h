// Readable test failures: GoogleTest prints a Reply as redis-cli would
// ("(integer) 1", "(error) WRONGTYPE ..."), not as the bytes of the struct.
#pragma once

#include <ostream>

#include "env/reply.h"

namespace locksim {
inline void PrintTo(const Reply& reply, std::ostream* os) {
  *os << reply.to_string();
}
}  // namespace locksim
