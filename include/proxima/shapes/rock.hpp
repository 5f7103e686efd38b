// Grain morphologies for packing studies (Montanari thesis ch. 5): a seeded generator of random
// convex "rocks" with a controllable vertex count, elongation and flatness, resolution levels of
// the same grain (the thesis's coarse/medium/fine H_min study), and vertex reduction of a hull
// (resolution levels of a grain read from a mesh file).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "proxima/shapes/convex.hpp"

namespace proxima {

/// A rock is the convex hull of `vertices` points sampled on one seeded, smooth "parent" surface:
/// an ellipsoid with semi-axes (1, elongation, elongation × flatness) whose radius is modulated by
/// exp(roughness × g(u)), g a sum of a dozen random Gaussian bumps on the unit sphere. The sample
/// directions are a Fibonacci lattice in a seeded random frame, so the same seed with more vertices
/// is a finer mesh of the same grain. The hull is scaled so that its volume-equivalent sphere radius
/// is `radius` (every resolution level has the same volume).
struct RockParams {
  int vertices = 48;         ///< surface samples (>= 4); hull vertices are those on the hull (most)
  Real elongation = 0.8;     ///< intermediate / long axis, in (0, 1] (Zingg's I/L)
  Real flatness = 0.8;       ///< short / intermediate axis, in (0, 1] (Zingg's S/I)
  Real roughness = 0.15;     ///< relative amplitude of the radial modulation, in [0, 1]
  std::uint64_t seed = 1;
  Real radius = 1;           ///< volume-equivalent sphere radius of the result, > 0
};

/// Fails (naming the parameter) on out-of-range parameters.
Result<Polytope> makeRock(const RockParams& p);

/// Vertex counts of the resolution levels: coarse 24, medium 78, fine 160. They follow the thesis's
/// mesh sizes H_min = 0.18, 0.10, 0.07 (Table 5.4 / L2226) with the node count of a surface mesh
/// growing as H_min^-2: 24 × (0.18/0.10)² ≈ 78, 24 × (0.18/0.07)² ≈ 159.
std::optional<int> resolutionVertices(std::string_view level);

/// The hull of at most maxVertices of the polytope's vertices chosen by farthest-point sampling
/// (deterministic: starts from the vertex farthest from the vertex centroid), i.e. a coarser mesh of
/// the same convex grain. Returns the polytope unchanged when it has no more than maxVertices.
Result<Polytope> reduceVertices(const Polytope& p, int maxVertices);

}  // namespace proxima
