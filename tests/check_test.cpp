// The one result shape and its rules (checkers/check.h): Jepsen's merge
// (invalid over unknown over valid, among the checks that decide), the
// finding's order, a referee that disagrees, and the exit code read from them.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "checkers/check.h"
#include "cli/exit_codes.h"

namespace locksim::checkers {
namespace {

Check valid(const std::string& name, bool decides = true) {
  return check_of(name, Validity::kValid, Kind::kSafety, "", decides);
}
Check invalid(const std::string& name, Kind kind, bool decides = true) {
  return check_of(name, Validity::kInvalid, kind, name + " found something", decides);
}
Check unknown(const std::string& name, bool decides = true) {
  return check_of(name, Validity::kUnknown, Kind::kSafety, name + " could not tell", decides);
}

TEST(Check, CheckOfNamesTheKindOnlyWhenSomethingWasFound) {
  EXPECT_EQ(valid("a").kind, Kind::kNone);
  EXPECT_EQ(invalid("a", Kind::kLiveness).kind, Kind::kLiveness);
  EXPECT_EQ(unknown("a").kind, Kind::kUnknown);
}

TEST(Check, MergeIsInvalidOverUnknownOverValid) {
  EXPECT_EQ(merged({}), Validity::kValid);
  EXPECT_EQ(merged({valid("a"), valid("b")}), Validity::kValid);
  EXPECT_EQ(merged({valid("a"), unknown("b")}), Validity::kUnknown);
  EXPECT_EQ(merged({unknown("a"), invalid("b", Kind::kSafety)}), Validity::kInvalid);
  EXPECT_EQ(merged({invalid("a", Kind::kLiveness), unknown("b")}), Validity::kInvalid);
}

TEST(Check, ChecksThatDoNotDecideAreReportedButNotMerged) {
  EXPECT_EQ(merged({valid("a"), invalid("history", Kind::kSafety, false)}), Validity::kValid);
  EXPECT_EQ(merged({valid("a"), unknown("knossos", false)}), Validity::kValid);
  EXPECT_STREQ(finding({valid("a"), invalid("history", Kind::kSafety, false)}), "none");
}

TEST(Check, FindingPutsSafetyBeforeLivenessBeforeLatent) {
  Check latent = valid("exposure", false);
  latent.kind = Kind::kLatent;
  EXPECT_STREQ(finding({valid("a")}), "none");
  EXPECT_STREQ(finding({valid("a"), latent}), "latent");
  EXPECT_STREQ(finding({latent, invalid("liveness", Kind::kLiveness)}), "liveness");
  EXPECT_STREQ(finding({invalid("liveness", Kind::kLiveness), invalid("data", Kind::kConsequence)}),
               "safety");
  EXPECT_STREQ(finding({latent, invalid("mutex", Kind::kSafety)}), "safety");
  // Undecided is not a finding: a caller says "unknown" from merged().
  EXPECT_STREQ(finding({unknown("mutex")}), "none");
}

TEST(Check, ARefereeThatDecidedOtherwiseIsADisagreement) {
  Check knossos = invalid("knossos", Kind::kSafety, false);
  knossos.referees = "linearizability (mutex)";
  const Check builtin_valid = valid("linearizability (mutex)", false);
  const Check builtin_invalid = invalid("linearizability (mutex)", Kind::kSafety, false);
  ASSERT_NE(disagreement({builtin_valid, knossos}), nullptr);
  EXPECT_EQ(disagreement({builtin_valid, knossos})->checker, "knossos");
  EXPECT_EQ(disagreement({builtin_invalid, knossos}), nullptr);
  // A referee that could not decide disagrees with nobody.
  Check timed_out = unknown("knossos", false);
  timed_out.referees = "linearizability (mutex)";
  EXPECT_EQ(disagreement({builtin_valid, timed_out}), nullptr);
  // Nor does a referee whose judged check is absent.
  EXPECT_EQ(disagreement({knossos}), nullptr);
}

TEST(Check, EvidenceStopsAtItsLimit) {
  Check c = invalid("mutex", Kind::kSafety);
  for (size_t i = 0; i < Check::kEvidenceMax + 5; ++i) add_evidence(c, std::to_string(i));
  ASSERT_EQ(c.evidence.size(), Check::kEvidenceMax);
  EXPECT_EQ(c.evidence.front(), "0");  // the first, most telling, are kept
}

TEST(ExitCode, DisagreementFirstThenTheMerge) {
  EXPECT_EQ(cli::exit_code({valid("a")}), cli::kExitClean);
  EXPECT_EQ(cli::exit_code({invalid("a", Kind::kSafety)}), cli::kExitViolation);
  EXPECT_EQ(cli::exit_code({unknown("a")}), cli::kExitInternal);
  Check knossos = valid("knossos", false);
  knossos.referees = "linearizability (mutex)";
  // A violation with two checkers disagreeing on the history: no verdict is trusted.
  EXPECT_EQ(cli::exit_code({invalid("mutex", Kind::kSafety),
                            invalid("linearizability (mutex)", Kind::kSafety, false), knossos}),
            cli::kExitInternal);
}

}  // namespace
}  // namespace locksim::checkers
