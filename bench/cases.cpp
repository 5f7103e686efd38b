#include "cases.hpp"

#include <array>
#include <cmath>
#include <cstdio>
#include <map>
#include <stdexcept>
#include <utility>

namespace pbench {

std::vector<Vec3> icosphereVertices(int n) {
  int levels = -1;
  for (int k = 0; k <= 8; ++k)
    if (10 * (1 << (2 * k)) + 2 == n) levels = k;
  if (levels < 0) throw std::invalid_argument("icosphere: n must be 10*4^k+2");

  const Real phi = (1 + std::sqrt(5.0)) / 2;
  std::vector<Vec3> v{{-1, phi, 0}, {1, phi, 0},  {-1, -phi, 0}, {1, -phi, 0}, {0, -1, phi},  {0, 1, phi},
                      {0, -1, -phi}, {0, 1, -phi}, {phi, 0, -1},  {phi, 0, 1},  {-phi, 0, -1}, {-phi, 0, 1}};
  for (Vec3& p : v) p.normalize();
  std::vector<std::array<int, 3>> f{{0, 11, 5}, {0, 5, 1},  {0, 1, 7},   {0, 7, 10}, {0, 10, 11},
                                    {1, 5, 9},  {5, 11, 4}, {11, 10, 2}, {10, 7, 6}, {7, 1, 8},
                                    {3, 9, 4},  {3, 4, 2},  {3, 2, 6},   {3, 6, 8},  {3, 8, 9},
                                    {4, 9, 5},  {2, 4, 11}, {6, 2, 10},  {8, 6, 7},  {9, 8, 1}};
  for (int l = 0; l < levels; ++l) {
    std::map<std::pair<int, int>, int> mid;
    auto midpoint = [&](int a, int b) {
      const auto key = std::minmax(a, b);
      auto it = mid.find(key);
      if (it != mid.end()) return it->second;
      v.push_back((v[a] + v[b]).normalized());
      const int id = static_cast<int>(v.size()) - 1;
      mid.emplace(key, id);
      return id;
    };
    std::vector<std::array<int, 3>> g;
    g.reserve(f.size() * 4);
    for (const auto& t : f) {
      const int a = midpoint(t[0], t[1]), b = midpoint(t[1], t[2]), c = midpoint(t[2], t[0]);
      g.push_back({t[0], a, c});
      g.push_back({t[1], b, a});
      g.push_back({t[2], c, b});
      g.push_back({a, b, c});
    }
    f = std::move(g);
  }
  if (static_cast<int>(v.size()) != n) throw std::logic_error("icosphere: unexpected vertex count");
  return v;
}

std::vector<Vec3> icospherePoleVertices(int n) {
  std::vector<Vec3> v = icosphereVertices(n);
  const Mat3 r = proxima::Quat::FromTwoVectors(v[0], Vec3::UnitX()).toRotationMatrix();
  int hi = 0, lo = 0;
  for (std::size_t i = 0; i < v.size(); ++i) {
    v[i] = r * v[i];
    if (v[i].x() > v[hi].x()) hi = static_cast<int>(i);
    if (v[i].x() < v[lo].x()) lo = static_cast<int>(i);
  }
  v[hi] = Vec3(1, 0, 0);
  v[lo] = Vec3(-1, 0, 0);
  return v;
}

namespace {
const proxima::Polytope& cachedHull(std::map<int, proxima::Polytope>& cache, int n, bool pole) {
  auto it = cache.find(n);
  if (it != cache.end()) return it->second;
  const std::vector<Vec3> pts = pole ? icospherePoleVertices(n) : icosphereVertices(n);
  auto r = proxima::Polytope::fromPoints(pts);
  if (!r) throw std::runtime_error("Polytope::fromPoints failed: " + r.message());
  if (r.value().vertexCount() != n)
    std::fprintf(stderr, "warning: icosphere hull of %d points has %d vertices\n", n, r.value().vertexCount());
  return cache.emplace(n, std::move(r).value()).first->second;
}
}  // namespace

const proxima::Polytope& icosphere(int n) {
  static std::map<int, proxima::Polytope> cache;
  return cachedHull(cache, n, false);
}

const proxima::Polytope& icospherePole(int n) {
  static std::map<int, proxima::Polytope> cache;
  return cachedHull(cache, n, true);
}

Mat3 randomRotation(std::mt19937_64& rng) {
  std::normal_distribution<Real> g;
  proxima::Quat q;
  do q = proxima::Quat(g(rng), g(rng), g(rng), g(rng));
  while (q.squaredNorm() < 1e-12);
  return q.normalized().toRotationMatrix();
}

Vec3 randomUnit(std::mt19937_64& rng) {
  std::normal_distribution<Real> g;
  Vec3 v;
  do v = Vec3(g(rng), g(rng), g(rng));
  while (v.squaredNorm() < 1e-12);
  return v.normalized();
}

Mat3 smallRotation(std::mt19937_64& rng, Real angle) {
  return Eigen::AngleAxis<Real>(angle, randomUnit(rng)).toRotationMatrix();
}

Mat3 rotationX(Real angle) {
  const Real c = std::cos(angle), s = std::sin(angle);
  Mat3 r;
  r << 1, 0, 0, 0, c, -s, 0, s, c;
  return r;
}

namespace {
PosePair step(const PosePair& p, std::mt19937_64& rng) {
  PosePair q;
  q.a = Transform(Mat3(smallRotation(rng, kStepRotation) * p.a.rotation),
                  Vec3(p.a.translation + kStepTranslation * randomUnit(rng)));
  q.b = Transform(Mat3(smallRotation(rng, kStepRotation) * p.b.rotation),
                  Vec3(p.b.translation + kStepTranslation * randomUnit(rng)));
  return q;
}
}  // namespace

CellPoses spherePoses(Real gap, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  CellPoses c;
  c.pose0.reserve(kPairs), c.pose1.reserve(kPairs);
  for (int i = 0; i < kPairs; ++i) {
    PosePair p;
    p.a = Transform(randomRotation(rng), Vec3::Zero());
    p.b = Transform(randomRotation(rng), Vec3(2 + gap, 0, 0));
    c.pose0.push_back(p);
    c.pose1.push_back(step(p, rng));
  }
  return c;
}

CellPoses ellipsoidPoses(const proxima::Ellipsoid& e, Real gap, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  CellPoses c;
  c.pose0.reserve(kPairs), c.pose1.reserve(kPairs);
  for (int i = 0; i < kPairs; ++i) {
    const Mat3 ra = randomRotation(rng), rb = randomRotation(rng);
    // A's support point towards a random unit u and B's towards -u, put g apart along u: both
    // surfaces have normal ±u there, so for g > 0 those points are the closest points and the
    // distance is g. (u is random rather than x: libccd and FCL start their search along x.)
    const Vec3 u = randomUnit(rng);
    proxima::SupportHint h;
    const Vec3 pa = ra * e.support(ra.transpose() * u, h);
    const Vec3 sb = rb * e.support(rb.transpose() * -u, h);
    PosePair p;
    p.a = Transform(ra, Vec3::Zero());
    p.b = Transform(rb, Vec3(pa + gap * u - sb));
    c.pose0.push_back(p);
    c.pose1.push_back(step(p, rng));
  }
  return c;
}

std::string gapLabel(Real g) {
  if (g == 2.0) return "2";
  if (g == 1e-3) return "1e-3";
  if (g == 1e-9) return "1e-9";
  if (g == -0.1) return "-0.1";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", g);
  return buf;
}

}  // namespace pbench
