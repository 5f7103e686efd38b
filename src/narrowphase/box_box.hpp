// Private: penetration of two overlapping boxes by the separating-axis theorem, used by GJK-TD for
// Box x Box cores (PenetrationOptions::boxBoxSat).
//
// For two convex polytopes the Minkowski difference's face normals are among the face normals of
// either body and the cross products of an edge of one with an edge of the other; the penetration
// depth is the smallest plane distance of those faces, so the minimum overlap over these candidate
// axes is the depth exactly, and every other axis only bounds it from above (the principle of
// Descantes et al.'s common-plane methods, and of Gottschalk's OBB test, here on 3 + 3 + 9 axes).
// Working in A's frame keeps the edge axes exact: e_i x R_j has B's rotation entries as components,
// so near-parallel edges lose nothing but the normalisation's rounding.
//
// Only overlaps are answered here. A separating axis (or a touching one) returns false: GJK then
// measures the distance, as for any pair. Witness points: on the reference face, the other box's
// supporting feature (vertex, edge or face) clipped to that face, averaged; on an edge-edge axis, where the
// supporting edge of B crosses the plane through A's edge along the axis, and that point moved by the
// depth onto A's edge. Whenever that geometry disagrees with the axis (a
// clipped feature that is empty, closest points off the edges: only possible at near-ties and in
// rounding) the caller's general path answers instead.
#pragma once

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "proxima/narrowphase/penetration.hpp"
#include "proxima/shapes/convex.hpp"

namespace proxima::detail {

struct BoxBoxSat {
  Real depth = 0;
  Vec3 normal = Vec3::Zero();  ///< unit, A -> B, A's frame
  Vec3 za = Vec3::Zero(), zb = Vec3::Zero();  ///< witness points, A's frame (za - zb = depth · normal)
};

namespace boxsat {

/// A vector from three scalars, its first two stored as one pair: Eigen reads a Vec3 as a pair and a
/// scalar, and a pair load of two separate scalar stores waits for both to reach the cache.
[[gnu::always_inline]] inline Vec3 vec3(Real x, Real y, Real z) {
  Vec3 v;
#if defined(__SSE2__)
  _mm_storeu_pd(v.data(), _mm_set_pd(y, x));
#else
  v[0] = x, v[1] = y;
#endif
  v[2] = z;
  return v;
}

/// r^T, each column written as vec3 writes a vector.
[[gnu::always_inline]] inline Mat3 transposed(const Mat3& r) {
  Mat3 rt;
  for (int j = 0; j < 3; ++j) rt.col(j) = vec3(r(j, 0), r(j, 1), r(j, 2));
  return rt;
}

/// The mean of m >= 1 points. (x / 2 and x · 0.5, x / 4 and x · 0.25 are the correctly rounded value
/// of the same number, subnormal results included: the same bits without a division, which a vertex
/// contact, m = 1, waited on.)
inline Vec3 average(const Vec3* pts, int m) {
  Vec3 sum = Vec3::Zero();
  for (int q = 0; q < m; ++q) sum += pts[q];
  if (m == 1) return sum;
  if (m == 2 || m == 4) return sum * (m == 2 ? 0.5 : 0.25);
  return sum / static_cast<Real>(m);
}

/// Reference box at the origin, axis-aligned with half extents h; the other box has centre c, axes
/// (columns of) r, half extents g, all in the reference frame. n: the unit reference-face normal
/// (+-e_k); nr: its products n·r_j with the other box's axes. The other box's feature supporting -n
/// (1, 2 or 4 vertices), clipped to the reference face's rectangle; its average is the witness on the
/// other box. False if nothing is left.
inline bool clipToFace(const Vec3& h, int k, const Real* nr, const Vec3& c, const Mat3& r, const Vec3& g, Vec3& zOther) {
  // Feature of the other box deepest along -n: coordinate j is fixed at -sign(n·r_j) g_j unless
  // r_j is parallel to the face to 1e-13, when it spans [-g_j, g_j]. (The feature's points then lie
  // within 1e-13 g_j of the deepest depth, so their mean, the witness, lies depth x n from A's: with
  // 1e-9, an edge tilted by 1e-10 put its mean 5e-11 g_j shallower than the depth, and the witnesses
  // that much closer than depth x n, validation §22.)
  Vec3 pts[16];
  int m = 1;
  pts[0] = c;
  int freeAxes[3], nfree = 0;
  for (int j = 0; j < 3; ++j) {
    const Real s = nr[j];
    if (std::abs(s) <= 1e-13) {
      freeAxes[nfree++] = j;
    } else {
      pts[0] -= (s > 0 ? g[j] : -g[j]) * r.col(j);
    }
  }
  if (nfree == 3) return false;
  if (nfree >= 1) {
    const Vec3 base = pts[0];
    const Vec3 u = g[freeAxes[0]] * r.col(freeAxes[0]);
    if (nfree == 1) {
      pts[0] = base - u, pts[1] = base + u, m = 2;
    } else {
      const Vec3 v = g[freeAxes[1]] * r.col(freeAxes[1]);
      pts[0] = base - u - v, pts[1] = base + u - v, pts[2] = base + u + v, pts[3] = base - u + v, m = 4;
    }
  }
  // Nothing to clip when every point lies within the face's rectangle (a vertex on the face, a small
  // face on a large one): Sutherland-Hodgman would return the same points in the same order.
  // (h_i - x_i >= 0 and h_i + x_i >= 0 are exactly x_i <= h_i and -x_i <= h_i.)
  const int i1 = k == 2 ? 0 : k + 1, i2 = k == 0 ? 2 : k - 1;
  bool inside = true;
  for (int q = 0; q < m; ++q)
    inside &= (std::abs(pts[q][i1]) <= h[i1]) & (std::abs(pts[q][i2]) <= h[i2]);
  if (inside) {
    zOther = average(pts, m);
    return true;
  }
  if (m == 1) return false;  // a vertex outside the face's rectangle
  // Sutherland-Hodgman against the four side planes |x_i| <= h_i (i != k) of the reference face.
  Vec3 buf[16];
  for (int i = 0; i < 3 && m > 0; ++i) {
    if (i == k) continue;
    for (int side = -1; side <= 1; side += 2) {
      // keep side * x_i <= h_i
      int out = 0;
      if (m == 1) {
        if (side * pts[0][i] <= h[i]) buf[out++] = pts[0];
      } else {
        const int edges = m == 2 ? 1 : m;
        for (int e = 0; e < edges; ++e) {
          const Vec3& p = pts[e];
          const Vec3& q = pts[(e + 1) % m];
          const Real dp = h[i] - side * p[i], dq = h[i] - side * q[i];
          if (dp >= 0) buf[out++] = p;
          if ((dp >= 0) != (dq >= 0)) buf[out++] = p + (q - p) * (dp / (dp - dq));
          if (m == 2 && dq >= 0) buf[out++] = q;
        }
      }
      m = std::min(out, 16);
      std::copy(buf, buf + m, pts);
      if (m == 0) return false;
    }
  }
  zOther = average(pts, m);
  return true;
}

/// The separating-axis search's outcome: whether an axis separates (or touches), the first minimum
/// among the six face overlaps (A's faces 0-2, B's 3-5), and the edge axes e = 3i + j (e_i x r_j)
/// whose overlap may be below it: a superset of the edges that beat the faces, found without a
/// square root (ov² < faceBest² |l|²); eov / elen2 hold their ov and |l|² at slot(e) (see boxBoxSat).
struct Search {
  bool separated = false;
  int fi = 0;
  Real faceBest = 0;
  unsigned loose = 0;
  /// Column-major: edge e = 3i + j at 4j + i, so that a column j's overlaps over i are one 4-wide store.
  static constexpr int slot(int e) { return 4 * (e % 3) + e / 3; }
  Real eov[12], elen2[12];
};

/// The search in plain scalars: the reference (and the build without SSE2).
///
/// Face overlaps: A's faces e_i, then B's faces r_j. Edge pairs: l = e_i x r_j, exact components
/// (l_i1, l_i2) = (-r(i2, j), r(i1, j)) (i1, i2 = i + 1, i + 2 mod 3); the overlap along l is ov / |l|
/// with ov = ha·|l| + hb·|r^T l| - |l·t|. (r^T l)_j = 0 exactly (the same two products cancel); the
/// other two components are, up to sign, the i-th components of r_m x r_j (m != j), computed once
/// per column pair: uc[k][i] = |(r_m x r_j)_i| for {m, j, k} = {0, 1, 2}. Parallel edges (|l|² <=
/// 1e-280) give no edge-edge face: no overlap test, never chosen.
inline void searchScalar(const Vec3& ha, const Vec3& hb, const Mat3& r, const Vec3& t, Search& s) {
  Real m[3][3];
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) m[i][j] = r(i, j);
  Real fov[6];
  for (int i = 0; i < 3; ++i)
    fov[i] = ha[i] + (hb[0] * std::abs(m[i][0]) + (hb[1] * std::abs(m[i][1]) + hb[2] * std::abs(m[i][2]))) - std::abs(t[i]);
  for (int j = 0; j < 3; ++j)
    fov[3 + j] = ((ha[0] * std::abs(m[0][j]) + ha[1] * std::abs(m[1][j])) + ha[2] * std::abs(m[2][j])) + hb[j] -
                 std::abs((m[0][j] * t[0] + m[1][j] * t[1]) + m[2][j] * t[2]);
  bool separated = false;
  for (int k = 0; k < 6; ++k) separated |= !(fov[k] > 0);  // (NaN separates: the general path decides)
  // The first minimum among the faces (strict <, so ties keep the lower index).
  s.fi = 0, s.faceBest = fov[0];
  for (int k = 1; k < 6; ++k)
    if (fov[k] < s.faceBest) s.faceBest = fov[k], s.fi = k;
  Real uc[3][3];
  for (int k = 0; k < 3; ++k) {
    const int mm = k == 0 ? 1 : 0, jj = k == 2 ? 1 : 2;
    for (int i = 0; i < 3; ++i) {
      const int i1 = i == 2 ? 0 : i + 1, i2 = i == 0 ? 2 : i - 1;
      uc[k][i] = std::abs(m[i1][mm] * m[i2][jj] - m[i2][mm] * m[i1][jj]);
    }
  }
  const Real fb2 = s.faceBest * s.faceBest;
  s.loose = 0;
  for (int i = 0; i < 3; ++i) {
    const int i1 = i == 2 ? 0 : i + 1, i2 = i == 0 ? 2 : i - 1;
    // B's radius along e_i x r_j: the two columns m != j, in increasing order.
    const Real rb[3] = {hb[1] * uc[2][i] + hb[2] * uc[1][i], hb[0] * uc[2][i] + hb[2] * uc[0][i],
                        hb[0] * uc[1][i] + hb[1] * uc[0][i]};
    for (int j = 0; j < 3; ++j) {
      const Real l1 = -m[i2][j], l2 = m[i1][j];
      const Real len2 = l1 * l1 + l2 * l2;
      const Real o = ha[i1] * std::abs(l1) + ha[i2] * std::abs(l2) + rb[j] - std::abs(l1 * t[i1] + l2 * t[i2]);
      const int e = 3 * i + j;
      const bool isAxis = len2 > 1e-280;
      separated |= isAxis & !(o > 0);
      s.loose |= static_cast<unsigned>(isAxis & (o * o < fb2 * len2)) << e;
      s.eov[Search::slot(e)] = o, s.elen2[Search::slot(e)] = len2;
    }
  }
  s.separated = separated;
}

#if defined(__SSE2__)
/// The same search in SSE2 pairs, with the same bits: every sum and product is the scalar search's,
/// in the same order, two at a time. (Same bits without FMA contraction, i.e. with the library's
/// flags; built with -march=native GCC fuses the two forms differently, as in types.hpp.) Pairs over
/// i for A's faces and the edge rows i = 0, 1 (one column of B per step), over j for B's faces and
/// the edge row i = 2; the third component alone. Everything stays in registers: the
/// scalar loops, vectorised by the compiler, stored their local arrays as pairs and reloaded pairs
/// that straddled two stores (perf: ~15 % of a box-box query waited on those store forwards).
[[gnu::always_inline]] inline void searchSse2(const Vec3& ha, const Vec3& hb, const Mat3& r, const Vec3& t, Search& s) {
  const __m128d sign = _mm_set1_pd(-0.0), zero = _mm_setzero_pd();
  auto vabs = [sign](__m128d x) { return _mm_andnot_pd(sign, x); };
  auto lo = [](__m128d x) { return _mm_unpacklo_pd(x, x); };  // (x0, x0)
  auto hi = [](__m128d x) { return _mm_unpackhi_pd(x, x); };  // (x1, x1)
  // (y, z) and (z, x) of a vector held as xy = (x, y) and z = (z, .)
  auto yz = [](__m128d xy, __m128d z) { return _mm_shuffle_pd(xy, z, 1); };
  auto zx = [](__m128d xy, __m128d z) { return _mm_unpacklo_pd(z, xy); };
  auto add = [](__m128d x, __m128d y) { return _mm_add_pd(x, y); };
  auto sub = [](__m128d x, __m128d y) { return _mm_sub_pd(x, y); };
  auto mul = [](__m128d x, __m128d y) { return _mm_mul_pd(x, y); };
  // (relativePose stores each column's (x, y) as one pair and z alone: these loads forward.)
  const __m128d c0 = _mm_loadu_pd(&r(0, 0)), c1 = _mm_loadu_pd(&r(0, 1)), c2 = _mm_loadu_pd(&r(0, 2));
  const __m128d z0 = _mm_load_sd(&r(2, 0)), z1 = _mm_load_sd(&r(2, 1)), z2 = _mm_load_sd(&r(2, 2));
  const __m128d txy = _mm_loadu_pd(&t[0]), tz = _mm_load_sd(&t[2]);
  const __m128d haxy = _mm_loadu_pd(&ha[0]), haz = _mm_load_sd(&ha[2]);
  const __m128d hbxy = _mm_loadu_pd(&hb[0]), hbz = _mm_load_sd(&hb[2]);
  const __m128d ha0 = lo(haxy), ha1 = hi(haxy), ha2 = lo(haz), hb0 = lo(hbxy), hb1 = hi(hbxy), hb2 = lo(hbz);
  const __m128d t0 = lo(txy), t1 = hi(txy), t2 = lo(tz);

  // A's faces i = 0, 1 (pair) and 2: ha_i + (hb0 |m_i0| + (hb1 |m_i1| + hb2 |m_i2|)) - |t_i|.
  const __m128d fA01 =
      sub(add(haxy, add(mul(hb0, vabs(c0)), add(mul(hb1, vabs(c1)), mul(hb2, vabs(c2))))), vabs(txy));
  const __m128d fA2 = sub(add(haz, add(mul(hb0, vabs(z0)), add(mul(hb1, vabs(z1)), mul(hb2, vabs(z2))))), vabs(tz));
  // B's faces j = 0, 1 (pair, from the rows of r's first two columns) and 2:
  // ((ha0 |m_0j| + ha1 |m_1j|) + ha2 |m_2j|) + hb_j - |(m_0j t0 + m_1j t1) + m_2j t2|.
  const __m128d R0 = _mm_unpacklo_pd(c0, c1), R1 = _mm_unpackhi_pd(c0, c1), R2 = _mm_unpacklo_pd(z0, z1);
  const __m128d fB01 = sub(add(add(add(mul(ha0, vabs(R0)), mul(ha1, vabs(R1))), mul(ha2, vabs(R2))), hbxy),
                           vabs(add(add(mul(R0, t0), mul(R1, t1)), mul(R2, t2))));
  const __m128d m12 = hi(c2);
  const __m128d fB2 = sub(add(add(add(mul(ha0, vabs(c2)), mul(ha1, vabs(m12))), mul(ha2, vabs(z2))), hbz),
                          vabs(add(add(mul(c2, t0), mul(m12, t1)), mul(z2, t2))));
  // Every face overlap must be > 0 (NaN separates: the general path decides).
  const int faceOk = _mm_movemask_pd(_mm_cmpgt_pd(fA01, zero)) |
                     _mm_movemask_pd(_mm_cmpgt_pd(_mm_unpacklo_pd(fA2, fB2), zero)) << 2 |
                     _mm_movemask_pd(_mm_cmpgt_pd(fB01, zero)) << 4;
  const Real f[6] = {_mm_cvtsd_f64(fA01), _mm_cvtsd_f64(hi(fA01)), _mm_cvtsd_f64(fA2),
                     _mm_cvtsd_f64(fB01), _mm_cvtsd_f64(hi(fB01)), _mm_cvtsd_f64(fB2)};
  int fi = 0;
  Real best = f[0];
  for (int k = 1; k < 6; ++k)
    if (f[k] < best) best = f[k], fi = k;
  s.fi = fi, s.faceBest = best;

  // uc_k = |r_m x r_j| ({m, j, k} = {0, 1, 2}) over i: (x, y) = a.yz b.zx - a.zx b.yz, z = ax by - ay bx.
  auto crossXY = [&](__m128d a, __m128d az, __m128d b, __m128d bz) {
    return vabs(sub(mul(yz(a, az), zx(b, bz)), mul(zx(a, az), yz(b, bz))));
  };
  auto crossZ = [&](__m128d a, __m128d b) {
    const __m128d p = mul(a, _mm_shuffle_pd(b, b, 1));
    return vabs(_mm_sub_sd(p, hi(p)));
  };
  const __m128d u0 = crossXY(c1, z1, c2, z2), u1 = crossXY(c0, z0, c2, z2), u2 = crossXY(c0, z0, c1, z1);
  const __m128d u0z = crossZ(c1, c2), u1z = crossZ(c0, c2), u2z = crossZ(c0, c1);
  const __m128d hayz = yz(haxy, haz), hazx = zx(haxy, haz), tyz = yz(txy, tz), tzx = zx(txy, tz);
  const __m128d t10 = _mm_shuffle_pd(txy, txy, 1);
  const __m128d fb2 = _mm_set1_pd(best * best), tiny = _mm_set1_pd(1e-280);
  __m128d bad = zero;
  unsigned loose = 0;
  __m128d o[3], len2[3];
  // Column j of B: the edges e_i x r_j for i = 0, 1 (a pair; l = (-(m_2j, m_0j), (m_1j, m_2j)) on the
  // (i1, i2) components). rb: B's radius along them.
  auto column = [&](int j, __m128d c, __m128d z, __m128d rb) __attribute__((always_inline)) {
    const __m128d p = zx(c, z), q = yz(c, z);  // |l_i1| = |p|, l_i2 = q
    len2[j] = add(mul(p, p), mul(q, q));
    o[j] = sub(add(add(mul(hayz, vabs(p)), mul(hazx, vabs(q))), rb), vabs(sub(mul(q, tzx), mul(p, tyz))));
    const __m128d axis = _mm_cmpgt_pd(len2[j], tiny);
    bad = _mm_or_pd(bad, _mm_andnot_pd(_mm_cmpgt_pd(o[j], zero), axis));
    const int m2 = _mm_movemask_pd(_mm_and_pd(axis, _mm_cmplt_pd(mul(o[j], o[j]), mul(fb2, len2[j]))));
    loose |= static_cast<unsigned>((m2 & 1) << j | (m2 >> 1) << (3 + j));
  };
  column(0, c0, z0, add(mul(hb1, u2), mul(hb2, u1)));
  column(1, c1, z1, add(mul(hb0, u2), mul(hb2, u0)));
  column(2, c2, z2, add(mul(hb0, u1), mul(hb1, u0)));
  // i = 2, l = (-m_1j, m_0j) on (x, y): j = 0, 1 as a pair from the rows R0, R1, j = 2 alone from
  // (m_02, m_12) swapped; len2 = m_1j² + m_0j², ov = ((ha0 |m_1j| + ha1 |m_0j|) + rb) - |m_0j t1 - m_1j t0|.
  const __m128d rb01 = add(mul(_mm_shuffle_pd(hbxy, hbxy, 1), lo(u2z)), mul(hb2, _mm_unpacklo_pd(u1z, u0z)));
  const __m128d o2 = sub(add(add(mul(ha0, vabs(R1)), mul(ha1, vabs(R0))), rb01), vabs(sub(mul(R0, t1), mul(R1, t0))));
  const __m128d len2r = add(mul(R1, R1), mul(R0, R0));
  const __m128d axis2 = _mm_cmpgt_pd(len2r, tiny);
  bad = _mm_or_pd(bad, _mm_andnot_pd(_mm_cmpgt_pd(o2, zero), axis2));
  const int m2 = _mm_movemask_pd(_mm_and_pd(axis2, _mm_cmplt_pd(mul(o2, o2), mul(fb2, len2r))));
  const __m128d sw = _mm_shuffle_pd(c2, c2, 1);  // (m_12, m_02)
  const __m128d sq = mul(sw, sw), h = mul(haxy, vabs(sw)), w = mul(c2, t10);
  const __m128d len2z = _mm_add_sd(sq, hi(sq));
  const __m128d rbz = add(mul(hb0, u1z), mul(hb1, u0z));
  const __m128d oz = _mm_sub_sd(_mm_add_sd(_mm_add_sd(h, hi(h)), rbz), vabs(_mm_sub_sd(w, hi(w))));
  const __m128d axisZ = _mm_cmpgt_sd(len2z, tiny);
  const int badZ = _mm_movemask_pd(_mm_andnot_pd(_mm_cmpgt_sd(oz, zero), axisZ)) & 1;  // (lane 0 only)
  const int mz = _mm_movemask_pd(_mm_and_pd(axisZ, _mm_cmplt_sd(mul(oz, oz), mul(fb2, len2z)))) & 1;
  loose |= static_cast<unsigned>(m2 << 6 | mz << 8);
  s.separated = faceOk != 63 || _mm_movemask_pd(bad) != 0 || badZ != 0;
  s.loose = loose;
  if (loose) {
    for (int j = 0; j < 3; ++j) _mm_storeu_pd(&s.eov[4 * j], o[j]), _mm_storeu_pd(&s.elen2[4 * j], len2[j]);
    _mm_storel_pd(&s.eov[2], o2), _mm_storeh_pd(&s.eov[6], o2), _mm_store_sd(&s.eov[10], oz);
    _mm_storel_pd(&s.elen2[2], len2r), _mm_storeh_pd(&s.elen2[6], len2r), _mm_store_sd(&s.elen2[10], len2z);
  }
}
#endif

// The 4-wide form (box_box.cpp): x86 builds without FMA contraction, where its sums and products round
// as the SSE2 search's do (with FMA the inline forms contract differently; such builds keep them).
#if (defined(__x86_64__) || defined(__i386__)) && defined(__SSE2__) && !defined(__FMA__)
#define PROXIMA_BOX_SEARCH_AVX2 1
/// relativePose(a, b, r, t), then the search, with AVX2 (no FMA): lanes 0-2 of a 256-bit register
/// hold a column or a row, so the search runs on three columns at once with the relative pose kept in
/// registers (r and t are stored for the witnesses and for GJK). The same bits as relativePose and
/// searchSse2, lane by lane the same operations in the same order (the tests compare them). For CPUs
/// with AVX2 (useAvx2Search()): the SSE2 form spilled its operands (16 registers of 2 doubles), and
/// with relativePose it ran ~620 instructions per query, ~45 % of a box-box contact query; this one ~300.
void relativePoseSearchAvx2(const Transform& a, const Transform& b, const Vec3& ha, const Vec3& hb, Mat3& r, Vec3& t,
                            Search& s);
bool cpuHasAvx2();
inline bool useAvx2Search() {
  static const bool yes = cpuHasAvx2();
  return yes;
}
#endif

}  // namespace boxsat

/// boxBoxSat (below) after its search sr, which may come from any of the search's forms (the same bits).
///
/// All 15 overlaps are computed first, with one separation test after them (the early return per
/// axis mispredicted on random rotations), then the face minimum, then the edges that beat it, in
/// squared form (no square root but the winner's). Two edge axes within rounding of each other are
/// ranked by (ov / |l|²) · ov instead of against the rounded running best.
[[gnu::always_inline]] inline bool boxBoxSatFrom(const boxsat::Search& sr, const Vec3& ha, const Vec3& hb, const Mat3& r,
                                                 const Vec3& t, BoxBoxSat& out) {
  if (sr.separated) return false;
  const int fi = sr.fi;
  const Real faceBest = sr.faceBest;
  // An edge axis must beat the faces by more than rounding (faces give the manifold a reference face;
  // at a tie both are the depth): ov / |l| < bound <=> ov² < bound² |l|² (both sides positive), so
  // the test needs no square root. Most often no edge passes it (nor the looser test against the
  // face minimum itself, the search's `loose`: then the bound's norms are not needed); the first
  // minimum among those that do, by (ov / |l|²) · ov (the squared overlap along the unit axis,
  // without underflowing ov²), is the edge axis.
  Real scale = 0;
  unsigned beat = 0;
  if (sr.loose) {
    scale = ha.norm() + hb.norm() + t.norm();
    const Real bound = faceBest - 1e-13 * scale;
    if (bound > 0) {
      const Real b2 = bound * bound;
      for (unsigned rest = sr.loose; rest; rest &= rest - 1) {
        const int e = std::countr_zero(rest);
        const int k = boxsat::Search::slot(e);
        beat |= static_cast<unsigned>(sr.eov[k] * sr.eov[k] < b2 * sr.elen2[k]) << e;
      }
    }
  }
  const Real* eov = sr.eov;
  const Real* elen2 = sr.elen2;
  int be = -1;
  if (beat) {
    be = std::countr_zero(beat);
    if (unsigned rest = beat & (beat - 1)) {
      const int k = boxsat::Search::slot(be);
      Real bestQ = (eov[k] / elen2[k]) * eov[k];
      for (; rest; rest &= rest - 1) {
        const int e = std::countr_zero(rest), m = boxsat::Search::slot(e);
        const Real q = (eov[m] / elen2[m]) * eov[m];
        if (q < bestQ) bestQ = q, be = e;
      }
    }
  }
  const int ei = be / 3, ej = be % 3;
  const bool edgeWins = be >= 0;
  // The axis (unit, A's frame) from scalars chosen by index, turned to point from A to B (its
  // product with -1 is the negation, signed zeros included); vectors are written as boxsat::vec3
  // does, so that Eigen's pair loads of them forward (a vector written one component at a time and
  // read as a pair waited on the store: ~10 % of a vertex-face query).
  Real depth, a0, a1, a2;
  int kind, bi = 0, bj = 0;  // kind 0: A's face bi, 1: B's face bj, 2: edge e_bi x r_bj
  if (edgeWins) {
    kind = 2, bi = ei, bj = ej;
    const int i1 = bi == 2 ? 0 : bi + 1, i2 = bi == 0 ? 2 : bi - 1;
    const int k = boxsat::Search::slot(be);
    const Real len = std::sqrt(elen2[k]);
    depth = eov[k] / len;
    const Real c1 = -r(i2, bj) / len, c2 = r(i1, bj) / len;
    a0 = i1 == 0 ? c1 : i2 == 0 ? c2 : 0, a1 = i1 == 1 ? c1 : i2 == 1 ? c2 : 0, a2 = i1 == 2 ? c1 : i2 == 2 ? c2 : 0;
  } else if (fi < 3) {
    kind = 0, bi = fi, depth = faceBest, a0 = fi == 0, a1 = fi == 1, a2 = fi == 2;
  } else {
    kind = 1, bj = fi - 3, depth = faceBest, a0 = r(0, bj), a1 = r(1, bj), a2 = r(2, bj);
  }
  const Real toB = (a0 * t[0] + a1 * t[1]) + a2 * t[2] < 0 ? -1 : 1;
  const Vec3 n = boxsat::vec3(toB * a0, toB * a1, toB * a2);  // A -> B
  out.depth = depth;
  out.normal = n;
  if (kind == 0) {
    // B's feature on A's face bi.
    Vec3 zb;
    // (n = ±e_bi exactly, so n·r_j is ±r(bi, j): the other two products are signed zeros, which
    // leave a nonzero sum unchanged and a zero one within the parallel test's tolerance)
    const Real nr[3] = {toB * r(bi, 0), toB * r(bi, 1), toB * r(bi, 2)};
    if (!boxsat::clipToFace(ha, bi, nr, t, r, hb, zb)) return false;
    const Real f = n[bi] > 0 ? ha[bi] : -ha[bi];
    out.zb = zb;
    out.za = boxsat::vec3(bi == 0 ? f : zb[0], bi == 1 ? f : zb[1], bi == 2 ? f : zb[2]);
    return true;
  }
  if (kind == 1) {
    // A's feature on B's face bj: the same in B's frame (A's centre -r^T t, axes r^T), mapped back.
    // (r^T v, component j = r_j · v summed as Eigen's vectorised 3 x 3 product of the SSE2 build
    // sums it, the first two components (x0 + x1) + x2, the last x0 + (x1 + x2): the bits of the
    // Eigen expression this replaced. Unvectorised Eigen sums all three as x0 + (x1 + x2).)
    auto dotCol = [&](int j, Real x, Real y, Real z) {
      return j < 2 ? (r(0, j) * x + r(1, j) * y) + r(2, j) * z : r(0, j) * x + (r(1, j) * y + r(2, j) * z);
    };
    const Mat3 rt = boxsat::transposed(r);
    const Vec3 nB = boxsat::vec3(dotCol(0, -n[0], -n[1], -n[2]), dotCol(1, -n[0], -n[1], -n[2]),
                                 dotCol(2, -n[0], -n[1], -n[2]));  // B's outward face normal, B's frame
    const Vec3 cB = boxsat::vec3(-dotCol(0, t[0], t[1], t[2]), -dotCol(1, t[0], t[1], t[2]), -dotCol(2, t[0], t[1], t[2]));
    Vec3 zaB;
    const Real nr[3] = {nB.dot(rt.col(0)), nB.dot(rt.col(1)), nB.dot(rt.col(2))};
    if (!boxsat::clipToFace(hb, bj, nr, cB, rt, ha, zaB)) return false;
    const Real f = nB[bj] > 0 ? hb[bj] : -hb[bj];
    const Vec3 zbB = boxsat::vec3(bj == 0 ? f : zaB[0], bj == 1 ? f : zaB[1], bj == 2 ? f : zaB[2]);
    out.za = r * zaB + t;
    out.zb = r * zbB + t;
    return true;
  }
  // Edge-edge: A's edge along e_bi at the corner supporting n, B's edge along r_bj at the corner
  // supporting -n; closest points of the two lines, which must fall on both edges.
  // (pa's coordinate bi is 0, the coefficient of r_bj in pb is 0: the same values as skipping them.)
  auto corner = [&](int k) { return k == bi ? Real(0) : n[k] >= 0 ? ha[k] : -ha[k]; };
  const Vec3 pa(corner(0), corner(1), corner(2));
  auto coef = [&](int k) { return k == bj ? Real(0) : n.dot(r.col(k)) >= 0 ? hb[k] : -hb[k]; };
  const Vec3 pb = t - coef(0) * r.col(0) - coef(1) * r.col(1) - coef(2) * r.col(2);
  const Vec3 db = r.col(bj);
  // B's edge meets the plane through A's edge spanned by e_bi and n (normal m = n x e_bi, a unit
  // vector: n is perpendicular to e_bi) at u = m·(pa - pb) / m·db, where m·db = ±sin of the edges'
  // angle. A's witness is B's moved by depth along n, on A's edge line up to the rounding of that
  // plane crossing. (The closest points of the two lines from the normal equations, with 1 - (e_bi·db)²
  // = sin² in their denominators, had errors growing as 1 / sin² along the edges, which the two points
  // did not share: 1.2e-4 apart for edges parallel to ~1e-12, validation §22 case D. Here an error
  // in u moves both points together along B's edge, and A's point leaves its edge line only by the
  // error times the sine.)
  const Vec3 m = n.cross(Vec3::Unit(bi));
  const Real mdb = m.dot(db);
  if (!(std::abs(mdb) > 1e-300)) return false;
  const Real u = m.dot(pa - pb) / mdb;
  const Real slack = 1e-9 * scale;
  if (!(std::abs(u) <= hb[bj] + slack)) return false;
  out.zb = pb + std::clamp(u, -hb[bj], hb[bj]) * db;
  // (n's component bi is zero: the witness's coordinate along A's edge is B's)
  const Real s = out.zb[bi];
  if (!(std::abs(s) <= ha[bi] + slack)) return false;
  const Real sc = std::clamp(s, -ha[bi], ha[bi]);
  out.za = Vec3(bi == 0 ? sc : pa[0], bi == 1 ? sc : pa[1], bi == 2 ? sc : pa[2]);
  return true;
}

/// SAT penetration of box A (half extents ha) and box B (hb), B's pose relative to A given by rotation
/// r (columns: B's axes in A's frame) and centre t. False when an axis separates or touches, or when
/// the witness geometry cannot be built (see the file comment). kSimd: the SSE2 search where the
/// build has SSE2 (same bits as the scalar one without FMA contraction; tests compare the two).
template <bool kSimd = true>
[[gnu::always_inline]] inline bool boxBoxSat(const Vec3& ha, const Vec3& hb, const Mat3& r, const Vec3& t, BoxBoxSat& out) {
  boxsat::Search sr;
#if defined(__SSE2__)
  if constexpr (kSimd)
    boxsat::searchSse2(ha, hb, r, t, sr);
  else
#endif
    boxsat::searchScalar(ha, hb, r, t, sr);
  return boxBoxSatFrom(sr, ha, hb, r, t, out);
}

/// relativePose(a, b, r, t), then, if `sat`, boxBoxSat on it (the default form): with the AVX2 search
/// where the CPU has it, which computes the relative pose with it.
[[gnu::always_inline]] inline bool relativePoseBoxBoxSat(const Transform& a, const Transform& b, const Vec3& ha,
                                                         const Vec3& hb, bool sat, Mat3& r, Vec3& t, BoxBoxSat& out) {
#if defined(PROXIMA_BOX_SEARCH_AVX2)
  if (sat && boxsat::useAvx2Search()) {
    boxsat::Search sr;
    boxsat::relativePoseSearchAvx2(a, b, ha, hb, r, t, sr);
    return boxBoxSatFrom(sr, ha, hb, r, t, out);
  }
#endif
  relativePose(a, b, r, t);
  return sat && boxBoxSat(ha, hb, r, t, out);
}

}  // namespace proxima::detail
