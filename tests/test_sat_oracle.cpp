// The long-double separating-axis oracle (tests/sat_oracle.hpp): closed-form depths for
// face-face, edge-face and edge-edge contacts, swap symmetry, and the Gauss-map edge-pair filter
// against the unfiltered candidate set on seeded random hulls.
#include <gtest/gtest.h>

#include <cmath>
#include <numbers>
#include <random>

#include "sat_oracle.hpp"
#include "test_util.hpp"

using namespace proxima;
using proxima::oracle::ConvexFeatures;
using proxima::oracle::features;
using proxima::oracle::satPenetration;
using proxima::oracle::supportGap;

namespace {
constexpr Real kPi = std::numbers::pi_v<Real>;

Transform rotAbout(const Vec3& axis, Real angle, const Vec3& p = Vec3::Zero()) {
  return Transform(Quat(Eigen::AngleAxis<Real>(angle, axis.normalized())), p);
}

using test::randomHull;
}  // namespace

TEST(SatOracle, AxisAlignedBoxesKnownDepths) {
  const Shape a = Box{Vec3(1, 1, 1)}, b = Box{Vec3(0.5, 0.7, 0.9)};
  for (Real d : {0.1, 0.01, 1e-6}) {
    const ConvexFeatures fa = features(a, Transform::identity());
    const ConvexFeatures fb = features(b, Transform::translate(Vec3(1.5 - d, 0.2, -0.1)));
    ASSERT_EQ(fa.vertices.size(), 8u);
    ASSERT_EQ(fa.triangles.size(), 12u);
    EXPECT_EQ(fa.edges.size(), 12u);  // the face diagonals are dropped
    for (bool filter : {true, false}) {
      const auto r = satPenetration(fa, fb, filter);
      EXPECT_TRUE(r.overlapping);
      EXPECT_NEAR(static_cast<double>(r.depth), d, 1e-15) << d;
      EXPECT_NEAR((r.normal - Vec3::UnitX()).norm(), 0, 1e-15);
      EXPECT_NEAR(static_cast<double>(supportGap(fa, fb, r.normal) + r.depth), 0, 1e-15);
    }
    // Separated by d along x: the gap is +d.
    const auto s = satPenetration(fa, features(b, Transform::translate(Vec3(1.5 + d, 0, 0))));
    EXPECT_FALSE(s.overlapping);
    EXPECT_NEAR(static_cast<double>(s.gap), d, 1e-15);
  }
}

TEST(SatOracle, TetrahedronEitherVertexOrder) {
  // A unit right tetrahedron poking its apex 0.05 into the +z face of a box, with both vertex orders.
  const Shape box = Box{Vec3(1, 1, 1)};
  Tetrahedron t{{Vec3(0, 0, 0), Vec3(1, 0, 1), Vec3(0, 1, 1), Vec3(0, 0, 1)}};
  for (int flip = 0; flip < 2; ++flip) {
    if (flip) std::swap(t.v[1], t.v[2]);
    const auto r = satPenetration(features(box, Transform::identity()),
                                  features(Shape(t), Transform::translate(Vec3(0.1, 0.2, 0.95))));
    EXPECT_NEAR(static_cast<double>(r.depth), 0.05, 1e-15);
    EXPECT_NEAR((r.normal - Vec3::UnitZ()).norm(), 0, 1e-15);
    EXPECT_EQ(features(Shape(t), Transform::identity()).edges.size(), 6u);
  }
}

TEST(SatOracle, EdgeFaceRotatedCube) {
  // Cube B rotated 45° about z: its lowest edge (parallel to z) sinks delta into A's +y face. The
  // face normal +y of A gives gap −delta; B's own face normals give ~ −(1+delta)/√2... much worse.
  const Shape cube = Box{Vec3(1, 1, 1)};
  for (Real delta : {0.1, 1e-3}) {
    const auto fa = features(cube, Transform::identity());
    const auto fb = features(cube, rotAbout(Vec3::UnitZ(), kPi / 4, Vec3(0.3, 1 + std::sqrt(2.0) - delta, 0.2)));
    const auto r = satPenetration(fa, fb);
    EXPECT_NEAR(static_cast<double>(r.depth), delta, 1e-14);
    EXPECT_NEAR((r.normal - Vec3::UnitY()).norm(), 0, 1e-15);
  }
}

TEST(SatOracle, EdgeEdgeCubes) {
  // A: cube rotated 45° about x, top edge along x at z = √2. B: cube rotated 45° about y (bottom
  // edge along y) then 30° about z, centred 2√2 − delta above: the two edges cross on the z axis and
  // overlap by delta. Only the edge-edge axis eA×eB = z gives gap −delta (face axes give ~ −0.7).
  const Shape cube = Box{Vec3(1, 1, 1)};
  const Real delta = 0.1;
  const Quat qb = Quat(Eigen::AngleAxis<Real>(kPi / 6, Vec3::UnitZ())) * Quat(Eigen::AngleAxis<Real>(kPi / 4, Vec3::UnitY()));
  const auto fa = features(cube, rotAbout(Vec3::UnitX(), kPi / 4));
  const auto fb = features(cube, Transform(qb, Vec3(0, 0, 2 * std::sqrt(2.0) - delta)));
  for (bool filter : {true, false}) {
    const auto r = satPenetration(fa, fb, filter);
    EXPECT_NEAR(static_cast<double>(r.depth), delta, 1e-14);
    EXPECT_NEAR((r.normal - Vec3::UnitZ()).norm(), 0, 1e-14);
    // No face axis reaches that gap: the answer really is the edge-edge axis.
    for (int body = 0; body < 2; ++body) {
      const ConvexFeatures& f = body == 0 ? fa : fb;
      for (const auto& t : f.triangles) {
        const Vec3 n = (f.vertices[t[1]] - f.vertices[t[0]]).cross(f.vertices[t[2]] - f.vertices[t[0]]).normalized();
        EXPECT_LT(supportGap(fa, fb, body == 0 ? n : Vec3(-n)), -0.5);
      }
    }
  }
}

TEST(SatOracle, FilteredMatchesUnfilteredOnRandomHulls) {
  std::mt19937_64 rng(20190625);
  std::uniform_int_distribution<int> count(8, 20);
  std::uniform_real_distribution<Real> u(-1, 1);
  int pairs = 0;
  while (pairs < 200) {
    const Shape a = randomHull(rng, count(rng)), b = randomHull(rng, count(rng));
    const Transform pa(test::randomRotation(rng), Vec3(u(rng), u(rng), u(rng)));
    const Transform pb(test::randomRotation(rng), pa.translation + 1.5 * Vec3(u(rng), u(rng), u(rng)));
    const auto fa = features(a, pa), fb = features(b, pb);
    const auto full = satPenetration(fa, fb, false);
    if (!full.overlapping) continue;
    ++pairs;
    const auto fast = satPenetration(fa, fb, true);
    EXPECT_TRUE(fast.overlapping);
    EXPECT_NEAR(static_cast<double>(fast.depth - full.depth), 0, 1e-15 * static_cast<double>(full.depth)) << pairs;
    // The normal is optimal: re-evaluating the gap along it gives the depth.
    EXPECT_NEAR(static_cast<double>(supportGap(fa, fb, fast.normal) + full.depth), 0, 1e-14) << pairs;
    // Swapping the bodies keeps the depth and flips the normal.
    const auto sw = satPenetration(fb, fa, true);
    EXPECT_NEAR(static_cast<double>(sw.depth - full.depth), 0, 1e-15 * static_cast<double>(full.depth)) << pairs;
  }
}

TEST(SatOracle, MatchesAllVertexTriplesOnSmallHulls) {
  // Digest §4.1's brute force, independent of the triangles and edges: candidate normals from every
  // vertex triple of A and of B and every pair of vertex-pair directions, both signs.
  std::mt19937_64 rng(7);
  std::uniform_int_distribution<int> count(5, 8);
  std::uniform_real_distribution<Real> u(-1, 1);
  int pairs = 0;
  while (pairs < 40) {
    const Shape a = randomHull(rng, count(rng)), b = randomHull(rng, count(rng));
    const auto fa = features(a, Transform(test::randomRotation(rng), Vec3::Zero()));
    const auto fb = features(b, Transform(test::randomRotation(rng), Vec3(u(rng), u(rng), u(rng))));
    const auto r = satPenetration(fa, fb);
    if (!r.overlapping) continue;
    ++pairs;
    using oracle::LD;
    using oracle::Vec3L;
    auto L = [](const Vec3& v) { return Vec3L(v.x(), v.y(), v.z()); };
    LD best = -1e300L;
    auto consider = [&](Vec3L n) {
      const LD len = n.norm();
      if (!(len > 1e-12L)) return;
      n /= len;
      best = std::max({best, oracle::supportGapL(fa, fb, n), oracle::supportGapL(fa, fb, Vec3L(-n))});
    };
    for (const auto* f : {&fa, &fb}) {
      const auto& v = f->vertices;
      for (std::size_t i = 0; i < v.size(); ++i)
        for (std::size_t j = i + 1; j < v.size(); ++j)
          for (std::size_t k = j + 1; k < v.size(); ++k) consider((L(v[j]) - L(v[i])).cross(L(v[k]) - L(v[i])));
    }
    for (std::size_t i = 0; i < fa.vertices.size(); ++i)
      for (std::size_t j = i + 1; j < fa.vertices.size(); ++j)
        for (std::size_t k = 0; k < fb.vertices.size(); ++k)
          for (std::size_t l = k + 1; l < fb.vertices.size(); ++l)
            consider((L(fa.vertices[j]) - L(fa.vertices[i])).cross(L(fb.vertices[l]) - L(fb.vertices[k])));
    EXPECT_NEAR(static_cast<double>(r.gap - best), 0, 1e-15) << pairs;
  }
}
