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
#include <cmath>

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
inline bool boxBoxSat(const Vec3& ha, const Vec3& hb, const Mat3& r, const Vec3& t, BoxBoxSat& out) {
  Mat3 ar;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) ar(i, j) = std::abs(r(i, j));
  Real best = std::numeric_limits<Real>::infinity();
  int kind = -1, bi = 0, bj = 0;  // kind 0: A's face bi, 1: B's face bj, 2: edge e_bi x r_bj
  Vec3 bestAxis = Vec3::Zero();
  // A's faces.
  for (int i = 0; i < 3; ++i) {
    const Real ov = ha[i] + hb.dot(ar.row(i).transpose()) - std::abs(t[i]);
    if (!(ov > 0)) return false;
    if (ov < best) best = ov, kind = 0, bi = i, bestAxis = Vec3::Unit(i);
  }
  // B's faces.
  for (int j = 0; j < 3; ++j) {
    const Vec3 axis = r.col(j);
    const Real ov = ha.dot(ar.col(j)) + hb[j] - std::abs(axis.dot(t));
    if (!(ov > 0)) return false;
    if (ov < best) best = ov, kind = 1, bj = j, bestAxis = axis;
  }
  // Edge pairs: e_i x r_j, exact components. An edge axis must beat the faces by more than rounding
  // (faces give the manifold a reference face; at a tie both are the depth).
  const Real scale = ha.norm() + hb.norm() + t.norm();
  const Real faceBest = best;
  // The overlap along l is ov / |l| with ov = ha·|l| + hb·|r^T l| - |l·t|: compared squared, so
  // the only square root and division are the winners'. (r^T l)_j = 0 exactly: the same two products cancel.
  for (int i = 0; i < 3; ++i) {
    const int i1 = (i + 1) % 3, i2 = (i + 2) % 3;
    for (int j = 0; j < 3; ++j) {
      const Real l1 = -r(i2, j), l2 = r(i1, j);
      const Real len2 = l1 * l1 + l2 * l2;
      if (!(len2 > 1e-280)) continue;  // parallel edges: no edge-edge face
      Real rb = 0;
      for (int m = 0; m < 3; ++m)
        if (m != j) rb += hb[m] * std::abs(r(i1, m) * l1 + r(i2, m) * l2);
      const Real ov = ha[i1] * std::abs(l1) + ha[i2] * std::abs(l2) + rb - std::abs(l1 * t[i1] + l2 * t[i2]);
      if (!(ov > 0)) return false;
      // ov / |l| < bound  <=>  ov² < bound² |l|² (both sides positive): the square root only for
      // an axis that wins.
      const Real bound = std::min(best, faceBest - 1e-13 * scale);
      if (bound > 0 && ov * ov < bound * bound * len2) {
        const Real len = std::sqrt(len2);
        best = ov / len, kind = 2, bi = i, bj = j;
        bestAxis = Vec3::Zero();
        bestAxis[i1] = l1 / len, bestAxis[i2] = l2 / len;
      }
    }
  }
  if (kind < 0) return false;
  const Vec3 n = bestAxis.dot(t) < 0 ? Vec3(-bestAxis) : bestAxis;  // A -> B
  out.depth = best;
  out.normal = n;
  if (kind == 0) {
    // B's feature on A's face bi.
    if (!boxsat::clipToFace(ha, bi, n, t, r, hb, out.zb)) return false;
    out.za = out.zb;
    out.za[bi] = n[bi] > 0 ? ha[bi] : -ha[bi];
    return true;
  }
  if (kind == 1) {
    // A's feature on B's face bj: the same in B's frame (A's centre -r^T t, axes r^T), mapped back.
    const Mat3 rt = r.transpose();
    const Vec3 nB = rt * Vec3(-n);  // B's outward face normal, B's frame
    Vec3 zaB;
    if (!boxsat::clipToFace(hb, bj, nB, Vec3(-(rt * t)), rt, ha, zaB)) return false;
    Vec3 zbB = zaB;
    zbB[bj] = nB[bj] > 0 ? hb[bj] : -hb[bj];
    out.za = r * zaB + t;
    out.zb = r * zbB + t;
    return true;
  }
  // Edge-edge: A's edge along e_bi at the corner supporting n, B's edge along r_bj at the corner
  // supporting -n; closest points of the two lines, which must fall on both edges.
  Vec3 pa = Vec3::Zero();
  for (int k = 0; k < 3; ++k)
    if (k != bi) pa[k] = n[k] >= 0 ? ha[k] : -ha[k];
  Vec3 pb = t;
  for (int k = 0; k < 3; ++k)
    if (k != bj) pb -= (n.dot(r.col(k)) >= 0 ? hb[k] : -hb[k]) * r.col(k);
  const Vec3 da = Vec3::Unit(bi), db = r.col(bj);
  const Vec3 w = pa - pb;
  const Real b = da.dot(db), d = da.dot(w), e = db.dot(w);
  const Real den = 1 - b * b;
  if (!(den > 1e-24)) return false;
  const Real s = (b * e - d) / den, u = (e - b * d) / den;
  const Real slack = 1e-9 * scale;
  if (std::abs(s) > ha[bi] + slack || std::abs(u) > hb[bj] + slack) return false;
  out.za = pa + std::clamp(s, -ha[bi], ha[bi]) * da;
  out.zb = pb + std::clamp(u, -hb[bj], hb[bj]) * db;
  return true;
}

}  // namespace proxima::detail
