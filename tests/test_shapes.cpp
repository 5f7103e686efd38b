// Shapes: support mappings, polytope hulls (degenerate input, hill-climbing), AABBs and mass
// properties (closed forms, divergence theorem, Steiner's formula, fine polytope approximations).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <random>

#include "proxima/narrowphase/distance.hpp"
#include "proxima/shapes/shape.hpp"
#include "test_util.hpp"

using namespace proxima;
using proxima::test::icosphere;
using proxima::test::randomRotation;

namespace {
constexpr Real kPi = std::numbers::pi_v<Real>;

Polytope poly(const std::vector<Vec3>& p) {
  auto r = Polytope::fromPoints(p);
  EXPECT_TRUE(r.ok()) << r.message();
  return r.value();
}

MassProperties mass(const Shape& s) {
  auto m = computeMassProperties(s);
  EXPECT_TRUE(m.ok()) << m.message();
  return m.ok() ? m.value() : MassProperties{};
}

void expectMassNear(const MassProperties& a, const MassProperties& b, Real rel) {
  EXPECT_NEAR(a.volume, b.volume, rel * b.volume);
  const Real size = std::cbrt(b.volume);
  EXPECT_LE((a.centroid - b.centroid).norm(), rel * size);
  EXPECT_LE((a.inertia - b.inertia).norm(), rel * b.inertia.norm()) << a.inertia << "\nvs\n" << b.inertia;
}

std::vector<Vec3> boxCorners(const Vec3& h) {
  std::vector<Vec3> c;
  for (int i = 0; i < 8; ++i) c.emplace_back(i & 1 ? h.x() : -h.x(), i & 2 ? h.y() : -h.y(), i & 4 ? h.z() : -h.z());
  return c;
}
}  // namespace

TEST(PolytopeHull, DegenerateClouds) {
  // Duplicates and interior points vanish from the hull.
  std::vector<Vec3> c = boxCorners(Vec3(1, 2, 3));
  c.push_back(Vec3(0, 0, 0));
  c.push_back(c[0]);
  c.push_back(c[5]);
  Polytope p = poly(c);
  EXPECT_EQ(p.vertexCount(), 8);
  EXPECT_EQ(p.dimension(), 3);
  EXPECT_EQ(p.data().triangles.size(), 12u);
  // Coplanar points (a flat hexagon plus interior and duplicate points).
  std::vector<Vec3> flat;
  for (int k = 0; k < 6; ++k) flat.emplace_back(std::cos(k * kPi / 3), std::sin(k * kPi / 3), 0.5);
  flat.push_back(Vec3(0, 0, 0.5));
  flat.push_back(flat[2]);
  p = poly(flat);
  EXPECT_EQ(p.dimension(), 2);
  EXPECT_EQ(p.vertexCount(), 6);
  // Collinear points: a needle.
  p = poly({Vec3(0, 0, 0), Vec3(1, 1, 1), Vec3(0.5, 0.5, 0.5), Vec3(-2, -2, -2)});
  EXPECT_EQ(p.dimension(), 1);
  EXPECT_EQ(p.vertexCount(), 2);
  // A single (repeated) point.
  p = poly({Vec3(1, 2, 3), Vec3(1, 2, 3)});
  EXPECT_EQ(p.dimension(), 0);
  EXPECT_EQ(p.vertexCount(), 1);
  SupportHint h;
  EXPECT_EQ(p.support(Vec3(1, 0, 0), h), Vec3(1, 2, 3));
  // Far from the origin.
  std::vector<Vec3> far = icosphere(1);
  for (auto& q : far) q += Vec3(1e5, -1e5, 1e5);
  EXPECT_EQ(poly(far).vertexCount(), 42);
}

// Extreme coordinates (review 2026-11-27): the hull normalised cross products of coordinate
// differences, whose squares overflow beyond ~1e77, so a cube of half-size 1e80 came out flat with 2
// vertices. Every cube must hull to its 8 corners exactly, with 12 outward triangles, 4-vertex facet
// loops and working support. (A half-size of 1e100 about a centre of 1e120 cannot be tested: the
// corners round to the centre, 1e120 + 1e100 == 1e120 in double; the centres below keep the
// half-size above 1e-10 of the coordinates.)
TEST(PolytopeHull, ExtremeCoordinatesHullExactly) {
  std::mt19937_64 rng(12);
  struct Case {
    Real half;
    Vec3 centre;
    bool rotate;
  } cases[] = {
      {1e100, Vec3(1e108, -1e108, 1e108), false}, {1e110, Vec3(1e120, 1e120, -1e120), false},
      {1e140, Vec3::Zero(), false},               {1e140, Vec3::Zero(), true},
      {1e150, Vec3(3e150, 0, -2e150), true},      {1e80, Vec3::Zero(), true},
      {1e300, Vec3::Zero(), true},                {1e-150, Vec3(1e-145, 0, 0), true},
      {1e-300, Vec3::Zero(), true},               {1, Vec3::Zero(), true},
  };
  for (const Case& c : cases) {
    const Mat3 r = c.rotate ? Mat3(randomRotation(rng).toRotationMatrix()) : Mat3::Identity();
    std::vector<Vec3> corners;
    for (const Vec3& q : boxCorners(Vec3(1, 1, 1))) corners.push_back(c.centre + r * (c.half * q));
    const Polytope p = poly(corners);
    ASSERT_EQ(p.vertexCount(), 8) << "half " << c.half;
    EXPECT_EQ(p.dimension(), 3) << "half " << c.half;
    EXPECT_EQ(p.data().triangles.size(), 12u) << "half " << c.half;
    for (const Vec3& v : p.vertices())
      EXPECT_NE(std::find(corners.begin(), corners.end(), v), corners.end()) << "half " << c.half << ": " << v.transpose();
    for (const Vec3& n : p.data().triangleNormals) EXPECT_NEAR(n.norm(), 1, 1e-12) << "half " << c.half;
    for (std::size_t t = 0; t < p.data().triangles.size(); ++t)
      EXPECT_EQ(p.data().facetLoopOffsets[t + 1] - p.data().facetLoopOffsets[t], 4) << "half " << c.half;
    // Extents: the support along each of the cube's axes is the corner's, in both modes.
    for (int k = 0; k < 3; ++k)
      for (const Real s : {-1.0, 1.0}) {
        const Vec3 d = s * r.col(k);
        SupportHint brute{-1, SupportMode::BruteForce}, climb{-1, SupportMode::HillClimb};
        const Real want = d.dot(c.centre) + c.half;
        EXPECT_NEAR(d.dot(p.support(d, brute)), want, 1e-12 * (c.half + c.centre.norm())) << "half " << c.half;
        EXPECT_NEAR(d.dot(p.support(d, climb)), want, 1e-12 * (c.half + c.centre.norm())) << "half " << c.half;
      }
    // Outward: every triangle's normal points away from the centre.
    for (std::size_t t = 0; t < p.data().triangles.size(); ++t) {
      const Vec3 v0 = p.vertices()[p.data().triangles[t][0]];
      EXPECT_GT(p.data().triangleNormals[t].dot((v0 - c.centre) / c.half), 0.5) << "half " << c.half;
    }
  }
}

TEST(PolytopeHull, HillClimbingEqualsBruteForceFromEveryStart) {
  std::mt19937_64 rng(4);
  std::uniform_real_distribution<Real> u(-1, 1);
  std::vector<Vec3> cloud(500);
  for (auto& q : cloud) q = Vec3(u(rng), 0.3 * u(rng), u(rng));
  std::vector<Vec3> flat;
  for (int k = 0; k < 64; ++k) flat.emplace_back(std::cos(k * kPi / 32), std::sin(k * kPi / 32), 0.0);
  for (const Polytope& p : {poly(icosphere(4)), poly(cloud), poly(flat)}) {
    for (int trial = 0; trial < 300; ++trial) {
      const Vec3 d(u(rng), u(rng), u(rng));
      SupportHint brute{0, SupportMode::BruteForce};
      const Real best = d.dot(p.support(d, brute));
      const int start = static_cast<int>(rng() % p.vertexCount());
      const int got = p.hillClimb(d, start);
      EXPECT_NEAR(d.dot(p.vertices()[got]), best, 1e-15) << "start " << start;
    }
  }
}

// The vectorised brute-force scan (lanes, masked reduction) picks exactly what a scalar scan picks:
// the first vertex of largest d·x (ties included), vertex 0 for a NaN direction; for every hull size
// around the 4-wide padding. Hill-climbing (Auto mode, any hint, valid or not) reaches the same value.
TEST(Support, BruteForceIsTheFirstMaximiserAndClimbingAgrees) {
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<Real> u(-1, 1);
  auto firstMax = [](const Polytope& p, const Vec3& d) {
    int k = 0;
    for (int i = 1; i < p.vertexCount(); ++i)
      if (d.x() * p.vertices()[i].x() + d.y() * p.vertices()[i].y() + d.z() * p.vertices()[i].z() >
          d.x() * p.vertices()[k].x() + d.y() * p.vertices()[k].y() + d.z() * p.vertices()[k].z())
        k = i;
    return k;
  };
  std::vector<Polytope> hulls;
  for (int n = 4; n <= 13; ++n) {
    std::vector<Vec3> c(static_cast<std::size_t>(n));
    for (auto& q : c) q = Vec3(u(rng), u(rng), u(rng));
    hulls.push_back(poly(c));
  }
  hulls.push_back(poly(icosphere(3)));
  std::vector<Vec3> cube;
  for (int i = 0; i < 8; ++i) cube.emplace_back(i & 1 ? 1 : -1, i & 2 ? 1 : -1, i & 4 ? 1 : -1);
  hulls.push_back(poly(cube));
  int ties = 0;
  for (const Polytope& p : hulls) {
    std::vector<Vec3> dirs = {Vec3(1, 0, 0), Vec3(0, -1, 0), Vec3(0, 0, 1), Vec3(1, 1, 0), Vec3(-1, -1, -1)};
    for (int t = 0; t < 200; ++t) dirs.emplace_back(u(rng), u(rng), u(rng));
    for (const Vec3& d : dirs) {
      const int want = firstMax(p, d);
      EXPECT_EQ(p.bruteForce(d), want) << "n " << p.vertexCount() << " d " << d.transpose();
      for (int i = 0; i < p.vertexCount(); ++i) ties += i != want && d.dot(p.vertices()[i]) == d.dot(p.vertices()[want]);
      // (to 1e-15, not bit-equal: the climb compares Eigen dot products, firstMax its own sums)
      for (int hintVertex : {-1, 0, p.vertexCount() - 1, p.vertexCount() + 5}) {
        SupportHint climb{hintVertex, SupportMode::HillClimb};
        EXPECT_NEAR(d.dot(p.support(d, climb)), d.dot(p.vertices()[want]), 1e-15) << "hint " << hintVertex;
      }
    }
    const Real nan = std::numeric_limits<Real>::quiet_NaN();
    EXPECT_EQ(p.bruteForce(Vec3(nan, 0, 0)), 0);
  }
  EXPECT_GT(ties, 0);  // the cube's axis directions tie four vertices: the first must win
}

// A remembered support search (SupportMemo, GJK-TD's lean warm face) returns exactly the vertex the
// full scan returns, along walks of directions turning by 1e-12 to 0.3 per step: rocks of 24 points,
// a cube (four-vertex ties along its face normals), the cube far from the origin, a needle, a flat
// polygon, input with duplicate points, an icosphere of 42 vertices. The memo must answer most of the
// rocks' small steps (else it is never used; a direction along which more than six vertices tie, as
// the flat polygon's normal, is not remembered); a NaN direction gets the scan's answer, a damaged
// memo one of the polytope's vertices.
TEST(Support, RememberedSearchGivesTheScanVertex) {
  std::mt19937_64 rng(29);
  std::uniform_real_distribution<Real> u(-1, 1);
  std::vector<std::pair<std::string, Polytope>> hulls;
  for (int k = 0; k < 6; ++k) {
    std::vector<Vec3> c(24);
    for (auto& q : c) q = Vec3(u(rng), 0.7 * u(rng), 0.5 * u(rng));
    hulls.emplace_back("rock " + std::to_string(k), poly(c));
  }
  std::vector<Vec3> cube, far, needle, flat, dup;
  for (int i = 0; i < 8; ++i) cube.emplace_back(i & 1 ? 1 : -1, i & 2 ? 1 : -1, i & 4 ? 1 : -1);
  for (const Vec3& q : cube) far.push_back(q + Vec3(1e6, -2e6, 3e5));
  for (int i = 0; i < 12; ++i) needle.emplace_back(1e-4 * std::cos(i), 1e-4 * std::sin(i), i % 2 ? 10.0 : -10.0);
  for (int k = 0; k < 20; ++k) flat.emplace_back(std::cos(k * kPi / 10), std::sin(k * kPi / 10), 0.0);
  for (int k = 0; k < 3; ++k)
    for (const Vec3& q : cube) dup.push_back(q);
  hulls.emplace_back("cube", poly(cube));
  hulls.emplace_back("far cube", poly(far));
  hulls.emplace_back("needle", poly(needle));
  hulls.emplace_back("flat", poly(flat));
  hulls.emplace_back("duplicates", poly(dup));
  hulls.emplace_back("icosphere 42", poly(icosphere(1)));
  long remembered = 0, small = 0;
  for (const auto& [name, p] : hulls) {
    ASSERT_LT(p.vertexCount(), tol::kHillClimbMinVertices) << name;
    for (const Real step : {1e-12, 1e-6, 1e-3, 0.03, 0.3}) {
      for (int walk = 0; walk < 20; ++walk) {
        // Start on a random direction or, every other walk, exactly on an axis (the cube's ties).
        Vec3 d = walk % 2 ? Vec3(u(rng), u(rng), u(rng)).normalized() : Vec3::Unit(walk / 2 % 3) * (walk % 4 ? -1 : 1);
        SupportMemo memo;
        SupportHint hint;
        for (int q = 0; q < 30; ++q) {
          const SupportMemo before = memo;
          const Vec3 got = p.supportRemembered(d, hint, memo);
          SupportHint brute{-1, SupportMode::BruteForce};
          const Vec3 want = p.support(d, brute);
          ASSERT_EQ(hint.vertex, brute.vertex) << name << " step " << step << " walk " << walk << " query " << q;
          ASSERT_EQ(got, want) << name;
          const bool kept = q > 0 && before.radius > 0 && memo.radius == before.radius &&
                            std::equal(memo.centre, memo.centre + 3, before.centre);
          // (unit walks at 1e-6: 1e-12 steps can keep the float centre through a new search)
          if (step == 1e-6 && walk % 4 != 0 && q > 0 && name.starts_with("rock")) ++small, remembered += kept;
          d = (d + step * Vec3(u(rng), u(rng), u(rng))).normalized();
          if (walk % 4 == 0 && q % 3 == 0) d *= 3;  // (not always unit)
        }
      }
    }
    // NaN: the scan's vertex 0, nothing remembered.
    SupportMemo memo;
    SupportHint hint;
    const Real nan = std::numeric_limits<Real>::quiet_NaN();
    (void)p.supportRemembered(Vec3(nan, 1, 0), hint, memo);
    EXPECT_EQ(hint.vertex, 0) << name;
    EXPECT_EQ(memo.radius, 0) << name;
    // A damaged memo (candidates out of range, a count too large): still one of the polytope's
    // vertices (indices are clamped), no read outside it.
    SupportMemo bad;
    bad.radius = 10, bad.count = 200, bad.candidate[0] = 250, bad.candidate[1] = 200;
    SupportHint h1;
    const Vec3 got = p.supportRemembered(Vec3(0.3, -0.5, 0.8), h1, bad);
    ASSERT_TRUE(h1.vertex >= 0 && h1.vertex < p.vertexCount()) << name;
    EXPECT_EQ(got, p.vertices()[static_cast<std::size_t>(h1.vertex)]) << name;
  }
  EXPECT_GT(remembered, small * 19 / 20) << remembered << " of " << small << " small steps answered from the memo";
}

TEST(Support, ShapesReturnMaximisers) {
  // For each shape the support point must maximise d·x over dense samples of the shape's surface.
  std::mt19937_64 rng(6);
  std::uniform_real_distribution<Real> u(-1, 1);
  const std::vector<Shape> shapes = {Shape(Ellipsoid{Vec3(1, 0.5, 0.2)}), Shape(Box{Vec3(1, 2, 3)}),
                                     Shape(Capsule{0.3, 1}), Shape(Cylinder{0.5, 0.7}), Shape(Cone{0.5, 2}),
                                     Shape(Sphere{2}), Shape(Box{Vec3(0.2, 0.2, 0.2)}, 0.1)};
  for (const Shape& s : shapes)
    for (int k = 0; k < 200; ++k) {
      const Vec3 d = Vec3(u(rng), u(rng), u(rng)).normalized();
      SupportHint h;
      const Vec3 sp = s.support(d, h);
      // Any other direction's support point is a point of the shape: it must not beat sp along d.
      for (int j = 0; j < 50; ++j) {
        const Vec3 e = Vec3(u(rng), u(rng), u(rng));
        EXPECT_LE(d.dot(s.support(e, h)), d.dot(sp) + 1e-12);
      }
    }
}

TEST(Aabb, TightUnderPose) {
  std::mt19937_64 rng(9);
  const Vec3 h(1, 2, 3);
  const Transform pose(randomRotation(rng), Vec3(5, -1, 2));
  const Aabb box = computeAabb(Shape(Box{h}), pose);
  const Vec3 ext = pose.rotation.cwiseAbs() * h;
  EXPECT_LE((box.hi - (pose.translation + ext)).norm(), 1e-14);
  EXPECT_LE((box.lo - (pose.translation - ext)).norm(), 1e-14);
  const Aabb sph = computeAabb(Shape(Sphere{0.5}, 0.25), pose);
  EXPECT_LE((sph.hi - (pose.translation + Vec3::Constant(0.75))).norm(), 1e-14);
  // Polytope: AABB equals the min/max of the transformed vertices.
  const Polytope p = poly(icosphere(2));
  const Aabb pb = computeAabb(Shape(p), pose);
  Vec3 lo = Vec3::Constant(1e300), hi = Vec3::Constant(-1e300);
  for (const Vec3& v : p.vertices()) lo = lo.cwiseMin(pose.apply(v)), hi = hi.cwiseMax(pose.apply(v));
  EXPECT_LE((pb.lo - lo).norm(), 1e-14);
  EXPECT_LE((pb.hi - hi).norm(), 1e-14);
}

TEST(MassProperties, ClosedFormsAndPolytopes) {
  // Box: closed form == divergence theorem on its corners.
  const Vec3 h(0.5, 1, 2);
  const MassProperties box = mass(Shape(Box{h}));
  EXPECT_NEAR(box.volume, 8 * h.prod(), 1e-14);
  expectMassNear(mass(Shape(poly(boxCorners(h)))), box, 1e-13);
  // Unit tetrahedron: V = 1/6, centroid (1/4, 1/4, 1/4).
  const MassProperties tet = mass(Shape(Tetrahedron{{Vec3(0, 0, 0), Vec3(1, 0, 0), Vec3(0, 1, 0), Vec3(0, 0, 1)}}));
  EXPECT_NEAR(tet.volume, 1.0 / 6, 1e-15);
  EXPECT_LE((tet.centroid - Vec3::Constant(0.25)).norm(), 1e-15);
  // Its inertia about the centroid: diagonal 1/80 * 2 ... closed form: I_xx = V * 3/80 * 2 = 1/80 ...
  // check against the same tetrahedron as a polytope (independent triangle orientation path).
  expectMassNear(mass(Shape(poly({Vec3(0, 0, 0), Vec3(1, 0, 0), Vec3(0, 1, 0), Vec3(0, 0, 1)}))), tet, 1e-13);
  // Rigid motion: centroid moves, inertia rotates.
  std::mt19937_64 rng(12);
  const Transform m(randomRotation(rng), Vec3(3, -4, 5));
  std::vector<Vec3> moved;
  for (const Vec3& c : boxCorners(h)) moved.push_back(m.apply(c));
  const MassProperties mb = mass(Shape(poly(moved)));
  EXPECT_NEAR(mb.volume, box.volume, 1e-12);
  EXPECT_LE((mb.centroid - m.translation).norm(), 1e-12);
  EXPECT_LE((mb.inertia - m.rotation * box.inertia * m.rotation.transpose()).norm(), 1e-12);
  // Sphere.
  const MassProperties sph = mass(Shape(Sphere{2}));
  EXPECT_NEAR(sph.volume, 4.0 / 3 * kPi * 8, 1e-12);
  EXPECT_NEAR(sph.inertia(0, 0), 0.4 * sph.volume * 4, 1e-12);
}

TEST(MassProperties, CurvedShapesAgainstFinePolytopes) {
  const auto sphere = icosphere(5);  // 10242 points on the unit sphere
  // Ellipsoid: scaled sphere points.
  const Vec3 r(1, 0.6, 0.3);
  std::vector<Vec3> e;
  for (const Vec3& p : sphere) e.push_back(r.cwiseProduct(p));
  expectMassNear(mass(Shape(poly(e))), mass(Shape(Ellipsoid{r})), 1e-3);  // inscribed: O(h^2) ≈ 5e-4
  // Cylinder and cone: rims with 720 points.
  std::vector<Vec3> cyl, cone;
  for (int k = 0; k < 720; ++k) {
    const Real a = 2 * kPi * k / 720;
    cyl.emplace_back(0.4 * std::cos(a), 0.4 * std::sin(a), -0.9);
    cyl.emplace_back(0.4 * std::cos(a), 0.4 * std::sin(a), 0.9);
    cone.emplace_back(0.5 * std::cos(a), 0.5 * std::sin(a), -0.75);
  }
  cone.emplace_back(0, 0, 0.75);
  expectMassNear(mass(Shape(poly(cyl))), mass(Shape(Cylinder{0.4, 0.9})), 1e-4);
  const MassProperties cn = mass(Shape(Cone{0.5, 1.5}));
  EXPECT_NEAR(cn.centroid.z(), -1.5 / 4, 1e-15);
  expectMassNear(mass(Shape(poly(cone))), cn, 1e-4);
  // Capsule = hull of two spheres; and an inflated segment is a capsule.
  std::vector<Vec3> cap;
  for (const Vec3& p : sphere) cap.push_back(0.3 * p + Vec3(0, 0, p.z() > 0 ? 0.8 : -0.8));
  const MassProperties capsule = mass(Shape(Capsule{0.3, 0.8}));
  expectMassNear(mass(Shape(poly(cap))), capsule, 1e-3);
  expectMassNear(mass(Shape(Segment{Vec3(0, 0, -0.8), Vec3(0, 0, 0.8)}, 0.3)), capsule, 1e-14);
  // Inflated box: Steiner's formula V = V0 + S r + M r^2 + 4/3 π r^3 with M = 2π(a+b+c).
  const Vec3 hb(0.5, 0.3, 0.2);
  const Real rr = 0.1;
  const Real steiner = 8 * hb.prod() + 8 * (hb.x() * hb.y() + hb.y() * hb.z() + hb.z() * hb.x()) * rr +
                       2 * kPi * hb.sum() * rr * rr + 4.0 / 3 * kPi * rr * rr * rr;
  const MassProperties ib = mass(Shape(Box{hb}, rr));
  EXPECT_NEAR(ib.volume, steiner, 1e-3 * steiner);
  EXPECT_LE(ib.centroid.norm(), 1e-6);
}

TEST(MassProperties, ShapesWithoutVolumeAreRejected) {
  for (const Shape& s : {Shape(Point{}), Shape(Segment{Vec3(0, 0, 0), Vec3(1, 0, 0)}),
                         Shape(Triangle{{Vec3(0, 0, 0), Vec3(1, 0, 0), Vec3(0, 1, 0)}}),
                         Shape(poly({Vec3(0, 0, 0), Vec3(1, 0, 0), Vec3(0, 1, 0), Vec3(1, 1, 0)})),
                         Shape(poly({Vec3(1, 1, 1)})), Shape(Box{Vec3(1, 0, 1)})}) {
    auto m = computeMassProperties(s);
    EXPECT_FALSE(m.ok());
    EXPECT_NE(m.message().find("volume"), std::string::npos) << m.message();
  }
  auto m = computeMassProperties(Shape(Sphere{-1}));
  EXPECT_FALSE(m.ok());
  EXPECT_NE(m.message().find("radius"), std::string::npos);
}

// Shape::quickValid is validate()'s fast path (no messages): it must agree with the full check on
// every field of every geometry kind, for valid values and for each way a value can be bad.
// Beyond the supported magnitudes the queries overflow or underflow (a box-ellipsoid distance of 1e78
// came out 2e78, a 2e-100 depth read 0): refused by name instead.
TEST(ShapeValidation, SizesAndCoordinatesOutsideTheSupportedRangeAreRefused) {
  EXPECT_FALSE(Shape(Box{Vec3(1e59, 1, 1e-59)}).validate().has_value());
  auto m = Shape(Box{Vec3(1, 1e61, 1)}).validate();
  ASSERT_TRUE(m.has_value());
  EXPECT_NE(m->find("half_extents[1] is outside the supported range"), std::string::npos) << *m;
  m = Shape(Sphere{1e-61}).validate();
  ASSERT_TRUE(m.has_value());
  EXPECT_NE(m->find("radius is outside the supported range"), std::string::npos) << *m;
  EXPECT_FALSE(Shape(Sphere{0}).validate().has_value());  // a point is fine
  m = Shape(Point{Vec3(0, 0, -2e60)}).validate();
  ASSERT_TRUE(m.has_value());
  EXPECT_NE(m->find("beyond the supported range"), std::string::npos) << *m;
  std::vector<Vec3> big;
  for (const Vec3& c : boxCorners(Vec3(1, 1, 1))) big.push_back(1e70 * c);
  m = Shape(Polytope::fromPoints(big).value()).validate();
  ASSERT_TRUE(m.has_value());
  EXPECT_NE(m->find("vertices: a coordinate beyond the supported range"), std::string::npos) << *m;
  std::vector<Vec3> tiny;
  for (const Vec3& c : boxCorners(Vec3(1, 1, 1))) tiny.push_back(Vec3(1, 2, 3) + 1e-70 * c);
  // (1 + 1e-70 rounds to 1: the corners coincide, a point polytope of extent 0, which is valid)
  const Polytope collapsed = Polytope::fromPoints(tiny).value();
  EXPECT_EQ(collapsed.vertexCount(), 1);
  EXPECT_FALSE(Shape(collapsed).validate().has_value());
  std::vector<Vec3> tinyAtOrigin;
  for (const Vec3& c : boxCorners(Vec3(1, 1, 1))) tinyAtOrigin.push_back(1e-70 * c);
  m = Shape(Polytope::fromPoints(tinyAtOrigin).value()).validate();
  ASSERT_TRUE(m.has_value());
  EXPECT_NE(m->find("below the supported range"), std::string::npos) << *m;
  // Poses: a position beyond 1e60 is refused by the queries.
  EXPECT_TRUE(validatePose(Transform(Mat3::Identity(), Vec3(0, 1e61, 0))).has_value());
  EXPECT_FALSE(validatePose(Transform(Mat3::Identity(), Vec3(0, 1e59, 0))).has_value());
}

// quickValid() is decided when a shape is made. A polytope moved out of a shape leaves it empty,
// which validation refuses: the moved-from shape must say so too (and the copies stay valid).
TEST(ShapeValidation, MovedFromPolytopeShapeIsRefused) {
  Shape a(Polytope::fromPoints(boxCorners(Vec3(1, 2, 3))).value());
  ASSERT_TRUE(a.quickValid());
  const Shape copy = a;
  Shape b(std::move(a));
  EXPECT_TRUE(b.quickValid());
  EXPECT_TRUE(copy.quickValid());
  EXPECT_FALSE(a.quickValid());  // NOLINT(bugprone-use-after-move): the point of the test
  EXPECT_TRUE(a.validate().has_value());
  Shape c;
  c = std::move(b);
  EXPECT_TRUE(c.quickValid());
  EXPECT_FALSE(b.quickValid());  // NOLINT(bugprone-use-after-move)
  EXPECT_TRUE(b.validate().has_value());
  c.setInflate(-1);
  EXPECT_FALSE(c.quickValid());
  EXPECT_TRUE(c.validate().has_value());
}

TEST(ShapeValidation, QuickCheckAgreesWithTheFullCheck) {
  const Real inf = std::numeric_limits<Real>::infinity(), nan = std::numeric_limits<Real>::quiet_NaN();
  const Real values[] = {0.0, 0.5, 1e300, 1e61, 1e-61, 1e-300, -0.0, -1e-300, -1.0, inf, -inf, nan};
  int cases = 0, invalid = 0;
  auto check = [&](const Shape& s) {
    const bool full = !s.validate().has_value();
    EXPECT_EQ(s.quickValid(), full) << "shape type " << static_cast<int>(s.type());
    ++cases;
    invalid += !full;
  };
  for (const Real x : values) {
    for (int k = 0; k < 3; ++k) {
      Vec3 v(0.5, 0.5, 0.5);
      v[k] = x;
      check(Shape(Box{v}));
      check(Shape(Ellipsoid{v}));
      check(Shape(Point{v}));
      check(Shape(Segment{Vec3::Zero(), v}));
      check(Shape(Triangle{{Vec3::Zero(), Vec3::UnitX(), v}}));
      check(Shape(Tetrahedron{{Vec3::Zero(), Vec3::UnitX(), Vec3::UnitY(), v}}));
    }
    check(Shape(Sphere{x}));
    check(Shape(Capsule{x, 1}));
    check(Shape(Capsule{1, x}));
    check(Shape(Cylinder{x, 1}));
    check(Shape(Cylinder{1, x}));
    check(Shape(Cone{x, 1}));
    check(Shape(Cone{1, x}));
    check(Shape(Box{Vec3(1, 1, 1)}, x));  // inflate
  }
  check(Shape(Polytope{}));
  for (const Real scale : {1.0, 1e59, 1e61, 1e-59, 1e-61}) {
    std::vector<Vec3> cube;
    for (const Vec3& c : boxCorners(Vec3(1, 1, 1))) cube.push_back(scale * c);
    check(Shape(Polytope::fromPoints(cube).value()));
  }
  EXPECT_GT(invalid, 50);
  EXPECT_LT(invalid, cases);
}
