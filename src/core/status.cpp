#include "proxima/core/status.hpp"

namespace proxima {

std::string_view toString(Status s) {
  switch (s) {
    case Status::Separated: return "separated";
    case Status::Overlapping: return "overlapping";
    case Status::MaxIterations: return "max_iterations";
    case Status::Degenerate: return "degenerate";
    case Status::InvalidInput: return "invalid_input";
  }
  return "unknown";
}

}  // namespace proxima
