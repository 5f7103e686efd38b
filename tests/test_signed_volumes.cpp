// Signed Volumes and Johnson point-simplex queries: the thesis's worked examples (Montanari 2017
// Table 4.1, Fig. 4.6), CompareSigns semantics, and region coverage against a brute-force oracle.
#include <gtest/gtest.h>

#include <Eigen/LU>
#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "proxima/core/predicates.hpp"
#include "proxima/narrowphase/signed_volumes.hpp"

using namespace proxima;

namespace {

constexpr Real kNaN = std::numeric_limits<Real>::quiet_NaN();

// Brute-force closest point of the simplex to the origin in long double: every face (vertex, edge,
// triangle, interior) solved by its normal equations, keeping feasible (λ >= 0) minima.
struct Oracle {
  long double dist = 0;
  Eigen::Matrix<long double, 3, 1> point;
};

Oracle bruteForce(const std::vector<Vec3>& s) {
  using V = Eigen::Matrix<long double, 3, 1>;
  const int n = static_cast<int>(s.size());
  Oracle best;
  best.dist = std::numeric_limits<long double>::infinity();
  for (int mask = 1; mask < (1 << n); ++mask) {
    std::vector<V> p;
    for (int i = 0; i < n; ++i)
      if (mask & (1 << i)) p.push_back(s[i].cast<long double>());
    const int m = static_cast<int>(p.size());
    // Minimise |p0 + Σ μ_i (p_i - p0)| : normal equations G μ = -E^T p0.
    Eigen::Matrix<long double, Eigen::Dynamic, Eigen::Dynamic> E(3, m - 1);
    for (int i = 1; i < m; ++i) E.col(i - 1) = p[i] - p[0];
    V x = p[0];
    if (m > 1) {
      const auto G = (E.transpose() * E).eval();
      const auto rhs = (-(E.transpose() * p[0])).eval();
      Eigen::FullPivLU<Eigen::Matrix<long double, Eigen::Dynamic, Eigen::Dynamic>> lu(G);
      if (lu.rank() < m - 1) continue;  // degenerate face: covered by its sub-faces
      const auto mu = lu.solve(rhs).eval();
      long double sum = 0;
      bool ok = true;
      for (int i = 0; i < m - 1; ++i) ok = ok && mu(i) >= 0, sum += mu(i);
      if (!ok || sum > 1) continue;
      x = p[0] + E * mu;
    }
    const long double d = x.norm();
    if (d < best.dist) best.dist = d, best.point = x;
  }
  return best;
}

void expectValid(const SimplexSolution& r, const std::vector<Vec3>& s) {
  ASSERT_GE(r.size, 1);
  ASSERT_LE(r.size, static_cast<int>(s.size()));
  Real sum = 0;
  Vec3 p = Vec3::Zero();
  for (int i = 0; i < r.size; ++i) {
    EXPECT_GT(r.lambda[i], 0) << "barycentric " << i;
    sum += r.lambda[i];
    p += r.lambda[i] * s[r.ids[i]];
  }
  EXPECT_NEAR(sum, 1.0, 1e-14);
  EXPECT_LE((p - r.point).norm(), 1e-14 * (1 + p.norm()));
}

}  // namespace

TEST(CompareSigns, Semantics) {
  EXPECT_TRUE(compareSigns(1, 2));
  EXPECT_TRUE(compareSigns(-1e-300, -5));
  EXPECT_FALSE(compareSigns(1, -1));
  EXPECT_FALSE(compareSigns(0, 1));
  EXPECT_FALSE(compareSigns(1, 0));
  EXPECT_FALSE(compareSigns(0, 0));
  EXPECT_FALSE(compareSigns(-0.0, -1));
  EXPECT_FALSE(compareSigns(kNaN, 1));
  EXPECT_FALSE(compareSigns(1, kNaN));
  EXPECT_FALSE(compareSigns(kNaN, kNaN));
}

// Montanari Table 4.1: sphere of diameter 1 at the origin and a triangle. The answer is vertex s1.
TEST(SignedVolumes, ThesisSphereTriangleTable41) {
  const std::vector<Vec3> tri = {{0.45, 0.00, -0.60}, {-0.55, -0.75, -1.55}, {-0.55, 0.75, -1.55}};
  for (bool gjk : {false, true}) {
    SubAlgorithmStats st;
    const SimplexSolution r = gjk ? signedVolumesGjk(tri, SignMode::Fast, &st) : signedVolumes(tri, SignMode::Fast, &st);
    ASSERT_EQ(r.size, 1);
    EXPECT_EQ(r.ids[0], 0);
    EXPECT_EQ(r.lambda[0], 1.0);
    EXPECT_EQ(r.point, tri[0]);
    EXPECT_NEAR(r.point.norm(), 0.75, 1e-15);
    EXPECT_GT(r.point.norm(), 0.5) << "no contact with the sphere of radius 0.5";
    EXPECT_EQ(st.s2d, 1);
  }
  const SimplexSolution j = johnson(tri, false);
  ASSERT_EQ(j.size, 1);
  EXPECT_NEAR(j.point.norm(), 0.75, 1e-15);
}

namespace {
const Vec3 kF46s1(-20.713282046795065, 0.00, -31.557752817397152);
const Vec3 kF46s2(-6.3505362624669246, 19.715748586578577, -31.557752817397152);
const Vec3 kF46s3(20.713255776709875, -0.032989069061845351, -31.557752817397152);
const std::vector<Vec3> kFig46 = {kF46s1, kF46s2, kF46s3, kF46s1};
}  // namespace

// Montanari Fig. 4.6: a flat tetrahedron with a duplicate vertex (s4 = s1).
TEST(SignedVolumes, ThesisDegenerateTetrahedronFig46) {
  const Real expected = 31.557752817397152;
  for (SignMode mode : {SignMode::Fast, SignMode::Exact})
    for (bool gjk : {false, true}) {
      SubAlgorithmStats st;
      const SimplexSolution r = gjk ? signedVolumesGjk(kFig46, mode, &st) : signedVolumes(kFig46, mode, &st);
      ASSERT_TRUE(r.point.allFinite());
      expectValid(r, kFig46);
      EXPECT_NEAR(r.point.norm(), expected, 1e-12 * expected);
      ASSERT_EQ(r.size, 3);
      // W = {s1, s2, s3} (or its duplicate {s4, s2, s3}); λ ≈ (0.49945, 0.00084, 0.49971).
      Real l1 = 0, l2 = 0, l3 = 0;
      for (int i = 0; i < 3; ++i) {
        const int id = r.ids[i];
        if (id == 0 || id == 3) l1 = r.lambda[i];
        if (id == 1) l2 = r.lambda[i];
        if (id == 2) l3 = r.lambda[i];
      }
      EXPECT_NEAR(l1, 0.4994534, 1e-6);
      EXPECT_NEAR(l2, 0.0008361, 1e-6);
      EXPECT_NEAR(l3, 0.4997104, 1e-6);
      if (mode == SignMode::Exact && gjk) { EXPECT_EQ(st.s2d, 1) << "exact signs: path V1234 -> V123 only"; }
    }
}

// Every vertex order of Fig. 4.6 (an order can change the rounding of det M; the thesis's -3.6e-12
// comes from the nested cofactor form, see the digest): the answer stays finite and correct, and
// exact signs see volume 0.
TEST(SignedVolumes, Fig46AllVertexOrders) {
  std::vector<int> perm = {0, 1, 2, 3};
  int orders = 0;
  do {
    std::vector<Vec3> t(4);
    for (int i = 0; i < 4; ++i) t[i] = kFig46[perm[i]];
    for (SignMode mode : {SignMode::Fast, SignMode::Exact}) {
      const SimplexSolution r = signedVolumes(t, mode);
      ASSERT_TRUE(r.point.allFinite());
      expectValid(r, t);
      EXPECT_NEAR(r.point.norm(), 31.557752817397152, 1e-12 * 31.56);
    }
    EXPECT_EQ(exactTetraSigns(t[0], t[1], t[2], t[3]).det, 0);
    ++orders;
  } while (std::next_permutation(perm.begin(), perm.end()));
  EXPECT_EQ(orders, 24);
}

TEST(Predicates, ExactSignsOfFig46AreZeroVolume) {
  const TetraSigns t = exactTetraSigns(kF46s1, kF46s2, kF46s3, kF46s1);
  EXPECT_EQ(t.det, 0) << "the tetrahedron is flat: volume exactly 0";
  EXPECT_EQ(t.cof[1], 0);
  EXPECT_EQ(t.cof[2], 0);
  EXPECT_EQ(t.cof[0], -t.cof[3]);
  EXPECT_NE(t.cof[0], 0);
}

TEST(Predicates, ExactDet3AgreesWithLongDoubleAndCatchesCancellation) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<Real> u(-1, 1);
  for (int k = 0; k < 2000; ++k) {
    Vec3 a(u(rng), u(rng), u(rng)), b(u(rng), u(rng), u(rng));
    const Real t = u(rng);
    Vec3 c = a * t + b * (1 - t);  // (nearly) dependent: exact answer tiny or zero
    if (k % 2) c += Vec3(u(rng), u(rng), u(rng)) * 1e-3;
    const int s = exactSignDet3(a, b, c);
    const long double ld = a.cast<long double>().dot(b.cast<long double>().cross(c.cast<long double>()));
    if (std::abs(ld) > 1e-15L) { EXPECT_EQ(s, (ld > 0) - (ld < 0)); }
  }
  // Exactly dependent rows: c = a + b with small integers.
  EXPECT_EQ(exactSignDet3(Vec3(1, 2, 3), Vec3(4, 5, 6), Vec3(5, 7, 9)), 0);
  EXPECT_EQ(exactSignOrient2(0, 0, 1, 1, 2, 2), 0);
  EXPECT_EQ(exactSignOrient2(0, 0, 1, 0, 0, 1), 1);
}

TEST(SignedVolumes, NeedleTrianglesAndZeroLengthSegments) {
  // Zero-length segment.
  std::vector<Vec3> seg = {{1, 2, 3}, {1, 2, 3}};
  SimplexSolution r = signedVolumes(seg);
  ASSERT_EQ(r.size, 1);
  EXPECT_EQ(r.point, Vec3(1, 2, 3));
  // Needle triangle: three collinear points; closest point on the segment they span.
  std::vector<Vec3> needle = {{-1, 1, 0.5}, {2, 1, 0.5}, {0.5, 1, 0.5}};
  r = signedVolumes(needle);
  EXPECT_NEAR(r.point.norm(), std::hypot(1.0, 0.5), 1e-15);
  EXPECT_NEAR(r.point.x(), 0, 1e-15);
  expectValid(r, needle);
  // Triangle with two coincident vertices.
  std::vector<Vec3> dup = {{1, -1, 1}, {1, -1, 1}, {1, 1, 1}};
  r = signedVolumes(dup);
  EXPECT_NEAR(r.point.norm(), std::sqrt(2.0), 1e-15);
  // Tetrahedron collapsed to a segment and to a point.
  std::vector<Vec3> tseg = {{1, -1, 1}, {1, 1, 1}, {1, 0, 1}, {1, -1, 1}};
  r = signedVolumes(tseg);
  EXPECT_NEAR(r.point.norm(), std::sqrt(2.0), 1e-15);
  std::vector<Vec3> tpt = {{3, 0, 4}, {3, 0, 4}, {3, 0, 4}, {3, 0, 4}};
  r = signedVolumes(tpt);
  EXPECT_NEAR(r.point.norm(), 5.0, 1e-15);
}

// Place the origin in every Voronoi region of 1-, 2- and 3-simplices (thesis §4.8.1) by translating
// a fixed simplex so that a chosen feature point sits at a chosen offset; compare with brute force.
TEST(SignedVolumes, RegionCoverageAgainstBruteForce) {
  std::mt19937_64 rng(2024);
  std::uniform_real_distribution<Real> u(-1, 1);
  int checked = 0;
  for (int n = 2; n <= 4; ++n)
    for (int trial = 0; trial < 400; ++trial) {
      std::vector<Vec3> base(n);
      for (auto& p : base) p = Vec3(u(rng), u(rng), u(rng));
      // Pick a face (subset) and a point inside it, push the origin outward from it or inside.
      const int mask = 1 + static_cast<int>(rng() % ((1u << n) - 1));
      Vec3 feature = Vec3::Zero();
      Real wsum = 0;
      for (int i = 0; i < n; ++i)
        if (mask & (1 << i)) {
          const Real w = 0.1 + std::abs(u(rng));
          feature += w * base[i];
          wsum += w;
        }
      feature /= wsum;
      Vec3 centroid = Vec3::Zero();
      for (auto& p : base) centroid += p / n;
      const Real push = std::abs(u(rng)) * 2;
      const Vec3 origin = feature + push * (feature - centroid) + 0.3 * Vec3(u(rng), u(rng), u(rng)) * (trial % 3);
      std::vector<Vec3> s(n);
      for (int i = 0; i < n; ++i) s[i] = base[i] - origin;
      const Oracle o = bruteForce(s);
      for (int variant = 0; variant < 3; ++variant) {
        SimplexSolution r;
        if (variant == 0) r = signedVolumes(s);
        if (variant == 1) r = signedVolumes(s, SignMode::Exact);
        if (variant == 2) r = johnson(s, false, true);
        expectValid(r, s);
        EXPECT_NEAR(r.point.norm(), static_cast<Real>(o.dist), 1e-13) << "variant " << variant << " n " << n;
        EXPECT_LE((r.point.cast<long double>() - o.point).norm(), 1e-12L) << "variant " << variant;
        ++checked;
      }
    }
  EXPECT_GT(checked, 3000);
}

// GJK-tailored variant: when y[0] supports the solution (which GJK guarantees), the tailored search
// returns the same point as the full search while inspecting fewer regions.
TEST(SignedVolumes, GjkTailoredMatchesFullSearchWhenNewestSupports) {
  std::mt19937_64 rng(99);
  std::uniform_real_distribution<Real> u(-1, 1);
  int compared = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    const int n = 2 + trial % 3;
    std::vector<Vec3> s(n);
    for (auto& p : s) p = Vec3(u(rng), u(rng), u(rng)) + Vec3(2, 0.5, 0.1);
    const SimplexSolution full = signedVolumes(s);
    bool newestSupports = false;
    for (int i = 0; i < full.size; ++i) newestSupports = newestSupports || full.ids[i] == 0;
    if (!newestSupports) continue;
    SubAlgorithmStats a, b;
    const SimplexSolution g = signedVolumesGjk(s, SignMode::Fast, &a);
    signedVolumes(s, SignMode::Fast, &b);
    EXPECT_NEAR(g.point.norm(), full.point.norm(), 1e-14);
    EXPECT_LE(a.s1d + a.s2d, b.s1d + b.s2d);
    ++compared;
  }
  EXPECT_GT(compared, 500);
}

// S3D's GJK variant stops at the first face it sees whose S2D keeps all three vertices (the origin's
// projection inside a face the origin sees is the tetrahedron's nearest point). Tetrahedra built so
// that the answer is such a face through the newest vertex, with the origin often seeing two or three
// faces: the answer must equal the brute-force oracle's and the full search's, with no more S2D calls.
TEST(SignedVolumes, GjkS3dStopsAtASeenFaceHoldingTheProjection) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<Real> u(-1, 1);
  int checked = 0, fewer = 0;
  for (int trial = 0; trial < 2000; ++trial) {
    Vec3 v[4];
    for (auto& p : v) p = Vec3(u(rng), u(rng), u(rng));
    // The answer face: vertex 0 and two of the others; the fourth vertex is opposite.
    const int drop = 1 + trial % 3;
    int f[3], k = 0;
    for (int i = 0; i < 4; ++i)
      if (i != drop) f[k++] = i;
    Vec3 m = (v[f[1]] - v[f[0]]).cross(v[f[2]] - v[f[0]]);
    if (m.norm() < 1e-3) continue;
    m.normalize();
    if (m.dot(v[drop] - v[f[0]]) > 0) m = -m;  // outward
    if (std::abs(m.dot(v[drop] - v[f[0]])) < 1e-3) continue;  // nearly flat tetrahedron
    Real w[3] = {0.05 + std::abs(u(rng)), 0.05 + std::abs(u(rng)), 0.05 + std::abs(u(rng))};
    const Real ws = w[0] + w[1] + w[2];
    const Vec3 q = (w[0] * v[f[0]] + w[1] * v[f[1]] + w[2] * v[f[2]]) / ws;
    const Real h = 0.01 + 2 * std::abs(u(rng));  // small heights: one face seen; large: several
    const Vec3 origin = q + h * m;
    std::vector<Vec3> s(4);
    for (int i = 0; i < 4; ++i) s[i] = v[i] - origin;
    const Oracle o = bruteForce(s);
    SubAlgorithmStats a, b;
    const SimplexSolution g = signedVolumesGjk(s, SignMode::Fast, &a);
    const SimplexSolution full = signedVolumes(s, SignMode::Fast, &b);
    expectValid(g, s);
    ASSERT_EQ(g.size, 3) << "trial " << trial;
    EXPECT_NEAR(g.point.norm(), h, 1e-13 * (1 + h)) << "trial " << trial;
    EXPECT_NEAR(g.point.norm(), static_cast<Real>(o.dist), 1e-13) << "trial " << trial;
    EXPECT_LE((g.point - full.point).norm(), 1e-13) << "trial " << trial;
    EXPECT_LE(a.s2d, b.s2d);
    // Faces through vertex 0 that the origin sees (it lies beyond their plane, away from the vertex
    // opposite): without the stop, the GJK variant would call S2D on each of them.
    int seen = 0;
    for (int j = 1; j < 4; ++j) {
      int e[3], c = 0;
      for (int i = 0; i < 4; ++i)
        if (i != j) e[c++] = i;
      const Vec3 nj = (s[e[1]] - s[e[0]]).cross(s[e[2]] - s[e[0]]);
      seen += (nj.dot(-s[e[0]]) > 0) != (nj.dot(s[j] - s[e[0]]) > 0);
    }
    fewer += seen >= 2 && a.s2d < seen;
    ++checked;
  }
  EXPECT_GT(checked, 1000);
  EXPECT_GT(fewer, 50);  // the stop was taken
}

TEST(Johnson, BackupOnDegenerateInput) {
  SubAlgorithmStats st;
  const SimplexSolution r = johnson(kFig46, false, true, &st);
  ASSERT_TRUE(r.point.allFinite());
  // Johnson is not expected to be accurate here (that is the thesis's point), only finite and
  // within the simplex.
  EXPECT_GE(r.point.norm(), 31.557752817397152 * (1 - 1e-6));
}
