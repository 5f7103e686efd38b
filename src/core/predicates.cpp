#include "proxima/core/predicates.hpp"

#include <gmpxx.h>

#include <atomic>
#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstring>
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

// Fixed-width exact integer arithmetic for orient3d (sign-magnitude, 6 x 64-bit limbs): every
// double is m * 2^e with |m| < 2^53; when the 12 coordinates' exponents span <= 64 bits they are
// integers below 2^117 after scaling by 2^-emin, differences fit in __int128 and the determinant
// in 6 limbs. About 20x faster than GMP rationals (no allocation, no gcd).
struct Wide {
  static constexpr int kLimbs = 6;
  std::uint64_t w[kLimbs] = {};
  bool neg = false;
  [[nodiscard]] bool zero() const {
    for (std::uint64_t x : w)
      if (x) return false;
    return true;
  }
};
using i128 = __int128;
using u128 = unsigned __int128;

Wide fromI128(i128 v) {
  Wide r;
  r.neg = v < 0;
  const u128 m = r.neg ? u128(-(v + 1)) + 1 : u128(v);
  r.w[0] = static_cast<std::uint64_t>(m), r.w[1] = static_cast<std::uint64_t>(m >> 64);
  return r;
}
int cmpMag(const Wide& a, const Wide& b) {
  for (int i = Wide::kLimbs - 1; i >= 0; --i)
    if (a.w[i] != b.w[i]) return a.w[i] < b.w[i] ? -1 : 1;
  return 0;
}
Wide addSigned(const Wide& a, const Wide& b) {
  Wide r;
  if (a.neg == b.neg) {
    u128 carry = 0;
    for (int i = 0; i < Wide::kLimbs; ++i) {
      const u128 t = u128(a.w[i]) + b.w[i] + carry;
      r.w[i] = static_cast<std::uint64_t>(t), carry = t >> 64;
    }
    r.neg = a.neg;
    return r;
  }
  const bool aBig = cmpMag(a, b) >= 0;
  const Wide& x = aBig ? a : b;
  const Wide& y = aBig ? b : a;
  std::uint64_t borrow = 0;
  for (int i = 0; i < Wide::kLimbs; ++i) {
    const u128 t = u128(x.w[i]) - y.w[i] - borrow;
    r.w[i] = static_cast<std::uint64_t>(t), borrow = (t >> 64) ? 1 : 0;
  }
  r.neg = x.neg;
  return r;
}
Wide negate(Wide a) {
  a.neg = !a.neg;
  return a;
}
Wide mulWide(const Wide& a, const Wide& b) {  // caller guarantees the product fits
  Wide r;
  for (int i = 0; i < Wide::kLimbs; ++i) {
    if (!a.w[i]) continue;
    u128 carry = 0;
    for (int j = 0; i + j < Wide::kLimbs; ++j) {
      const u128 t = u128(a.w[i]) * b.w[j] + r.w[i + j] + carry;
      r.w[i + j] = static_cast<std::uint64_t>(t), carry = t >> 64;
    }
  }
  r.neg = a.neg != b.neg;
  return r;
}

// Exact orient3d sign by scaled integers; returns 2 when the exponent span is too wide.
int integerOrient3d(const Vec3& a, const Vec3& b, const Vec3& c, const Vec3& d) {
  const Vec3* p[4] = {&a, &b, &c, &d};
  std::int64_t m[4][3];
  int e[4][3], emin = INT32_MAX, emax = INT32_MIN;
  for (int i = 0; i < 4; ++i)
    for (int k = 0; k < 3; ++k) {
      const Real x = (*p[i])[k];
      if (x == 0) {
        m[i][k] = 0, e[i][k] = 0;
        continue;
      }
      // x = m * 2^e from the IEEE-754 fields (no libm call).
      std::uint64_t bits;
      std::memcpy(&bits, &x, sizeof bits);
      const int be = static_cast<int>((bits >> 52) & 0x7ff);
      const std::uint64_t frac = bits & ((std::uint64_t(1) << 52) - 1);
      const std::int64_t mag = static_cast<std::int64_t>(be ? frac | (std::uint64_t(1) << 52) : frac);
      m[i][k] = (bits >> 63) ? -mag : mag;
      e[i][k] = (be ? be : 1) - 1075;
      emin = std::min(emin, e[i][k]), emax = std::max(emax, e[i][k]);
    }
  if (emin == INT32_MAX) return 0;
  if (emax - emin > 63) return 2;
  i128 q[4][3];
  for (int i = 0; i < 4; ++i)
    for (int k = 0; k < 3; ++k) q[i][k] = m[i][k] == 0 ? 0 : i128(m[i][k]) * (i128(1) << (e[i][k] - emin));
  Wide u[3], v[3], w[3];
  for (int k = 0; k < 3; ++k)
    u[k] = fromI128(q[1][k] - q[0][k]), v[k] = fromI128(q[2][k] - q[0][k]), w[k] = fromI128(q[3][k] - q[0][k]);
  auto minor = [&](int i, int j) { return addSigned(mulWide(u[i], v[j]), negate(mulWide(u[j], v[i]))); };
  Wide det = mulWide(w[0], minor(1, 2));
  det = addSigned(det, mulWide(w[1], minor(2, 0)));
  det = addSigned(det, mulWide(w[2], minor(0, 1)));
  if (det.zero()) return 0;
  return det.neg ? -1 : 1;
}

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
  // Four points sharing one coordinate exactly lie in an axis-aligned plane: the difference matrix
  // has a zero row, det = 0 exactly (common: a face of a box or polytope seen in its own frame).
  for (int k = 0; k < 3; ++k)
    if (a[k] == b[k] && a[k] == c[k] && a[k] == d[k]) return 0;
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
  if (const int r = integerOrient3d(a, b, c, d); r != 2) return r;
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
