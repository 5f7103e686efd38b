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
// supporting feature (vertex, edge or face) clipped to that face, averaged; on an edge-edge axis, the
// closest points of the two supporting edges. Whenever that geometry disagrees with the axis (a
// clipped feature that is empty, closest points off the edges: only possible at near-ties and in
// rounding) the caller's general path answers instead.
#pragma once

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>

#include "proxima/narrowphase/penetration.hpp"
#include "proxima/shapes/convex.hpp"

namespace proxima::detail {

struct BoxBoxSat {
  Real depth = 0;
  Vec3 normal = Vec3::Zero();  ///< unit, A -> B, A's frame
  Vec3 za = Vec3::Zero(), zb = Vec3::Zero();  ///< witness points, A's frame (za - zb = depth · normal)
};

namespace boxsat {

/// Reference box at the origin, axis-aligned with half extents h; the other box has centre c, axes
/// (columns of) r, half extents g, all in the reference frame. n: the unit reference-face normal
/// (+-e_k). The other box's feature supporting -n (1, 2 or 4 vertices), clipped to the reference
/// face's rectangle; its average is the witness on the other box. False if nothing is left.
inline bool clipToFace(const Vec3& h, int k, const Vec3& n, const Vec3& c, const Mat3& r, const Vec3& g, Vec3& zOther) {
  // Feature of the other box deepest along -n: coordinate j is fixed at -sign(n·r_j) g_j unless
  // r_j is (to ~1e-9) parallel to the face, when it spans [-g_j, g_j].
  Vec3 pts[16];
  int m = 1;
  pts[0] = c;
  int freeAxes[3], nfree = 0;
  for (int j = 0; j < 3; ++j) {
    const Real s = n.dot(r.col(j));
    if (std::abs(s) <= 1e-9) {
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
    Vec3 sum = Vec3::Zero();
    for (int q = 0; q < m; ++q) sum += pts[q];
    zOther = sum / static_cast<Real>(m);
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
  Vec3 sum = Vec3::Zero();
  for (int i = 0; i < m; ++i) sum += pts[i];
  zOther = sum / static_cast<Real>(m);
  return true;
}

}  // namespace boxsat

/// SAT penetration of box A (half extents ha) and box B (hb), B's pose relative to A given by rotation
/// r (columns: B's axes in A's frame) and centre t. False when an axis separates or touches, or when
/// the witness geometry cannot be built (see the file comment).
///
/// All 15 overlaps are computed first, with one separation test after them (the early return per
/// axis mispredicted on random rotations), then the face minimum, then the edges that beat it, in
/// squared form (no square root but the winner's). The arithmetic is the per-axis loop's that this
/// replaced (same bits, same axis), except that two edge axes within rounding of each other are
/// ranked by (ov / |l|²) · ov instead of against the rounded running best.
[[gnu::always_inline]] inline bool boxBoxSat(const Vec3& ha, const Vec3& hb, const Mat3& r, const Vec3& t, BoxBoxSat& out) {
  // Entries of r in locals, m[i][j] = r(i, j).
  Real m[3][3];
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) m[i][j] = r(i, j);
  // Face overlaps: A's faces e_i, then B's faces r_j. (The sums in the order of the Eigen dot products
  // this replaced, hb·|row i| and ha·|r_j|, r_j·t: the same bits.)
  Real fov[6];
  for (int i = 0; i < 3; ++i)
    fov[i] = ha[i] + (hb[0] * std::abs(m[i][0]) + (hb[1] * std::abs(m[i][1]) + hb[2] * std::abs(m[i][2]))) - std::abs(t[i]);
  for (int j = 0; j < 3; ++j)
    fov[3 + j] = ((ha[0] * std::abs(m[0][j]) + ha[1] * std::abs(m[1][j])) + ha[2] * std::abs(m[2][j])) + hb[j] -
                 std::abs((m[0][j] * t[0] + m[1][j] * t[1]) + m[2][j] * t[2]);
  bool separated = false;
  for (int k = 0; k < 6; ++k) separated |= !(fov[k] > 0);  // (NaN separates: the general path decides)
  // Edge pairs: l = e_i x r_j, exact components (l_i1, l_i2) = (-r(i2, j), r(i1, j)) (i1, i2 = i + 1,
  // i + 2 mod 3); the overlap along l is ov / |l| with ov = ha·|l| + hb·|r^T l| - |l·t|. (r^T l)_j = 0
  // exactly (the same two products cancel); the other two components are, up to sign, the i-th
  // components of r_m x r_j (m != j), computed once per column pair: uc[k][i] = |(r_m x r_j)_i| for
  // {m, j, k} = {0, 1, 2}, exactly the products the per-axis sums formed. Parallel edges
  // (|l|² <= 1e-280) give no edge-edge face: no overlap test, never chosen.
  Real uc[3][3];
  for (int k = 0; k < 3; ++k) {
    const int mm = k == 0 ? 1 : 0, jj = k == 2 ? 1 : 2;
    for (int i = 0; i < 3; ++i) {
      const int i1 = i == 2 ? 0 : i + 1, i2 = i == 0 ? 2 : i - 1;
      uc[k][i] = std::abs(m[i1][mm] * m[i2][jj] - m[i2][mm] * m[i1][jj]);
    }
  }
  Real eov[9], elen2[9];
  bool isAxis[9];
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
      isAxis[e] = len2 > 1e-280;
      separated |= isAxis[e] & !(o > 0);
      eov[e] = o, elen2[e] = len2;
    }
  }
  if (separated) return false;
  // The first minimum among the faces (A's, then B's; strict <, so ties keep the lower index).
  int fi = 0;
  Real faceBest = fov[0];
  for (int k = 1; k < 6; ++k)
    if (fov[k] < faceBest) faceBest = fov[k], fi = k;
  // An edge axis must beat the faces by more than rounding (faces give the manifold a reference face;
  // at a tie both are the depth): ov / |l| < bound <=> ov² < bound² |l|² (both sides positive), so
  // the test needs no square root. Most often no edge passes it; the first minimum among those that
  // do, by (ov / |l|²) · ov (the squared overlap along the unit axis, without underflowing ov²), is
  // the edge axis.
  const Real scale = ha.norm() + hb.norm() + t.norm();
  const Real bound = faceBest - 1e-13 * scale;
  unsigned beat = 0;
  if (bound > 0) {
    const Real b2 = bound * bound;
    for (int e = 0; e < 9; ++e) beat |= static_cast<unsigned>(isAxis[e] & (eov[e] * eov[e] < b2 * elen2[e])) << e;
  }
  int be = -1;
  if (beat) {
    be = std::countr_zero(beat);
    if (unsigned rest = beat & (beat - 1)) {
      Real bestQ = (eov[be] / elen2[be]) * eov[be];
      for (; rest; rest &= rest - 1) {
        const int e = std::countr_zero(rest);
        const Real q = (eov[e] / elen2[e]) * eov[e];
        if (q < bestQ) bestQ = q, be = e;
      }
    }
  }
  const int ei = be / 3, ej = be % 3;
  const bool edgeWins = be >= 0;
  const Real ovE = edgeWins ? eov[be] : 0, len2E = edgeWins ? elen2[be] : 1;
  // (Vectors below are built from scalars chosen by index, not written one variable component at a
  // time: a vector load after such a store stalls store forwarding.)
  Real depth;
  Vec3 axis;
  int kind, bi = 0, bj = 0;  // kind 0: A's face bi, 1: B's face bj, 2: edge e_bi x r_bj
  if (edgeWins) {
    kind = 2, bi = ei, bj = ej;
    const int i1 = bi == 2 ? 0 : bi + 1, i2 = bi == 0 ? 2 : bi - 1;
    const Real len = std::sqrt(len2E);
    depth = ovE / len;
    const Real c1 = -r(i2, bj) / len, c2 = r(i1, bj) / len;
    axis = Vec3(i1 == 0 ? c1 : i2 == 0 ? c2 : 0, i1 == 1 ? c1 : i2 == 1 ? c2 : 0, i1 == 2 ? c1 : i2 == 2 ? c2 : 0);
  } else if (fi < 3) {
    kind = 0, bi = fi, depth = faceBest, axis = Vec3(fi == 0, fi == 1, fi == 2);
  } else {
    kind = 1, bj = fi - 3, depth = faceBest, axis = r.col(bj);
  }
  const Vec3 n = axis.dot(t) < 0 ? Vec3(-axis) : axis;  // A -> B
  out.depth = depth;
  out.normal = n;
  if (kind == 0) {
    // B's feature on A's face bi.
    Vec3 zb;
    if (!boxsat::clipToFace(ha, bi, n, t, r, hb, zb)) return false;
    const Real f = n[bi] > 0 ? ha[bi] : -ha[bi];
    out.zb = zb;
    out.za = Vec3(bi == 0 ? f : zb[0], bi == 1 ? f : zb[1], bi == 2 ? f : zb[2]);
    return true;
  }
  if (kind == 1) {
    // A's feature on B's face bj: the same in B's frame (A's centre -r^T t, axes r^T), mapped back.
    const Mat3 rt = r.transpose();
    const Vec3 nB = rt * Vec3(-n);  // B's outward face normal, B's frame
    Vec3 zaB;
    if (!boxsat::clipToFace(hb, bj, nB, Vec3(-(rt * t)), rt, ha, zaB)) return false;
    const Real f = nB[bj] > 0 ? hb[bj] : -hb[bj];
    const Vec3 zbB(bj == 0 ? f : zaB[0], bj == 1 ? f : zaB[1], bj == 2 ? f : zaB[2]);
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
  const Vec3 w = pa - pb;
  // (da = e_bi: da·db = db_bi, da·w = w_bi)
  const Real b = db[bi], d = w[bi], e = db.dot(w);
  const Real den = 1 - b * b;
  if (!(den > 1e-24)) return false;
  const Real s = (b * e - d) / den, u = (e - b * d) / den;
  const Real slack = 1e-9 * scale;
  if (std::abs(s) > ha[bi] + slack || std::abs(u) > hb[bj] + slack) return false;
  const Real sc = std::clamp(s, -ha[bi], ha[bi]);
  out.za = Vec3(bi == 0 ? sc : pa[0], bi == 1 ? sc : pa[1], bi == 2 ? sc : pa[2]);
  out.zb = pb + std::clamp(u, -hb[bj], hb[bj]) * db;
  return true;
}

}  // namespace proxima::detail
