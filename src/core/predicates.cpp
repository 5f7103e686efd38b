#include "proxima/core/predicates.hpp"

#include <gmpxx.h>

#include <atomic>
#include <cmath>
#include <limits>

#include "proxima/core/tolerances.hpp"

namespace proxima {
namespace {

std::atomic<long> gFallbacks{0};

// Error bound of det3 evaluated in double: each triple product carries at most 2u relative error,
// the five additions at most 5u of the sum of magnitudes; 8u (plus slack for u^2 terms) covers it.
constexpr Real kDet3Bound = 10.0 * tol::kEps;
// orient2: products 1u, five additions 5u.
constexpr Real kOrient2Bound = 8.0 * tol::kEps;

Real det3Magnitude(const Vec3& a, const Vec3& b, const Vec3& c) {
  const Vec3 A = a.cwiseAbs(), B = b.cwiseAbs(), C = c.cwiseAbs();
  return A.x() * B.y() * C.z() + B.x() * C.y() * A.z() + C.x() * A.y() * B.z() + C.x() * B.y() * A.z() +
         B.x() * A.y() * C.z() + A.x() * C.y() * B.z();
}

mpq_class q(Real x) { return mpq_class(x); }  // exact: a double is a dyadic rational

mpq_class exactDet3(const Vec3& a, const Vec3& b, const Vec3& c) {
  ++gFallbacks;
  return q(a.x()) * q(b.y()) * q(c.z()) + q(b.x()) * q(c.y()) * q(a.z()) + q(c.x()) * q(a.y()) * q(b.z()) -
         q(c.x()) * q(b.y()) * q(a.z()) - q(b.x()) * q(a.y()) * q(c.z()) - q(a.x()) * q(c.y()) * q(b.z());
}

int sgn(Real x) { return (x > 0) - (x < 0); }

}  // namespace

int exactSignDet3(const Vec3& a, const Vec3& b, const Vec3& c) {
  const Real d = det3(a, b, c);
  const Real bound = kDet3Bound * det3Magnitude(a, b, c);
  if (d > bound) return 1;
  if (d < -bound) return -1;
  return sgn(exactDet3(a, b, c));
}

int exactSignOrient2(Real ak, Real al, Real bk, Real bl, Real ck, Real cl) {
  const Real d = orient2(ak, al, bk, bl, ck, cl);
  const Real mag = std::abs(bk * cl) + std::abs(ak * bl) + std::abs(ck * al) + std::abs(bk * al) +
                   std::abs(ck * bl) + std::abs(ak * cl);
  const Real bound = kOrient2Bound * mag;
  if (d > bound) return 1;
  if (d < -bound) return -1;
  ++gFallbacks;
  const mpq_class e = q(bk) * q(cl) + q(ak) * q(bl) + q(ck) * q(al) - q(bk) * q(al) - q(ck) * q(bl) - q(ak) * q(cl);
  return sgn(e);
}

int exactOrient3d(const Vec3& a, const Vec3& b, const Vec3& c, const Vec3& d) {
  const Vec3 u = b - a, v = c - a, w = d - a;
  const Real det = det3(u, v, w);
  // The differences carry one rounding each (u, v, w within 1u relative) on top of det3's own
  // error; 16u of the permanent covers both (Shewchuk's orient3d bound is (7 + 56u)u).
  const Real bound = 16.0 * tol::kEps * det3Magnitude(u, v, w);
  if (det > bound) return 1;
  if (det < -bound) return -1;
  // Second stage in long double (64-bit significand): the same computation with 2^11 times less
  // rounding settles most near-coplanar cases without GMP.
  if constexpr (std::numeric_limits<long double>::digits >= 64) {
    using LD = long double;
    const LD ux = LD(b.x()) - a.x(), uy = LD(b.y()) - a.y(), uz = LD(b.z()) - a.z();
    const LD vx = LD(c.x()) - a.x(), vy = LD(c.y()) - a.y(), vz = LD(c.z()) - a.z();
    const LD wx = LD(d.x()) - a.x(), wy = LD(d.y()) - a.y(), wz = LD(d.z()) - a.z();
    const LD e = wx * (uy * vz - uz * vy) + wy * (uz * vx - ux * vz) + wz * (ux * vy - uy * vx);
    const LD mag = std::abs(wx) * (std::abs(uy * vz) + std::abs(uz * vy)) +
                   std::abs(wy) * (std::abs(uz * vx) + std::abs(ux * vz)) +
                   std::abs(wz) * (std::abs(ux * vy) + std::abs(uy * vx));
    const LD boundLd = 16.0L * std::numeric_limits<LD>::epsilon() * mag;
    if (e > boundLd) return 1;
    if (e < -boundLd) return -1;
  }
  ++gFallbacks;
  const mpq_class ux = q(b.x()) - q(a.x()), uy = q(b.y()) - q(a.y()), uz = q(b.z()) - q(a.z());
  const mpq_class vx = q(c.x()) - q(a.x()), vy = q(c.y()) - q(a.y()), vz = q(c.z()) - q(a.z());
  const mpq_class wx = q(d.x()) - q(a.x()), wy = q(d.y()) - q(a.y()), wz = q(d.z()) - q(a.z());
  const mpq_class e = ux * (vy * wz - vz * wy) - vx * (uy * wz - uz * wy) + wx * (uy * vz - uz * vy);
  return sgn(e);
}

TetraSigns exactTetraSigns(const Vec3& s1, const Vec3& s2, const Vec3& s3, const Vec3& s4) {
  // Cofactors along the row of ones of M (Montanari Eq. 3.6).
  const Real c[4] = {-det3(s2, s3, s4), det3(s1, s3, s4), -det3(s1, s2, s4), det3(s1, s2, s3)};
  const Real mag[4] = {det3Magnitude(s2, s3, s4), det3Magnitude(s1, s3, s4), det3Magnitude(s1, s2, s4),
                       det3Magnitude(s1, s2, s3)};
  TetraSigns out{};
  bool allCertain = true;
  Real sum = 0, sumBound = 0;
  for (int j = 0; j < 4; ++j) {
    const Real bound = kDet3Bound * mag[j];
    out.cof[j] = c[j] > bound ? 1 : (c[j] < -bound ? -1 : 0);
    if (out.cof[j] == 0) allCertain = false;
    sum += c[j];
    sumBound += bound + 4.0 * tol::kEps * std::abs(c[j]);
  }
  if (allCertain && std::abs(sum) > sumBound) {
    out.det = sgn(sum);
    return out;
  }
  // Exact path: recompute the uncertain cofactors and the determinant as rationals.
  const Vec3* s[4] = {&s1, &s2, &s3, &s4};
  mpq_class total = 0;
  for (int j = 0; j < 4; ++j) {
    const Vec3* o[3];
    for (int i = 0, k = 0; i < 4; ++i)
      if (i != j) o[k++] = s[i];
    mpq_class e = exactDet3(*o[0], *o[1], *o[2]);
    if (j % 2 == 0) e = -e;  // (-1)^(4+j) with 1-based j
    out.cof[j] = sgn(e);
    total += e;
  }
  out.det = sgn(total);
  return out;
}

long exactFallbackCount() { return gFallbacks.load(); }

}  // namespace proxima
