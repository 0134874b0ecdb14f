#include "checkers/check.h"

#include "env/assert.h"

namespace locksim::checkers {

const char* to_string(Validity v) {
  switch (v) {
    case Validity::kValid:
      return "valid";
    case Validity::kInvalid:
      return "invalid";
    case Validity::kUnknown:
      return "unknown";
  }
  return "?";
}

const char* to_string(Kind k) {
  switch (k) {
    case Kind::kNone:
      return "none";
    case Kind::kSafety:
      return "safety";
    case Kind::kConsequence:
      return "consequence";
    case Kind::kLatent:
      return "latent";
    case Kind::kLiveness:
      return "liveness";
    case Kind::kUnknown:
      return "unknown";
  }
  return "?";
}

Check check_of(std::string checker, Validity validity, Kind invalid_kind, std::string explanation,
               bool decides) {
  LOCKSIM_ASSERT(invalid_kind != Kind::kNone);
  Check c;
  c.checker = std::move(checker);
  c.validity = validity;
  c.kind = validity == Validity::kInvalid   ? invalid_kind
           : validity == Validity::kUnknown ? Kind::kUnknown
                                            : Kind::kNone;
  c.explanation = std::move(explanation);
  c.decides = decides;
  return c;
}

void add_evidence(Check& check, std::string line) {
  if (check.evidence.size() < Check::kEvidenceMax) check.evidence.push_back(std::move(line));
}

Validity merged(const std::vector<Check>& checks) {
  Validity out = Validity::kValid;
  bool voided = false;  // a Check::voids_run answered unknown
  for (const Check& c : checks) {
    // A finding is named exactly when there is one; an invalid answer always
    // says what it found and why.
    LOCKSIM_ASSERT(c.validity != Validity::kInvalid || c.kind != Kind::kNone);
    LOCKSIM_ASSERT(c.validity != Validity::kValid || c.kind == Kind::kNone ||
                   c.kind == Kind::kLatent);
    LOCKSIM_ASSERT(c.validity != Validity::kUnknown || c.kind == Kind::kUnknown);
    LOCKSIM_ASSERT(c.validity != Validity::kInvalid || !c.explanation.empty());
    if (!c.decides) continue;
    // A violation is never hidden, not even by a voiding unknown.
    if (c.validity == Validity::kInvalid &&
        (c.kind == Kind::kSafety || c.kind == Kind::kConsequence))
      return Validity::kInvalid;
    if (c.validity == Validity::kUnknown && c.voids_run) voided = true;
    if (c.validity == Validity::kInvalid) out = Validity::kInvalid;
    if (c.validity == Validity::kUnknown && out == Validity::kValid) out = Validity::kUnknown;
  }
  return voided ? Validity::kUnknown : out;
}

const char* finding(const std::vector<Check>& checks) {
  // Safety first (two holders, or damaged data), then a stuck lock, then a
  // near miss: the order a reader needs to know them in.
  for (const Check& c : checks) {
    if (!c.decides || c.validity != Validity::kInvalid) continue;
    if (c.kind == Kind::kSafety || c.kind == Kind::kConsequence) return "safety";
  }
  for (const Check& c : checks) {
    if (c.decides && c.validity == Validity::kInvalid && c.kind == Kind::kLiveness) {
      return "liveness";
    }
  }
  for (const Check& c : checks) {
    if (c.kind == Kind::kLatent) return "latent";
  }
  return "none";
}

const Check* disagreement(const std::vector<Check>& checks) {
  for (const Check& referee : checks) {
    if (referee.referees.empty() || referee.validity == Validity::kUnknown) continue;
    for (const Check& judged : checks) {
      if (judged.checker != referee.referees) continue;
      LOCKSIM_ASSERT_MSG(&judged != &referee, "a check does not referee itself");
      if (judged.validity != Validity::kUnknown && judged.validity != referee.validity) {
        return &referee;
      }
    }
  }
  return nullptr;
}

}  // namespace locksim::checkers
