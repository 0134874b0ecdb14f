#include "algorithms/lock_algorithm.h"

namespace locksim::algorithms {

void describe_failed_attempt(const Reply& r, std::string_view refused, bool* unknown,
                             std::string& detail) {
  if (r.is_io_error()) *unknown = true;
  // The transport's words or the server's error; else the server said no.
  detail.assign(r.is_io_error() || r.is_error() ? std::string_view(r.text) : refused);
}

}  // namespace locksim::algorithms
