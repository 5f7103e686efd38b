// Placeholder until the revised common-plane methods land (being written now).
#include "proxima/narrowphase/common_plane.hpp"

namespace proxima {

Result<PolyhedronFeatures> polyhedronFeatures(const Shape&, const Transform&) {
  return Result<PolyhedronFeatures>::failure("common-plane methods not built yet");
}
ContactResult revisedNezami(const PolyhedronFeatures&, const PolyhedronFeatures&) { return {}; }
ContactResult revisedCundall(const PolyhedronFeatures&, const PolyhedronFeatures&) { return {}; }

}  // namespace proxima
