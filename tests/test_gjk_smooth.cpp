// GJK's Newton finish on smooth pairs (ellipsoids, gjk.hpp detail::newtonDistance): exact distance
// and normal on pairs built with a known gap, agreement with plain GJK, warm start, overlap left to
// GJK, degenerate shapes (needles, discs, 1e4 size ratios, far from the origin).
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "proxima/narrowphase/distance.hpp"
#include "proxima/narrowphase/penetration.hpp"
#include "test_util.hpp"

using namespace proxima;
using proxima::test::randomRotation;

namespace {

Vec3 randomUnit(std::mt19937_64& rng) {
  std::normal_distribution<Real> g;
  return Vec3(g(rng), g(rng), g(rng)).normalized();
}

/// Ellipsoids a and b with B placed so that A's support point towards u and B's towards -u are g
/// apart along u: both surfaces have normal ±u there, so for g > 0 the distance is g along u
/// (up to the rounding of the placement, ~1e-16 x the coordinates).
struct KnownPair {
  Transform poseA, poseB;
  Vec3 u;
};

KnownPair place(const Ellipsoid& a, const Ellipsoid& b, Real g, const Vec3& origin, std::mt19937_64& rng) {
  const Mat3 ra = randomRotation(rng).toRotationMatrix(), rb = randomRotation(rng).toRotationMatrix();
  const Vec3 u = randomUnit(rng);
  SupportHint h;
  const Vec3 pa = origin + ra * a.support(ra.transpose() * u, h);
  const Vec3 sb = rb * b.support(rb.transpose() * -u, h);
  return {Transform(ra, origin), Transform(rb, Vec3(pa + g * u - sb)), u};
}

GjkOptions plainGjk() {
  GjkOptions o;
  o.smoothNewton = false;
  return o;
}

}  // namespace

TEST(GjkSmoothNewton, KnownGapDistanceAndNormalToMachinePrecision) {
  std::mt19937_64 rng(77);
  const Ellipsoid shapes[] = {Ellipsoid{Vec3(1, 0.6, 0.3)}, Ellipsoid{Vec3(1, 1, 1)}, Ellipsoid{Vec3(2, 0.2, 0.2)},
                              Ellipsoid{Vec3(0.5, 0.5, 0.05)}};
  int queries = 0, newtonUsed = 0;
  for (const Real g : {2.0, 0.3, 1e-3, 1e-6, 1e-9, 1e-12})
    for (const auto& ea : shapes)
      for (const auto& eb : shapes)
        for (int trial = 0; trial < 25; ++trial) {
          const KnownPair p = place(ea, eb, g, Vec3::Zero(), rng);
          const DistanceResult r = gjkDistance(ea, p.poseA, eb, p.poseB);
          ++queries;
          ASSERT_EQ(r.status, Status::Separated) << "g " << g << " trial " << trial;
          // GJK's certificate (gap <= kGjkRelative x d + kGjkAbsolute x scale, scale ~3 here) plus
          // the placement's own rounding (~1e-16 x the coordinates).
          EXPECT_NEAR(r.distance, g, 1e-14 + 1e-14 * g) << "g " << g;
          EXPECT_LE(r.lowerBound, r.distance);
          EXPECT_GE(r.lowerBound, r.distance - (1e-14 + 1e-14 * g));
          // The normal is Newton's direction, accurate even when the gap is 1e-12 (the direction
          // of the witness difference would only be good to ~1e-16 / g).
          EXPECT_LE((r.normal - p.u).norm(), 1e-12) << "g " << g;
          EXPECT_NEAR((r.witnessB - r.witnessA).norm(), r.distance, 1e-14 * (1 + r.distance));
          newtonUsed += r.newtonSteps > 0;
        }
  // Pairs this far apart are certified by GJK's own progress test only if the start was exact.
  EXPECT_GE(newtonUsed, queries * 9 / 10);
}

TEST(GjkSmoothNewton, AgreesWithPlainGjkAndIsFaster) {
  std::mt19937_64 rng(78);
  const Ellipsoid e{Vec3(1, 0.6, 0.3)};
  long newtonIters = 0, gjkIters = 0;
  for (const Real g : {2.0, 1e-3, 1e-9})
    for (int trial = 0; trial < 200; ++trial) {
      const KnownPair p = place(e, e, g, Vec3::Zero(), rng);
      const DistanceResult r = gjkDistance(e, p.poseA, e, p.poseB);
      const DistanceResult s = gjkDistance(e, p.poseA, e, p.poseB, plainGjk());
      ASSERT_EQ(r.status, Status::Separated);
      ASSERT_EQ(s.status, Status::Separated);
      EXPECT_NEAR(r.distance, s.distance, 2e-14 * (1 + g));
      EXPECT_EQ(s.newtonSteps, 0);
      newtonIters += r.iterations, gjkIters += s.iterations;
    }
  // Quadratic against linear convergence: the thesis's ~100 GJK iterations at machine precision on
  // quadrics become a handful.
  EXPECT_LT(newtonIters * 4, gjkIters) << newtonIters << " vs " << gjkIters;
}

TEST(GjkSmoothNewton, WarmStartFromTheCachedNormal) {
  std::mt19937_64 rng(79);
  const Ellipsoid a{Vec3(1, 0.6, 0.3)}, b{Vec3(0.4, 0.4, 0.9)};
  for (const Real g : {0.5, 1e-4, 1e-10}) {
    KnownPair p = place(a, b, g, Vec3(3, -2, 1), rng);
    GjkCache cache;
    int warmIters = 0, steps = 0;
    for (int step = 0; step < 100; ++step) {
      // A DEM-like step: B drifts by 1e-5 and turns by 1e-5 rad about a random axis.
      const Eigen::AngleAxis<Real> turn(1e-5, randomUnit(rng));
      p.poseB = Transform(Mat3(turn.toRotationMatrix() * p.poseB.rotation),
                          Vec3(p.poseB.translation + 1e-5 * randomUnit(rng)));
      const DistanceResult warm = gjkDistance(a, p.poseA, b, p.poseB, GjkOptions{}, &cache);
      const DistanceResult cold = gjkDistance(a, p.poseA, b, p.poseB, plainGjk());
      ASSERT_EQ(warm.status, cold.status) << "step " << step;
      if (cold.status != Status::Separated) continue;
      EXPECT_NEAR(warm.distance, cold.distance, 1e-14 * (1 + cold.distance) + 1e-14) << "step " << step;
      EXPECT_LE(warm.lowerBound, warm.distance);
      if (step > 0) warmIters += warm.iterations, ++steps;
    }
    // One support pair to start plus 1-2 Newton steps per query.
    EXPECT_LE(warmIters, 3 * steps) << "g " << g;
  }
}

TEST(GjkSmoothNewton, OverlapIsLeftToGjk) {
  std::mt19937_64 rng(80);
  const Ellipsoid e{Vec3(1, 0.6, 0.3)};
  for (const Real g : {-1e-9, -1e-4, -0.1, -0.5})
    for (int trial = 0; trial < 100; ++trial) {
      const KnownPair p = place(e, e, g, Vec3::Zero(), rng);
      const DistanceResult r = gjkDistance(e, p.poseA, e, p.poseB);
      EXPECT_EQ(r.status, Status::Overlapping) << "g " << g << " trial " << trial;
      EXPECT_EQ(r.distance, 0);
      // Newton gives up at once when its quadratic model keeps the projections overlapping; only
      // grazing overlaps (which look like touching) cost it a few steps.
      EXPECT_LE(r.newtonSteps, g < -1e-3 ? 1 : 8) << "g " << g;
    }
}

TEST(GjkSmoothNewton, DegenerateScalesAndFarFromOrigin) {
  std::mt19937_64 rng(81);
  struct Case {
    Ellipsoid a, b;
    Vec3 origin;
    Real tol;  ///< absolute: the placement rounds at ~1e-16 x |coordinates|
  };
  const Case cases[] = {
      {Ellipsoid{Vec3(1, 1, 1e-6)}, Ellipsoid{Vec3(1, 0.5, 0.5)}, Vec3::Zero(), 4e-15},      // a disc
      {Ellipsoid{Vec3(1e-6, 1e-6, 1)}, Ellipsoid{Vec3(1, 0.5, 0.5)}, Vec3::Zero(), 4e-15},   // a needle
      {Ellipsoid{Vec3(1e-4, 2e-4, 1e-4)}, Ellipsoid{Vec3(1, 2, 0.5)}, Vec3::Zero(), 4e-15},  // 1e4 size ratio
      {Ellipsoid{Vec3(1, 0.6, 0.3)}, Ellipsoid{Vec3(1, 0.6, 0.3)}, Vec3(1e4, -2e4, 3e4), 2e-11},
  };
  for (const Case& c : cases)
    for (const Real g : {1.0, 1e-3, 1e-8})
      for (int trial = 0; trial < 50; ++trial) {
        const KnownPair p = place(c.a, c.b, g, c.origin, rng);
        const DistanceResult r = gjkDistance(c.a, p.poseA, c.b, p.poseB);
        ASSERT_EQ(r.status, Status::Separated) << "g " << g << " trial " << trial;
        EXPECT_NEAR(r.distance, g, c.tol + 1e-14 * g) << "g " << g << " trial " << trial;
        EXPECT_TRUE(r.normal.allFinite());
        const DistanceResult s = gjkDistance(c.b, p.poseB, c.a, p.poseA);
        EXPECT_NEAR(s.distance, r.distance, 2 * c.tol + 1e-14 * g);
      }
}

TEST(GjkSmoothNewton, RuntimeShapesDistanceAndContact) {
  // The runtime API (and so the DEM) reaches the Newton finish through the shape cores; inflated
  // ellipsoids subtract their radii afterwards.
  std::mt19937_64 rng(82);
  const Ellipsoid ea{Vec3(1, 0.6, 0.3)}, eb{Vec3(0.5, 0.5, 0.2)};
  for (int trial = 0; trial < 50; ++trial) {
    const KnownPair p = place(ea, eb, 0.25, Vec3::Zero(), rng);
    const DistanceResult r = distance(Shape(ea), p.poseA, Shape(eb), p.poseB);
    ASSERT_EQ(r.status, Status::Separated);
    EXPECT_NEAR(r.distance, 0.25, 1e-14);
    EXPECT_GT(r.newtonSteps, 0);
    const DistanceResult inflated = distance(Shape(ea, 0.1), p.poseA, Shape(eb, 0.05), p.poseB);
    EXPECT_NEAR(inflated.distance, 0.1, 1e-14);
    ContactCache cache;
    const ContactResult c = contact(Shape(ea), p.poseA, Shape(eb), p.poseB, PenetrationOptions{}, &cache);
    EXPECT_EQ(c.status, Status::Separated);
    EXPECT_NEAR(c.distance, 0.25, 1e-14);
    EXPECT_LE((c.normal - p.u).norm(), 1e-13);
  }
}

TEST(GjkSmoothNewton, SphereAgainstEllipsoid) {
  // A sphere's core is a point (zero support Hessian): the ellipsoid's curvature alone makes the
  // Newton finish well posed. Exact: the sphere centre at A's support point towards u plus (g + r) u.
  std::mt19937_64 rng(83);
  const Ellipsoid e{Vec3(1, 0.6, 0.3)};
  for (const Real g : {1.0, 1e-3, 1e-9})
    for (int trial = 0; trial < 100; ++trial) {
      const Mat3 ra = randomRotation(rng).toRotationMatrix();
      const Vec3 u = randomUnit(rng);
      SupportHint h;
      const Vec3 pa = ra * e.support(ra.transpose() * u, h);
      const Transform poseA(ra, Vec3::Zero()), poseB(Mat3::Identity(), Vec3(pa + (g + 0.25) * u));
      const DistanceResult r = distance(Shape(e), poseA, Shape(Sphere{0.25}), poseB);
      ASSERT_EQ(r.status, Status::Separated);
      EXPECT_NEAR(r.distance, g, 4e-15 + 1e-14 * g) << "g " << g;
      EXPECT_LE((r.normal - u).norm(), 1e-12) << "g " << g;
      EXPECT_GT(r.newtonSteps + (r.iterations <= 2), 0);
      const DistanceResult s =
          gjkDistance(e, poseA, Point{}, Transform(Mat3::Identity(), poseB.translation), plainGjk());
      EXPECT_NEAR(s.distance - 0.25, r.distance, 1e-14 + 1e-14 * g);
    }
}
