// White-box test of the box-box separating-axis test (src/narrowphase/box_box.hpp): the SSE2 search
// and, where the CPU has AVX2, the AVX2 form with its relative pose must give the scalar reference
// search's bits (and relativePose's) on every input, including the degenerate ones
// (aligned and nearly aligned boxes, flat plates and needles, touching and separated pairs, NaN).
// The public behaviour (depth and normal against a long-double oracle) is in test_penetration.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "../src/narrowphase/box_box.hpp"
#include "test_util.hpp"

namespace proxima {
namespace {

bool sameBits(const Vec3& a, const Vec3& b) { return std::memcmp(a.data(), b.data(), sizeof(Real) * 3) == 0; }

TEST(BoxBoxSat, SimdSearchGivesTheScalarBits) {
#if !defined(__SSE2__)
  GTEST_SKIP() << "built without SSE2: only the scalar search exists";
#endif
#if defined(__FMA__)
  // (GCC contracts a * b + c into one rounding where the target has FMA, differently in the two forms)
  GTEST_SKIP() << "built for a target with FMA: the same bits hold only without FMA contraction";
#endif
  std::mt19937_64 rng(2026);
  std::uniform_real_distribution<Real> u(-1, 1), s(0.05, 1.5), lg(-12, 0);
  int answered = 0, refused = 0, edges = 0, wideAnswered = 0;
  for (int k = 0; k < 200000; ++k) {
    const int family = k % 8;
    Vec3 ha(s(rng), s(rng), s(rng)), hb(s(rng), s(rng), s(rng));
    if (family == 1) ha *= 25;                          // 25:1
    if (family == 2) ha.z() = 1e-6, hb.x() = 2e-6;      // flat plates
    if (family == 3) hb.y() = hb.z() = 1e-6;            // needle
    Quat qa = test::randomRotation(rng), qb = test::randomRotation(rng);
    if (family == 4) qb = qa;                           // aligned: parallel edges, no edge axes
    if (family == 5) qb = Quat(Eigen::AngleAxis<Real>(std::pow(10.0, lg(rng)), Vec3(u(rng), u(rng), u(rng)).normalized())) * qa;
    Vec3 pa = Vec3::Zero(), pb = Vec3(u(rng), u(rng), u(rng)) * (0.6 * (ha.norm() + hb.norm()));
    if (family == 6) pa = Vec3(1e5, -2e5, 3e4), pb += pa;  // far from the origin
    if (family == 7 && k % 16 == 7) pb[k % 3] = std::nan("");
    const Transform ta(qa.toRotationMatrix(), pa), tb(qb.toRotationMatrix(), pb);
    Mat3 r;
    Vec3 t;
    relativePose(ta, tb, r, t);
    detail::BoxBoxSat simd, scalar;
    const bool okSimd = detail::boxBoxSat<true>(ha, hb, r, t, simd);
    const bool okScalar = detail::boxBoxSat<false>(ha, hb, r, t, scalar);
    ASSERT_EQ(okSimd, okScalar) << k << " family " << family;
#if defined(PROXIMA_BOX_SEARCH_AVX2)
    // The AVX2 form, relative pose included, where the CPU runs it.
    if (detail::boxsat::useAvx2Search()) {
      Mat3 r4;
      Vec3 t4;
      detail::boxsat::Search sr;
      detail::boxsat::relativePoseSearchAvx2(ta, tb, ha, hb, r4, t4, sr);
      ASSERT_EQ(std::memcmp(r4.data(), r.data(), sizeof(Real) * 9), 0) << k << " family " << family;
      ASSERT_TRUE(sameBits(t4, t)) << k << " family " << family;
      detail::BoxBoxSat wide;
      const bool okWide = detail::boxBoxSatFrom(sr, ha, hb, r4, t4, wide);
      ASSERT_EQ(okWide, okScalar) << k << " family " << family;
      if (okWide) {
        ++wideAnswered;
        ASSERT_EQ(std::memcmp(&wide.depth, &scalar.depth, sizeof(Real)), 0) << k << " family " << family;
        ASSERT_TRUE(sameBits(wide.normal, scalar.normal)) << k << " family " << family;
        ASSERT_TRUE(sameBits(wide.za, scalar.za)) << k << " family " << family;
        ASSERT_TRUE(sameBits(wide.zb, scalar.zb)) << k << " family " << family;
      }
    }
#endif
    if (!okSimd) {
      ++refused;
      continue;
    }
    ++answered;
    edges += std::abs(simd.normal.cwiseAbs().maxCoeff() - 1) > 1e-12;
    ASSERT_EQ(std::memcmp(&simd.depth, &scalar.depth, sizeof(Real)), 0) << k << " family " << family;
    ASSERT_TRUE(sameBits(simd.normal, scalar.normal)) << k << " family " << family;
    ASSERT_TRUE(sameBits(simd.za, scalar.za)) << k << " family " << family;
    ASSERT_TRUE(sameBits(simd.zb, scalar.zb)) << k << " family " << family;
  }
  std::printf("[ box-box SAT ] %d answered (%d not along A's face normals), %d left to the general path; AVX2 form "
              "%s (%d answered)\n",
              answered, edges, refused, wideAnswered > 0 ? "compared" : "not run", wideAnswered);
  EXPECT_GT(answered, 20000);
  EXPECT_GT(refused, 20000);
}

}  // namespace
}  // namespace proxima
