// GJK distance between two convex bodies given by support mappings (Montanari 2017 Algorithm 5,
// with the printed `continue` read as terminate), with Signed Volumes or Johnson as sub-algorithm,
// warm start from a per-pair cache, and NaN-safe exits.
//
// The query runs in the local frame of body A: B's pose is expressed relative to A once, which keeps
// the CSO near the origin of coordinates even when the bodies sit far from the world origin.
#pragma once

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "proxima/core/status.hpp"
#include "proxima/core/tolerances.hpp"
#include "proxima/core/types.hpp"
#include "proxima/narrowphase/signed_volumes.hpp"
#include "proxima/shapes/convex.hpp"

namespace proxima {

struct GjkOptions {
  SubAlgorithm subAlgorithm = SubAlgorithm::SignedVolumes;
  SignMode signs = SignMode::Fast;
  bool johnsonBackup = true;  ///< only for SubAlgorithm::Johnson
  SupportMode supportMode = SupportMode::Auto;
  int maxIterations = tol::kGjkMaxIterations;
  Real relTolerance = tol::kGjkRelative;  ///< ε_rel² of Alg. 5 line 8
  Real absTolerance = tol::kGjkAbsolute;
  Real touchTolerance = tol::kGjkTouch;  ///< ε_tol of Alg. 5 line 13
  std::vector<Real>* normTrace = nullptr;   ///< if set, receives ||v_k|| after every iteration
  SubAlgorithmStats* stats = nullptr;       ///< if set, accumulates sub-algorithm call counts
};

/// Per-pair warm-start data kept by the caller between queries (e.g. between DEM time steps).
struct GjkCache {
  bool valid = false;
  int size = 0;
  Vec3 localA[4];  ///< support points of the last simplex in A's local frame
  Vec3 localB[4];  ///< ... and in B's local frame
  SupportHint hintA, hintB;
  void reset() { *this = GjkCache{}; }
};

/// Result of a distance query. All points and vectors are in the world frame.
struct DistanceResult {
  Status status = Status::InvalidInput;
  Real distance = std::numeric_limits<Real>::quiet_NaN();  ///< < 0 only for inflated shapes
  Vec3 witnessA = Vec3::Zero();  ///< closest point on A (world)
  Vec3 witnessB = Vec3::Zero();  ///< closest point on B (world)
  Vec3 normal = Vec3::Zero();    ///< unit, from A to B; zero when the cores overlap
  int iterations = 0;
  int simplexSize = 0;           ///< |W| of the final simplex
  Vec3 simplexA[4], simplexB[4]; ///< support points on A and B of the final simplex (world)
  Real lambda[4] = {0, 0, 0, 0}; ///< barycentric coordinates of the final simplex
  std::string message;           ///< set for InvalidInput
};

namespace detail {

inline SimplexSolution runSubAlgorithm(const Vec3* y, int n, bool gjkOrder, const GjkOptions& o) {
  std::span<const Vec3> s(y, static_cast<std::size_t>(n));
  if (o.subAlgorithm == SubAlgorithm::Johnson) return johnson(s, gjkOrder, o.johnsonBackup, o.stats);
  return gjkOrder ? signedVolumesGjk(s, o.signs, o.stats) : signedVolumes(s, o.signs, o.stats);
}

}  // namespace detail

/// GJK on the cores (no radii). Both shapes model the support concept of convex.hpp.
template <class SA, class SB>
DistanceResult gjkDistance(const SA& a, const Transform& poseA, const SB& b, const Transform& poseB,
                           const GjkOptions& opt = {}, GjkCache* cache = nullptr) {
  // B relative to A: x_A = R x_B + t.
  const Mat3 R = poseA.rotation.transpose() * poseB.rotation;
  const Vec3 t = poseA.rotation.transpose() * (poseB.translation - poseA.translation);

  SupportHint hintA{0, opt.supportMode}, hintB{0, opt.supportMode};
  if (cache && cache->valid) hintA.vertex = cache->hintA.vertex, hintB.vertex = cache->hintB.vertex;

  // Simplex, newest vertex first: CSO points y = pa - pb and their pre-images (A frame).
  // lb keeps B's support points in B's own frame exactly as returned, for the warm-start cache
  // (recomputing them through the inverse pose would add drift at every step).
  Vec3 y[4], pa[4], pb[4], lb[4];
  int n = 0;
  Vec3 v;
  DistanceResult out;
  out.status = Status::Separated;

  auto finish = [&](Status st, const SimplexSolution* sol) {
    out.status = st;
    Vec3 za = Vec3::Zero(), zb = Vec3::Zero();
    out.simplexSize = n;
    for (int i = 0; i < n; ++i) {
      const Real l = sol ? sol->lambda[i] : (i == 0 ? 1.0 : 0.0);
      za += l * pa[i];
      zb += l * pb[i];
      out.lambda[i] = l;
      out.simplexA[i] = poseA.apply(pa[i]);
      out.simplexB[i] = poseA.apply(pb[i]);
    }
    const Vec3 d = za - zb;  // = v, A minus B
    const Real dist = st == Status::Overlapping ? 0.0 : d.norm();
    out.distance = dist;
    out.witnessA = poseA.apply(za);
    out.witnessB = poseA.apply(zb);
    if (st != Status::Overlapping && dist > 0) {
      Vec3 nrm = -d / dist;
      // With a triangle simplex the normal of its plane is far more accurate than the direction of
      // v when the distance is tiny (v is a difference of O(1) points: ~1e-16 / d relative error).
      if (n == 3) {
        Vec3 f = (y[1] - y[0]).cross(y[2] - y[0]);
        const Real fn = f.norm();
        if (fn > 0 && std::isfinite(fn)) {
          f /= fn;
          if (f.dot(nrm) < 0) f = -f;
          if (f.dot(nrm) > 0.999) nrm = f;
        }
      }
      out.normal = poseA.rotate(nrm);
    }
    if (cache) {
      cache->valid = true;
      cache->size = n;
      for (int i = 0; i < n; ++i) cache->localA[i] = pa[i], cache->localB[i] = lb[i];
      cache->hintA = hintA;
      cache->hintB = hintB;
    }
    return out;
  };

  auto supportPair = [&](const Vec3& dir, Vec3& outA, Vec3& outB, Vec3& localB) {
    outA = a.support(-dir, hintA);
    localB = b.support(R.transpose() * dir, hintB);
    outB = R * localB + t;
  };

  // Reduce the simplex to the supporting set W of a sub-algorithm solution (order preserved).
  auto keepOnly = [&](const SimplexSolution& w) {
    Vec3 ny[4], na[4], nb[4], nl[4];
    for (int i = 0; i < w.size; ++i) {
      const int k = w.ids[i];
      ny[i] = y[k], na[i] = pa[k], nb[i] = pb[k], nl[i] = lb[k];
    }
    n = w.size;
    for (int i = 0; i < n; ++i) y[i] = ny[i], pa[i] = na[i], pb[i] = nb[i], lb[i] = nl[i];
  };

  // Warm start: re-evaluate the cached simplex under the current poses (its points still lie on the
  // shapes) and take its point of minimum norm as the first direction.
  SimplexSolution sol;  // barycentrics of the current simplex (ids = positions in y)
  if (cache && cache->valid && cache->size > 0) {
    n = cache->size;
    for (int i = 0; i < n; ++i) {
      pa[i] = cache->localA[i];
      lb[i] = cache->localB[i];
      pb[i] = R * lb[i] + t;
      y[i] = pa[i] - pb[i];
    }
    const SimplexSolution s0 = detail::runSubAlgorithm(y, n, false, opt);
    keepOnly(s0);
    sol = s0;
    for (int i = 0; i < n; ++i) sol.ids[i] = i;
    v = s0.point;
    if (n == 4) return finish(Status::Overlapping, &sol);
  } else {
    // Cold start: the CSO support point towards B's centre seen from A (usually near the origin).
    Vec3 dir = -t;
    if (!(dir.squaredNorm() > 0)) dir = -Vec3::UnitX();
    Vec3 sa, sb, sl;
    supportPair(dir, sa, sb, sl);
    v = sa - sb;
    y[0] = v, pa[0] = sa, pb[0] = sb, lb[0] = sl;
    n = 1;
    sol.size = 1;
    sol.ids[0] = 0;
    sol.lambda[0] = 1;
    sol.point = v;
  }
  Real vv = v.squaredNorm();
  if (!std::isfinite(vv)) {
    out.message = "non-finite support point";
    return finish(Status::Degenerate, &sol);
  }
  auto maxY2 = [&]() {
    Real m = 0;
    for (int i = 0; i < n; ++i) m = std::max(m, y[i].squaredNorm());
    return m;
  };
  if (vv <= opt.touchTolerance * maxY2()) return finish(Status::Overlapping, &sol);

  for (int k = 1; k <= opt.maxIterations; ++k) {
    out.iterations = k;
    Vec3 sa, sb, sl;
    supportPair(v, sa, sb, sl);  // w = s_A(-v) - s_B(v)
    const Vec3 w = sa - sb;
    // Progress test (Alg. 5 line 8), written so that a NaN terminates: stop unless clearly improving.
    // v is always a genuine CSO point (cold or warm start), so the test is valid from k = 1.
    const Real gap = vv - v.dot(w);
    const Real scale = std::sqrt(std::max(maxY2(), w.squaredNorm()));
    if (!(gap > opt.relTolerance * vv + opt.absTolerance * std::sqrt(vv) * scale))
      return finish(Status::Separated, &sol);
    // w already in the simplex: no further progress possible.
    bool dup = false;
    for (int i = 0; i < n; ++i) dup = dup || (y[i] == w);
    if (dup) return finish(Status::Separated, &sol);
    // τ = {w} ∪ W, newest first.
    for (int i = n; i > 0; --i) y[i] = y[i - 1], pa[i] = pa[i - 1], pb[i] = pb[i - 1], lb[i] = lb[i - 1];
    y[0] = w, pa[0] = sa, pb[0] = sb, lb[0] = sl;
    ++n;
    const SimplexSolution next = detail::runSubAlgorithm(y, n, true, opt);
    const Real nv = next.point.squaredNorm();
    if (!(nv < vv)) {
      // No descent (rounding): keep the previous simplex, which is the best answer available.
      for (int i = 0; i < n - 1; ++i) y[i] = y[i + 1], pa[i] = pa[i + 1], pb[i] = pb[i + 1], lb[i] = lb[i + 1];
      --n;
      if (std::isnan(nv)) {
        out.message = "sub-algorithm produced NaN";
        return finish(Status::Degenerate, &sol);
      }
      return finish(Status::Separated, &sol);
    }
    // Keep only W.
    keepOnly(next);
    sol = next;
    for (int i = 0; i < n; ++i) sol.ids[i] = i;
    v = next.point;
    vv = nv;
    if (opt.normTrace) opt.normTrace->push_back(std::sqrt(vv));
    if (n == 4) return finish(Status::Overlapping, &sol);
    if (vv <= opt.touchTolerance * maxY2()) return finish(Status::Overlapping, &sol);
  }
  return finish(Status::MaxIterations, &sol);
}

}  // namespace proxima
