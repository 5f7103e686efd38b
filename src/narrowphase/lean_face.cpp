#include "lean_face.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "face_geometry.hpp"
#include "proxima/core/tolerances.hpp"

// (The vector helpers are always inlined and take their vectors by reference: no vector crosses a
// call, so GCC's warning about the ABI of 32-byte vector returns in the baseline clone does not apply.)
#pragma GCC diagnostic ignored "-Wpsabi"

namespace proxima::detail {
namespace {

// GCC vector types: with AVX2 one 256-bit register, else two SSE2 halves. Only +, -, * and / on
// lanes (each rounded exactly as the scalar operation; no fused multiply-add: the clone's target is
// avx2 without fma), so every lane has the scalar helpers' bits.
typedef Real V4 __attribute__((vector_size(32)));
typedef long long M4 __attribute__((vector_size(32)));

[[gnu::always_inline]] inline V4 absV(const V4& x) {
  constexpr long long kMagnitude = 0x7fffffffffffffffLL;
  return reinterpret_cast<V4>(reinterpret_cast<M4>(x) & M4{kMagnitude, kMagnitude, kMagnitude, kMagnitude});
}
// Bit k set when lane k of the comparison m is true (an OR across lanes in registers: the clones
// share one source, so no movemask intrinsic, which only the AVX clone may call).
[[gnu::always_inline]] inline unsigned laneBits(const M4& m) {
  const M4 b = m & M4{1, 2, 4, 8};
  const M4 h = b | __builtin_shuffle(b, M4{2, 3, 0, 1});
  return static_cast<unsigned>((h | __builtin_shuffle(h, M4{1, 0, 3, 2}))[0]);
}
[[gnu::always_inline]] inline void store(Real* dst, const V4& v) { std::memcpy(dst, &v, sizeof v); }

// buildTetrahedron's faces {i0, i1, i2}, {i0, i3, i1}, {i1, i3, i2}, {i2, i3, i0} with (i0, i3) = (0, 3).
// (X, Y, Z: the vertices' coordinates, lane i for vertex i)
template <bool Swap>
[[gnu::always_inline]] inline void faces(const V4& X, const V4& Y, const V4& Z, LeanFaces& f) {
  constexpr long long i1 = Swap ? 2 : 1, i2 = Swap ? 1 : 2;
  constexpr M4 s0 = {0, 0, i1, i2}, s1 = {i1, 3, 3, 3}, s2 = {i2, i1, i2, 0};
  const int v[4][3] = {{0, int(i1), int(i2)}, {0, 3, int(i1)}, {int(i1), 3, int(i2)}, {int(i2), 3, 0}};
  std::memcpy(f.v, v, sizeof v);
  // Each face's vertices v0, v1, v2, lane k for face k.
  const V4 x0 = __builtin_shuffle(X, s0), y0 = __builtin_shuffle(Y, s0), z0 = __builtin_shuffle(Z, s0);
  const V4 x1 = __builtin_shuffle(X, s1), y1 = __builtin_shuffle(Y, s1), z1 = __builtin_shuffle(Z, s1);
  const V4 x2 = __builtin_shuffle(X, s2), y2 = __builtin_shuffle(Y, s2), z2 = __builtin_shuffle(Z, s2);
  // faceCross: u = y1 - y0, v = y2 - y0, u x v in Eigen's order, and the filter's |products| sums.
  const V4 ux = x1 - x0, uy = y1 - y0, uz = z1 - z0, vx = x2 - x0, vy = y2 - y0, vz = z2 - z0;
  const V4 yz = uy * vz, zy = uz * vy, zx = uz * vx, xz = ux * vz, xy = ux * vy, yx = uy * vx;
  const V4 cx = yz - zy, cy = zx - xz, cz = xy - yx;
  const V4 ax = absV(yz) + absV(zy), ay = absV(zx) + absV(xz), az = absV(xy) + absV(yx);
  store(f.cross[0], cx), store(f.cross[1], cy), store(f.cross[2], cz);
  store(f.crossAbs[0], ax), store(f.crossAbs[1], ay), store(f.crossAbs[2], az);
  // faceOrient(face, origin) with w = -y[v0]: det = c·w against 16 eps (|c|_abs · |w|).
  const V4 wx = -x0, wy = -y0, wz = -z0;
  const V4 det = (cx * wx + cy * wy) + cz * wz;
  constexpr Real kFilter = 16.0 * tol::kEps;
  const V4 bound = kFilter * ((ax * absV(wx) + ay * absV(wy)) + az * absV(wz));
  const unsigned above = laneBits(det > bound), below = laneBits(det < -bound);
  f.originInside = above ? 0 : below == 15 ? 1 : -1;
  // The side faces' tests (c·y[v0], |c|², shape) and every face's plane (faceNormalise).
  const V4 c2 = (cx * cx + cy * cy) + cz * cz;
  store(f.cy, (cx * x0 + cy * y0) + cz * z0);
  store(f.c2, c2);
  f.wellShaped = laneBits(((ax * ax + ay * ay) + az * az) <= 1e4 * c2);
  V4 len;
  for (int k = 0; k < 4; ++k) len[k] = std::sqrt(c2[k]);
  constexpr Real kInf = HUGE_VAL;
  f.planeValid = laneBits((len > 0) & (len < kInf));  // (len > 0 && isfinite(len))
  const V4 inverse = 1.0 / len;
  const V4 nx = cx * inverse, ny = cy * inverse, nz = cz * inverse;
  store(f.n[0], nx), store(f.n[1], ny), store(f.n[2], nz);
  const V4 d0 = (nx * x0 + ny * y0) + nz * z0, d1 = (nx * x1 + ny * y1) + nz * z1, d2 = (nx * x2 + ny * y2) + nz * z2;
  const V4 d = ((d0 + d1) + d2) * (1.0 / 3.0);
  store(f.d, d);
  // faceBarycentrics(y[v0], y[v1], y[v2], n, d n): the origin's projection p = d n by area ratios;
  // (y[v1] - y[v0]) x (y[v2] - y[v0]) is the cross product above.
  const V4 px = d * nx, py = d * ny, pz = d * nz;
  const V4 inverseTotal = 1.0 / ((nx * cx + ny * cy) + nz * cz);
  // n · ((q - p) x (r - p))
  auto area = [&](const V4& qx, const V4& qy, const V4& qz, const V4& rx, const V4& ry, const V4& rz)
                  __attribute__((always_inline)) {
    const V4 ax_ = qx - px, ay_ = qy - py, az_ = qz - pz, bx_ = rx - px, by_ = ry - py, bz_ = rz - pz;
    const V4 sx = ay_ * bz_ - az_ * by_, sy = az_ * bx_ - ax_ * bz_, sz = ax_ * by_ - ay_ * bx_;
    return (nx * sx + ny * sy) + nz * sz;
  };
  const V4 l0 = area(x1, y1, z1, x2, y2, z2) * inverseTotal;
  const V4 l1 = area(x2, y2, z2, x0, y0, z0) * inverseTotal;
  store(f.lambda[0], l0), store(f.lambda[1], l1), store(f.lambda[2], (1.0 - l0) - l1);
  // The base normal's height of each vertex (rememberFace's search for the deepest one).
  const V4 bx = {nx[0], nx[0], nx[0], nx[0]}, by = {ny[0], ny[0], ny[0], ny[0]}, bz = {nz[0], nz[0], nz[0], nz[0]};
  store(f.height, (bx * X + by * Y) + bz * Z);
}

// A point of three coordinates in lanes 0-2 (lane 3 zero; 16- and 8-byte loads: never past the point).
[[gnu::always_inline]] inline V4 lanes(const Vec3& p) { return V4{p.x(), p.y(), p.z(), 0}; }
[[gnu::always_inline]] inline void storePoint(Vec3& p, const V4& v) { p = Vec3(v[0], v[1], v[2]); }

}  // namespace

__attribute__((target_clones("avx2", "default"))) void leanFaceAnswer(const Mat3& Ra, const Vec3& ta, const Vec3& nLocal,
                                                                       const Vec3* pa, const Vec3* bA, const int* face,
                                                                       const Real* lam, Vec3& normal, Vec3& witnessA,
                                                                       Vec3& witnessB, Vec3& midpoint) {
  // za, zb: Σ lam_i p_i from zero in order; then mulMat(Ra, ·) as columns, (c0 x + c1 y) + c2 z (each
  // lane is one row of mulMat's sum), + ta.
  V4 za = {0, 0, 0, 0}, zb = {0, 0, 0, 0};
  for (int i = 0; i < 3; ++i) {
    za += lam[i] * lanes(pa[face[i]]);
    zb += lam[i] * lanes(bA[face[i]]);
  }
  const V4 c0 = lanes(Ra.col(0)), c1 = lanes(Ra.col(1)), c2 = lanes(Ra.col(2)), t = lanes(ta);
  auto rotate = [&](const V4& v) __attribute__((always_inline)) { return (c0 * v[0] + c1 * v[1]) + c2 * v[2]; };
  const V4 wa = rotate(za) + t, wb = rotate(zb) + t;
  storePoint(normal, rotate(lanes(nLocal)));
  storePoint(witnessA, wa);
  storePoint(witnessB, wb);
  storePoint(midpoint, 0.5 * (wa + wb));
}

__attribute__((target_clones("avx2", "default"))) int leanTetrahedron(const Mat3& R, const Vec3& t, const Vec3* pa,
                                                                        const Vec3* lb, Vec3* y, Vec3* bA, Real& scale2,
                                                                        LeanFaces& f) {
  // bA = mulMat(R, lb) + t, lane i for point i: ((R(r, 0) x + R(r, 1) y) + R(r, 2) z) + t_r.
  const V4 LX = {lb[0].x(), lb[1].x(), lb[2].x(), lb[3].x()};
  const V4 LY = {lb[0].y(), lb[1].y(), lb[2].y(), lb[3].y()};
  const V4 LZ = {lb[0].z(), lb[1].z(), lb[2].z(), lb[3].z()};
  auto row = [&](int r) __attribute__((always_inline)) {
    return ((R(r, 0) * LX + R(r, 1) * LY) + R(r, 2) * LZ) + t[r];
  };
  const V4 BX = row(0), BY = row(1), BZ = row(2);
  const V4 X = V4{pa[0].x(), pa[1].x(), pa[2].x(), pa[3].x()} - BX;
  const V4 Y = V4{pa[0].y(), pa[1].y(), pa[2].y(), pa[3].y()} - BY;
  const V4 Z = V4{pa[0].z(), pa[1].z(), pa[2].z(), pa[3].z()} - BZ;
  const V4 s2 = (X * X + Y * Y) + Z * Z;  // (squaredNorm's order)
  Real m = 0;
  for (int i = 0; i < 4; ++i) {  // (std::max in the caller's order: a NaN is passed over the same way)
    m = std::max(m, s2[i]);
    y[i] = Vec3(X[i], Y[i], Z[i]), bA[i] = Vec3(BX[i], BY[i], BZ[i]);
  }
  scale2 = m;
  // The apex against the base (0, 1, 2), with the scalar helpers (faceCross, faceOrient).
  Vec3 c012, a012;
  faceCross(y[0], y[1], y[2], c012, a012);
  const int orientation =
      c012.squaredNorm() > 0 ? faceOrient(c012, a012, y[0], y[1], y[2], y[3], Vec3(y[3] - y[0])) : 0;
  if (orientation > 0)
    faces<true>(X, Y, Z, f);
  else if (orientation < 0)
    faces<false>(X, Y, Z, f);
  return orientation;
}

}  // namespace proxima::detail
