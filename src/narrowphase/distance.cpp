#include "proxima/narrowphase/distance.hpp"

#include <cmath>
#include <limits>
#include <variant>

#include "cores.hpp"
#include "pair_cache.hpp"
#include "valid_input.hpp"
#include "proxima/core/hash.hpp"
#include "proxima/core/tolerances.hpp"

namespace proxima {
using detail::Core;
using detail::coreOf;

std::optional<std::string> validatePose(const Transform& pose) {
  // Only a failing pose goes past poseIsValid (the header's fast check), to name what is wrong.
  if (detail::poseIsValid(pose)) return std::nullopt;
  if (!pose.translation.allFinite()) return std::string("position has a non-finite coordinate");
  if (!(pose.translation.array().abs() <= tol::kMaxMagnitude).all())
    return std::string("position has a coordinate beyond the supported range (|x| > 1e60)");
  if (!pose.rotation.allFinite()) return std::string("orientation has a non-finite component");
  const Real err = (pose.rotation.transpose() * pose.rotation - Mat3::Identity()).cwiseAbs().maxCoeff();
  if (!(err < tol::kRotationOrthonormality)) return std::string("orientation is not a rotation (quaternion not unit?)");
  if (!(pose.rotation.determinant() > 0))
    return std::string("orientation is a reflection (determinant -1), not a rotation: it would turn the shape inside out");
  return std::nullopt;
}

std::optional<std::string> validateOptions(const GjkOptions& o) {
  // Enumerations set from integers by a caller, counts and tolerances: out-of-range values would
  // select no algorithm, loop zero times, or never converge.
  if (detail::optionsAreValid(o)) return std::nullopt;
  if (static_cast<unsigned>(o.subAlgorithm) > static_cast<unsigned>(SubAlgorithm::Johnson))
    return "options.subAlgorithm: unknown value " + std::to_string(static_cast<int>(o.subAlgorithm));
  if (static_cast<unsigned>(o.signs) > static_cast<unsigned>(SignMode::Exact))
    return "options.signs: unknown value " + std::to_string(static_cast<int>(o.signs));
  if (static_cast<unsigned>(o.supportMode) > static_cast<unsigned>(SupportMode::HillClimb))
    return "options.supportMode: unknown value " + std::to_string(static_cast<int>(o.supportMode));
  if (o.maxIterations < 1) return "options.maxIterations must be >= 1 (got " + std::to_string(o.maxIterations) + ")";
  if (o.maxRestarts < 0) return "options.maxRestarts must be >= 0 (got " + std::to_string(o.maxRestarts) + ")";
  for (auto [name, v] : {std::pair{"relTolerance", o.relTolerance}, std::pair{"absTolerance", o.absTolerance},
                         std::pair{"touchTolerance", o.touchTolerance}, std::pair{"restartGap", o.restartGap}})
    if (!(v >= 0) || !std::isfinite(v)) return std::string("options.") + name + " must be finite and >= 0";
  return std::nullopt;
}

std::uint64_t cachePairKey(const Shape& a, const Shape& b) {
  // Ordered (swapping A and B changes the key unless the shapes are equal).
  const std::uint64_t f[2] = {a.fingerprint(), b.fingerprint()};
  return hashWords(kHashSeed, f, sizeof f) | 1;
}

DistanceResult distance(const Shape& a, const Transform& poseA, const Shape& b, const Transform& poseB,
                        const GjkOptions& options, GjkCache* cache) {
  if (cache) detail::bindCacheToPair(*cache, cache->pairKey, a, b);
  // The verdicts first (a few comparisons for valid input); the messages only for invalid input.
  if (!(a.quickValid() && b.quickValid() && detail::posesAreValid(poseA, poseB) &&
        detail::optionsAreValid(options))) [[unlikely]] {
    DistanceResult bad;
    bad.status = Status::InvalidInput;
    if (auto m = a.validate()) return bad.message = "a: " + *m, bad;
    if (auto m = b.validate()) return bad.message = "b: " + *m, bad;
    if (auto m = validatePose(poseA)) return bad.message = "a: " + *m, bad;
    if (auto m = validatePose(poseB)) return bad.message = "b: " + *m, bad;
    if (auto m = validateOptions(options)) return bad.message = *m, bad;
  }

  const Core ca = coreOf(a), cb = coreOf(b);
  // (Two cores of different types in one order, as contact() runs them: cores.hpp, kSwappedCores.)
  auto query = [&](const auto& p, const Transform& pp, const auto& q, const Transform& pq) {
    return gjkDistance(p, pp, q, pq, options, cache);
  };
  DistanceResult r =
      std::visit([&](const auto& x, const auto& y) { return detail::inCoreOrder(x, poseA, y, poseB, query); }, ca, cb);
  const Real ra = a.totalRadius(), rb = b.totalRadius();
  if (ra == 0 && rb == 0) return r;
  if (r.status == Status::Overlapping) {
    // Cores overlap: the depth is at least ra + rb.
    r.distance = -(ra + rb);
    r.lowerBound = -std::numeric_limits<Real>::infinity();  // depth unknown here
    return r;
  }
  if (r.status == Status::Separated || r.status == Status::MaxIterations || r.status == Status::Degenerate) {
    const Vec3 n = r.normal;
    for (int i = 0; i < r.simplexSize && n.squaredNorm() > 0; ++i) r.simplexA[i] += ra * n, r.simplexB[i] -= rb * n;
    detail::offsetByRadii(r, ra, rb);
  }
  return r;
}

DistanceResult distance(const DistanceInput& in, GjkCache* cache) {
  if (!in.a || !in.b) {
    DistanceResult bad;
    bad.message = !in.a ? "a: no shape given" : "b: no shape given";
    return bad;
  }
  return distance(*in.a, in.poseA, *in.b, in.poseB, in.options, cache);
}

}  // namespace proxima
