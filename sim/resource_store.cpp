#include "sim/resource_store.h"

#include "env/assert.h"

namespace locksim::sim {

ResourceStore::ResourceStore(const ResourceParams& params)
    : params_(params), value_(params.workload == Workload::kInventory ? params.items : 0) {
  // The settings row bounds items; a store exists only for a real workload.
  LOCKSIM_ASSERT(params.items >= 0 && params.items <= ResourceParams::kItemsMax);
  LOCKSIM_ASSERT(params.workload != Workload::kNone);
}

std::string ResourceStore::fencing_refusal(const ResourceRequest& request) const {
  const bool checked =
      params_.fencing == Fencing::kReadWriteCheck ||
      (params_.fencing == Fencing::kWriteCheck && request.kind == ResourceRequest::Kind::kWrite);
  if (!checked || !request.fence || !highest_ || *request.fence >= *highest_) return "";
  return "token " + std::to_string(*request.fence) + " < highest seen " + std::to_string(*highest_);
}

ResourceReply ResourceStore::execute(const ResourceRequest& request, TimePoint now) {
  LOCKSIM_ASSERT_MSG(log_.size() < kLogMax, "the store's log outgrew its bound");
  LOCKSIM_ASSERT_MSG(log_.empty() || log_.back().time_ns <= now.ns, "true time went back");
  const bool write = request.kind == ResourceRequest::Kind::kWrite;
  StoreAccess a;
  a.time_ns = now.ns;
  a.client = request.client;
  a.lease_id = request.lease_id;
  a.fence = request.fence;
  a.kind = request.kind;
  a.value_before = value_;
  a.written = write ? request.value : 0;
  a.detail = fencing_refusal(request);
  a.accepted = a.detail.empty();
  ResourceReply reply;
  if (a.accepted) {
    if (write) value_ = request.value;
    // The check records what it checks: writes always, reads under read-write-check.
    const bool recorded = write || params_.fencing == Fencing::kReadWriteCheck;
    if (recorded && request.fence && (!highest_ || *request.fence > *highest_)) {
      highest_ = request.fence;
    }
    reply.status = ResourceReply::Status::kOk;
  } else {
    reply.status = ResourceReply::Status::kRejected;
    reply.detail = a.detail;
  }
  a.value_after = value_;
  reply.value = value_;
  LOCKSIM_ASSERT_MSG(a.accepted || a.value_after == a.value_before,
                     "a rejected access changed the resource");
  log_.push_back(std::move(a));
  return reply;
}

}  // namespace locksim::sim
