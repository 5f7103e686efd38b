// Distance between two runtime shapes: validates the input, splits each shape into core + radius
// (spheres are inflated points, capsules inflated segments), runs GJK on the cores and subtracts
// the radii afterwards (Box2D-style proxies; ARCHITECTURE.md "A shape is a core plus a radius").
#pragma once

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

/// nullopt when the options are usable (enumerations in range, counts >= 1, finite tolerances
/// >= 0); otherwise the field and what is wrong.
std::optional<std::string> validateOptions(const GjkOptions& options);

/// Key of the ordered pair (A, B) for warm-start caches (GjkCache::pairKey): built from the shapes'
/// fingerprints, so a cache moved to another pair, or to this pair with A and B swapped, is
/// detected and reset (its cached support points would not lie on the new shapes). Never 0.
std::uint64_t cachePairKey(const Shape& a, const Shape& b);

}  // namespace proxima
