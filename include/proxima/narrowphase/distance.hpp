// Distance between two runtime shapes: validates the input, splits each shape into core + radius
// (spheres are inflated points, capsules inflated segments), runs GJK on the cores and subtracts
// the radii afterwards (Box2D-style proxies; ARCHITECTURE.md "A shape is a core plus a radius").
#pragma once

#include <cmath>

#include "proxima/narrowphase/gjk.hpp"
#include "proxima/shapes/shape.hpp"

namespace proxima {

/// Signed distance between a and b. When the cores are apart but the radii overlap, distance < 0
/// and status is Overlapping (distance = core distance - radii, exact). When the cores themselves
/// overlap, distance = -(rA + rB): an upper bound on the signed distance (the exact depth is the
/// penetration query's job) and the normal is zero.
DistanceResult distance(const Shape& a, const Transform& poseA, const Shape& b, const Transform& poseB,
                        const GjkOptions& options = {}, GjkCache* cache = nullptr);

/// Input struct form of the same query (ARCHITECTURE.md: queries take Input/Output structs plus a
/// warm-start cache). The shapes are referenced, not copied.
struct DistanceInput {
  const Shape* a = nullptr;
  Transform poseA;
  const Shape* b = nullptr;
  Transform poseB;
  GjkOptions options;
};
DistanceResult distance(const DistanceInput& input, GjkCache* cache = nullptr);

/// nullopt when the pose is usable; otherwise what is wrong with it.
std::optional<std::string> validatePose(const Transform& pose);

/// validatePose's verdict without the message (inline: every runtime query checks two poses, and a
/// valid one should cost a few comparisons). RᵀR is symmetric, so its six distinct entries decide
/// |RᵀR - I| < tol; a non-finite entry makes one of them NaN or infinite, which fails the same
/// comparisons; det > 0 refuses reflections.
inline bool poseIsValid(const Transform& pose) {
  const Mat3& r = pose.rotation;
  const Vec3 c0 = r.col(0), c1 = r.col(1), c2 = r.col(2);
  const Real e[6] = {c0.squaredNorm() - 1, c1.squaredNorm() - 1, c2.squaredNorm() - 1,
                     c0.dot(c1),           c0.dot(c2),           c1.dot(c2)};
  bool ok = (pose.translation.array().abs() <= tol::kMaxMagnitude).all();  // (each NaN fails)
  for (const Real x : e) ok &= std::abs(x) < tol::kRotationOrthonormality;
  ok &= c0.cross(c1).dot(c2) > 0;  // a rotation, not a reflection (det = +1, not -1)
  return ok;
}

/// nullopt when the options are usable (enumerations in range, counts >= 1, finite tolerances
/// >= 0); otherwise the field and what is wrong.
std::optional<std::string> validateOptions(const GjkOptions& options);

/// validateOptions's verdict without the message (the same conditions).
inline bool optionsAreValid(const GjkOptions& o) {
  auto tolOk = [](Real v) { return v >= 0 && std::isfinite(v); };
  return static_cast<unsigned>(o.subAlgorithm) <= static_cast<unsigned>(SubAlgorithm::Johnson) &&
         static_cast<unsigned>(o.signs) <= static_cast<unsigned>(SignMode::Exact) &&
         static_cast<unsigned>(o.supportMode) <= static_cast<unsigned>(SupportMode::HillClimb) &&
         o.maxIterations >= 1 && o.maxRestarts >= 0 && tolOk(o.relTolerance) && tolOk(o.absTolerance) &&
         tolOk(o.touchTolerance) && tolOk(o.restartGap);
}

/// Key of the ordered pair (A, B) for warm-start caches (GjkCache::pairKey): built from the shapes'
/// fingerprints, so a cache moved to another pair, or to this pair with A and B swapped, is
/// detected and reset (its cached support points would not lie on the new shapes). Never 0.
std::uint64_t cachePairKey(const Shape& a, const Shape& b);

}  // namespace proxima
