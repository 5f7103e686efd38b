// The revised common-plane methods of Descantes, Tricoire & Richard (2019) for convex polyhedra:
// revised Cundall (Algorithm 1) and revised Nezami (Algorithm 2), with the digest's errata fixed
// (tilted normals normalised by sqrt(1+k^2); a separate best gap per restart, keeping the best of
// the three starts; the best normal found is returned, never the last candidate).
// They exist so that users and tests can compare methods as the paper does; GJK-TD is the default.
#pragma once

#include <array>
#include <vector>

#include "proxima/core/status.hpp"
#include "proxima/narrowphase/penetration.hpp"
#include "proxima/shapes/shape.hpp"

namespace proxima {

/// World-frame features of a convex polyhedron, as the common-plane methods need them.
struct PolyhedronFeatures {
  std::vector<Vec3> vertices;
  std::vector<Vec3> faceNormals;               ///< outward unit normals, one per (merged) face
  std::vector<std::vector<int>> faceVertices;  ///< vertex ids of each face
  std::vector<std::array<int, 2>> edges;       ///< hull edges (vertex id pairs), coplanar diagonals excluded
  std::vector<std::vector<int>> vertexFaces;   ///< faces containing each vertex
  std::vector<std::vector<int>> vertexEdges;   ///< edges containing each vertex
  Vec3 centroid = Vec3::Zero();                ///< volume centroid (world)
};

/// Features of a polyhedral shape (3-D polytope, box, tetrahedron) under a pose; fails naming the
/// shape type for anything else (curved, inflated or flat shapes).
Result<PolyhedronFeatures> polyhedronFeatures(const Shape& s, const Transform& pose);

/// Revised Nezami (Descantes Algorithm 2). The result uses the ContactResult conventions:
/// distance = best gap (negative when overlapping), normal A -> B, witnessA/witnessB = the closest
/// (most buried) vertices, contactPoint their midpoint, expansions = outer iterations.
ContactResult revisedNezami(const PolyhedronFeatures& a, const PolyhedronFeatures& b);

/// Revised Cundall (Descantes Algorithm 1), three starts (centroid bisector and two orthogonal
/// planes), k from tan 5 deg down to tan(1e-7 deg), halved on no improvement.
ContactResult revisedCundall(const PolyhedronFeatures& a, const PolyhedronFeatures& b);

}  // namespace proxima
