// Private: the plane, orientation and barycentric helpers of one triangle face of GJK-TD's expanding
// polytope (gjk_td.hpp), shared with the lean tetrahedron's vector lanes (lean_face.cpp), which
// repeat their operations in the same order.
#pragma once

#include <cmath>

#include "proxima/core/predicates.hpp"
#include "proxima/core/tolerances.hpp"
#include "proxima/core/types.hpp"

namespace proxima::detail {

/// facePlane's first half: the cross product (y1 - y0) x (y2 - y0) as rounded and the magnitude
/// terms of the orient3d filter.
[[gnu::always_inline]] inline void faceCross(const Vec3& y0, const Vec3& y1, const Vec3& y2, Vec3& cross,
                                             Vec3& crossAbs) {
  const Vec3 u = y1 - y0, v = y2 - y0;
  cross = u.cross(v);
  crossAbs = Vec3(std::abs(u.y() * v.z()) + std::abs(u.z() * v.y()), std::abs(u.z() * v.x()) + std::abs(u.x() * v.z()),
                  std::abs(u.x() * v.y()) + std::abs(u.y() * v.x()));
}
/// facePlane's second half: unit normal and plane distance from the cross product.
[[gnu::always_inline]] inline bool faceNormalise(const Vec3& y0, const Vec3& y1, const Vec3& y2, const Vec3& cross,
                                                 Vec3& n, Real& d) {
  const Real len = cross.norm();
  // (len is 0 or above ~1e-162, the root of the smallest subnormal |cross|²: 1 / len is finite.)
  if (!(len > 0 && std::isfinite(len))) return false;
  // One division, then products (here and in the lean tetrahedron's four lanes, where the three
  // quotients and the mean's division had each been a vector division: the lanes' longest waits on
  // the settled polyhedra10k bed). Each result is within an ulp or two of the quotient's.
  const Real inverse = 1 / len;
  n = cross * inverse;
  d = (n.dot(y0) + n.dot(y1) + n.dot(y2)) * (1.0 / 3.0);
  return true;
}
/// Plane of triangle (y0, y1, y2): faceCross, then the unit normal and the plane distance from the
/// origin (the mean over the vertices: least cancellation). False when the normal is zero or not finite.
[[gnu::always_inline]] inline bool facePlane(const Vec3& y0, const Vec3& y1, const Vec3& y2, Vec3& cross,
                                             Vec3& crossAbs, Vec3& n, Real& d) {
  faceCross(y0, y1, y2, cross, crossAbs);
  return faceNormalise(y0, y1, y2, cross, n, d);
}

/// Sign of orient3d(y0, y1, y2, q) from the face's cached cross product (w = q - y0): the filter
/// first, the exact predicate only when it is uncertain.
[[gnu::always_inline]] inline int faceOrient(const Vec3& cross, const Vec3& crossAbs, const Vec3& y0, const Vec3& y1,
                                             const Vec3& y2, const Vec3& q, const Vec3& w) {
  const Real det = cross.dot(w);
  const Real bound = 16.0 * tol::kEps * crossAbs.dot(w.cwiseAbs());
  if (det > bound) return 1;
  if (det < -bound) return -1;
  return exactOrient3d(y0, y1, y2, q);
}

/// λ of the projection p of the origin on triangle (a, b, c) with unit normal n, by area ratios in
/// the plane (Descantes Eqs. 8-10 rewritten; stays regular as the depth goes to zero).
[[gnu::always_inline]] inline void faceBarycentrics(const Vec3& a, const Vec3& b, const Vec3& c, const Vec3& n,
                                                    const Vec3& p, Real lam[3]) {
  const Real inverse = 1 / n.dot((b - a).cross(c - a));  // (one division: see faceNormalise)
  lam[0] = n.dot((b - p).cross(c - p)) * inverse;
  lam[1] = n.dot((c - p).cross(a - p)) * inverse;
  lam[2] = 1.0 - lam[0] - lam[1];
}

}  // namespace proxima::detail
