#include "algorithms/lock_algorithm.h"

namespace locksim::algorithms {

std::string describe_failed_attempt(const Reply& r, const std::string& refused, bool* unknown) {
  if (r.is_io_error()) {
    *unknown = true;
    return r.text;
  }
  return r.is_error() ? r.text : refused;
}

}  // namespace locksim::algorithms
