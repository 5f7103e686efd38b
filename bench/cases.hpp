// Benchmark cases shared by proxima_bench and proxima_bench_accuracy: "polygonal spheres"
// (icospheres, every vertex on the unit sphere), random poses, and the pole configuration whose
// exact distance is known.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "proxima/core/types.hpp"
#include "proxima/shapes/convex.hpp"

namespace pbench {

using proxima::Mat3;
using proxima::Real;
using proxima::Transform;
using proxima::Vec3;

/// Vertex counts of the icospheres: 10 * 4^k + 2, k = 0..5.
inline const std::vector<int>& icosphereSizes() {
  static const std::vector<int> n{12, 42, 162, 642, 2562, 10242};
  return n;
}

/// Vertices of the icosahedron subdivided until it has n = 10 * 4^k + 2 vertices, projected on the
/// unit sphere. Throws std::invalid_argument for any other n.
std::vector<Vec3> icosphereVertices(int n);

/// Same, rotated so that one vertex is exactly (1,0,0) and its antipode exactly (-1,0,0) (the
/// icosphere is centrally symmetric). Used by the pole accuracy check.
std::vector<Vec3> icospherePoleVertices(int n);

/// Hull of icosphereVertices(n), built once per n (Polytope::fromPoints) and cached.
const proxima::Polytope& icosphere(int n);
/// Hull of icospherePoleVertices(n), cached.
const proxima::Polytope& icospherePole(int n);

/// Uniformly distributed random rotation (normalised Gaussian quaternion).
Mat3 randomRotation(std::mt19937_64& rng);
/// Rotation by `angle` about a uniformly random axis.
Mat3 smallRotation(std::mt19937_64& rng, Real angle);
/// Exact rotation about x (first row and column are exactly e_x).
Mat3 rotationX(Real angle);
/// Random unit vector.
Vec3 randomUnit(std::mt19937_64& rng);

struct PosePair {
  Transform a, b;
};

/// The four configurations: exact-sphere gap g (B centre at x = 2 + g).
struct Config {
  const char* name;  ///< distant / close / touching / overlapping
  Real gap;
};
inline const std::vector<Config>& configs() {
  static const std::vector<Config> c{{"distant", 2.0}, {"close", 1e-3}, {"touching", 1e-9}, {"overlapping", -0.1}};
  return c;
}

inline constexpr int kPairs = 1000;                ///< pre-generated pairs per cell
inline constexpr Real kStepRotation = 1e-4;        ///< warm start: rotation per "time step" (rad)
inline constexpr Real kStepTranslation = 1e-4;     ///< warm start: translation per "time step"
inline const Vec3 kEllipsoidRadii{1.0, 0.6, 0.3};

/// Poses of one benchmark cell: pose0[i] is pair i; pose1[i] is pair i one small "time step" later
/// (both bodies rotated by kStepRotation about a random axis and moved by kStepTranslation in a
/// random direction). Deterministic for a given (seed).
struct CellPoses {
  std::vector<PosePair> pose0, pose1;
};

/// Icosphere pairs: A at the origin, B at (2 + g, 0, 0), both randomly rotated.
CellPoses spherePoses(Real gap, std::uint64_t seed);
/// Ellipsoid pairs: both randomly rotated, A at the origin; for a random unit u, B is placed so
/// that its support point towards -u lies at A's support point towards +u plus g u. Both surfaces
/// have normal ±u at these points, so for g > 0 they are the closest points and the exact distance
/// is g (up to rounding); for g < 0 the bodies overlap by |g| along u.
CellPoses ellipsoidPoses(const proxima::Ellipsoid& e, Real gap, std::uint64_t seed);

/// Short label used in benchmark names and reports: 2, 1e-3, 1e-9, -0.1.
std::string gapLabel(Real g);

}  // namespace pbench
