// Private: contact manifold of a penetration result (clipping of the incident face against the
// reference face, up to 4 points with per-point depth).
#pragma once

#include "proxima/narrowphase/penetration.hpp"

namespace proxima::detail {

/// Fills r.contacts / r.contactCount from r.normal, r.depth and r.contactPoint. Polyhedral cores
/// (polytope, box, tetrahedron, triangle, segment, point; inflated or not) in face-face or
/// edge-face contact get the clipped polygon (<= 4 points); every other case gets the single
/// contact point. Nothing is written when the bodies are apart.
/// vertexA / vertexB (polytopes, -1: unknown): a vertex of A supporting the normal and one of B
/// supporting its opposite, as the penetration query found them; the face search starts there.
/// memo (the pair's cache, or null): the last face searches, read to skip a search that cannot find
/// a face and rewritten after each search (ContactCache::ManifoldMemo); the result is the same.
void buildManifold(const Shape& a, const Transform& poseA, const Shape& b, const Transform& poseB, ContactResult& r,
                   int vertexA = -1, int vertexB = -1, ContactCache::ManifoldMemo* memo = nullptr);

/// The single-point manifold: the contact point with the result's depth.
inline void singlePointManifold(ContactResult& r) {
  r.contactCount = r.depth > 0 || r.distance <= 0 ? 1 : 0;
  r.contacts[0] = {r.contactPoint, r.depth};
}

}  // namespace proxima::detail
