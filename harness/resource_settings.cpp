// The guarded resource's rows of the settings table (the scenario's
// "resource" section): which workload holders run on the store node, which
// fencing check the store applies, and the inventory's stock.
#include "env/assert.h"
#include "harness/setting_rows.h"
#include "sim/resource_store.h"

namespace locksim::harness {

std::vector<Setting> resource_settings() {
  std::vector<Setting> rows;
  rows.push_back(choice_row(
      "--workload", "resource.workload",
      "guarded resource holders use in their critical section, on node store (none: no store)",
      false, {"none", "register", "counter", "inventory"},
      [](auto& c) -> auto& { return c.workload.store.workload; },
      [](const std::string& n) { return *workload_from(n); },
      [](Workload w) { return to_string(w); }));
  rows.push_back(choice_row(
      "--fencing", "resource.fencing",
      "the store's fencing-token check: none, on writes, or on reads and writes", false,
      {"none", "write-check", "read-write-check"},
      [](auto& c) -> auto& { return c.workload.store.fencing; },
      [](const std::string& n) { return *fencing_from(n); },
      [](Fencing f) { return to_string(f); }));
  rows.push_back(int_row(
      "--items", "resource.items", "inventory workload: items in stock at the start", false, 0,
      ResourceParams::kItemsMax, [](auto& c) -> auto& { return c.workload.store.items; }));
  LOCKSIM_ASSERT(rows.size() == 3);
  return rows;
}

}  // namespace locksim::harness
