// The engine's committed contents as a whole: what a redo-log flush keeps on
// disk and what a binlog shipment carries to a replica (engine.h, TableImage).
#include <algorithm>

#include "env/assert.h"
#include "sim/mysql/engine.h"

namespace locksim::sim::mysql {

TableImage Engine::committed_image() const {
  TableImage image;
  for (const auto& [fi, versions] : history_) {
    if (!versions.empty() && versions.back().row) image.rows.emplace(fi, *versions.back().row);
  }
  image.auto_increment = auto_increment_;
  return image;
}

void Engine::apply_image(const TableImage& image) {
  for (const auto& [id, s] : sessions_) {
    LOCKSIM_ASSERT_MSG(s.written.empty(), "an image applied under uncommitted changes");
  }
  LOCKSIM_ASSERT(image.auto_increment >= 1);
  bool changed = false;
  const uint64_t seq = commit_seq_ + 1;
  // Rows the image changes or adds.
  for (const auto& [fi, row] : image.rows) {
    LOCKSIM_ASSERT_MSG(row.size() == table_columns().size(), "an image row of the wrong width");
    auto& versions = history_[fi];
    if (!versions.empty() && versions.back().row == row) continue;
    versions.push_back(Version{seq, row});
    changed = true;
  }
  // Rows the image lacks are deleted.
  for (auto& [fi, versions] : history_) {
    if (image.rows.count(fi) || versions.empty() || !versions.back().row) continue;
    versions.push_back(Version{seq, std::nullopt});
    changed = true;
  }
  if (changed) {
    commit_seq_ = seq;
    committed_changes_.bump();
  }
  latest_.clear();
  for (const auto& [fi, row] : image.rows) latest_[fi] = Latest{row, false, 0};
  // A replica's counter follows its primary's; after crash recovery it is
  // what the log kept (InnoDB persists AUTO_INCREMENT in the redo log).
  auto_increment_ = image.auto_increment;
  rebuild_unique();
  LOCKSIM_ASSERT(committed_image() == image);
}

}  // namespace locksim::sim::mysql
