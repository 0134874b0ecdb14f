#include "sim/redis/topology.h"

namespace locksim::sim::redis {

const char* to_string(Persistence p) {
  switch (p) {
    case Persistence::kNone:
      return "none";
    case Persistence::kAofEverysec:
      return "aof-everysec";
    case Persistence::kAofAlways:
      return "aof-always";
    case Persistence::kRdb:
      return "rdb";
  }
  return "?";
}

std::optional<Persistence> persistence_from(std::string_view name) {
  for (Persistence p : {Persistence::kNone, Persistence::kAofEverysec, Persistence::kAofAlways,
                        Persistence::kRdb}) {
    if (name == to_string(p)) return p;
  }
  return std::nullopt;
}

}  // namespace locksim::sim::redis
