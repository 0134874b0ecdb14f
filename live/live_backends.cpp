#include "live/live_backend.h"

#include "env/assert.h"
#include "live/live_runner.h"

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

history::History run_live_clients(const harness::RunConfig& config,
                                  algorithms::LockAlgorithm& algorithm, harness::RunResult& result,
                                  std::function<std::unique_ptr<Env>(int client)> make_env) {
  LOCKSIM_ASSERT(make_env != nullptr);
  LiveOptions live_options;
  live_options.errors = &result.errors;
  live_options.make_env = std::move(make_env);
  return run_live(algorithm, config.workload, {}, config.duration, config.seed, live_options);
}

}  // namespace locksim::live
