// Sign predicates with an optional exact mode (Montanari 2017 §4.2 recommends adaptive/exact signs
// for optimisation problems). A floating-point filter with a proven error bound decides most cases;
// when it cannot, the sign is recomputed exactly with GMP rationals (every double is a rational).
#pragma once

#include "proxima/core/types.hpp"

namespace proxima {

/// Determinant of the 3x3 matrix with columns a, b, c in the expanded form of Montanari Eq. 4.4b
/// (aei + bfg + cdh - ceg - bdi - afh), which cancels less than the nested cofactor form.
inline Real det3(const Vec3& a, const Vec3& b, const Vec3& c) {
  return a.x() * b.y() * c.z() + b.x() * c.y() * a.z() + c.x() * a.y() * b.z() - c.x() * b.y() * a.z() -
         b.x() * a.y() * c.z() - a.x() * c.y() * b.z();
}

/// Orientation of the 2-D triangle (a, b, c): b^k c^l + a^k b^l + c^k a^l - b^k a^l - c^k b^l - a^k c^l
/// (Montanari Alg. 3 line 6). Positive when counter-clockwise.
inline Real orient2(Real ak, Real al, Real bk, Real bl, Real ck, Real cl) {
  return bk * cl + ak * bl + ck * al - bk * al - ck * bl - ak * cl;
}

/// Exact sign (-1, 0, +1) of det3(a, b, c). Inputs must be finite.
int exactSignDet3(const Vec3& a, const Vec3& b, const Vec3& c);

/// Exact sign of orient2(...). Inputs must be finite.
int exactSignOrient2(Real ak, Real al, Real bk, Real bl, Real ck, Real cl);

/// Exact sign of the orientation of d relative to the plane of (a, b, c): sign of
/// det[b - a, c - a, d - a], positive when d lies on the side of (b - a) x (c - a). A filter with a
/// bound on the rounded differences decides most cases; GMP decides the rest. Inputs must be finite.
int exactOrient3d(const Vec3& a, const Vec3& b, const Vec3& c, const Vec3& d);

/// Exact signs for Signed Volumes S3D: the four cofactors C_{4,j} of M (Eq. 3.5-3.6) and det M.
/// cof[j] = (-1)^(4+j) det(the three vertices other than j); det M = sum of the cofactors.
struct TetraSigns {
  int cof[4];
  int det;
};
TetraSigns exactTetraSigns(const Vec3& s1, const Vec3& s2, const Vec3& s3, const Vec3& s4);

/// Number of times the exact (GMP) fallback ran since program start (for tests and benchmarks).
long exactFallbackCount();

}  // namespace proxima
