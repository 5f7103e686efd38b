// Exact independent oracle for the penetration depth of two convex polyhedra (tests and bench).
//
// The maximal common-plane gap, gap(n) = min_{b∈B} b·n − max_{a∈A} a·n, is attained at a facet
// normal of the Minkowski difference A−B, and those normals lie in the finite set {outward face
// normals of A, −(outward face normals of B), ±eA×eB} (Descantes et al. 2019 digest §0 and §4.1;
// the separating-axis theorem). Evaluating every candidate by brute force over the vertices, in long
// double, gives the depth (−max gap) and normal without any iteration, search or tolerance beyond
// skipping parallel edge pairs. It shares no code with src/narrowphase.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <map>
#include <utility>
#include <variant>
#include <vector>

#include "proxima/core/types.hpp"
#include "proxima/shapes/shape.hpp"

namespace proxima::oracle {

using LD = long double;
using Vec3L = Eigen::Matrix<LD, 3, 1>;

/// World-frame vertices, outward triangles and hull edges (coplanar diagonals dropped).
struct ConvexFeatures {
  std::vector<Vec3> vertices;
  std::vector<std::array<int, 3>> triangles;  ///< outward (counter-clockwise seen from outside)
  std::vector<std::array<int, 2>> edges;
};

struct SatResult {
  LD depth = 0;                   ///< −gap (> 0 when overlapping)
  Vec3 normal = Vec3::Zero();     ///< unit, A -> B (B lies on the +n side)
  bool overlapping = false;       ///< gap < 0
  LD gap = 0;                     ///< max over the candidate axes of gap(n)
};

namespace detail {

inline Vec3L toL(const Vec3& v) { return {v.x(), v.y(), v.z()}; }

inline Vec3L triangleCross(const std::vector<Vec3>& v, const std::array<int, 3>& t) {
  const Vec3L a = toL(v[t[0]]);
  return (toL(v[t[1]]) - a).cross(toL(v[t[2]]) - a);
}

/// Unit normals of the triangles (zero for degenerate ones, which Qhull's fans may contain).
inline std::vector<Vec3L> triangleNormals(const ConvexFeatures& f) {
  std::vector<Vec3L> n;
  n.reserve(f.triangles.size());
  for (const auto& t : f.triangles) {
    const Vec3L c = triangleCross(f.vertices, t);
    const LD len = c.norm();
    n.push_back(len > 0 ? Vec3L(c / len) : Vec3L::Zero());
  }
  return n;
}

/// Triangles adjacent to each undirected edge (vertex pair sorted).
inline std::map<std::pair<int, int>, std::vector<int>> edgeTriangles(const ConvexFeatures& f) {
  std::map<std::pair<int, int>, std::vector<int>> m;
  for (int t = 0; t < static_cast<int>(f.triangles.size()); ++t)
    for (int k = 0; k < 3; ++k) m[std::minmax(f.triangles[t][k], f.triangles[t][(k + 1) % 3])].push_back(t);
  return m;
}

/// Two unit normals equal within 1e-12: the triangles lie in one face (a diagonal between them is
/// not a hull edge).
inline bool sameNormal(const Vec3L& a, const Vec3L& b) {
  return a.squaredNorm() > 0 && b.squaredNorm() > 0 && (a - b).norm() <= 1e-12L;
}

/// The two adjacent outward face normals of every edge, or {0, 0} when unknown (the edge is then
/// never filtered out: the filter must stay a superset of the true facets).
inline std::vector<std::array<Vec3L, 2>> edgeNormals(const ConvexFeatures& f, const std::vector<Vec3L>& tn) {
  const auto adj = edgeTriangles(f);
  std::vector<std::array<Vec3L, 2>> out;
  out.reserve(f.edges.size());
  for (const auto& e : f.edges) {
    std::array<Vec3L, 2> n = {Vec3L::Zero(), Vec3L::Zero()};
    auto it = adj.find(std::minmax(e[0], e[1]));
    if (it != adj.end() && it->second.size() == 2) n = {tn[it->second[0]], tn[it->second[1]]};
    if (n[0].squaredNorm() == 0 || n[1].squaredNorm() == 0) n = {Vec3L::Zero(), Vec3L::Zero()};
    out.push_back(n);
  }
  return out;
}

/// Gauss-map arc test (the edge pair builds a face of A−B): arc (a, b) of A's edge and arc (c, d)
/// of B's edge with B's normals negated intersect on the unit sphere. Lenient: any sign within
/// 1e-9 counts as "maybe", so the kept set is a superset of the true edge-edge facets.
inline bool arcsMayIntersect(const std::array<Vec3L, 2>& na, const std::array<Vec3L, 2>& nb) {
  if (na[0].squaredNorm() == 0 || nb[0].squaredNorm() == 0) return true;
  const Vec3L &a = na[0], &b = na[1];
  const Vec3L c = -nb[0], d = -nb[1];
  const Vec3L bxa = b.cross(a), dxc = d.cross(c);
  const LD cba = c.dot(bxa), dba = d.dot(bxa), adc = a.dot(dxc), bdc = b.dot(dxc);
  constexpr LD eps = 1e-9L;
  // c and d on opposite sides of the plane of arc ab, a and b on opposite sides of the plane of
  // arc cd, and the arcs in the same hemisphere (not antipodal).
  return cba * dba <= eps && adc * bdc <= eps && cba * bdc >= -eps;
}

inline void addEdgesFromTriangles(ConvexFeatures& f) {
  const std::vector<Vec3L> tn = triangleNormals(f);
  for (const auto& [key, tris] : edgeTriangles(f)) {
    // Keep the edge unless exactly two non-degenerate coplanar triangles share it.
    if (tris.size() == 2 && sameNormal(tn[tris[0]], tn[tris[1]])) continue;
    f.edges.push_back({key.first, key.second});
  }
}

}  // namespace detail

/// Features of a polytope (3-D), box or tetrahedron under a pose (world frame). Other shapes give
/// empty features.
inline ConvexFeatures features(const proxima::Shape& s, const proxima::Transform& pose) {
  ConvexFeatures f;
  const ShapeGeometry& g = s.geometry();
  if (const auto* p = std::get_if<Polytope>(&g)) {
    if (p->dimension() != 3) return f;
    for (const Vec3& v : p->vertices()) f.vertices.push_back(pose.apply(v));
    f.triangles = p->data().triangles;
  } else if (const auto* b = std::get_if<Box>(&g)) {
    const Vec3 h = b->halfExtents;
    for (int i = 0; i < 8; ++i)
      f.vertices.push_back(pose.apply(Vec3(i & 1 ? h.x() : -h.x(), i & 2 ? h.y() : -h.y(), i & 4 ? h.z() : -h.z())));
    // Corner i has bit k set when its k-th coordinate is +h; each face is a quad split in two.
    const int quads[6][4] = {{0, 4, 6, 2}, {1, 3, 7, 5}, {0, 1, 5, 4}, {2, 6, 7, 3}, {0, 2, 3, 1}, {4, 5, 7, 6}};
    for (const auto& q : quads) f.triangles.push_back({q[0], q[1], q[2]}), f.triangles.push_back({q[0], q[2], q[3]});
  } else if (const auto* t = std::get_if<Tetrahedron>(&g)) {
    for (const Vec3& v : t->v) f.vertices.push_back(pose.apply(v));
    f.triangles = {{{1, 2, 3}}, {{0, 3, 2}}, {{0, 1, 3}}, {{0, 2, 1}}};
    // These faces are outward for a right-handed vertex order (positive volume); flip otherwise.
    const Vec3L a = detail::toL(f.vertices[0]);
    if ((detail::toL(f.vertices[1]) - a).dot((detail::toL(f.vertices[2]) - a).cross(detail::toL(f.vertices[3]) - a)) < 0)
      for (auto& tri : f.triangles) std::swap(tri[1], tri[2]);
  } else {
    return f;
  }
  detail::addEdgesFromTriangles(f);
  return f;
}

/// gap(n) = min_{b∈B} b·n − max_{a∈A} a·n in long double (n is used as given, not normalised).
inline LD supportGapL(const ConvexFeatures& a, const ConvexFeatures& b, const Vec3L& n) {
  LD ha = -std::numeric_limits<LD>::infinity(), lb = std::numeric_limits<LD>::infinity();
  for (const Vec3& v : a.vertices) ha = std::max(ha, detail::toL(v).dot(n));
  for (const Vec3& v : b.vertices) lb = std::min(lb, detail::toL(v).dot(n));
  return lb - ha;
}

inline long double supportGap(const ConvexFeatures& a, const ConvexFeatures& b, Vec3 n) {
  return supportGapL(a, b, detail::toL(n));
}

/// Maximum gap over all candidate axes (face normals of A, −face normals of B, ±eA×eB).
inline SatResult satPenetration(const ConvexFeatures& a, const ConvexFeatures& b, bool gaussMapFilter = true) {
  LD best = -std::numeric_limits<LD>::infinity();
  Vec3L bestN = Vec3L::Zero();
  auto consider = [&](const Vec3L& n) {
    // Early exit: once max a·n is known, stop scanning B as soon as the gap cannot beat the best.
    LD ha = -std::numeric_limits<LD>::infinity();
    for (const Vec3& v : a.vertices) ha = std::max(ha, detail::toL(v).dot(n));
    LD lb = std::numeric_limits<LD>::infinity();
    for (const Vec3& v : b.vertices) {
      lb = std::min(lb, detail::toL(v).dot(n));
      if (lb - ha <= best) return;
    }
    best = lb - ha, bestN = n;
  };
  const std::vector<Vec3L> tna = detail::triangleNormals(a), tnb = detail::triangleNormals(b);
  for (const Vec3L& n : tna)
    if (n.squaredNorm() > 0) consider(n);
  for (const Vec3L& n : tnb)
    if (n.squaredNorm() > 0) consider(-n);

  std::vector<std::array<Vec3L, 2>> ena, enb;
  if (gaussMapFilter) ena = detail::edgeNormals(a, tna), enb = detail::edgeNormals(b, tnb);
  for (std::size_t i = 0; i < a.edges.size(); ++i) {
    const Vec3L ea = detail::toL(a.vertices[a.edges[i][1]]) - detail::toL(a.vertices[a.edges[i][0]]);
    for (std::size_t j = 0; j < b.edges.size(); ++j) {
      if (gaussMapFilter && !detail::arcsMayIntersect(ena[i], enb[j])) continue;
      const Vec3L eb = detail::toL(b.vertices[b.edges[j][1]]) - detail::toL(b.vertices[b.edges[j][0]]);
      const Vec3L c = ea.cross(eb);
      const LD len = c.norm();
      // Parallel edges (sin < 1e-12) span no facet of their own (their faces are already candidates).
      if (!(len > 1e-12L * ea.norm() * eb.norm())) continue;
      consider(c / len);
      consider(-c / len);
    }
  }
  SatResult r;
  r.gap = best;
  r.depth = -best;
  r.overlapping = best < 0;
  r.normal = Vec3(static_cast<Real>(bestN.x()), static_cast<Real>(bestN.y()), static_cast<Real>(bestN.z()));
  return r;
}

}  // namespace proxima::oracle
