// Exact orient3d: the floating-point filter, the long-double stage, the fixed-width integer stage
// and the GMP stage must all agree with exact constructions.
#include <gtest/gtest.h>

#include <random>

#include "proxima/core/predicates.hpp"

namespace proxima {
namespace {

TEST(Orient3d, ExactlyCoplanarAndOneUlpOff) {
  std::mt19937_64 rng(9);
  std::uniform_int_distribution<int> small(-50, 50);
  for (int k = 0; k < 2000; ++k) {
    // Integer lattice points on a plane through p0 spanned by integer vectors: exactly coplanar,
    // and scaled by a power of two so that every coordinate stays exact.
    const Real s = std::ldexp(1.0, small(rng) / 5);
    const Vec3 p0(small(rng), small(rng), small(rng)), u(small(rng), small(rng), small(rng)),
        v(small(rng), small(rng), small(rng));
    if (u.cross(v).squaredNorm() == 0) continue;
    const Vec3 a = s * p0, b = s * (p0 + u), c = s * (p0 + v), d = s * (p0 + 2 * u - 3 * v);
    ASSERT_EQ(exactOrient3d(a, b, c, d), 0) << k;
    // Nudge d by one ulp along the normal's dominant axis: the sign follows the nudge.
    const Vec3 n = u.cross(v);
    int ax = 0;
    for (int i = 1; i < 3; ++i)
      if (std::abs(n[i]) > std::abs(n[ax])) ax = i;
    Vec3 up = d;
    up[ax] = std::nextafter(d[ax], n[ax] > 0 ? INFINITY : -INFINITY);
    EXPECT_EQ(exactOrient3d(a, b, c, up), 1) << k;
    Vec3 down = d;
    down[ax] = std::nextafter(d[ax], n[ax] > 0 ? -INFINITY : INFINITY);
    EXPECT_EQ(exactOrient3d(a, b, c, down), -1) << k;
  }
}

TEST(Orient3d, TrapezoidsAndWideExponentSpans) {
  // Two segments parallel to x with shared y, z per segment (box edges seen in a box's frame).
  const Vec3 a(-0.64108609835345542, -0.72746195432347638, -0.37662806906037177);
  const Vec3 b(0.35046806484536863, 0.23752045169613833, -0.55679876501810899);
  const Vec3 c(0.084521353568813629, -0.72746195432347638, -0.37662806906037177);
  const Vec3 d(-0.37513938707690042, 0.23752045169613833, -0.55679876501810899);
  EXPECT_EQ(exactOrient3d(a, b, c, d), 0);
  // Coordinates from 1e-30 to 1e30: beyond the integer stage, decided by GMP.
  const Vec3 p(1e-30, 0, 0), q(1e30, 0, 0), r(0, 1e30, 0), t(1e-30, 1e-30, 1e-30);
  EXPECT_EQ(exactOrient3d(p, q, r, t), 1);
  EXPECT_EQ(exactOrient3d(p, q, r, Vec3(1e-30, 1e-30, -1e-30)), -1);
  EXPECT_EQ(exactOrient3d(p, q, r, Vec3(5e29, 5e29, 0)), 0);
}

}  // namespace
}  // namespace proxima
