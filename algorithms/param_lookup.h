// Whether a registered algorithm declares a parameter: what the margin search
// and the workload draw read a lock's kind from (a `ttl`: a TTL lease; a
// `drift-factor`: a lock that reports a validity, held by a careful client).
#pragma once

#include <string>
#include <string_view>

namespace locksim::algorithms {

// False for an algorithm that is not registered.
bool has_param(const std::string& algorithm, std::string_view name);

}  // namespace locksim::algorithms
