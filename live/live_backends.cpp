#include "live/live_backend.h"

#include "env/assert.h"

namespace locksim::live {

const std::vector<LiveBackend>& live_backends() {
  static const std::vector<LiveBackend> list = {redis_live_backend(), zookeeper_live_backend(),
                                                mysql_live_backend()};
  return list;
}

const LiveBackend& live_backend_of(const harness::BackendSpec& backend) {
  for (const LiveBackend& b : live_backends()) {
    if (b.name == backend.name) return b;
  }
  LOCKSIM_ASSERT_MSG(false, "every backend has a live side");
  return live_backends().front();
}

}  // namespace locksim::live
