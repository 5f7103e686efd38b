// Random convex rocks and resolution levels of a grain (see rock.hpp).
#include "proxima/shapes/rock.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <string>
#include <vector>

#include "proxima/core/random.hpp"
#include "proxima/shapes/shape.hpp"

namespace proxima {
namespace {

std::string str(Real x) {
  char b[32];
  std::snprintf(b, sizeof b, "%g", x);
  return b;
}

}  // namespace

Result<Polytope> makeRock(const RockParams& p) {
  auto bad = [](const std::string& m) { return Result<Polytope>::failure(m); };
  if (p.vertices < 4 || p.vertices > 100000) return bad("vertices: must be in [4, 100000] (got " + std::to_string(p.vertices) + ")");
  if (!(p.elongation > 0 && p.elongation <= 1)) return bad("elongation: must be in (0, 1] (got " + str(p.elongation) + ")");
  if (!(p.flatness > 0 && p.flatness <= 1)) return bad("flatness: must be in (0, 1] (got " + str(p.flatness) + ")");
  if (!(p.roughness >= 0 && p.roughness <= 1)) return bad("roughness: must be in [0, 1] (got " + str(p.roughness) + ")");
  if (!(p.radius > 0 && std::isfinite(p.radius))) return bad("radius: must be finite and > 0 (got " + str(p.radius) + ")");

  // The parent surface depends on the seed only (not on the vertex count).
  SeededRandom rng(p.seed);
  constexpr int kBumps = 12;
  constexpr Real kWidth = 0.55;  // angular width of a bump, rad
  Vec3 centre[kBumps];
  Real amplitude[kBumps];
  for (int k = 0; k < kBumps; ++k) centre[k] = rng.direction(), amplitude[k] = rng.uniform(-1, 1);
  const Mat3 frame = rng.orientation().toRotationMatrix();
  const Vec3 axes(1, p.elongation, p.elongation * p.flatness);
  auto bumps = [&](const Vec3& u) {
    Real g = 0;
    for (int k = 0; k < kBumps; ++k) g += amplitude[k] * std::exp((u.dot(centre[k]) - 1) / (kWidth * kWidth));
    return g;
  };

  // Fibonacci lattice of directions (near-uniform for every count), turned into the seeded frame.
  const int n = p.vertices;
  std::vector<Vec3> pts;
  pts.reserve(static_cast<std::size_t>(n));
  const Real golden = std::numbers::pi * (3 - std::sqrt(Real(5)));
  for (int i = 0; i < n; ++i) {
    const Real z = 1 - (2 * i + 1) / static_cast<Real>(n);
    const Real r = std::sqrt(std::max<Real>(0, 1 - z * z));
    const Vec3 u = frame * Vec3(r * std::cos(golden * i), r * std::sin(golden * i), z);
    pts.push_back(std::exp(p.roughness * bumps(u)) * axes.cwiseProduct(u));
  }
  auto hull = Polytope::fromPoints(pts);
  if (!hull) return hull;
  auto mp = computeMassProperties(Shape(hull.value()));
  if (!mp) return Result<Polytope>::failure("the generated hull has no volume: " + mp.message());
  // Centre on the centroid and scale to the requested volume-equivalent radius.
  const Real target = 4.0 / 3.0 * std::numbers::pi * p.radius * p.radius * p.radius;
  const Real s = std::cbrt(target / mp.value().volume);
  for (Vec3& x : pts) x = s * (x - mp.value().centroid);
  return Polytope::fromPoints(pts);
}

std::optional<int> resolutionVertices(std::string_view level) {
  if (level == "coarse") return 24;
  if (level == "medium") return 78;
  if (level == "fine") return 160;
  return std::nullopt;
}

Result<Polytope> reduceVertices(const Polytope& p, int maxVertices) {
  if (maxVertices < 4) return Result<Polytope>::failure("must be >= 4 (got " + std::to_string(maxVertices) + ")");
  const auto& v = p.vertices();
  const int n = static_cast<int>(v.size());
  if (n <= maxVertices) return p;
  Vec3 mean = Vec3::Zero();
  for (const Vec3& x : v) mean += x;
  mean /= static_cast<Real>(n);
  // Farthest-point sampling: each new vertex is the one farthest from those already chosen.
  std::vector<Real> dist(static_cast<std::size_t>(n));
  int first = 0;
  for (int i = 1; i < n; ++i)
    if ((v[i] - mean).squaredNorm() > (v[first] - mean).squaredNorm()) first = i;
  std::vector<Vec3> chosen{v[first]};
  for (int i = 0; i < n; ++i) dist[i] = (v[i] - v[first]).squaredNorm();
  while (static_cast<int>(chosen.size()) < maxVertices) {
    const int next = static_cast<int>(std::max_element(dist.begin(), dist.end()) - dist.begin());
    chosen.push_back(v[next]);
    for (int i = 0; i < n; ++i) dist[i] = std::min(dist[i], (v[i] - v[next]).squaredNorm());
  }
  return Polytope::fromPoints(chosen);
}

}  // namespace proxima
