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

TEST(GjkSmoothNewton, OverlapCertifiedByTheRollingBalls) {
  // Overlapping smooth pairs: Newton on the overlap from the line of centres until one support pair
  // puts the origin inside the rolling ball of the Minkowski difference, else GJK; never a wrong
  // class, and few support pairs (GJK alone needs ~10 iterations on curved overlaps).
  std::mt19937_64 rng(80);
  const Ellipsoid e{Vec3(1, 0.6, 0.3)};
  for (const Real g : {-1e-9, -1e-4, -0.1, -0.5}) {
    long work = 0;
    for (int trial = 0; trial < 100; ++trial) {
      const KnownPair p = place(e, e, g, Vec3::Zero(), rng);
      const DistanceResult r = gjkDistance(e, p.poseA, e, p.poseB);
      EXPECT_EQ(r.status, Status::Overlapping) << "g " << g << " trial " << trial;
      EXPECT_EQ(r.distance, 0);
      work += r.iterations + r.newtonSteps;
    }
    std::printf("[ overlap ] g = %g: %.2f support pairs per query beyond the first\n", g, work / 100.0);
    EXPECT_LE(work, 100 * 8) << "g " << g;
  }
}

// When the rolling balls certify an overlap, both witnesses are one point common to both cores
// (review 2026-11-26, the fuzz's concentric family: they were the midpoint of the support pair, 0.2
// away from a point core sitting inside an ellipsoid).
TEST(GjkSmoothNewton, RollingOverlapWitnessIsACommonPoint) {
  std::mt19937_64 rng(81);
  std::uniform_real_distribution<Real> u(-1, 1);
  const Ellipsoid e{Vec3(1, 0.6, 0.4)};
  int rolling = 0;
  for (int trial = 0; trial < 200; ++trial) {
    const Transform pe(randomRotation(rng), Vec3(u(rng), u(rng), u(rng)));
    // A point core inside the ellipsoid: the only common point is the point itself.
    const Vec3 local = 0.8 * Vec3(u(rng), u(rng), u(rng)).cwiseProduct(Vec3(1, 0.6, 0.4)) / std::sqrt(3.0);
    const Point p{Vec3::Zero()};
    const Transform pp(randomRotation(rng), pe.apply(local));
    const DistanceResult r = gjkDistance(p, pp, e, pe);
    ASSERT_EQ(r.status, Status::Overlapping) << trial;
    rolling += r.simplexSize == 1;
    EXPECT_LE((r.witnessA - pp.translation).norm(), 1e-12) << trial;
    EXPECT_LE((r.witnessB - pp.translation).norm(), 1e-12) << trial;
    // Two ellipsoids overlapping: the witness lies in both (quadratic forms <= 1 up to rounding).
    const Ellipsoid f{Vec3(0.5, 0.3, 0.7)};
    const Transform pf(randomRotation(rng), pe.translation + 0.5 * Vec3(u(rng), u(rng), u(rng)));
    const DistanceResult q = gjkDistance(e, pe, f, pf);
    if (q.status != Status::Overlapping) continue;
    auto inside = [](const Ellipsoid& g, const Transform& t, const Vec3& x) {
      return t.rotation.transpose().operator*(x - t.translation).cwiseQuotient(g.radii).squaredNorm();
    };
    EXPECT_LE(inside(e, pe, q.witnessA), 1 + 1e-12) << trial;
    EXPECT_LE(inside(f, pf, q.witnessA), 1 + 1e-12) << trial;
    EXPECT_EQ(q.witnessA, q.witnessB) << trial;
  }
  EXPECT_GT(rolling, 5) << "the rolling-ball certificate must answer some of the point-in-ellipsoid queries";
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

// --- Overlapping smooth pairs: GJK-TD's analytic Newton with the rolling-ball certificate
// (gjk_td.hpp, newtonOverlap). The expansion path (smoothNewton off) is the independent reference.

namespace {

// A random pose near the origin and a second one whose centre is within `spread` (per axis) of the
// first, both randomly rotated.
std::pair<Transform, Transform> posesNear(std::mt19937_64& rng, Real spread) {
  std::uniform_real_distribution<Real> u(-1, 1);
  const Transform pa(test::randomRotation(rng).toRotationMatrix(), Vec3(u(rng), u(rng), u(rng)));
  const Transform pb(test::randomRotation(rng).toRotationMatrix(),
                     Vec3(pa.translation + Vec3(u(rng), u(rng), u(rng)) * spread));
  return {pa, pb};
}

PenetrationOptions expansionOnly() {
  PenetrationOptions o;
  o.gjk.smoothNewton = false;
  return o;
}

/// Overlap of the two bodies along the world unit n (the CSO support value): the depth is its minimum.
Real overlapAlong(const Shape& a, const Transform& pa, const Shape& b, const Transform& pb, const Vec3& n) {
  SupportHint ha, hb;
  const Vec3 sa = pa.apply(a.support(pa.rotateInverse(n), ha));
  const Vec3 sb = pb.apply(b.support(pb.rotateInverse(Vec3(-n)), hb));
  return n.dot(sa - sb);
}

}  // namespace

TEST(OverlapNewton, KnownOverlapDepthAndNormal) {
  // B pushed into A by |g| along u from the pose where both surfaces touch with normals ±u: for
  // overlaps small against the curvature radii the depth is exactly |g| along u.
  std::mt19937_64 rng(90);
  const Ellipsoid shapes[] = {Ellipsoid{Vec3(1, 0.6, 0.3)}, Ellipsoid{Vec3(1, 1, 1)}, Ellipsoid{Vec3(0.7, 0.5, 0.4)}};
  int queries = 0, byNewton = 0;
  Real worst = 0;
  for (const Real g : {-1e-12, -1e-9, -1e-6, -1e-3, -1e-2})
    for (const auto& ea : shapes)
      for (const auto& eb : shapes)
        for (int trial = 0; trial < 20; ++trial) {
          const KnownPair p = place(ea, eb, g, Vec3::Zero(), rng);
          const ContactResult r = contact(Shape(ea), p.poseA, Shape(eb), p.poseB);
          ++queries;
          ASSERT_EQ(r.status, Status::Overlapping) << "g " << g << " trial " << trial;
          // Newton's certificate: depth within kGjkRelative x scale (~1.4e-14 here) of the exact one.
          EXPECT_NEAR(r.depth, -g, 1.5e-14 + 1e-13 * -g) << "g " << g << " trial " << trial;
          EXPECT_EQ(r.distance, -r.depth);
          EXPECT_LE((r.normal - p.u).norm(), 1e-9) << "g " << g;
          // Witnesses on the surfaces, -depth apart along the normal.
          EXPECT_NEAR((r.witnessA - r.witnessB).dot(r.normal), r.depth, 1e-14);
          worst = std::max(worst, std::abs(r.depth + g));
          // Cold: Newton starts on the line of centres; where the overlap along it is beyond the
          // rolling balls it answers after one expansion, from the polytope's first face.
          EXPECT_LE(r.expansions, 1) << "g " << g;
          byNewton += r.polytopeVertices == 0;
        }
  EXPECT_GT(byNewton, queries * 3 / 4);
  std::printf("[ overlap ] %d known-depth pairs, max |depth - |g|| = %.2e\n", queries, worst);
}

TEST(OverlapNewton, AgreesWithTheExpansionPathOnRandomPairs) {
  // Random ellipsoid pairs at random offsets, shallow to deep: Newton's certified answer against
  // the polytope expansion's, and no nearby direction with a smaller overlap (local optimality).
  std::mt19937_64 rng(91);
  std::uniform_real_distribution<Real> u(-1, 1);
  const Shape shapes[] = {Shape(Ellipsoid{Vec3(1, 0.6, 0.3)}), Shape(Ellipsoid{Vec3(0.8, 0.5, 0.4)}),
                          Shape(Ellipsoid{Vec3(0.3, 0.5, 1.2)}), Shape(Sphere{0.4}),
                          Shape(Ellipsoid{Vec3(2, 0.2, 0.2)})};
  int checked = 0, byNewton = 0;
  long newtonIters = 0, expansionIters = 0;
  Real worst = 0;
  for (int k = 0; k < 1500; ++k) {
    const Shape& a = shapes[k % 5];
    const Shape& b = shapes[(k / 5) % 5];
    const auto [pa, pb] = posesNear(rng, 1.2);
    const ContactResult r = contact(a, pa, b, pb);
    const ContactResult s = contact(a, pa, b, pb, expansionOnly());
    ASSERT_EQ(r.status, s.status) << k;
    if (r.status != Status::Overlapping) continue;
    ++checked;
    const Real scale = 3;
    EXPECT_NEAR(r.depth, s.depth, 2e-12 * scale) << k;
    worst = std::max(worst, std::abs(r.depth - s.depth));
    EXPECT_NEAR(overlapAlong(a, pa, b, pb, r.normal), r.depth, 1e-14) << k;
    // Newton certifies to ~1e-14 x scale; the expansion to its contract, 1e-12 x scale.
    const Real slack = r.polytopeVertices == 0 ? 1e-13 : 2e-12 * scale;
    for (Real eps : {1e-2, 1e-4, 1e-6})
      for (int j = 0; j < 4; ++j) {
        const Vec3 n = (r.normal + eps * Vec3(u(rng), u(rng), u(rng))).normalized();
        EXPECT_GE(overlapAlong(a, pa, b, pb, n), r.depth - slack) << k << " eps " << eps;
      }
    if (r.newtonSteps > 0 && r.expansions == 0) ++byNewton, newtonIters += r.iterations, expansionIters += s.iterations;
  }
  EXPECT_GT(checked, 500);
  // Deep overlaps (beyond the rolling balls: 0.02 for the needle-like ellipsoid) are the expansion's.
  EXPECT_GT(byNewton, checked / 5) << "Newton answered " << byNewton << " of " << checked;
  std::printf("[ overlap ] %d overlapping pairs, %d by Newton (%.1f iterations vs %.1f expanding), max |diff| %.2e\n",
              checked, byNewton, double(newtonIters) / std::max(byNewton, 1),
              double(expansionIters) / std::max(byNewton, 1), worst);
}

TEST(OverlapNewton, WarmStartAcrossDemStepsAndSeparation) {
  // A DEM-like trajectory: B approaches A, overlaps up to ~1e-3, and leaves again, one small step at a
  // time with one cache. Every step agrees with a cold expansion-path query; overlapping steps after
  // the first are answered by 1-3 Newton steps from the cached normal, with no polytope.
  std::mt19937_64 rng(92);
  const Ellipsoid a{Vec3(1, 0.6, 0.3)}, b{Vec3(0.4, 0.4, 0.9)};
  KnownPair p = place(a, b, 1e-3, Vec3(3, -2, 1), rng);
  ContactCache cache;
  int overlapping = 0, warmOverlapping = 0, maxIters = 0;
  Status last = Status::Separated;
  for (int step = 0; step < 400; ++step) {
    const Real approach = step < 200 ? -1e-5 : 1e-5;  // towards A, then away
    const Eigen::AngleAxis<Real> turn(1e-5, randomUnit(rng));
    p.poseB = Transform(Mat3(turn.toRotationMatrix() * p.poseB.rotation),
                        Vec3(p.poseB.translation + approach * p.u + 1e-7 * randomUnit(rng)));
    const ContactResult warm = contact(Shape(a), p.poseA, Shape(b), p.poseB, PenetrationOptions{}, &cache);
    const ContactResult cold = contact(Shape(a), p.poseA, Shape(b), p.poseB, expansionOnly());
    ASSERT_EQ(warm.status, cold.status) << "step " << step;
    EXPECT_NEAR(warm.distance, cold.distance, 3e-12) << "step " << step;
    if (warm.status == Status::Overlapping) {
      ++overlapping;
      if (last == Status::Overlapping) {
        ++warmOverlapping;
        EXPECT_EQ(warm.expansions, 0) << "step " << step;
        maxIters = std::max(maxIters, warm.iterations);
      }
    }
    last = warm.status;
  }
  EXPECT_GT(overlapping, 150);
  EXPECT_LE(maxIters, 3);
  std::printf("[ overlap ] %d overlapping steps (%d warm), at most %d Newton steps each\n", overlapping,
              warmOverlapping, maxIters);
}

TEST(OverlapNewton, SphereIntoEllipsoidShallowAndDeep) {
  // A sphere is a point core plus its radius; with the core outside the ellipsoid the depth is
  // radius - core distance (GJK), with the core inside it is the core's depth plus the radius
  // (Newton with the ellipsoid's rolling ball alone). Exact: centre at A's support point towards u
  // plus (radius - delta) u, for delta < radius; for delta > radius the core is inside and the
  // depth is delta as long as delta - radius is small against the curvature radii.
  std::mt19937_64 rng(93);
  const Ellipsoid e{Vec3(1, 0.6, 0.5)};
  for (const Real delta : {1e-9, 1e-3, 0.1, 0.2 + 1e-9, 0.2 + 1e-4, 0.21})
    for (int trial = 0; trial < 100; ++trial) {
      const Mat3 ra = randomRotation(rng).toRotationMatrix();
      const Vec3 u = randomUnit(rng);
      SupportHint h;
      const Vec3 pa = ra * e.support(ra.transpose() * u, h);
      const Transform poseA(ra, Vec3(1, 2, 3)), poseB(Mat3::Identity(), Vec3(Vec3(1, 2, 3) + pa + (0.2 - delta) * u));
      const ContactResult r = contact(Shape(e), poseA, Shape(Sphere{0.2}), poseB);
      ASSERT_EQ(r.status, Status::Overlapping) << "delta " << delta;
      EXPECT_NEAR(r.depth, delta, 4e-15 + 1e-13 * delta) << "delta " << delta << " trial " << trial;
      EXPECT_LE((r.normal - u).norm(), 1e-9) << "delta " << delta;
      if (delta > 0.2) {
        EXPECT_LE(r.expansions, 1) << "delta " << delta;
      }
    }
}

TEST(OverlapNewton, DegenerateShapesFallBackOrCertify) {
  // Needles and discs have tiny rolling balls: deep overlaps leave Newton's certified region and
  // must fall back to the expansion; far from the origin rounding grows with the coordinates.
  std::mt19937_64 rng(94);
  std::uniform_real_distribution<Real> u(-1, 1);
  struct Case {
    Shape a, b;
    Vec3 origin;
    Real spread, tol;
  };
  const Case cases[] = {
      {Shape(Ellipsoid{Vec3(1, 1, 1e-4)}), Shape(Ellipsoid{Vec3(1, 0.5, 0.5)}), Vec3::Zero(), 1.0, 4e-12},
      {Shape(Ellipsoid{Vec3(1e-4, 1e-4, 1)}), Shape(Ellipsoid{Vec3(1, 0.5, 0.5)}), Vec3::Zero(), 1.0, 4e-12},
      {Shape(Ellipsoid{Vec3(1e-3, 2e-3, 1e-3)}), Shape(Ellipsoid{Vec3(1, 2, 0.5)}), Vec3::Zero(), 1.0, 4e-12},
      {Shape(Ellipsoid{Vec3(1, 0.6, 0.3)}), Shape(Ellipsoid{Vec3(1, 0.6, 0.3)}), Vec3(1e4, -2e4, 3e4), 1.0, 1e-10},
  };
  int overlapping = 0;
  for (const Case& c : cases)
    for (int trial = 0; trial < 200; ++trial) {
      const Transform pa(test::randomRotation(rng).toRotationMatrix(), c.origin);
      const Transform pb(test::randomRotation(rng).toRotationMatrix(),
                         Vec3(c.origin + c.spread * Vec3(u(rng), u(rng), u(rng))));
      const ContactResult r = contact(c.a, pa, c.b, pb);
      const ContactResult s = contact(c.a, pa, c.b, pb, expansionOnly());
      ASSERT_EQ(r.status, s.status) << trial;
      ASSERT_TRUE(std::isfinite(r.distance)) << trial;
      EXPECT_TRUE(r.normal.allFinite());
      if (r.status != Status::Overlapping) continue;
      ++overlapping;
      EXPECT_NEAR(r.depth, s.depth, c.tol) << trial;
      const ContactResult swapped = contact(c.b, pb, c.a, pa);
      EXPECT_NEAR(swapped.depth, r.depth, c.tol) << trial;
    }
  EXPECT_GT(overlapping, 300);
}

TEST(GjkSmoothNewton, RollingBallCertifiesOverlapFromOneSupportPair) {
  // GJK on rolling pairs (ellipsoids, a sphere's point core) calls a pair overlapping as soon as one
  // support pair puts the origin inside the rolling ball of the Minkowski difference. The
  // classification must equal plain GJK's on random pairs from deep overlap to apart, including
  // grazing ones (known overlaps of 1e-12 .. 1e-3), and deep overlaps must end at once.
  std::mt19937_64 rng(95);
  const Shape shapes[] = {Shape(Ellipsoid{Vec3(1, 0.6, 0.3)}), Shape(Ellipsoid{Vec3(0.8, 0.5, 0.4)}),
                          Shape(Sphere{0.4}), Shape(Ellipsoid{Vec3(2, 0.2, 0.2)})};
  GjkOptions plain;
  plain.smoothNewton = false;
  int overlapping = 0, atOnce = 0;
  long iters = 0, plainIters = 0;
  for (int k = 0; k < 4000; ++k) {
    const Shape& a = shapes[k % 4];
    const Shape& b = shapes[(k / 4) % 4];
    const auto [pa, pb] = posesNear(rng, 1.5);
    const DistanceResult r = distance(a, pa, b, pb);
    const DistanceResult s = distance(a, pa, b, pb, plain);
    ASSERT_EQ(r.status, s.status) << k;
    if (r.status != Status::Overlapping) continue;
    ++overlapping;
    // (a sphere's radius can make a pair overlap whose cores are apart: distance = core distance -
    // radii, which plain GJK on curved cores gives to ~1e-13 only)
    EXPECT_NEAR(r.distance, s.distance, 1e-12) << k;
    atOnce += r.iterations == 0;
    iters += r.iterations, plainIters += s.iterations;
  }
  EXPECT_GT(overlapping, 600);
  EXPECT_LT(iters, plainIters) << iters << " vs " << plainIters;
  // Grazing overlaps: still overlapping, whichever way GJK certifies it.
  const Ellipsoid e{Vec3(1, 0.6, 0.3)};
  for (const Real g : {-1e-12, -1e-9, -1e-6, -1e-3})
    for (int trial = 0; trial < 100; ++trial) {
      const KnownPair p = place(e, e, g, Vec3(5, 6, 7), rng);
      EXPECT_EQ(gjkDistance(e, p.poseA, e, p.poseB).status, Status::Overlapping) << "g " << g;
      const KnownPair q = place(e, e, -g, Vec3(5, 6, 7), rng);
      EXPECT_EQ(gjkDistance(e, q.poseA, e, q.poseB).status, Status::Separated) << "g " << -g;
    }
  std::printf(
      "[ rolling ] %d overlapping pairs, %d certified by the first support pair; %.2f GJK iterations vs %.2f plain\n",
      overlapping, atOnce, double(iters) / overlapping, double(plainIters) / overlapping);
}

// Witnesses of separated ellipsoid pairs (review 2026-11-27): they were the support pair at the last
// Newton direction u, whose angle to the optimum is ~sqrt(distance error / curvature) ~ 1e-8 when the
// distance is certified to ~1e-15, so they sat up to 6.6e-8 (relative) off the closest pair while the
// distance was exact. Independent check on seeded random pairs: each witness lies on its surface
// (x^T M x = 1 in the local frame, M = diag(1 / radii^2)) and the witness difference is parallel to
// both surface normals (M x, rotated to the world) at the witnesses.
TEST(GjkSmoothNewton, WitnessesAreTheClosestPair) {
  std::mt19937_64 rng(96);
  std::uniform_real_distribution<Real> radius(0.2, 1.5);
  auto onSurface = [](const Ellipsoid& e, const Transform& t, const Vec3& x) {
    return t.rotation.transpose().operator*(x - t.translation).cwiseQuotient(e.radii).squaredNorm() - 1;
  };
  auto surfaceNormal = [](const Ellipsoid& e, const Transform& t, const Vec3& x) -> Vec3 {
    const Vec3 local = t.rotation.transpose() * (x - t.translation);
    return (t.rotation * local.cwiseQuotient(e.radii.cwiseProduct(e.radii))).normalized();
  };
  Real worstSurface = 0, worstAngle = 0, worstPair = 0;
  int queries = 0;
  for (const Real g : {1.0, 0.1, 1e-3, 1e-5, 1e-8, 1e-11})
    for (const bool warm : {false, true})
      for (int trial = 0; trial < 100; ++trial) {
        const Ellipsoid a{Vec3(radius(rng), radius(rng), radius(rng))}, b{Vec3(radius(rng), radius(rng), radius(rng))};
        const Vec3 origin = trial % 2 ? Vec3(3, -1, 2) : Vec3::Zero();
        KnownPair p = place(a, b, g, origin, rng);
        GjkCache cache;
        if (warm) {  // a DEM-like previous step: the warm Newton path
          const Transform before(p.poseB.rotation, Vec3(p.poseB.translation + 1e-4 * randomUnit(rng)));
          gjkDistance(a, p.poseA, b, before, GjkOptions{}, &cache);
        }
        const DistanceResult r = gjkDistance(a, p.poseA, b, p.poseB, GjkOptions{}, warm ? &cache : nullptr);
        ASSERT_EQ(r.status, Status::Separated);
        ++queries;
        const Real sa = onSurface(a, p.poseA, r.witnessA), sb = onSurface(b, p.poseB, r.witnessB);
        EXPECT_LE(std::abs(sa), 1e-10) << "g " << g << " trial " << trial;
        EXPECT_LE(std::abs(sb), 1e-10) << "g " << g << " trial " << trial;
        // The placement's own pair (A's support point towards u) is the closest pair, up to the
        // rounding of the placement (~1e-16 x the coordinates).
        SupportHint h;
        const Vec3 exactA = p.poseA.apply(a.support(p.poseA.rotateInverse(p.u), h));
        EXPECT_LE((r.witnessA - exactA).norm(), 1e-12) << "g " << g << " trial " << trial << " warm " << warm;
        EXPECT_LE((r.witnessB - (exactA + g * p.u)).norm(), 1e-12) << "g " << g << " trial " << trial;
        worstPair = std::max(worstPair, (r.witnessA - exactA).norm());
        worstSurface = std::max({worstSurface, std::abs(sa), std::abs(sb)});
        // The witness difference's direction is only good to ~(witness rounding ~1e-15) / g: checked
        // against the surface normals down to g = 1e-5.
        if (g < 1e-5) continue;
        const Vec3 d = (r.witnessB - r.witnessA).normalized();
        const Real angA = d.cross(surfaceNormal(a, p.poseA, r.witnessA)).norm();
        const Real angB = d.cross(surfaceNormal(b, p.poseB, r.witnessB)).norm();
        EXPECT_LE(angA, 1e-8) << "g " << g << " trial " << trial << " warm " << warm;
        EXPECT_LE(angB, 1e-8) << "g " << g << " trial " << trial << " warm " << warm;
        EXPECT_GT(d.dot(surfaceNormal(a, p.poseA, r.witnessA)), 0);
        EXPECT_NEAR((r.witnessB - r.witnessA).norm(), r.distance, 1e-14 * (1 + r.distance));
        EXPECT_NEAR(r.distance, g, 1e-14 + 1e-14 * g);
        worstAngle = std::max({worstAngle, angA, angB});
      }
  std::printf(
      "[ witness ] %d ellipsoid pairs: max |x^T M x - 1| = %.2e, max |witness - exact| = %.2e, max angle to the "
      "surface normals (g >= 1e-5) = %.2e\n",
      queries, worstSurface, worstPair, worstAngle);
}

// Identical curved cores at the same pose (review 2026-11-27: reported as MaxIterations): the cores
// coincide, so the answer is Overlapping at once, with finite fields, also for a 1e-12 offset and
// far from the origin (where 1e-12 is below the coordinates' rounding), and for inflated shapes.
TEST(GjkCoincident, IdenticalCurvedShapesAtTheSamePoseOverlap) {
  std::mt19937_64 rng(97);
  const Shape shapes[] = {Shape(Ellipsoid{Vec3(1, 0.6, 0.3)}), Shape(Cylinder{0.5, 1}), Shape(Cone{0.5, 1.5}),
                          Shape(Capsule{0.3, 1}),               Shape(Sphere{0.7}),     Shape(Ellipsoid{Vec3(1, 0.6, 0.3)}, 0.1),
                          Shape(Cylinder{0.5, 1}, 0.2),         Shape(Cone{0.4, 1}, 0.05), Shape(Ellipsoid{Vec3(2, 1e-3, 1e-3)})};
  int worst = 0;
  for (const Shape& s : shapes)
    for (const Real far : {0.0, 1.0, 1e6})
      for (const Real offset : {0.0, 1e-12})
        for (int trial = 0; trial < 20; ++trial) {
          const Mat3 r = trial == 0 ? Mat3::Identity() : Mat3(randomRotation(rng).toRotationMatrix());
          const Transform pa(r, far * randomUnit(rng));
          const Transform pb(r, Vec3(pa.translation + offset * randomUnit(rng)));
          for (const SignMode signs : {SignMode::Fast, SignMode::Exact}) {
            GjkOptions o;
            o.signs = signs;
            const DistanceResult q = distance(s, pa, s, pb, o);
            ASSERT_EQ(q.status, Status::Overlapping) << static_cast<int>(s.type()) << " far " << far << " offset " << offset;
            // (the point and segment cores of spheres and capsules are genuinely apart by up to the
            // offset: the distance is then core distance - radii)
            EXPECT_NEAR(q.distance, -2 * s.totalRadius(), offset + 1e-15);
            EXPECT_TRUE(q.witnessA.allFinite() && q.witnessB.allFinite() && q.normal.allFinite());
            EXPECT_LE(q.iterations, 12) << static_cast<int>(s.type());
            worst = std::max(worst, q.iterations);
          }
        }
  // The templated query, straight on the shapes (not their cores).
  auto same = [&](const auto& shape) {
    for (int trial = 0; trial < 50; ++trial) {
      const Transform p(randomRotation(rng).toRotationMatrix(), (trial % 2 ? 1e6 : 1.0) * randomUnit(rng));
      const DistanceResult q = gjkDistance(shape, p, shape, p);
      ASSERT_EQ(q.status, Status::Overlapping) << trial;
      EXPECT_TRUE(q.witnessA.allFinite() && q.normal.allFinite());
      EXPECT_LE(q.iterations, 12);
      worst = std::max(worst, q.iterations);
    }
  };
  same(Ellipsoid{Vec3(1, 0.6, 0.3)});
  same(Cylinder{0.5, 1});
  same(Cone{0.5, 1.5});
  same(Capsule{0.3, 1});
  same(Sphere{0.7});
  same(Inflated<Ellipsoid>{Ellipsoid{Vec3(1, 0.6, 0.3)}, 0.1});
  same(Inflated<Cylinder>{Cylinder{0.5, 1}, 0.2});
  std::printf("[ coincide ] identical shapes at the same pose: at most %d GJK iterations\n", worst);
}

// A curved body a gap of 1e-11 (relative) above a flat face (review 2026-11-27: normals reported
// off by > 0.1 rad in 10-25 % of cases, distance errors up to 2e-10). Box (and a cube polytope) axis
// aligned; the body at a random orientation touches the face plane at a random point of the face
// at gap g: the exact normal is the face normal, the exact distance g from B's support along -z.
TEST(GjkNearContact, CurvedBodyAboveAFlatFace) {
  std::mt19937_64 rng(98);
  std::uniform_real_distribution<Real> radius(0.2, 1.0), u(-1, 1);
  Real worstAngle = 0, worstDistance = 0;
  int queries = 0;
  for (const Real size : {1.0, 1e-3, 1e3}) {
    std::vector<Vec3> corners;
    for (int i = 0; i < 8; ++i) corners.push_back(size * Vec3(i & 1 ? 1 : -1, i & 2 ? 1 : -1, i & 4 ? 1 : -1));
    const Polytope cube = Polytope::fromPoints(corners).value();
    for (int kind = 0; kind < 8; ++kind)
      for (int trial = 0; trial < 50; ++trial) {
        const Shape body = kind % 4 == 0   ? Shape(Ellipsoid{size * Vec3(radius(rng), radius(rng), radius(rng))})
                           : kind % 4 == 1 ? Shape(Sphere{size * radius(rng)})
                           : kind % 4 == 2 ? Shape(Cylinder{size * radius(rng), size * radius(rng)})
                                           : Shape(Ellipsoid{size * Vec3(radius(rng), radius(rng), radius(rng))}, 0.1 * size);
        const Shape flat = kind < 4 ? Shape(Box{Vec3(size, size, size)}) : Shape(cube, 0.0);
        const Real top = size, half = size;
        const Transform pa(Mat3::Identity(), Vec3(0.5, -0.25, 0.75) * top);
        const Mat3 rb = randomRotation(rng).toRotationMatrix();
        SupportHint h;
        const Vec3 low = rb * body.support(rb.transpose() * Vec3(0, 0, -1), h);  // lowest point, B at the origin
        const Real g = 1e-11 * half;
        const Vec3 contact = pa.translation + Vec3(0.9 * half * u(rng), 0.9 * half * u(rng), top + g);
        const Transform pb(rb, Vec3(contact - low));
        const Real exact = pb.apply(body.support(rb.transpose() * Vec3(0, 0, -1), h)).z() - (pa.translation.z() + top);
        const DistanceResult r = distance(flat, pa, body, pb);
        ++queries;
        ASSERT_EQ(r.status, Status::Separated) << "kind " << kind << " size " << size << " trial " << trial;
        const Real angle = std::acos(std::clamp<Real>(r.normal.z(), -1, 1));
        EXPECT_LE(angle, 1e-6) << "kind " << kind << " size " << size << " trial " << trial;
        EXPECT_NEAR(r.distance, exact, 1e-14 * half) << "kind " << kind << " size " << size << " trial " << trial;
        EXPECT_LE(r.lowerBound, exact + 4e-15 * half) << "kind " << kind << " size " << size << " trial " << trial;
        worstAngle = std::max(worstAngle, angle);
        worstDistance = std::max(worstDistance, std::abs(r.distance - exact) / half);
      }
  }
  std::printf("[ near contact ] %d curved-on-flat pairs at gap 1e-11: max normal angle %.2e rad, max |d - exact| %.2e x size\n",
              queries, worstAngle, worstDistance);
}
