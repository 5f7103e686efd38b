// Shared helpers for the tests: icospheres ("polygonal spheres"), random rotations, pole bodies.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <random>
#include <utility>
#include <vector>

#include "proxima/core/types.hpp"
#include "proxima/shapes/convex.hpp"

namespace proxima::test {

/// Vertices of an icosphere with 10*4^level + 2 vertices (12, 42, 162, 642, 2562, 10242), on the
/// unit sphere, including the poles (±1, 0, 0) (the icosahedron is oriented so that x is an axis
/// through two vertices).
inline std::vector<Vec3> icosphere(int level) {
  const Real t = (1 + std::sqrt(5.0)) / 2;
  std::vector<Vec3> v = {{-1, t, 0}, {1, t, 0}, {-1, -t, 0}, {1, -t, 0}, {0, -1, t}, {0, 1, t},
                         {0, -1, -t}, {0, 1, -t}, {t, 0, -1}, {t, 0, 1}, {-t, 0, -1}, {-t, 0, 1}};
  std::vector<std::array<int, 3>> f = {{0, 11, 5}, {0, 5, 1},  {0, 1, 7},   {0, 7, 10}, {0, 10, 11},
                                       {1, 5, 9},  {5, 11, 4}, {11, 10, 2}, {10, 7, 6}, {7, 1, 8},
                                       {3, 9, 4},  {3, 4, 2},  {3, 2, 6},   {3, 6, 8},  {3, 8, 9},
                                       {4, 9, 5},  {2, 4, 11}, {6, 2, 10},  {8, 6, 7},  {9, 8, 1}};
  for (auto& p : v) p.normalize();
  for (int l = 0; l < level; ++l) {
    std::map<std::pair<int, int>, int> mid;
    auto midpoint = [&](int a, int b) {
      auto key = std::minmax(a, b);
      auto it = mid.find(key);
      if (it != mid.end()) return it->second;
      v.push_back((v[a] + v[b]).normalized());
      return mid[key] = static_cast<int>(v.size()) - 1;
    };
    std::vector<std::array<int, 3>> g;
    for (auto& tri : f) {
      const int a = midpoint(tri[0], tri[1]), b = midpoint(tri[1], tri[2]), c = midpoint(tri[2], tri[0]);
      g.push_back({tri[0], a, c}), g.push_back({tri[1], b, a}), g.push_back({tri[2], c, b}), g.push_back({a, b, c});
    }
    f = std::move(g);
  }
  // Rotate so that vertex 0's axis... instead, align a vertex with +x exactly: rotate (the vertex
  // (t,0,1) normalised) onto x, then snap it and its antipode to exact (±1,0,0).
  const Vec3 axis = Vec3(t, 0, 1).normalized();
  const Mat3 r = Eigen::Quaternion<Real>::FromTwoVectors(axis, Vec3::UnitX()).toRotationMatrix();
  for (auto& p : v) {
    p = r * p;
    if ((p - Vec3::UnitX()).norm() < 1e-12) p = Vec3::UnitX();
    if ((p + Vec3::UnitX()).norm() < 1e-12) p = -Vec3::UnitX();
  }
  return v;
}

inline Quat randomRotation(std::mt19937_64& rng) {
  std::normal_distribution<Real> n(0, 1);
  Quat q(n(rng), n(rng), n(rng), n(rng));
  q.normalize();
  return q;
}

/// Rotation about x only (keeps the poles (±1,0,0) fixed).
inline Quat rotationAboutX(Real angle) { return Quat(Eigen::AngleAxis<Real>(angle, Vec3::UnitX())); }

/// Hull of n Gaussian points stretched by a random aspect (elongated and flat grains included).
inline Polytope randomHull(std::mt19937_64& rng, int n) {
  std::normal_distribution<Real> g(0, 1);
  std::uniform_real_distribution<Real> s(0.3, 1.5);
  const Vec3 aspect(s(rng), s(rng), s(rng));
  std::vector<Vec3> p;
  for (int i = 0; i < n; ++i) p.emplace_back(aspect.x() * g(rng), aspect.y() * g(rng), aspect.z() * g(rng));
  auto r = Polytope::fromPoints(p);
  EXPECT_TRUE(r.ok()) << r.message();
  return r.value();
}

}  // namespace proxima::test
