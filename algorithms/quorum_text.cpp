#include "algorithms/quorum_text.h"

#include <algorithm>

#include "env/parse.h"  // format_duration

namespace locksim::algorithms {

std::string count_text(size_t count, size_t n, size_t quorum) {
  return std::to_string(count) + " of " + std::to_string(n) + " nodes (quorum " +
         std::to_string(quorum) + ")";
}

std::string failed_round_detail(const QuorumTally& tally, size_t n, size_t quorum,
                                Duration validity, Duration elapsed) {
  if (tally.locked >= quorum) {
    return "locked " + count_text(tally.locked, n, quorum) + " but validity " +
           format_duration(validity) + " <= 0 after " + format_duration(elapsed);
  }
  return "locked " + count_text(tally.locked, n, quorum) +
         (tally.io_errors > 0 ? ", " + std::to_string(tally.io_errors) + " did not answer" : "") +
         (tally.last_error.empty() ? "" : "; last error " + tally.last_error);
}

std::string unanswered_unlock_text(size_t unanswered) {
  if (unanswered == 0) return "";
  return "; unlock got no answer from " + std::to_string(unanswered) + " nodes";
}

Outcome failed_acquire_outcome(const std::vector<bool>& may_hold, size_t quorum) {
  const auto left = static_cast<size_t>(std::count(may_hold.begin(), may_hold.end(), true));
  return left >= quorum ? Outcome::kUnknown : Outcome::kFail;
}

}  // namespace locksim::algorithms
