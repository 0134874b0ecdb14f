#include "env/reply.h"

namespace locksim {

std::string Reply::to_string() const {
  switch (kind) {
    case Kind::kStatus:
      return text;
    case Kind::kError:
      return "(error) " + text;
    case Kind::kInteger:
      return "(integer) " + std::to_string(integer);
    case Kind::kBulk:
      return "\"" + text + "\"";
    case Kind::kNil:
      return "(nil)";
    case Kind::kIoError:
      return "(io-error) " + text;
    case Kind::kArray: {
      std::string out = "[";
      for (size_t i = 0; i < elements.size(); ++i) {
        if (i) out += ", ";
        out += elements[i].to_string();
      }
      return out + "]";
    }
  }
  return "?";
}

}  // namespace locksim
