#include "algorithms/quorum_text.h"

#include <algorithm>
#include <charconv>

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

size_t read_quorum(const ParamReader& r) {
  constexpr int64_t kQuorumMax = 1'000;
  const std::string quorum = r.text("quorum");
  if (quorum == "auto") return 0;
  int64_t q = 0;
  const auto [ptr, ec] = std::from_chars(quorum.data(), quorum.data() + quorum.size(), q);
  if (ec != std::errc() || ptr != quorum.data() + quorum.size() || q < 1 || q > kQuorumMax) {
    // Said as check_servers says a number past N ("from 1 to the 5 redis
    // servers"): kQuorumMax is only a bound before N is known, and "1 to
    // 1000" named a range the run then refused most of.
    throw ConfigError(r.field("quorum") +
                      ": expected 'auto' or a whole number from 1 to the number of redis "
                      "servers, got '" +
                      quorum + "'");
  }
  return static_cast<size_t>(q);
}

}  // namespace locksim::algorithms
