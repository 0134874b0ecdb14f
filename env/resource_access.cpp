#include "env/resource_access.h"

namespace locksim {

const char* to_string(Workload w) {
  switch (w) {
    case Workload::kNone:
      return "none";
    case Workload::kRegister:
      return "register";
    case Workload::kCounter:
      return "counter";
    case Workload::kInventory:
      return "inventory";
  }
  return "?";
}

const char* to_string(Fencing f) {
  switch (f) {
    case Fencing::kNone:
      return "none";
    case Fencing::kWriteCheck:
      return "write-check";
    case Fencing::kReadWriteCheck:
      return "read-write-check";
  }
  return "?";
}

std::optional<Workload> workload_from(const std::string& name) {
  for (Workload w :
       {Workload::kNone, Workload::kRegister, Workload::kCounter, Workload::kInventory}) {
    if (name == to_string(w)) return w;
  }
  return std::nullopt;
}

std::optional<Fencing> fencing_from(const std::string& name) {
  for (Fencing f : {Fencing::kNone, Fencing::kWriteCheck, Fencing::kReadWriteCheck}) {
    if (name == to_string(f)) return f;
  }
  return std::nullopt;
}

}  // namespace locksim
