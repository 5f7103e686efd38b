// GJK distance: analytic pairs, the exact "pole" cases, near-contact sweeps (thesis §4.8.3),
// invariants (descent, witnesses, symmetry, vertex order, duplicates, rigid motion), warm start,
// inflated shapes, overlap and bad input.
#include <gtest/gtest.h>

#include <cmath>
#include <iostream>
#include <limits>
#include <random>

#include "proxima/narrowphase/distance.hpp"
#include "proxima/narrowphase/penetration.hpp"
#include "test_util.hpp"

using namespace proxima;
using proxima::test::icosphere;
using proxima::test::randomRotation;
using proxima::test::rotationAboutX;

namespace {

Polytope poly(const std::vector<Vec3>& p) {
  auto r = Polytope::fromPoints(p);
  EXPECT_TRUE(r.ok()) << r.message();
  return r.value();
}

GjkOptions withSub(SubAlgorithm s) {
  GjkOptions o;
  o.subAlgorithm = s;
  return o;
}

void expectWitnessesConsistent(const DistanceResult& r) {
  if (r.status != Status::Separated) return;
  EXPECT_NEAR((r.witnessB - r.witnessA).norm(), r.distance, 1e-14 * (1 + r.distance));
  EXPECT_NEAR(r.normal.norm(), 1.0, 1e-14);
  if (r.distance > 1e-12) { EXPECT_LE((r.witnessA + r.distance * r.normal - r.witnessB).norm(), 1e-13); }
}

const Real kGaps[] = {2.0, 1e-3, 1e-9};

}  // namespace

TEST(GjkAnalytic, SphereSphere) {
  std::mt19937_64 rng(1);
  for (Real g : kGaps)
    for (int k = 0; k < 20; ++k) {
      const Real ra = 0.3 + k * 0.1, rb = 1.7;
      const Vec3 dir = Vec3(std::sin(k), std::cos(k), 0.3 * k).normalized();
      const Vec3 pa(0.5, -1, 2);
      const Transform ta = Transform(randomRotation(rng), pa);
      const Transform tb = Transform(randomRotation(rng), Vec3(pa + dir * (ra + rb + g)));
      const DistanceResult r = distance(Shape(Sphere{ra}), ta, Shape(Sphere{rb}), tb);
      ASSERT_EQ(r.status, Status::Separated);
      const Real exact = (tb.translation - ta.translation).norm() - ra - rb;
      EXPECT_NEAR(r.distance, exact, 1e-15 * 4) << "gap " << g;
      EXPECT_LE((r.normal - dir).norm(), 1e-14);
      expectWitnessesConsistent(r);
    }
}

TEST(GjkAnalytic, SphereBoxAndBoxBoxAxisAligned) {
  const Box box{Vec3(1, 2, 3)};
  for (Real g : kGaps)
    for (SubAlgorithm sub : {SubAlgorithm::SignedVolumes, SubAlgorithm::Johnson}) {
      // Sphere facing the +y face.
      DistanceResult r = distance(Shape(box), {}, Shape(Sphere{0.5}), Transform::translate(Vec3(0.2, 2 + 0.5 + g, -1)),
                                  withSub(sub));
      ASSERT_EQ(r.status, Status::Separated);
      EXPECT_NEAR(r.distance, g, 1e-15 * 4) << "sphere-box gap " << g;
      // Sphere facing a corner.
      const Vec3 corner(1, 2, 3), out = Vec3(1, 1, 1).normalized();
      r = distance(Shape(box), {}, Shape(Sphere{0.25}), Transform::translate(Vec3(corner + out * (0.25 + g))),
                   withSub(sub));
      EXPECT_NEAR(r.distance, g, 1e-14) << "sphere-corner gap " << g;
      // Box-box along z, offset sideways so faces overlap partially.
      r = distance(Shape(box), {}, Shape(Box{Vec3(0.5, 0.5, 0.5)}), Transform::translate(Vec3(0.7, -1.3, 3 + 0.5 + g)),
                   withSub(sub));
      ASSERT_EQ(r.status, Status::Separated);
      EXPECT_NEAR(r.distance, g, 1e-15 * 8) << "box-box gap " << g;
      EXPECT_LE((r.normal - Vec3::UnitZ()).norm(), 1e-12);
    }
}

// Polytopes with vertices on the unit sphere including (±1,0,0), rotated about x only and placed
// along x: the exact distance is the gap. Target: absolute error <= 1e-14 at every gap (issue #2).
TEST(GjkAnalytic, PolesExactAtEveryGap) {
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<Real> ang(0, 2 * M_PI);
  for (int level = 0; level <= 3; ++level) {
    const Polytope p = poly(icosphere(level));
    Real maxErrSV = 0, maxErrJ = 0;
    for (Real g : {2.0, 1e-3, 1e-6, 1e-9, 1e-12}) {
      for (int k = 0; k < 25; ++k) {
        const Transform ta(rotationAboutX(ang(rng)), Vec3::Zero());
        const Transform tb(rotationAboutX(ang(rng)), Vec3(2 + g, 0, 0));
        const Real exact = static_cast<Real>((static_cast<long double>(2 + g) - 2.0L));
        for (SubAlgorithm sub : {SubAlgorithm::SignedVolumes, SubAlgorithm::Johnson}) {
          const DistanceResult r = gjkDistance(p, ta, p, tb, withSub(sub));
          const Real err = std::abs(r.distance - exact);
          if (sub == SubAlgorithm::SignedVolumes) {
            ASSERT_EQ(r.status, Status::Separated) << "N=" << p.vertexCount() << " g=" << g;
            maxErrSV = std::max(maxErrSV, err);
            EXPECT_LE(err, 1e-14) << "N=" << p.vertexCount() << " g=" << g;
            expectWitnessesConsistent(r);
          } else {
            maxErrJ = std::max(maxErrJ, std::isfinite(err) ? err : 1.0);
          }
        }
      }
    }
    std::cout << "[poles] N=" << p.vertexCount() << " max |error|: signed volumes " << maxErrSV << ", johnson "
              << maxErrJ << "\n";
  }
}

TEST(GjkInvariants, DescentWitnessSymmetryOrderDuplicatesRigidMotion) {
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<Real> u(-1, 1);
  for (int trial = 0; trial < 300; ++trial) {
    std::vector<Vec3> pa(6 + trial % 20), pb(4 + trial % 13);
    for (auto& p : pa) p = Vec3(u(rng), u(rng), u(rng));
    for (auto& p : pb) p = Vec3(u(rng), 0.3 * u(rng), u(rng));
    const Polytope A = poly(pa), B = poly(pb);
    const Transform ta(randomRotation(rng), Vec3(u(rng), u(rng), u(rng)));
    const Transform tb(randomRotation(rng), Vec3(ta.translation + Vec3(u(rng), u(rng), u(rng)).normalized() * (0.5 + 2 * std::abs(u(rng)))));
    std::vector<Real> trace;
    GjkOptions o;
    o.normTrace = &trace;
    const DistanceResult r = gjkDistance(A, ta, B, tb, o);
    ASSERT_NE(r.status, Status::InvalidInput);
    ASSERT_NE(r.status, Status::MaxIterations);
    for (std::size_t i = 1; i < trace.size(); ++i) EXPECT_LE(trace[i], trace[i - 1]) << "||v|| must not increase";
    expectWitnessesConsistent(r);
    // Swap A and B.
    const DistanceResult s = gjkDistance(B, tb, A, ta);
    EXPECT_EQ(r.status, s.status);
    EXPECT_NEAR(r.distance, s.distance, 1e-14 * (1 + r.distance));
    if (r.status == Status::Separated && r.distance > 1e-9) { EXPECT_LE((r.normal + s.normal).norm(), 1e-9); }
    // Vertex order and duplicates.
    std::vector<Vec3> shuffled = pa;
    std::shuffle(shuffled.begin(), shuffled.end(), rng);
    shuffled.insert(shuffled.end(), pa.begin(), pa.begin() + 3);
    const DistanceResult t = gjkDistance(poly(shuffled), ta, B, tb);
    EXPECT_EQ(r.status, t.status);
    EXPECT_NEAR(r.distance, t.distance, 1e-14 * (1 + r.distance));
    // Rigid motion of both bodies, far from the origin.
    const Transform m(randomRotation(rng), Vec3(1e5, -2e5, 3e5));
    const DistanceResult q = gjkDistance(A, m * ta, B, m * tb);
    EXPECT_EQ(r.status, q.status);
    EXPECT_NEAR(r.distance, q.distance, 1e-9 * (1 + r.distance)) << "rigid motion (coordinates ~1e5)";
  }
}

// Near-contact sweeps after the thesis's gear-teeth test (§4.8.3): finely meshed bodies approach
// step by step until touching. Vertex-vertex (poles), vertex-face and face-face contacts with exact
// distances. The distance must fall monotonically to machine precision without stalling at ~1e-8.
TEST(GjkNearContactSweep, MonotoneToMachinePrecision) {
  std::vector<Vec3> sphere = icosphere(3);  // 642 vertices
  // A flat face at x = 0.5 with many vertices: clip the sphere's points.
  std::vector<Vec3> flat;
  for (const Vec3& p : sphere) flat.push_back(Vec3(std::min(p.x(), 0.5), p.y(), p.z()));
  const Polytope round = poly(sphere), faceted = poly(flat);
  std::vector<Vec3> mirrored;
  for (const Vec3& p : flat) mirrored.push_back(Vec3(-p.x(), p.y(), p.z()));
  const Polytope facetedB = poly(mirrored);
  struct Case {
    const char* name;
    const Polytope* a;
    const Polytope* b;
    Real reach;  // extent of A along +x plus extent of B along -x
  } cases[] = {{"vertex-vertex", &round, &round, 2.0},
               {"vertex-face", &faceted, &round, 1.5},
               {"face-face", &faceted, &facetedB, 1.0}};
  // "axis": the scene as built (the first GJK direction is the contact normal); "rotated": the whole
  // scene under one random rigid motion (the exact distance is unchanged; coordinates now carry
  // rounding of ~1e-16, so monotonicity is required above a 1e-13 noise floor).
  std::mt19937_64 rng(77);
  for (bool rotated : {false, true})
    for (const Case& c : cases)
      for (SubAlgorithm sub : {SubAlgorithm::SignedVolumes, SubAlgorithm::Johnson}) {
        const Transform scene = rotated ? Transform(randomRotation(rng), Vec3(0.3, -0.2, 0.1)) : Transform();
        Real prev = std::numeric_limits<Real>::infinity();
        int failures = 0, nonMonotone = 0;
        Real worst = 0, last = 0, smallest = std::numeric_limits<Real>::infinity();
        for (int k = 0; k <= 32; ++k) {
          const Real g = std::pow(10.0, -k / 2.0);
          const Transform ta(rotationAboutX(0.1 * k), Vec3::Zero());
          const Transform tb(rotationAboutX(1.0 + 0.37 * k), Vec3(c.reach + g, 0, 0));
          const Real exact = static_cast<Real>(static_cast<long double>(tb.translation.x()) - c.reach);
          const DistanceResult r = gjkDistance(*c.a, scene * ta, *c.b, scene * tb, withSub(sub));
          const bool ok = (r.status == Status::Separated || (r.status == Status::Overlapping && exact < 1e-14)) &&
                          std::isfinite(r.distance);
          if (!ok) ++failures;
          worst = std::max(worst, std::abs(r.distance - exact));
          if (r.distance > prev && exact > 1e-13) ++nonMonotone;
          if (r.distance > 0) smallest = std::min(smallest, r.distance);
          prev = r.distance;
          last = r.distance;
        }
        std::cout << "[sweep] " << (rotated ? "rotated " : "axis ") << c.name
                  << (sub == SubAlgorithm::Johnson ? " johnson" : " signed-volumes") << ": failures " << failures
                  << ", non-monotone steps " << nonMonotone << ", max |error| " << worst
                  << ", smallest positive distance " << smallest << ", final " << last << "\n";
        if (sub == SubAlgorithm::SignedVolumes) {
          EXPECT_EQ(failures, 0) << c.name;
          EXPECT_EQ(nonMonotone, 0) << c.name;
          EXPECT_LE(worst, rotated ? 4e-15 : 4e-16 * 4) << c.name;
          EXPECT_LE(smallest, 2e-15) << c.name << ": must reach machine precision, not stall near 1e-8";
        }
      }
}

TEST(GjkWarmStart, SameAnswerFewerIterations) {
  std::mt19937_64 rng(3);
  const Polytope p = poly(icosphere(3));
  GjkCache cache;
  int warmIterations = 0, coldIterations = 0, steps = 0;
  Transform ta(randomRotation(rng), Vec3::Zero());
  Transform tb(randomRotation(rng), Vec3(2.001, 0.01, 0));
  const Quat dq(Eigen::AngleAxis<Real>(1e-4, Vec3(0.3, 1, 0.2).normalized()));
  for (int step = 0; step < 200; ++step) {
    tb = Transform(Quat(dq * Quat(tb.rotation)), Vec3(tb.translation + Vec3(-1e-5, 0, 1e-5)));
    const DistanceResult cold = gjkDistance(p, ta, p, tb);
    const DistanceResult warm = gjkDistance(p, ta, p, tb, GjkOptions{}, &cache);
    ASSERT_EQ(cold.status, warm.status);
    EXPECT_NEAR(cold.distance, warm.distance, 1e-14);
    coldIterations += cold.iterations;
    warmIterations += warm.iterations;
    ++steps;
  }
  std::cout << "[warm start] mean iterations: cold " << double(coldIterations) / steps << ", warm "
            << double(warmIterations) / steps << "\n";
  EXPECT_LT(warmIterations, coldIterations);
  EXPECT_LE(double(warmIterations) / steps, 2.5);
}

TEST(GjkSupport, HillClimbingMatchesBruteForce) {
  std::mt19937_64 rng(8);
  const Polytope p = poly(icosphere(4));
  for (int k = 0; k < 200; ++k) {
    const Transform ta(randomRotation(rng), Vec3::Zero());
    const Transform tb(randomRotation(rng), Vec3(2 + std::pow(10.0, -(k % 10)), 0.1, -0.05));
    GjkOptions brute, climb;
    brute.supportMode = SupportMode::BruteForce;
    climb.supportMode = SupportMode::HillClimb;
    const DistanceResult a = gjkDistance(p, ta, p, tb, brute), b = gjkDistance(p, ta, p, tb, climb);
    EXPECT_EQ(a.status, b.status);
    EXPECT_NEAR(a.distance, b.distance, 1e-15);
  }
}

TEST(GjkInflated, RadiiSubtractedAndNegativeDistance) {
  // Capsule vs capsule, parallel, 0.3 apart at the cores with radii 0.1 and 0.15.
  const Shape c1(Capsule{0.1, 1}), c2(Capsule{0.15, 2});
  DistanceResult r = distance(c1, {}, c2, Transform::translate(Vec3(0.3, 0, 0.5)));
  ASSERT_EQ(r.status, Status::Separated);
  EXPECT_NEAR(r.distance, 0.05, 1e-15);
  // Radii overlap while the cores are apart: negative distance, reported as overlapping.
  r = distance(c1, {}, c2, Transform::translate(Vec3(0.2, 0, 0.5)));
  EXPECT_EQ(r.status, Status::Overlapping);
  EXPECT_NEAR(r.distance, -0.05, 1e-15);
  EXPECT_NEAR(r.normal.x(), 1, 1e-15);
  // Cores overlap: distance is -(rA + rB), normal zero.
  r = distance(c1, {}, c2, Transform::translate(Vec3(0.0, 0, 0.5)));
  EXPECT_EQ(r.status, Status::Overlapping);
  EXPECT_NEAR(r.distance, -0.25, 1e-15);
  // Sphero-tetrahedron vs box, via inflate.
  Shape tet(Tetrahedron{{Vec3(0, 0, 0), Vec3(1, 0, 0), Vec3(0, 1, 0), Vec3(0, 0, 1)}}, 0.2);
  r = distance(tet, {}, Shape(Box{Vec3(1, 1, 1)}), Transform::translate(Vec3(0.5, 0.5, -1.5)));
  EXPECT_EQ(r.status, Status::Separated);
  EXPECT_NEAR(r.distance, 0.3, 1e-15);
}

// Two capsules whose axes cross with the closest points 1e-3 .. 1e-12 of their half-lengths from
// the ends: the CSO's nearest point lies on a face, that close to one of its vertices. Near a vertex
// ||v|| is flat to second order while v's direction turns to first order, so GJK's step onto the
// face changed ||v||^2 by less than its rounding: it stalled on an edge with the normal up to 2e-8
// rad off (245 of this family's 3 000 queries above 1e-13, in a scratch build of the code before),
// and a restart that found the face lost to the stalled edge, nearer by an ulp (the contact hunt's
// 20261127 2 2 3 0 51, 9e-9 rad).
// Reference: the interior closest points of the two axes in long double.
TEST(GjkSegments, CrossingNearTheirEndsKeepTheExactNormal) {
  std::mt19937_64 rng(20261128);
  std::uniform_real_distribution<Real> u(-1, 1), unit(0, 1);
  auto direction = [&] {
    Vec3 d;
    do d = Vec3(u(rng), u(rng), u(rng));
    while (d.norm() < 0.2);
    return Vec3(d.normalized());
  };
  auto check = [](const Shape& a, const Transform& pa, const Shape& b, const Transform& pb, Real hA, Real hB,
                  const std::string& what) {
    // Long-double nearest points of the axes (both interior by construction): the normal reference.
    using L = long double;
    const Vec3 ea = pa.rotate(Vec3::UnitZ()), eb = pb.rotate(Vec3::UnitZ());
    L ua[3], vb[3], d0[3];
    for (int i = 0; i < 3; ++i)
      ua[i] = L(ea[i]) * L(hA), vb[i] = L(eb[i]) * L(hB), d0[i] = L(pb.translation[i]) - L(pa.translation[i]);
    auto dot = [](const L* x, const L* y) { return x[0] * y[0] + x[1] * y[1] + x[2] * y[2]; };
    const L aa = dot(ua, ua), ab = dot(ua, vb), bb = dot(vb, vb), ad = dot(ua, d0), bd = dot(vb, d0);
    const L den = aa * bb - ab * ab, s = (ad * bb - ab * bd) / den, t = (ab * ad - aa * bd) / den;
    L gap[3], len = 0;
    for (int i = 0; i < 3; ++i) gap[i] = d0[i] + t * vb[i] - s * ua[i], len += gap[i] * gap[i];
    len = std::sqrt(len);
    const Vec3 nRef(Real(gap[0] / len), Real(gap[1] / len), Real(gap[2] / len));
    for (int order = 0; order < 2; ++order) {
      const DistanceResult r = order == 0 ? distance(a, pa, b, pb) : distance(b, pb, a, pa);
      const Vec3 n = order == 0 ? r.normal : Vec3(-r.normal);
      EXPECT_LE((n - nRef).norm(), 1e-13) << what << " order " << order << " iterations " << r.iterations;
      // Consistency: the normal is orthogonal to both axes (the witnesses are interior points).
      EXPECT_LE(std::max(std::abs(n.dot(ea)), std::abs(n.dot(eb))), 1e-13) << what << " order " << order;
      // (GJK's own tolerance: tol::kGjkRelative of the distance plus tol::kGjkAbsolute of the size)
      const Real size = pa.translation.norm() + pb.translation.norm() + hA + hB;
      EXPECT_NEAR(r.distance, Real(len) - a.totalRadius() - b.totalRadius(),
                  tol::kGjkRelative * r.distance + tol::kGjkAbsolute * size)
          << what;
    }
  };
  {
    // The hunt's reproducer (capsule-capsule, parallel/flat cell, pair 51).
    Mat3 ra, rb;
    ra << 0.19387100604843654, -0.78815131365585289, -0.58415027158798827, -0.44584658007673061, -0.60118820474784762,
        0.66316933697656988, -0.87386203719331479, 0.13187209429827568, -0.46794752985536325;
    rb << -0.87043128297480266, -0.26941168390546621, -0.4120275794095094, 0.022174035040502693, 0.81465550053087388,
        -0.57952111922242655, 0.49179029452487266, -0.51356962529925054, -0.70312768839032791;
    check(Shape(Capsule{0.2975740889629378, 0.44205558006836165}),
          Transform(ra, Vec3(0.54518802110243847, -0.53623326034801877, 0.17913185512824437)),
          Shape(Capsule{0.43999417141701591, 0.63898992287341205}),
          Transform(rb, Vec3(0.58062029727142073, -1.1877352457702159, -0.096886513189643864)), 0.44205558006836165,
          0.63898992287341205, "hunt 20261127 2 2 3 0 51");
  }
  int cases = 0;
  while (cases < 1500) {
    const Vec3 ea = direction(), eb = direction();
    if (std::abs(ea.dot(eb)) > 0.9) continue;  // crossing, not nearly parallel (a different problem)
    ++cases;
    const Real hA = 0.2 + unit(rng), hB = 0.2 + unit(rng);
    const Real s = (u(rng) < 0 ? -1 : 1) * (1 - std::pow(10.0, -3 - 9 * unit(rng)));
    const Real t = (u(rng) < 0 ? -1 : 1) * (1 - std::pow(10.0, -3 - 9 * unit(rng)));
    const Real gap = std::pow(10.0, -4 * unit(rng));
    const Vec3 ca(u(rng), u(rng), u(rng)), pointA = ca + s * hA * ea;
    const Vec3 cb = pointA + gap * ea.cross(eb).normalized() - t * hB * eb;
    // (Transform(Quat, p) normalises the quaternion: FromTwoVectors' own loses ~eps / (1 + cos) of its
    // norm for an axis near -z, and a rotation matrix scaled by 1 + 1e-14 moved a distance by 2e-14.)
    const Transform pa(Quat::FromTwoVectors(Vec3::UnitZ(), ea), ca), pb(Quat::FromTwoVectors(Vec3::UnitZ(), eb), cb);
    check(Shape(Capsule{0.01, hA}), pa, Shape(Capsule{0.02, hB}), pb, hA, hB, "case " + std::to_string(cases));
    if (HasFailure()) break;
  }
}

TEST(GjkOverlap, DeepShallowAndExactTouch) {
  const Shape box(Box{Vec3(1, 1, 1)});
  for (Real shift : {0.0, 0.5, 1.0, 1.999, 2.0}) {
    const DistanceResult r = distance(box, {}, box, Transform::translate(Vec3(shift, 0.3, 0.1)));
    EXPECT_EQ(r.status, Status::Overlapping) << shift;
    EXPECT_EQ(r.distance, 0.0);
  }
  // Coplanar triangles overlapping (flat CSO).
  const Shape t1(Triangle{{Vec3(0, 0, 0), Vec3(1, 0, 0), Vec3(0, 1, 0)}});
  const DistanceResult r = distance(t1, {}, t1, Transform::translate(Vec3(0.2, 0.2, 0)));
  EXPECT_EQ(r.status, Status::Overlapping);
  // Point on a segment.
  const DistanceResult s = distance(Shape(Segment{Vec3(-1, 0, 0), Vec3(1, 0, 0)}), {}, Shape(Point{}), {});
  EXPECT_EQ(s.status, Status::Overlapping);
}

// Identical flat bodies at one random pose touch: "separated" only at a distance within the rounding
// of B's pose relative to A's (a few 1e-16), never at distance 0 (before 2026-11-27 some segment
// pairs ended a stall "separated" at distance 0 with a zero normal), and a contact query's depth is 0
// to that rounding (identical triangles got depths up to 0.95: a face of the sliver polytope tilted
// by rounding, before the flat-CSO test took the resolution of the coordinates).
TEST(GjkOverlap, IdenticalFlatBodiesAtOnePoseTouch) {
  std::mt19937_64 rng(2026);
  std::uniform_real_distribution<Real> u(-1, 1);
  auto point = [&] { return Vec3(u(rng), u(rng), u(rng)); };
  int checked = 0, touching = 0;
  for (int k = 0; k < 400; ++k) {
    const Transform pose(randomRotation(rng), 3 * point());
    for (const Shape& s : {Shape(Segment{point(), point()}), Shape(Triangle{{point(), point(), point()}})}) {
      const DistanceResult d = distance(s, pose, s, pose);
      const bool touch = d.status == Status::Overlapping && d.distance == 0.0;
      const bool rounding = d.status == Status::Separated && d.distance > 0 && d.distance <= 2e-15;
      EXPECT_TRUE(touch || rounding) << k << " " << toString(s.type()) << ": " << toString(d.status) << " at " << d.distance;
      touching += touch;
      const ContactResult c = contact(s, pose, s, pose);
      EXPECT_TRUE(c.status == Status::Overlapping || c.status == Status::Separated) << k;
      EXPECT_LE(c.depth, 5e-15) << k << " " << toString(s.type());
      EXPECT_LE(std::abs(c.distance), 2e-15) << k << " " << toString(s.type());
      ++checked;
    }
  }
  EXPECT_EQ(checked, 800);
  EXPECT_GT(touching, 700);
}

TEST(GjkBadInput, InvalidInputWithMessage) {
  const Real nan = std::numeric_limits<Real>::quiet_NaN();
  DistanceResult r = distance(Shape(Sphere{-1}), {}, Shape(Point{}), {});
  EXPECT_EQ(r.status, Status::InvalidInput);
  EXPECT_NE(r.message.find("radius"), std::string::npos) << r.message;
  r = distance(Shape(Point{}), Transform::translate(Vec3(nan, 0, 0)), Shape(Point{}), {});
  EXPECT_EQ(r.status, Status::InvalidInput);
  EXPECT_NE(r.message.find("position"), std::string::npos) << r.message;
  r = distance(Shape(Point{}), {}, Shape(Polytope{}), {});
  EXPECT_EQ(r.status, Status::InvalidInput);
  EXPECT_NE(r.message.find("b:"), std::string::npos) << r.message;
  r = distance(Shape(Box{Vec3(1, std::numeric_limits<Real>::infinity(), 1)}), {}, Shape(Point{}), {});
  EXPECT_EQ(r.status, Status::InvalidInput);
  EXPECT_NE(r.message.find("half_extents[1]"), std::string::npos) << r.message;
  r = distance(Shape(Point{}, -0.5), {}, Shape(Point{}), {});
  EXPECT_EQ(r.status, Status::InvalidInput);
  EXPECT_NE(r.message.find("inflate"), std::string::npos) << r.message;
  Transform skew;
  skew.rotation(0, 1) = 0.5;
  r = distance(Shape(Point{}), skew, Shape(Point{}), {});
  EXPECT_EQ(r.status, Status::InvalidInput);
  EXPECT_NE(r.message.find("not a rotation"), std::string::npos) << r.message;
  // validatePose's fast path (six entries of RᵀR) hands every bad pose to the checks that name it.
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      for (const Real bad : {nan, std::numeric_limits<Real>::infinity(), 1e-6}) {
        Transform t;
        t.rotation(i, j) += bad;
        const auto m = validatePose(t);
        ASSERT_TRUE(m.has_value()) << i << j << bad;
        EXPECT_NE(m->find(bad == 1e-6 ? "not a rotation" : "non-finite"), std::string::npos) << *m;
      }
  EXPECT_FALSE(validatePose(Transform{}).has_value());
  EXPECT_FALSE(validatePose(Transform(Quat(Eigen::AngleAxis<Real>(0.7, Vec3(1, 2, 3).normalized())), Vec3(1e9, 0, 0)))
                   .has_value());
  EXPECT_FALSE(Polytope::fromPoints(std::vector<Vec3>{}).ok());
  auto bad = Polytope::fromPoints(std::vector<Vec3>{Vec3(0, 0, 0), Vec3(nan, 1, 1)});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.message().find("point 1"), std::string::npos) << bad.message();
}

TEST(GjkShapes, EveryShapePairConvergesAndIsSymmetric) {
  std::mt19937_64 rng(21);
  std::vector<Shape> shapes = {
      Shape(Point{Vec3(0.1, 0, 0)}),
      Shape(Segment{Vec3(-1, 0, 0), Vec3(1, 0.2, 0)}),
      Shape(Triangle{{Vec3(0, 0, 0), Vec3(1, 0, 0), Vec3(0, 1, 0)}}),
      Shape(Tetrahedron{{Vec3(0, 0, 0), Vec3(1, 0, 0), Vec3(0, 1, 0), Vec3(0, 0, 1)}}),
      Shape(Sphere{0.7}),
      Shape(Ellipsoid{Vec3(1, 0.5, 0.25)}),
      Shape(Box{Vec3(0.5, 0.7, 0.2)}),
      Shape(Capsule{0.3, 0.6}),
      Shape(Cylinder{0.4, 0.8}),
      Shape(Cone{0.5, 1.2}),
      Shape(poly(icosphere(2))),
      Shape(Box{Vec3(0.3, 0.3, 0.3)}, 0.1),
  };
  for (std::size_t i = 0; i < shapes.size(); ++i)
    for (std::size_t j = 0; j < shapes.size(); ++j)
      for (Real sep : {3.0, 1.2, 0.3}) {
        const Transform ta(randomRotation(rng), Vec3(0.1, 0.2, 0.3));
        const Transform tb(randomRotation(rng), Vec3(0.1 + sep, 0.2, 0.3 + 0.1 * sep));
        const DistanceResult r = distance(shapes[i], ta, shapes[j], tb);
        const DistanceResult s = distance(shapes[j], tb, shapes[i], ta);
        ASSERT_TRUE(r.status == Status::Separated || r.status == Status::Overlapping)
            << i << "," << j << " status " << toString(r.status);
        EXPECT_EQ(r.status, s.status) << i << "," << j;
        EXPECT_NEAR(r.distance, s.distance, 1e-9 * (1 + std::abs(r.distance))) << i << "," << j;
        if (r.status == Status::Separated) {
          // Weak duality along the normal: the support gap equals the distance (optimality).
          SupportHint h;
          const Vec3 n = r.normal;
          const Real maxA = ta.apply(shapes[i].support(ta.rotateInverse(n), h)).dot(n);
          const Real minB = tb.apply(shapes[j].support(tb.rotateInverse(-n), h)).dot(n);
          EXPECT_NEAR(minB - maxA, r.distance, 1e-9 * (1 + r.distance)) << i << "," << j;
        }
      }
}
