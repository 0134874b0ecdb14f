#include "algorithms/retry_policy.h"

#include <algorithm>

#include "env/assert.h"

namespace locksim::algorithms {

bool RetryPolicy::valid() const {
  return max_attempts >= 1 && max_attempts <= kMaxAttemptsMax && retry_min >= Duration::zero() &&
         retry_min <= retry_max;
}

void RetryPolicy::backoff_after(Env& env, int attempt, std::optional<Duration> cap) const {
  LOCKSIM_ASSERT_MSG(attempt >= 1 && attempt <= max_attempts, "an attempt that was made");
  if (attempt == max_attempts) return;
  if (!cap) return sleep_random(env, retry_min, retry_max);
  const Duration drawn{random_between(env, retry_min.ns, retry_max.ns)};
  env.sleep(std::min(drawn, *cap));
}

RetryPolicy read_retry_policy(const ParamReader& reader) {
  RetryPolicy policy;
  policy.max_attempts = static_cast<int>(reader.integer(kMaxAttemptsParam, 1, kMaxAttemptsMax));
  const auto [lo, hi] = reader.range(kRetryParam);
  policy.retry_min = lo;
  policy.retry_max = hi;
  LOCKSIM_ASSERT(policy.valid());
  return policy;
}

}  // namespace locksim::algorithms
