#include "manifold.hpp"

namespace proxima::detail {
void buildManifold(const Shape&, const Transform&, const Shape&, const Transform&, ContactResult& r) {
  singlePointManifold(r);
}
}  // namespace proxima::detail
