// Revised common-plane methods (Descantes et al. 2019 Alg. 1 and 2): feature extraction, Table 1
// closed forms on substitute geometry, and seeded random cross-checks against the long-double
// separating-axis oracle (tests/sat_oracle.hpp) for face-face, edge-face, vertex-face, edge-edge and
// deep overlaps.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numbers>
#include <random>
#include <string>

#include "proxima/narrowphase/common_plane.hpp"
#include "sat_oracle.hpp"
#include "test_util.hpp"

using namespace proxima;

namespace {
constexpr Real kPi = std::numbers::pi_v<Real>;

PolyhedronFeatures feats(const Shape& s, const Transform& pose) {
  auto r = polyhedronFeatures(s, pose);
  EXPECT_TRUE(r.ok()) << r.message();
  return r.ok() ? r.value() : PolyhedronFeatures{};
}

Polytope hull(const std::vector<Vec3>& p) {
  auto r = Polytope::fromPoints(p);
  EXPECT_TRUE(r.ok()) << r.message();
  return r.value();
}

using test::randomHull;

/// Triangular prism extruded along z (|z| <= 0.5) over the triangle p1 p2 p3 of the xy-plane.
Shape prism(const Vec2& p1, const Vec2& p2, const Vec2& p3) {
  std::vector<Vec3> v;
  for (const Vec2& p : {p1, p2, p3})
    for (Real z : {-0.5, 0.5}) v.emplace_back(p.x(), p.y(), z);
  return hull(v);
}

/// Both methods on one pair against a known normal and depth.
void expectClosedForm(const Shape& a, const Transform& pa, const Shape& b, const Transform& pb, const Vec3& n,
                      Real depth, const std::string& what) {
  const auto fa = feats(a, pa), fb = feats(b, pb);
  const ContactResult nz = revisedNezami(fa, fb);
  EXPECT_EQ(nz.status, Status::Overlapping) << what;
  EXPECT_NEAR(nz.depth, depth, 1e-14) << what;
  EXPECT_NEAR((nz.normal - n).norm(), 0, 1e-14) << what << ": " << nz.normal.transpose();
  EXPECT_NEAR(nz.distance, -nz.depth, 0) << what;
  const ContactResult cd = revisedCundall(fa, fb);
  EXPECT_EQ(cd.status, Status::Overlapping) << what;
  // Cundall: resolution k_min = tan(1e-7°) ~ 1.7e-9 rad times the contact size.
  EXPECT_NEAR(cd.depth, depth, 1e-8 * std::max<Real>(depth, 1)) << what;
  EXPECT_NEAR((cd.normal - n).norm(), 0, 1e-8) << what;
}

/// Worst agreement with the oracle over a sample.
struct Agreement {
  double depthRel = 0, depthAbs = 0, normal = 0;
  int ties = 0;  ///< normal differs but is as good (several facets share the optimal gap)
  void add(const oracle::ConvexFeatures& oa, const oracle::ConvexFeatures& ob, const oracle::SatResult& o,
           const ContactResult& r) {
    const double od = static_cast<double>(o.depth);
    depthRel = std::max(depthRel, std::abs(r.depth - od) / od);
    depthAbs = std::max(depthAbs, std::abs(r.depth - od));
    double nerr = (r.normal - o.normal).norm();
    if (nerr > 1e-12) {
      // Re-evaluate the gap along the method's normal exactly: an equally deep normal is a tie.
      const double alt = static_cast<double>(-oracle::supportGap(oa, ob, r.normal));
      if (std::abs(alt - od) <= 1e-13 * od) ++ties, nerr = 0;
    }
    normal = std::max(normal, nerr);
  }
};

/// Which kind of facet of A−B the oracle's normal is: 0 face of A, 1 face of B, 2 edge-edge.
int facetKind(const PolyhedronFeatures& a, const PolyhedronFeatures& b, const Vec3& n) {
  for (const Vec3& m : a.faceNormals)
    if ((m - n).norm() < 1e-9) return 0;
  for (const Vec3& m : b.faceNormals)
    if ((m + n).norm() < 1e-9) return 1;
  return 2;
}

struct RandomPair {
  Shape a, b;
  Transform pa, pb;
};

/// Seeded overlapping pairs of five families: random hulls (moderate and deep overlaps), random
/// boxes, vertex-or-edge into a face, face-face, and edge-edge crossings.
std::vector<RandomPair> randomPairs(int perFamily, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> count(8, 20);
  std::uniform_real_distribution<Real> u(-1, 1), ext(0.2, 1.5), shallow(0.01, 0.2);
  auto unit = [&] {
    Vec3 v;
    do v = Vec3(u(rng), u(rng), u(rng));
    while (v.squaredNorm() > 1 || v.squaredNorm() < 1e-2);
    return v.normalized();
  };
  std::vector<RandomPair> out;
  auto overlapping = [](const RandomPair& p) {
    return oracle::satPenetration(oracle::features(p.a, p.pa), oracle::features(p.b, p.pb)).overlapping;
  };
  for (int family = 0; family < 6; ++family) {
    for (int made = 0; made < perFamily;) {
      RandomPair p;
      const Transform pa(test::randomRotation(rng), Vec3(u(rng), u(rng), u(rng)));
      const Quat qb = test::randomRotation(rng);
      p.pa = pa;
      switch (family) {
        case 0:  // random hulls, centres up to 1.5 apart
        case 1:  // random hulls, deep: centres within 0.2
          p.a = randomHull(rng, count(rng)), p.b = randomHull(rng, count(rng));
          p.pb = Transform(qb, pa.translation + (family == 0 ? 1.5 : 0.2) * unit());
          break;
        case 2:  // random boxes
          p.a = Box{Vec3(ext(rng), ext(rng), ext(rng))}, p.b = Box{Vec3(ext(rng), ext(rng), ext(rng))};
          p.pb = Transform(qb, pa.translation + 1.5 * unit());
          break;
        case 3: {  // B's deepest vertex (or edge) shallowly into a random direction's support of A
          p.a = randomHull(rng, count(rng)), p.b = Box{Vec3(ext(rng), ext(rng), ext(rng))};
          const Vec3 n = unit();
          const auto fa = oracle::features(p.a, pa), fb = oracle::features(p.b, Transform(qb, Vec3::Zero()));
          Real ha = -1e300, lb = 1e300;
          for (const Vec3& v : fa.vertices) ha = std::max(ha, v.dot(n));
          for (const Vec3& v : fb.vertices) lb = std::min(lb, v.dot(n));
          p.pb = Transform(qb, n * (ha - lb - shallow(rng)) + 0.3 * unit().cross(n));
          break;
        }
        case 4: {  // face-face: B is A's box turned about A's face normal and pushed into that face
          const Vec3 h(ext(rng), ext(rng), ext(rng)), hb(ext(rng), ext(rng), ext(rng));
          p.a = Box{h}, p.b = Box{hb};
          const int k = static_cast<int>(rng() % 3);
          const Vec3 axis = pa.rotate(Vec3::Unit(k));
          const Quat turn(Eigen::AngleAxis<Real>(u(rng) * kPi, axis));
          const Transform pbT(turn * Quat(pa.rotation), Vec3::Zero());
          const Real shift = h[k] + hb[k] - shallow(rng);
          const Vec3 lateral = pa.rotate(Vec3::Unit((k + 1) % 3)) * 0.5 * u(rng) * h[(k + 1) % 3];
          p.pb = Transform(pbT.rotation, pa.translation + shift * axis + lateral);
          break;
        }
        default: {  // edge-edge: an edge of A and an edge of B cross, offset along their normal
          p.a = Box{Vec3(ext(rng), ext(rng), ext(rng))}, p.b = Box{Vec3(ext(rng), ext(rng), ext(rng))};
          const auto fa = oracle::features(p.a, pa), fb0 = oracle::features(p.b, Transform(qb, Vec3::Zero()));
          const auto& ea = fa.edges[rng() % fa.edges.size()];
          const auto& eb = fb0.edges[rng() % fb0.edges.size()];
          const Vec3 da = fa.vertices[ea[1]] - fa.vertices[ea[0]], db = fb0.vertices[eb[1]] - fb0.vertices[eb[0]];
          Vec3 n = da.cross(db);
          if (n.norm() < 1e-3 * da.norm() * db.norm()) continue;
          n.normalize();
          const Vec3 ma = 0.5 * (fa.vertices[ea[0]] + fa.vertices[ea[1]]);
          const Vec3 mb = 0.5 * (fb0.vertices[eb[0]] + fb0.vertices[eb[1]]);
          if ((ma - pa.translation).dot(n) < 0) n = -n;  // n points out of A at its edge
          p.pb = Transform(qb, ma - mb - shallow(rng) * n);
          break;
        }
      }
      if (!overlapping(p)) continue;
      out.push_back(p), ++made;
    }
  }
  return out;
}
}  // namespace

TEST(CommonPlane, FeaturesOfBoxesTetrahedraAndHulls) {
  const auto box = feats(Box{Vec3(1, 2, 3)}, Transform(test::rotationAboutX(0.3), Vec3(1, 2, 3)));
  EXPECT_EQ(box.vertices.size(), 8u);
  EXPECT_EQ(box.faceNormals.size(), 6u);  // the two triangles of each side merge into one face
  EXPECT_EQ(box.edges.size(), 12u);
  EXPECT_NEAR((box.centroid - Vec3(1, 2, 3)).norm(), 0, 1e-15);
  for (const auto& vf : box.vertexFaces) EXPECT_EQ(vf.size(), 3u);
  for (const auto& ve : box.vertexEdges) EXPECT_EQ(ve.size(), 3u);
  for (std::size_t f = 0; f < box.faceNormals.size(); ++f) {
    EXPECT_EQ(box.faceVertices[f].size(), 4u);
    for (int v : box.faceVertices[f])  // every face vertex lies on the face plane, the rest below
      for (std::size_t w = 0; w < 8; ++w)
        EXPECT_LE(box.faceNormals[f].dot(box.vertices[w] - box.vertices[v]), 1e-14);
  }
  // A hull of cube corners (Qhull triangles) gives the same 6 faces and 12 edges; so does a
  // tetrahedron in either vertex order give 4 outward faces.
  std::vector<Vec3> c;
  for (int i = 0; i < 8; ++i) c.emplace_back(i & 1 ? 1 : -1, i & 2 ? 1 : -1, i & 4 ? 1 : -1);
  const auto cube = feats(hull(c), Transform::identity());
  EXPECT_EQ(cube.faceNormals.size(), 6u);
  EXPECT_EQ(cube.edges.size(), 12u);
  for (int flip = 0; flip < 2; ++flip) {
    Tetrahedron t{{Vec3(0, 0, 0), Vec3(1, 0, 0), Vec3(0, 1, 0), Vec3(0, 0, 1)}};
    if (flip) std::swap(t.v[1], t.v[2]);
    const auto tf = feats(t, Transform::identity());
    EXPECT_EQ(tf.faceNormals.size(), 4u);
    EXPECT_EQ(tf.edges.size(), 6u);
    EXPECT_NEAR((tf.centroid - Vec3(0.25, 0.25, 0.25)).norm(), 0, 1e-15);
    for (std::size_t f = 0; f < 4; ++f) EXPECT_LT(tf.faceNormals[f].dot(tf.centroid - tf.vertices[tf.faceVertices[f][0]]), 0);
  }
}

TEST(CommonPlane, RejectsNonPolyhedralShapesWithAClearMessage) {
  auto r = polyhedronFeatures(Sphere{1}, Transform::identity());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.message(), "nezami/cundall need polyhedral shapes (polytope, box, tetrahedron); got sphere");
  r = polyhedronFeatures(Shape(Box{}, 0.1), Transform::identity());
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.message().find("inflated box"), std::string::npos) << r.message();
  r = polyhedronFeatures(hull({Vec3(0, 0, 0), Vec3(1, 0, 0), Vec3(0, 1, 0), Vec3(1, 1, 0)}), Transform::identity());
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.message().find("flat polytope"), std::string::npos) << r.message();
  for (const Shape& s : {Shape(Capsule{}), Shape(Cylinder{}), Shape(Cone{}), Shape(Ellipsoid{})})
    EXPECT_FALSE(polyhedronFeatures(s, Transform::identity()).ok()) << toString(s.type());
  EXPECT_EQ(revisedNezami({}, {}).status, Status::InvalidInput);
  EXPECT_EQ(revisedCundall({}, {}).status, Status::InvalidInput);
}

// Descantes Table 1 rows rebuilt on substitute geometry (the paper gives no coordinates; digest
// §2.2 derives the closed forms).
TEST(CommonPlane, DescantesTable1ClosedForms) {
  // Fig. 2: parallelepipeds interpenetrated by an edge. B is a cube turned 45° about z whose lowest
  // edge sinks 0.25 into A's +y face: n = (0, 1, 0), overlap 0.25.
  const Shape cube = Box{Vec3(0.5, 0.5, 0.5)};
  expectClosedForm(Box{Vec3(1, 0.5, 0.6)}, Transform::identity(), cube,
                   Transform(Quat(Eigen::AngleAxis<Real>(kPi / 4, Vec3::UnitZ())), Vec3(0.1, 0.25 + std::sqrt(0.5), 0.05)),
                   Vec3::UnitY(), 0.25, "Fig. 2");
  // Fig. 5f: A's vertical edge (1, -1, z) into the slanted face 2x - y = 2.5 of a prism B:
  // n = (2, -1, 0)/√5, overlap 1/(2√5). Figs. 7 and 8a: B shifted by -1 along x (the Z shift of
  // Fig. 7 is unknown and would not change n): overlap √5/2.
  const Shape boxA = Box{Vec3(1, 1, 1)};
  const Shape prismB = prism(Vec2(-0.2, -2.9), Vec2(1.8, 1.1), Vec2(2.8, -1.9));
  const Vec3 n5(2 / std::sqrt(5.0), -1 / std::sqrt(5.0), 0);
  expectClosedForm(boxA, Transform::identity(), prismB, Transform::identity(), n5, 1 / (2 * std::sqrt(5.0)), "Fig. 5f");
  expectClosedForm(boxA, Transform::identity(), prismB, Transform::translate(Vec3(-1, 0, 0)), n5, std::sqrt(5.0) / 2,
                   "Fig. 8a");
  // Fig. 10c (edge-face): the same construction with the face 3x - 2y = 5 - 2 (A's edge at (1, -1)
  // has 3x - 2y = 5): n = (3, -2, 0)/√13, overlap 2/√13.
  const Vec2 foot = Vec2(1, -1) - Vec2(3, -2) * (2.0 / 13);
  expectClosedForm(boxA, Transform::identity(), prism(foot - Vec2(2, 3), foot + Vec2(2, 3), foot + Vec2(3, -2) * 1.5),
                   Transform::identity(), Vec3(3, -2, 0) / std::sqrt(13.0), 2 / std::sqrt(13.0), "Fig. 10c");
  // Fig. 10d (face-face): two boxes with a face normal (4, 0, -1)/√17 pressed together by 2/√17.
  const Quat q(Eigen::AngleAxis<Real>(std::atan2(1.0, 4.0), Vec3::UnitY()));  // turns +x into (4,0,-1)/√17
  const Vec3 n10d = Vec3(4, 0, -1) / std::sqrt(17.0);
  expectClosedForm(Box{Vec3(1, 2, 2)}, Transform(q, Vec3::Zero()), Box{Vec3(0.5, 1, 1)},
                   Transform(q, n10d * (1.5 - 2 / std::sqrt(17.0)) + q * Vec3(0, 0.3, -0.2)), n10d, 2 / std::sqrt(17.0),
                   "Fig. 10d");
}

TEST(CommonPlane, ResultFieldsAndSeparatedPairs) {
  const auto fa = feats(Box{Vec3(1, 1, 1)}, Transform::identity());
  const auto fb = feats(Box{Vec3(0.5, 0.5, 0.5)}, Transform::translate(Vec3(1.4, 0.1, 0.2)));
  for (const ContactResult& r : {revisedNezami(fa, fb), revisedCundall(fa, fb)}) {
    // Cundall ends within about k_min = tan(1e-7°) of the face normal: ~1e-9 of the size.
    const Real tol = r.method == PenetrationMethod::Nezami ? 1e-15 : 1e-8;
    EXPECT_EQ(r.status, Status::Overlapping);
    EXPECT_NEAR(r.depth, 0.1, tol);
    EXPECT_NEAR(r.distance, -r.depth, 0);
    EXPECT_NEAR(r.witnessA.x(), 1, tol);
    EXPECT_NEAR(r.witnessB.x(), 0.9, tol);
    EXPECT_NEAR((r.contactPoint - 0.5 * (r.witnessA + r.witnessB)).norm(), 0, 0);
    // The witnesses face each other across the contact (witness_a - witness_b = depth n) in the
    // middle of the touching faces (B's face, x = 0.9, spans y in [-0.4, 0.6], z in [-0.3, 0.7]):
    // not at the two most buried corners, whose midpoint lies outside both boxes.
    EXPECT_NEAR((r.witnessA - r.witnessB - r.depth * r.normal).norm(), 0, 1e-14);
    EXPECT_NEAR(r.contactPoint.y(), 0.1, tol);
    EXPECT_NEAR(r.contactPoint.z(), 0.2, tol);
    EXPECT_EQ(r.contactCount, 1);
    EXPECT_EQ(r.contacts[0].depth, r.depth);
    EXPECT_GT(r.iterations, 0);
    EXPECT_GT(r.expansions, 0);
  }
  EXPECT_EQ(revisedNezami(fa, fb).method, PenetrationMethod::Nezami);
  EXPECT_EQ(revisedCundall(fa, fb).method, PenetrationMethod::Cundall);
  // Separated by 0.3 along x: the maximal gap is the distance for face-aligned boxes.
  const auto fc = feats(Box{Vec3(0.5, 0.5, 0.5)}, Transform::translate(Vec3(1.8, 0.1, 0.2)));
  for (const ContactResult& r : {revisedNezami(fa, fc), revisedCundall(fa, fc)}) {
    EXPECT_EQ(r.status, Status::Separated);
    EXPECT_NEAR(r.distance, 0.3, 1e-9);
    EXPECT_EQ(r.depth, 0);
    EXPECT_EQ(r.contactCount, 0);
  }
}

// Bodies ~1e16 times their size apart: rounding collapses the far box's vertices onto a plane, its
// edges to zero length, and a normal made from them is not a number. Nezami then climbed from vertex
// -1 (a crash, found by a bad-input hunt 2026-11-27); both methods must answer "separated".
TEST(CommonPlane, BodiesFarApartRelativeToTheirSize) {
  const auto fa = feats(Box{Vec3(1, 1, 1)}, Transform::identity());
  for (const Real x : {1e16, 1e20, 1e300}) {
    const auto fb = feats(Box{Vec3(1, 1, 1)}, Transform::translate(Vec3(x, 0, 0)));
    for (const ContactResult& r : {revisedNezami(fa, fb), revisedCundall(fa, fb)}) {
      SCOPED_TRACE(testing::Message() << "x = " << x << ", " << toString(r.method));
      EXPECT_EQ(r.status, Status::Separated);
      EXPECT_NEAR(r.distance, x, 1e-12 * x);
      EXPECT_NEAR(r.normal.x(), 1, 1e-12);
    }
  }
}

// Depths from 1e-9 to deep overlaps on boxes in face-face, edge-face and edge-edge contact: Nezami
// matches the oracle to roundoff of the coordinates (absolute), Cundall to its resolution.
TEST(CommonPlane, TinyAndDeepOverlaps) {
  const Shape cube = Box{Vec3(1, 1, 1)};
  const Quat edgeDown = Quat(Eigen::AngleAxis<Real>(0.5, Vec3::UnitZ())) * Quat(Eigen::AngleAxis<Real>(kPi / 4, Vec3::UnitY()));
  for (Real d : {1e-9, 1e-6, 1e-3, 0.3, 1.2}) {
    const std::pair<Transform, Transform> poses[] = {
        {Transform::identity(), Transform::translate(Vec3(2 - d, 0.3, -0.2))},  // face-face
        {Transform::identity(), Transform(Quat(Eigen::AngleAxis<Real>(kPi / 4, Vec3::UnitZ())),
                                          Vec3(0.2, 1 + std::sqrt(2.0) - d, 0.1))},  // edge-face
        {Transform(Quat(Eigen::AngleAxis<Real>(kPi / 4, Vec3::UnitX())), Vec3::Zero()),
         Transform(edgeDown, Vec3(0, 0, 2 * std::sqrt(2.0) - d))},  // edge-edge
    };
    for (const auto& [pa, pb] : poses) {
      const auto o = oracle::satPenetration(oracle::features(cube, pa), oracle::features(cube, pb));
      const auto fa = feats(cube, pa), fb = feats(cube, pb);
      const ContactResult nz = revisedNezami(fa, fb), cd = revisedCundall(fa, fb);
      EXPECT_NEAR(nz.depth, static_cast<double>(o.depth), 4e-15) << d;
      EXPECT_LE((nz.normal - o.normal).norm(), 1e-14) << d;
      EXPECT_NEAR(cd.depth, static_cast<double>(o.depth), 1e-8) << d;
    }
  }
}

// Revised Nezami against the exact oracle. A converged answer is the exact facet normal, so it
// agrees to ~1e-15; but Alg. 2 is a local search over the facets of A−B around the current
// closest pair, and on some random-hull pairs (mostly deep overlaps) it stops at a local optimum:
// a plane with a larger overlap than the exact one, never a smaller one.
TEST(CommonPlane, NezamiAgreesWithSatOracleOnRandomOverlaps) {
  const std::vector<RandomPair> pairs = randomPairs(60, 2019);  // 6 families x 60 = 360 pairs
  Agreement converged;
  int kinds[3] = {0, 0, 0}, maxIterations = 0, localOptima = 0, strictLocalOptima = 0;
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    const auto& p = pairs[i];
    const auto oa = oracle::features(p.a, p.pa), ob = oracle::features(p.b, p.pb);
    const auto o = oracle::satPenetration(oa, ob);
    ASSERT_TRUE(o.overlapping);
    const auto fa = feats(p.a, p.pa), fb = feats(p.b, p.pb);
    ++kinds[facetKind(fa, fb, o.normal)];
    const ContactResult r = revisedNezami(fa, fb);
    ASSERT_EQ(r.status, Status::Overlapping) << i;
    maxIterations = std::max(maxIterations, r.expansions);
    // Never below the exact depth (to roundoff): every plane's overlap bounds the depth from above.
    EXPECT_GE(r.depth, static_cast<double>(o.depth) - 1e-14) << i;
    Agreement one;
    one.add(oa, ob, o, r);
    if (one.depthRel > 1e-9) {
      ++localOptima;  // a different facet, not a precision loss (nothing lands in between)
      EXPECT_LT(i / 60, 2u) << "local optimum outside the random-hull families, pair " << i;
    } else {
      // 1e-12 relative, with a floor of ~8 ulps of the coordinates (~2) for the shallowest pairs:
      // the gap is evaluated in double, so its absolute error is a few ulps whatever the depth.
      EXPECT_LE(std::abs(r.depth - static_cast<double>(o.depth)), std::max(1e-12 * static_cast<double>(o.depth), 2e-15)) << i;
      EXPECT_LE(one.normal, 1e-12) << i;
      converged.add(oa, ob, o, r);
      // Witnesses: a point pair across the contact (witness_a - witness_b = depth n), on A and on B
      // (to ~1e-9 of the size).
      EXPECT_LE((r.witnessA - r.witnessB - r.depth * r.normal).norm(), 1e-12) << i;
      auto inside = [](const PolyhedronFeatures& f, const Vec3& x) {
        Real worst = -1;
        for (const Vec3& m : f.faceNormals) {
          Real h = -std::numeric_limits<Real>::infinity();
          for (const Vec3& v : f.vertices) h = std::max(h, m.dot(v));
          worst = std::max(worst, m.dot(x) - h);
        }
        return worst;
      };
      EXPECT_LE(inside(fa, r.witnessA), 1e-9) << i;
      EXPECT_LE(inside(fb, r.witnessB), 1e-9) << i;
      // Swapping the bodies gives the same plane with the normal reversed.
      const ContactResult sw = revisedNezami(fb, fa);
      EXPECT_NEAR(sw.depth, r.depth, 1e-14) << i;
      EXPECT_LE((sw.normal + r.normal).norm(), 1e-12) << i;
    }
    CommonPlaneOptions strict;
    strict.allTiedVertices = false;
    const ContactResult s = revisedNezami(fa, fb, strict);
    if (std::abs(s.depth - static_cast<double>(o.depth)) > 1e-9 * static_cast<double>(o.depth)) ++strictLocalOptima;
  }
  std::printf("[ info ] %zu pairs; oracle facets: %d face-A, %d face-B, %d edge-edge\n", pairs.size(), kinds[0], kinds[1],
              kinds[2]);
  std::printf("[ info ] nezami: %d local optima (%d with one arbitrary tied vertex); converged: worst depth rel %.3g "
              "(abs %.3g), normal %.3g (ties %d); max outer iterations %d\n",
              localOptima, strictLocalOptima, converged.depthRel, converged.depthAbs, converged.normal, converged.ties,
              maxIterations);
  EXPECT_GT(kinds[0], 30);  // the sample exercises all three facet kinds
  EXPECT_GT(kinds[1], 30);
  EXPECT_GT(kinds[2], 30);
  // Seeded: 1 of 360 here (a deep overlap of random hulls), 5 with the strict tie reading. Larger
  // samples (3000 pairs): ~0.5% of moderate and ~3% of deep random-hull overlaps, none for boxes.
  EXPECT_LE(localOptima, 3);
  EXPECT_GE(strictLocalOptima, localOptima);
}

// Revised Cundall against the exact oracle: when it reaches the optimal facet it is limited by its
// smallest tilt k_min = tan(1e-7°) (error ~ k_min x size / depth); but as a compass search on a
// non-smooth function it also stalls on ridges of the gap or stops at local maxima.
TEST(CommonPlane, CundallAgainstSatOracleOnRandomOverlaps) {
  const std::vector<RandomPair> pairs = randomPairs(30, 2020);  // 180 pairs
  std::vector<double> errors;
  int singleStartWorse = 0, capped = 0;
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    const auto& p = pairs[i];
    const auto oa = oracle::features(p.a, p.pa), ob = oracle::features(p.b, p.pb);
    const auto o = oracle::satPenetration(oa, ob);
    const auto fa = feats(p.a, p.pa), fb = feats(p.b, p.pb);
    const ContactResult r = revisedCundall(fa, fb);
    // MaxIterations: the evaluation cap stopped a slow crawl along a ridge (best estimate kept).
    ASSERT_TRUE(r.status == Status::Overlapping || r.status == Status::MaxIterations) << i;
    capped += r.status == Status::MaxIterations;
    const double od = static_cast<double>(o.depth);
    EXPECT_GE(r.depth, od - 1e-14) << i;  // never below the exact depth (to roundoff)
    errors.push_back((r.depth - od) / od);
    // Three starts never do worse than the first alone (the best start wins).
    CommonPlaneOptions one;
    one.starts = 1;
    const ContactResult s = revisedCundall(fa, fb, one);
    EXPECT_GE(s.depth, r.depth) << i;
    if (s.depth > od * (1 + 1e-6) && r.depth < od * (1 + 1e-6)) ++singleStartWorse;
  }
  std::sort(errors.begin(), errors.end());
  const auto within = [&](double tol) {
    return static_cast<int>(std::upper_bound(errors.begin(), errors.end(), tol) - errors.begin());
  };
  std::printf("[ info ] cundall depth rel error over %zu pairs: median %.3g, 90%% %.3g, worst %.3g; within 1e-9: %d, "
              "1e-6: %d; single start fails where three succeed: %d; evaluation cap hit: %d\n",
              errors.size(), errors[errors.size() / 2], errors[errors.size() * 9 / 10], errors.back(), within(1e-9),
              within(1e-6), singleStartWorse, capped);
  EXPECT_LE(errors[errors.size() / 2], 1e-8);  // the typical case reaches the k_min resolution
  EXPECT_GE(within(1e-6), static_cast<int>(errors.size() * 7 / 10));
  EXPECT_GT(singleStartWorse, 0);  // Descantes Fig. 2: one start can end at a local maximum
}
