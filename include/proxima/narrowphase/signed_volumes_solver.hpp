// Signed Volumes sub-algorithm (Montanari 2017 §3.1-3.2, Algorithms 1-4), header-only so that GJK's
// inner loop can inline it. The public entry points are in signed_volumes.hpp.
#pragma once

#include <cmath>
#include <limits>

#include "proxima/core/predicates.hpp"
#include "proxima/narrowphase/signed_volumes.hpp"

namespace proxima::detail {

inline constexpr Real kSvInf = std::numeric_limits<Real>::infinity();

inline int sgn(Real x) { return (x > 0) - (x < 0); }
inline bool agreeSign(int s, int t) { return (s != 0) & (s == t); }

/// The Signed Volumes recursion S3D -> S2D -> S1D over the simplex y (Montanari Algorithms 1-4).
/// Gjk = the GJK-tailored variant (§3.2.2): y[0] is the newest vertex and is never dropped. Header-only
/// so that GJK's loop inlines it with the variant fixed at compile time.
template <bool Gjk>
struct SvSolver {
  const Vec3* y;
  static constexpr bool gjk = Gjk;
  bool exact;  // exact signs of the volume forms
  SubAlgorithmStats* stats;
  // Memo of S1D results per (i1, i2) pair: repeated inspections of the same edge/vertex regions are
  // served from here (the effect of the thesis's notWids list, §3.2.3). Entries are only read once
  // their bit in memoMask is set, so the array is deliberately left uninitialised (this object is
  // built once per GJK iteration).
  // (An S1D answer has at most two vertices; a plain struct keeps the 16 entries free of the
  // constructor work SimplexSolution's member initialisers would cost on every call.)
  struct EdgeAnswer {
    int size;
    int ids[2];
    Real lambda[2];
    Vec3 point;
  };
  unsigned memoMask = 0;
  EdgeAnswer memo[16];

  static SimplexSolution fromEdge(const EdgeAnswer& e) {
    SimplexSolution r;
    r.size = e.size;
    r.ids[0] = e.ids[0], r.ids[1] = e.ids[1];
    r.lambda[0] = e.lambda[0], r.lambda[1] = e.lambda[1];
    r.point = e.point;
    return r;
  }

  SvSolver(const Vec3* y_, bool exact_, SubAlgorithmStats* stats_) : y(y_), exact(exact_), stats(stats_) {}

  static Real norm2(const SimplexSolution& s) { return s.point.squaredNorm(); }

  SimplexSolution vertex(int i) const {
    SimplexSolution r;
    r.size = 1;
    r.ids[0] = i, r.ids[1] = i;  // second entry unused; set so that copies read defined values
    r.lambda[0] = 1, r.lambda[1] = 0;
    r.point = y[i];
    return r;
  }

  // S1D, Montanari Alg. 4 with the projection sign erratum fixed: p = s2 - (s2·t)/(t·t) t.
  // The answer is written once, into the memo, and returned by reference: the callers keep a pointer
  // to the best edge instead of copying answers around.
  const EdgeAnswer& s1d(int i1, int i2) {
    const unsigned key = static_cast<unsigned>(i1 * 4 + i2);
    EdgeAnswer& e = memo[key];
    if (memoMask & (1u << key)) return e;
    memoMask |= 1u << key;
    if (stats) ++stats->s1d;
    const Vec3& a = y[i1];
    const Vec3& b = y[i2];
    const Vec3 t = b - a;
    const Real s = b.dot(t) / t.dot(t);  // p = b - s t
    // Project onto the axis where the segment is longest (the "safest" axis; the first on ties).
    // The axis is chosen by integer selects and the coordinates read back by index: the winner is
    // data-dependent, and a branch on it mispredicts. Only p's coordinate on that axis is needed.
    const Real m[3] = {a.x() - b.x(), a.y() - b.y(), a.z() - b.z()};
    int I = std::abs(m[1]) > std::abs(m[0]);
    I += (std::abs(m[2]) > std::abs(m[I])) * (2 - I);
    const Real mu = m[I];
    const Real aI = a.data()[I], bI = b.data()[I];
    const Real pI = bI - s * (bI - aI);
    const Real c1 = pI - bI;  // weight of a (cofactor with p in place of a)
    const Real c2 = aI - pI;  // weight of b
    const bool ok1 = compareSigns(mu, c1), ok2 = compareSigns(mu, c2);
    if (ok1 && ok2) {
      e.size = 2;
      e.ids[0] = i1, e.ids[1] = i2;
      // λ = C / μ_max (Alg. 4 line 15), normalised by the computed sum of the cofactors (equal to μ_max
      // in exact arithmetic) so that Σλ = 1 to rounding and ν stays a convex combination.
      const Real sum = c1 + c2;
      e.lambda[0] = c1 / sum, e.lambda[1] = c2 / sum;
      e.point = e.lambda[0] * a + e.lambda[1] * b;
      return e;
    }
    // p lies beyond a (ok1), beyond b (ok2; the thesis returns s1 here, relying on GJK's ordering),
    // or the segment has zero length or is NaN: both vertices coincide to rounding, take the nearer.
    const int k = ok1 ? i1 : ok2 ? i2 : (b.squaredNorm() < a.squaredNorm()) ? i2 : i1;
    e.size = 1;
    e.ids[0] = k, e.ids[1] = k;
    e.lambda[0] = 1, e.lambda[1] = 0;
    e.point = y[k];
    return e;
  }

  // S2D, Montanari Alg. 3 (loop index erratum l = j fixed; written with explicit substitution).
  SimplexSolution s2d(int i1, int i2, int i3) {
    if (stats) ++stats->s2d;
    const Vec3& a = y[i1];
    const Vec3& b = y[i2];
    const Vec3& c = y[i3];
    const Vec3 n = (b - a).cross(c - a);
    const Vec3 p = (a.dot(n) / n.dot(n)) * n;  // Eq. 3.7: projection of O onto the plane
    // Signed areas of the projections onto the yz, zx and xy planes (minors M_{1,4}, M_{2,4}, M_{3,4}).
    static constexpr int K[3] = {1, 2, 0}, L[3] = {2, 0, 1};
    // They are the components of n = (b - a) x (c - a), already computed for p: the same 2x2
    // determinants (mu_yz = n_x, mu_zx = n_y, mu_xy = n_z) in their difference form, which is what
    // the expanded form of Alg. 3 equals in exact arithmetic (and is the more accurate of the two).
    // The largest |area| (the first on ties), selected by index as in s1d. (With non-finite
    // coordinates a NaN first area stays selected; every sign test below then fails.)
    const Real mus[3] = {n.x(), n.y(), n.z()};
    int J = std::abs(mus[1]) > std::abs(mus[0]);
    J += (std::abs(mus[2]) > std::abs(mus[J])) * (2 - J);
    const Real muMax = mus[J];
    const int k = K[J], l = L[J];
    int sMu = sgn(muMax);
    if (exact && std::isfinite(muMax)) sMu = exactSignOrient2(a[k], a[l], b[k], b[l], c[k], c[l]);
    // Fictitious simplices: p in place of each vertex.
    // (Each area in the difference form (u - w) x (v - w) of its first vertex w, as mu above: equal to
    // the expanded form in exact arithmetic, translation-invariant, and half the operations.)
    const Real pk = p[k], pl = p[l], ak = a[k], al = a[l], bk = b[k], bl = b[l], ck = c[k], cl = c[l];
    const Real C[3] = {(bk - pk) * (cl - pl) - (bl - pl) * (ck - pk), (pk - ak) * (cl - al) - (pl - al) * (ck - ak),
                       (bk - ak) * (pl - al) - (bl - al) * (pk - ak)};
    // (Exact mode: the rounded largest area must also have the exact sign.)
    const bool muSignExact = sMu == sgn(muMax);
    bool agree[3];
    bool inside = true;
    for (int j = 0; j < 3; ++j) {
      agree[j] = compareSigns(muMax, C[j]) & muSignExact;
      inside = inside & agree[j];
    }
    const int ids[3] = {i1, i2, i3};
    if (inside) {
      SimplexSolution r;
      r.size = 3;
      // λ_j = C_j / μ_max (Alg. 3 line 16), normalised by ΣC_j (= μ_max in exact arithmetic): for slender
      // triangles the rounding of the C_j would otherwise leave Σλ ≠ 1 by ~1e-13 and move ν off the CSO.
      const Real sum = C[0] + C[1] + C[2];
      for (int j = 0; j < 3; ++j) r.ids[j] = ids[j], r.lambda[j] = C[j] / sum;
      r.point = r.lambda[0] * a + r.lambda[1] * b + r.lambda[2] * c;
      // Search direction: the projection p_O itself (Eq. 3.7). Its direction is the plane normal to
      // ~1e-16, whereas Σλ s cancels to |s|/|ν| times the error of λ, which on slender triangles at
      // large coordinates (scale ratio 1e4) tilts GJK's direction enough to pick wrong support points.
      // ν = Σλ s stays the (feasible) answer.
      r.direction = p;
      r.hasDirection = true;
      return r;
    }
    // Descend to the edges opposite the vertices whose fictitious area disagrees in sign.
    const EdgeAnswer* best = nullptr;
    Real d = kSvInf;  // erratum: initialise to +inf
    auto tryEdge = [&](int j) {
      const int e1 = j == 0 ? 1 : 0, e2 = j == 2 ? 1 : 2;
      const EdgeAnswer& r = s1d(ids[e1], ids[e2]);
      const Real dn = r.point.squaredNorm();
      if (dn < d || !best) d = dn, best = &r;
    };
    for (int j = gjk ? 1 : 0; j < 3; ++j)
      if (!agree[j]) tryEdge(j);
    if (!best)  // no candidate (only possible through rounding): search all edges
      for (int j = 0; j < 3; ++j) tryEdge(j);
    return fromEdge(*best);
  }

  // S3D, Montanari Alg. 2 with d = +inf and the expanded determinant form (Eq. 4.4b).
  SimplexSolution s3d(int i1, int i2, int i3, int i4) {
    if (stats) ++stats->s3d;
    const Vec3& s1 = y[i1];
    const Vec3& s2 = y[i2];
    const Vec3& s3 = y[i3];
    const Vec3& s4 = y[i4];
    const Real C[4] = {-det3(s2, s3, s4), det3(s1, s3, s4), -det3(s1, s2, s4), det3(s1, s2, s3)};
    const Real detM = C[0] + C[1] + C[2] + C[3];
    int sDet = sgn(detM);
    int sC[4] = {sgn(C[0]), sgn(C[1]), sgn(C[2]), sgn(C[3])};
    const bool finite = std::isfinite(detM);
    if (exact && finite) {
      const TetraSigns t = exactTetraSigns(s1, s2, s3, s4);
      sDet = t.det;
      for (int j = 0; j < 4; ++j) sC[j] = t.cof[j];
    }
    bool agree[4];
    bool inside = true;
    for (int j = 0; j < 4; ++j) {
      // In exact mode the double values must agree too, so that λ = C/det M is positive.
      agree[j] = agreeSign(sDet, sC[j]) & compareSigns(detM, C[j]);
      inside = inside & agree[j];
    }
    const int ids[4] = {i1, i2, i3, i4};
    if (inside) {
      SimplexSolution r;
      r.size = 4;
      for (int j = 0; j < 4; ++j) r.ids[j] = ids[j], r.lambda[j] = C[j] / detM;
      r.point = r.lambda[0] * s1 + r.lambda[1] * s2 + r.lambda[2] * s3 + r.lambda[3] * s4;
      return r;
    }
    // Candidate faces: opposite each vertex whose fictitious volume disagrees with det M. When det M
    // is exactly zero (flat tetrahedron, e.g. Fig. 4.6 with exact signs) the hull is the union of
    // its non-degenerate faces, so only faces with a non-zero cofactor are visited.
    bool cand[4];
    const bool flat = finite && sDet == 0;
    for (int j = 0; j < 4; ++j) cand[j] = flat ? (sC[j] != 0) : !agree[j];
    SimplexSolution best;
    Real d = kSvInf;
    auto tryFace = [&](int j) {
      int f[3];
      for (int i = 0, k = 0; i < 4; ++i)
        if (i != j) f[k++] = ids[i];
      const SimplexSolution r = s2d(f[0], f[1], f[2]);
      const Real dn = norm2(r);
      if (dn < d || best.size == 0) d = dn, best = r;
    };
    for (int j = gjk ? 1 : 0; j < 4; ++j) {
      if (!cand[j]) continue;
      tryFace(j);
      // GJK variant: a candidate face is one the origin sees (its cofactor disagrees with det M). If
      // the origin's projection onto that face's plane falls inside the face (S2D keeps all three
      // vertices), the projection is the nearest point of the whole tetrahedron: the plane separates
      // the origin from it, and the projection lies on it. Any other candidate can only tie, so the
      // search ends here (the same answer as the full loop of Alg. 2 in exact arithmetic).
      if constexpr (Gjk)
        if (best.size == 3) break;
    }
    if (best.size == 0)  // all cofactors zero (O in the plane of a flat simplex) or NaN
      for (int j = gjk ? 1 : 0; j < 4; ++j) tryFace(j);
    if (best.size == 0)
      for (int j = 0; j < 4; ++j) tryFace(j);
    return best;
  }

  SimplexSolution solve(int n) {
    switch (n) {
      case 4:
        return s3d(0, 1, 2, 3);
      case 3:
        return s2d(0, 1, 2);
      case 2:
        return fromEdge(s1d(0, 1));
      default:
        return vertex(0);
    }
  }
};

}  // namespace proxima::detail
