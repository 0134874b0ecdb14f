// `locksim margins` (issue 23): every algorithm x every fault kind that
// applies (margin.h: kinds_for), each cell one measure_margin() with the
// algorithm's defaults, a fixed 2 s hold and one seed. The cells are
// independent runs, so they go to worker threads; the results come back in
// plan order whatever the threads did, so the report is the same bytes for
// any --jobs.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "harness/margin/margin.h"
#include "harness/margin/vary.h"

namespace locksim::harness::margin {

// One row of the table: the request, and what its lease is in words.
struct MarginCell {
  MarginRequest request;
  // "ttl 10s (the default)", "ttl 10s (default 1y: longer than a run may be)",
  // "session timeout 10s (tick 2s)", "watchdog timeout 30s (the default)":
  // the lease the row is measured against.
  std::string lease_note;
  // With --vary: the setting's value this cell is measured at, and the same
  // as a number for the plot; "" for a cell of the table.
  std::string vary_param;
  std::string vary_value;
  double vary_x = 0.0;
};

// The fixed hold of every cell: short beside a 10 s lease, as margin's default.
inline constexpr Duration kTableHold = Duration::seconds(2);
// The lease given to an algorithm whose default ttl is longer than this (the
// MySQL table's year): no run could outlast it.
inline constexpr Duration kTableTtlMax = Duration::seconds(60);
inline constexpr Duration kTableTtlFallback = Duration::seconds(10);

// The cells for `algorithms` (each must exist; in the order given) on `seed`:
// every kind that applies, in all_kinds() order. With `vary`, after them
// the same cells at each of its values, for every cell whose algorithm has
// the setting and whose kind it moves (vary.h): kVaryPoints cells each.
// Throws ConfigError naming --algorithms for an unknown name, or for a list
// no kind applies to, and naming --vary when no cell has the setting.
std::vector<MarginCell> plan_margins(const std::vector<std::string>& algorithms, uint64_t seed,
                                     const Vary* vary = nullptr);

// After each cell: how many are done, of how many, and the one just done.
using CellDoneFn = std::function<void(size_t done, size_t total, const MarginCell& cell)>;

// Measures every cell on `jobs` threads (1..kJobsMax), results in plan
// order. `on_done` is called under a lock, one call at a time. When `stop`
// becomes true no new cell starts, and it throws std::runtime_error.
std::vector<MarginResult> measure_margins(const std::vector<MarginCell>& cells, int jobs,
                                          const CellDoneFn& on_done = {},
                                          const std::atomic<bool>* stop = nullptr);

inline constexpr int kMarginJobsMax = 256;  // more threads than this is a typo

}  // namespace locksim::harness::margin
