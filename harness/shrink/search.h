// The generic searches a shrinker is made of, over plain integers: delta
// debugging over a list of items, and bisection of one number. They know
// nothing about runs; harness/shrink/shrink.h asks them about configs.
//
// Every search here keeps one invariant: what it returns is something the
// predicate said "fails" to, or what the caller already knew fails. A
// predicate that stops answering (a spent budget answers false) therefore
// never turns a failing input into a passing one: the search just ends early
// with the smallest failing input it has seen.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

namespace locksim::harness::shrink {

// Whether the candidate (a subset of the items, sorted, by index) still
// fails. Must be deterministic: ddmin may ask about the same subset twice.
using SubsetFails = std::function<bool(const std::vector<size_t>& subset)>;

// Zeller and Hildebrandt's ddmin ("Simplifying and Isolating
// Failure-Inducing Input", TSE 2002) over the items 0..n-1, which the caller
// knows fail together (not asked again). Asks about the empty set first
// (ddmin assumes it passes; a run that fails with no fault at all should say
// so in one run). Returns the indices kept, sorted: 1-minimal (removing any
// one of them no longer fails) when every answer was a real one; otherwise
// the smallest failing subset found before the answers stopped.
std::vector<size_t> ddmin(size_t n, const SubsetFails& fails);

// Whether the candidate value still fails.
using ValueFails = std::function<bool(int64_t value)>;

// The smallest value in {lo, lo + step, lo + 2 step, ..., hi} that fails,
// by binary search, given that `hi` fails (not asked again). `hi` need not
// be on the grid: it is the last point of it. Assumes failing is monotone
// (fails at v implies fails above v); when it is not, the answer is still a
// value that failed, only maybe not the smallest. Preconditions: lo <= hi,
// step > 0. At most log2((hi - lo) / step) + 1 questions.
int64_t smallest_failing(int64_t lo, int64_t hi, int64_t step, const ValueFails& fails);

// The mirror image: the largest value in {lo, ..., hi - 2 step, hi - step, hi}
// (hi on the grid counted down from it, `lo` the last point) that fails,
// given that `lo` fails.
int64_t largest_failing(int64_t lo, int64_t hi, int64_t step, const ValueFails& fails);

}  // namespace locksim::harness::shrink
