// Private: the verdicts of validatePose / validateOptions without their messages, inline for the
// runtime queries (distance(), contact()), which check two poses and the options on every call: a
// valid input should cost a few comparisons, and only an invalid one goes on to the functions that
// name what is wrong (they start with these same verdicts, so the two cannot disagree). Kept out of
// the public headers so that they are always compiled with the library's flags (under a caller's
// -ffast-math, std::isfinite and the NaN comparisons could be folded away).
#pragma once

#include <cmath>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "proxima/core/tolerances.hpp"
#include "proxima/core/types.hpp"
#include "proxima/narrowphase/gjk.hpp"
#include "proxima/narrowphase/penetration.hpp"

namespace proxima::detail {

/// validatePose's verdict. RᵀR is symmetric, so its six distinct entries decide |RᵀR - I| < tol; a
/// non-finite entry makes one of them NaN or infinite, which fails the same comparisons; det > 0
/// refuses reflections. (In SSE2 pairs where the build has them: each query checks two poses, and
/// the scalar form was ~8 % of a box-box contact query.)
inline bool poseIsValid(const Transform& pose) {
  const Mat3& r = pose.rotation;
#if defined(__SSE2__)
  const __m128d c0 = _mm_loadu_pd(&r(0, 0)), c1 = _mm_loadu_pd(&r(0, 1)), c2 = _mm_loadu_pd(&r(0, 2));
  const __m128d z0 = _mm_load_sd(&r(2, 0)), z1 = _mm_load_sd(&r(2, 1)), z2 = _mm_load_sd(&r(2, 2));
  // Entries (ci·cj, ck·cl) of RᵀR, two at a time: (x, y) lanes summed, plus the z products.
  auto pairOf = [](__m128d ai, __m128d aj, __m128d zi, __m128d zj, __m128d bk, __m128d bl, __m128d zk, __m128d zl) {
    const __m128d p = _mm_mul_pd(ai, aj), q = _mm_mul_pd(bk, bl);
    const __m128d xy = _mm_add_pd(_mm_unpacklo_pd(p, q), _mm_unpackhi_pd(p, q));
    return _mm_add_pd(xy, _mm_mul_pd(_mm_unpacklo_pd(zi, zk), _mm_unpacklo_pd(zj, zl)));
  };
  const __m128d one = _mm_set1_pd(1), sign = _mm_set1_pd(-0.0);
  const __m128d e01 = _mm_sub_pd(pairOf(c0, c0, z0, z0, c1, c1, z1, z1), one);       // |c0|²-1, |c1|²-1
  const __m128d e2d = _mm_sub_pd(pairOf(c2, c2, z2, z2, c0, c1, z0, z1), _mm_set_pd(0, 1));  // |c2|²-1, c0·c1
  const __m128d e34 = pairOf(c0, c2, z0, z2, c1, c2, z1, z2);                        // c0·c2, c1·c2
  const __m128d tol = _mm_set1_pd(tol::kRotationOrthonormality);
  auto small = [&](__m128d e) { return _mm_movemask_pd(_mm_cmplt_pd(_mm_andnot_pd(sign, e), tol)); };
  // det = (c0 x c1)·c2: (x, y) of the cross product = a.yz b.zx - a.zx b.yz, z = ax by - ay bx.
  const __m128d yz0 = _mm_shuffle_pd(c0, z0, 1), zx0 = _mm_unpacklo_pd(z0, c0);
  const __m128d yz1 = _mm_shuffle_pd(c1, z1, 1), zx1 = _mm_unpacklo_pd(z1, c1);
  const __m128d kxy = _mm_sub_pd(_mm_mul_pd(yz0, zx1), _mm_mul_pd(zx0, yz1));
  const __m128d pz = _mm_mul_pd(c0, _mm_shuffle_pd(c1, c1, 1));
  const __m128d kz = _mm_sub_sd(pz, _mm_unpackhi_pd(pz, pz));
  const __m128d dxy = _mm_mul_pd(kxy, c2);
  const __m128d det = _mm_add_sd(_mm_add_sd(dxy, _mm_unpackhi_pd(dxy, dxy)), _mm_mul_sd(kz, z2));
  const Vec3& t = pose.translation;
  const __m128d big = _mm_set1_pd(tol::kMaxMagnitude);
  const int tOk = _mm_movemask_pd(_mm_cmple_pd(_mm_andnot_pd(sign, _mm_loadu_pd(&t[0])), big)) |
                  (_mm_movemask_pd(_mm_cmple_sd(_mm_andnot_pd(sign, _mm_load_sd(&t[2])), big)) & 1) << 2;
  return (small(e01) & small(e2d) & small(e34)) == 3 && tOk == 7 && _mm_comigt_sd(det, _mm_setzero_pd());
#else
  const Vec3 c0 = r.col(0), c1 = r.col(1), c2 = r.col(2);
  const Real e[6] = {c0.squaredNorm() - 1, c1.squaredNorm() - 1, c2.squaredNorm() - 1,
                     c0.dot(c1),           c0.dot(c2),           c1.dot(c2)};
  bool ok = (pose.translation.array().abs() <= tol::kMaxMagnitude).all();  // (each NaN fails)
  for (const Real x : e) ok &= std::abs(x) < tol::kRotationOrthonormality;
  ok &= c0.cross(c1).dot(c2) > 0;  // a rotation, not a reflection (det = +1, not -1)
  return ok;
#endif
}

/// Both poses' verdicts in one pass with AVX2 and FMA (4-wide columns; valid_input.cpp), for CPUs with
/// them: RRᵀ instead of RᵀR (the same singular values, so the same bound on orthonormality; a pose
/// near the tolerance that one form accepts and the other refuses is answered as valid, as when the
/// quick verdict is stricter than validatePose), det > 0, coordinates finite and within 1e60.
bool posesAreValidAvx2(const Transform& a, const Transform& b);
/// Whether the CPU runs posesAreValidAvx2 (AVX2 and FMA; decided once).
bool cpuHasAvx2Fma();

/// poseIsValid of both poses: by posesAreValidAvx2 where the CPU has AVX2 and FMA, else by poseIsValid. (Per
/// box-box contact query on an AMD EPYC: the SSE2 form cost ~14 ns of ~109, this one ~11 of ~102.)
inline bool posesAreValid(const Transform& a, const Transform& b) {
  static const bool fast = cpuHasAvx2Fma();
  return fast ? posesAreValidAvx2(a, b) : poseIsValid(a) && poseIsValid(b);
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
