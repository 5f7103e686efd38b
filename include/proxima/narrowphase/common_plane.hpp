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

/// Knobs of the common-plane methods; the defaults are the revised algorithms as documented.
struct CommonPlaneOptions {
  /// Starting planes, in the order of Descantes L68: the centroid bisector, then the two orthogonal
  /// planes through the centroid midpoint. 0 = the method's default (Nezami 1, Cundall 3).
  int starts = 0;
  /// Nezami: build the candidate planes around every vertex tied (to roundoff) for closest, not
  /// just one of them. The paper lets "any of them" be chosen (L70), but the choice decides which
  /// neighbouring facets are tried: one arbitrary vertex ends in a local optimum on ~4-9% of random
  /// hull pairs, all tied vertices on ~0.5-3% (tests/test_common_plane.cpp). false = strict reading.
  bool allTiedVertices = true;
  int maxIterations = 100;       ///< Nezami outer iterations / Cundall passes, per start
  int maxEvaluations = 100000;   ///< Cundall gap evaluations per start (ridge crawling at small k)
};

/// Revised Nezami (Descantes Algorithm 2). The result uses the ContactResult conventions:
/// distance = best gap (negative when overlapping), normal A -> B, witnessA/witnessB = the closest
/// (most buried) vertices, contactPoint their midpoint, expansions = outer iterations,
/// iterations = gap evaluations. A local search: it can stop at a local optimum (see above).
ContactResult revisedNezami(const PolyhedronFeatures& a, const PolyhedronFeatures& b);
ContactResult revisedNezami(const PolyhedronFeatures& a, const PolyhedronFeatures& b, const CommonPlaneOptions& options);

/// Revised Cundall (Descantes Algorithm 1), three starts (centroid bisector and two orthogonal
/// planes), k from tan 5 deg down to tan(1e-7 deg), halved on no improvement. starts = 1 is the
/// original single-start search. Compass search on a non-smooth function: it can stall on a ridge
/// or stop at a local maximum of the gap; its resolution is ~tan(1e-7 deg) x size.
ContactResult revisedCundall(const PolyhedronFeatures& a, const PolyhedronFeatures& b);
ContactResult revisedCundall(const PolyhedronFeatures& a, const PolyhedronFeatures& b, const CommonPlaneOptions& options);

}  // namespace proxima
