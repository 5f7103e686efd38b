// Private: the verdicts of validatePose / validateOptions without their messages, inline for the
// runtime queries (distance(), contact()), which check two poses and the options on every call: a
// valid input should cost a few comparisons, and only an invalid one goes on to the functions that
// name what is wrong (they start with these same verdicts, so the two cannot disagree). Kept out of
// the public headers so that they are always compiled with the library's flags (under a caller's
// -ffast-math, std::isfinite and the NaN comparisons could be folded away).
#pragma once

#include <cmath>

#include "proxima/core/tolerances.hpp"
#include "proxima/core/types.hpp"
#include "proxima/narrowphase/gjk.hpp"
#include "proxima/narrowphase/penetration.hpp"

namespace proxima::detail {

/// validatePose's verdict. RᵀR is symmetric, so its six distinct entries decide |RᵀR - I| < tol; a
/// non-finite entry makes one of them NaN or infinite, which fails the same comparisons; det > 0
/// refuses reflections.
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

/// validateOptions(GjkOptions)'s verdict (the same conditions).
inline bool optionsAreValid(const GjkOptions& o) {
  auto tolOk = [](Real v) { return v >= 0 && std::isfinite(v); };
  return static_cast<unsigned>(o.subAlgorithm) <= static_cast<unsigned>(SubAlgorithm::Johnson) &&
         static_cast<unsigned>(o.signs) <= static_cast<unsigned>(SignMode::Exact) &&
         static_cast<unsigned>(o.supportMode) <= static_cast<unsigned>(SupportMode::HillClimb) &&
         o.maxIterations >= 1 && o.maxRestarts >= 0 && tolOk(o.relTolerance) && tolOk(o.absTolerance) &&
         tolOk(o.touchTolerance) && tolOk(o.restartGap);
}

/// validateOptions(PenetrationOptions)'s verdict (the same conditions).
inline bool optionsAreValid(const PenetrationOptions& o) {
  return static_cast<unsigned>(o.method) <= static_cast<unsigned>(PenetrationMethod::Cundall) &&
         o.maxExpansions >= 1 && o.relTolerance >= 0 && std::isfinite(o.relTolerance) && optionsAreValid(o.gjk);
}

}  // namespace proxima::detail
