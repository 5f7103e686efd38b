// Revised common-plane methods of Descantes, Tricoire & Richard (2019) for convex polyhedra:
// revised Nezami (Alg. 2) and revised Cundall (Alg. 1), with the errata of
// shared/seeds/digests/001-descantes.md §1.2 and §1.4 fixed. Both maximise the common-plane gap
//   gap(n) = min_{b∈B} b·n − max_{a∈A} a·n   (gap < 0: overlap; −max gap = penetration depth),
// evaluated by brute force over the vertices (the paper's O(v_A + v_B) per candidate).
#include "proxima/narrowphase/common_plane.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <set>
#include <string>
#include <utility>

#include "proxima/core/tolerances.hpp"

namespace proxima {
namespace {

// Tolerances of the common-plane methods live in core/tolerances.hpp.
constexpr Real kCoplanarNormal = tol::kCommonPlaneCoplanarNormal;
constexpr Real kSliverArea = tol::kCommonPlaneSliverArea;
constexpr Real kParallelSin = tol::kCommonPlaneParallelSin;

constexpr Real kDegree = 3.14159265358979323846 / 180;

/// a·b − c·d to about one rounding (Kahan's fma trick): keeps cross products of nearly parallel
/// edges accurate, so that the edge-edge candidate normal is the exact facet normal to ~1 ulp.
inline Real diffOfProducts(Real a, Real b, Real c, Real d) {
  const Real w = d * c;
  return std::fma(a, b, -w) - std::fma(d, c, -w);
}
inline Vec3 accurateCross(const Vec3& u, const Vec3& v) {
  return {diffOfProducts(u.y(), v.z(), u.z(), v.y()), diffOfProducts(u.z(), v.x(), u.x(), v.z()),
          diffOfProducts(u.x(), v.y(), u.y(), v.x())};
}

/// gap(n) with the closest (most buried) vertices: iA maximises a·n, iB minimises b·n.
struct Gap {
  Real gap = -std::numeric_limits<Real>::infinity();
  int iA = -1, iB = -1;
};

Gap evaluateGap(const PolyhedronFeatures& a, const PolyhedronFeatures& b, const Vec3& n) {
  Gap g;
  Real ha = -std::numeric_limits<Real>::infinity(), lb = std::numeric_limits<Real>::infinity();
  for (int i = 0; i < static_cast<int>(a.vertices.size()); ++i) {
    const Real s = a.vertices[i].dot(n);
    if (s > ha) ha = s, g.iA = i;
  }
  for (int i = 0; i < static_cast<int>(b.vertices.size()); ++i) {
    const Real s = b.vertices[i].dot(n);
    if (s < lb) lb = s, g.iB = i;
  }
  // A normal along which no vertex gives a number (not finite, e.g. made from an edge that rounding
  // collapsed) is never better than any other: without this, -inf and +inf made its gap +inf, and
  // the climb went on from vertex -1 (a crash with bodies ~1e16 times their size apart).
  g.gap = g.iA >= 0 && g.iB >= 0 ? lb - ha : -std::numeric_limits<Real>::infinity();
  return g;
}

/// Unit vectors p, q completing n to a right-handed orthonormal frame.
std::pair<Vec3, Vec3> orthonormalFrame(const Vec3& n) {
  const Vec3 m = n.cwiseAbs();
  const Vec3 axis = m.x() <= m.y() && m.x() <= m.z() ? Vec3::UnitX() : (m.y() <= m.z() ? Vec3::UnitY() : Vec3::UnitZ());
  const Vec3 p = axis.cross(n).normalized();
  return {p, n.cross(p)};
}

/// Start direction of both algorithms: the centroid line C1 -> C2 (the normal of their
/// perpendicular bisector, Alg. 1 and 2 "Require"); +x when the centroids coincide.
/// (Directions between points are normalised by Eigen's stableNorm: for bodies ~1e154 or more apart
/// the plain norm overflows, and d / inf gave a zero start normal and a wrong "overlapping, depth 0".)
Vec3 centroidDirection(const PolyhedronFeatures& a, const PolyhedronFeatures& b) {
  const Vec3 d = b.centroid - a.centroid;
  const Real len = d.stableNorm();
  return len > 0 && std::isfinite(len) ? Vec3(d / len) : Vec3::UnitX();
}

// --- Witness points on the common plane -------------------------------------------------------
// The methods give the plane (n, gap). The witnesses are a point pair x on A's supporting feature
// along n and y on B's supporting feature along -n with x - y = -gap · n: a point where the two
// features' projections on the plane overlap (they do at the optimal plane, whether the bodies
// overlap or are apart). The most buried vertices alone are not that pair: in a face-face contact
// they are two corners, and their midpoint can lie outside both bodies.

using P2 = Eigen::Vector2d;

Real cross2(const P2& o, const P2& a, const P2& b) { return (a - o).x() * (b - o).y() - (a - o).y() * (b - o).x(); }

// Convex hull of a few 2-D points, counter-clockwise (Andrew's monotone chain); collinear points
// are dropped, so the result is 1 point, 2 (a segment) or a polygon.
std::vector<P2> hull2(std::vector<P2> p) {
  std::sort(p.begin(), p.end(), [](const P2& u, const P2& v) { return u.x() < v.x() || (u.x() == v.x() && u.y() < v.y()); });
  p.erase(std::unique(p.begin(), p.end()), p.end());
  if (p.size() < 3) return p;
  std::vector<P2> h(2 * p.size());
  std::size_t k = 0;
  for (std::size_t i = 0; i < p.size(); ++i) {
    while (k >= 2 && cross2(h[k - 2], h[k - 1], p[i]) <= 0) --k;
    h[k++] = p[i];
  }
  for (std::size_t i = p.size() - 1, t = k + 1; i-- > 0;) {
    while (k >= t && cross2(h[k - 2], h[k - 1], p[i]) <= 0) --k;
    h[k++] = p[i];
  }
  h.resize(k - 1);
  return h;
}

// Part of the segment [s0, s1] inside the convex CCW polygon q (Cyrus-Beck); false if none.
bool clipSegment(const std::vector<P2>& q, P2& s0, P2& s1) {
  Real t0 = 0, t1 = 1;
  const P2 d = s1 - s0;
  for (std::size_t e = 0; e < q.size(); ++e) {
    const P2& u = q[e];
    const P2& v = q[(e + 1) % q.size()];
    const P2 inward(-(v - u).y(), (v - u).x());
    const Real num = inward.dot(s0 - u), den = inward.dot(d);  // inside: num + t den >= 0
    if (den == 0) {
      if (num < 0) return false;
    } else if (den > 0) {
      t0 = std::max(t0, -num / den);
    } else {
      t1 = std::min(t1, -num / den);
    }
  }
  if (t0 > t1) return false;
  const P2 a = s0 + t0 * d, b = s0 + t1 * d;
  s0 = a, s1 = b;
  return true;
}

// A point of the overlap of two convex 2-D sets given by their hulls (point, segment or CCW
// polygon); false when they do not overlap (rounding, or an inexact Cundall normal).
bool overlapPoint(const std::vector<P2>& p, const std::vector<P2>& q, P2& out) {
  if (p.size() == 1 || q.size() == 1) {
    out = p.size() == 1 ? p[0] : q[0];
    return true;
  }
  if (p.size() == 2 && q.size() == 2) {  // two segments: their crossing (or the middle of a collinear overlap)
    const P2 d1 = p[1] - p[0], d2 = q[1] - q[0], w = q[0] - p[0];
    const Real den = d1.x() * d2.y() - d1.y() * d2.x();
    if (std::abs(den) > 1e-12 * d1.norm() * d2.norm()) {
      const Real s = (w.x() * d2.y() - w.y() * d2.x()) / den, t = (w.x() * d1.y() - w.y() * d1.x()) / den;
      if (s < -1e-9 || s > 1 + 1e-9 || t < -1e-9 || t > 1 + 1e-9) return false;
      out = p[0] + std::clamp<Real>(s, 0, 1) * d1;
      return true;
    }
    const Real len2 = d1.squaredNorm();  // parallel: overlap of the parameter ranges along p
    Real lo = std::max<Real>(0, std::min(w.dot(d1), (q[1] - p[0]).dot(d1)) / len2);
    Real hi = std::min<Real>(1, std::max(w.dot(d1), (q[1] - p[0]).dot(d1)) / len2);
    if (lo > hi) return false;
    out = p[0] + (0.5 * (lo + hi)) * d1;
    return true;
  }
  if (p.size() == 2 || q.size() == 2) {
    const std::vector<P2>& seg = p.size() == 2 ? p : q;
    const std::vector<P2>& poly = p.size() == 2 ? q : p;
    P2 s0 = seg[0], s1 = seg[1];
    if (!clipSegment(poly, s0, s1)) return false;
    out = 0.5 * (s0 + s1);
    return true;
  }
  // Two polygons: Sutherland-Hodgman, then the vertex average of the intersection.
  std::vector<P2> cur = p;
  for (std::size_t e = 0; e < q.size() && !cur.empty(); ++e) {
    const P2& u = q[e];
    const P2& v = q[(e + 1) % q.size()];
    std::vector<P2> next;
    for (std::size_t i = 0; i < cur.size(); ++i) {
      const P2& x = cur[i];
      const P2& y = cur[(i + 1) % cur.size()];
      const Real dx = cross2(u, v, x), dy = cross2(u, v, y);
      if (dx >= 0) next.push_back(x);
      if ((dx >= 0) != (dy >= 0)) next.push_back(x + (y - x) * (dx / (dx - dy)));
    }
    cur = std::move(next);
  }
  if (cur.empty()) return false;
  P2 c = P2::Zero();
  for (const P2& x : cur) c += x;
  out = c / static_cast<Real>(cur.size());
  return true;
}

// Witnesses of the plane (n, gap) from the supporting features (vertices within rounding of each
// support plane); false when the projections do not overlap.
bool planeWitnesses(const PolyhedronFeatures& a, const PolyhedronFeatures& b, const Vec3& n, Vec3& wa, Vec3& wb) {
  Real hA = -std::numeric_limits<Real>::infinity(), lB = std::numeric_limits<Real>::infinity();
  Real size = 0, far = 0;
  for (const Vec3& v : a.vertices) hA = std::max(hA, v.dot(n)), size = std::max(size, (v - a.centroid).norm()), far = std::max(far, v.norm());
  for (const Vec3& v : b.vertices) lB = std::min(lB, v.dot(n)), size = std::max(size, (v - b.centroid).norm()), far = std::max(far, v.norm());
  // Vertices of one face differ along n by rounding only: relative to the bodies' size, plus the
  // rounding of world coordinates far from the origin.
  const Real tol = 1e-9 * size + 64 * std::numeric_limits<Real>::epsilon() * far;
  const auto [e1, e2] = orthonormalFrame(n);
  const Vec3 o = a.centroid;  // 2-D coordinates about a nearby point (no cancellation far out)
  auto to2 = [&](const Vec3& v) { return P2((v - o).dot(e1), (v - o).dot(e2)); };
  std::vector<P2> pa, pb;
  for (const Vec3& v : a.vertices)
    if (v.dot(n) >= hA - tol) pa.push_back(to2(v));
  for (const Vec3& v : b.vertices)
    if (v.dot(n) <= lB + tol) pb.push_back(to2(v));
  P2 x;
  if (!overlapPoint(hull2(pa), hull2(pb), x)) return false;
  const Vec3 inPlane = o + x.x() * e1 + x.y() * e2;
  const Real base = o.dot(n);
  wa = inPlane + (hA - base) * n;
  wb = inPlane + (lB - base) * n;
  return true;
}

/// Fills the ContactResult from the best normal: witnesses where the supporting features of both
/// bodies along n face each other (planeWitnesses), else the most buried vertices.
ContactResult makeResult(const PolyhedronFeatures& a, const PolyhedronFeatures& b, const Vec3& n, int evaluations,
                         int iterations, bool capped, PenetrationMethod method) {
  const Gap g = evaluateGap(a, b, n);
  ContactResult r;
  r.method = method;
  r.normal = n;
  r.distance = g.gap;
  r.depth = std::max<Real>(0, -g.gap);
  if (!planeWitnesses(a, b, n, r.witnessA, r.witnessB)) {
    r.witnessA = a.vertices[g.iA];
    r.witnessB = b.vertices[g.iB];
  }
  r.contactPoint = 0.5 * (r.witnessA + r.witnessB);
  r.iterations = evaluations;
  r.expansions = iterations;
  if (g.gap <= 0) {  // touching (gap 0) is a contact of depth 0, as for GJK-TD
    r.status = Status::Overlapping;
    r.contactCount = 1;
    r.contacts[0] = {r.contactPoint, r.depth};
  } else {
    r.status = Status::Separated;
    r.lowerBound = g.gap;  // a separating-plane gap never exceeds the distance (weak duality)
  }
  if (capped) r.status = Status::MaxIterations;
  return r;
}

ContactResult invalid(std::string message, PenetrationMethod method) {
  ContactResult r;
  r.status = Status::InvalidInput;
  r.message = std::move(message);
  r.method = method;
  return r;
}

/// Faces (coplanar triangles merged), hull edges and incidences from outward triangles.
PolyhedronFeatures buildFeatures(const std::vector<Vec3>& local, const std::vector<std::array<int, 3>>& tris,
                                 const Transform& pose, const Vec3& localCentroid) {
  PolyhedronFeatures f;
  const int nv = static_cast<int>(local.size()), nt = static_cast<int>(tris.size());
  for (const Vec3& v : local) f.vertices.push_back(pose.apply(v));
  f.centroid = pose.apply(localCentroid);

  // Triangle normals in the local frame (exact coplanarity of the input survives there).
  std::vector<Vec3> tn(nt, Vec3::Zero());
  std::vector<Real> area2(nt, 0);
  for (int t = 0; t < nt; ++t) {
    const Vec3 &p0 = local[tris[t][0]], &p1 = local[tris[t][1]], &p2 = local[tris[t][2]];
    const Vec3 c = (p1 - p0).cross(p2 - p0);
    const Real longest = std::max({(p1 - p0).squaredNorm(), (p2 - p1).squaredNorm(), (p0 - p2).squaredNorm()});
    if (c.norm() > kSliverArea * longest) tn[t] = c.normalized(), area2[t] = c.norm();
  }
  // Union-find over triangles: merge across shared edges with equal normals.
  std::vector<int> parent(nt);
  std::iota(parent.begin(), parent.end(), 0);
  auto root = [&](int t) {
    while (parent[t] != t) t = parent[t] = parent[parent[t]];
    return t;
  };
  std::map<std::pair<int, int>, std::vector<int>> edgeTris;
  for (int t = 0; t < nt; ++t)
    for (int k = 0; k < 3; ++k) edgeTris[std::minmax(tris[t][k], tris[t][(k + 1) % 3])].push_back(t);
  for (const auto& [e, ts] : edgeTris)
    if (ts.size() == 2 && area2[ts[0]] > 0 && area2[ts[1]] > 0 && (tn[ts[0]] - tn[ts[1]]).norm() < kCoplanarNormal)
      parent[root(ts[0])] = root(ts[1]);

  // Faces: one per group of non-sliver triangles. Normal from the group's largest triangle, in
  // long double from the world vertices (the candidate normal should be the facet's to ~1 ulp).
  std::map<int, int> faceOf;
  std::vector<std::vector<int>> faceTris;
  for (int t = 0; t < nt; ++t) {
    if (area2[t] == 0) continue;
    auto [it, fresh] = faceOf.try_emplace(root(t), static_cast<int>(faceTris.size()));
    if (fresh) faceTris.emplace_back();
    faceTris[it->second].push_back(t);
  }
  using LVec = Eigen::Matrix<long double, 3, 1>;
  auto toL = [](const Vec3& v) { return LVec(v.x(), v.y(), v.z()); };
  std::set<std::pair<int, int>> edgeSet;
  for (const auto& ft : faceTris) {
    const int big = *std::max_element(ft.begin(), ft.end(), [&](int s, int t) { return area2[s] < area2[t]; });
    const LVec p0 = toL(f.vertices[tris[big][0]]);
    const LVec c = (toL(f.vertices[tris[big][1]]) - p0).cross(toL(f.vertices[tris[big][2]]) - p0);
    const Vec3 n = (c / c.norm()).cast<Real>();
    f.faceNormals.push_back(n);
    // Boundary edges of the face: sides used by exactly one of its triangles (diagonals twice).
    std::map<std::pair<int, int>, int> uses;
    std::set<int> vs;
    for (int t : ft)
      for (int k = 0; k < 3; ++k) ++uses[std::minmax(tris[t][k], tris[t][(k + 1) % 3])], vs.insert(tris[t][k]);
    for (const auto& [e, count] : uses)
      if (count == 1) edgeSet.insert(e);
    // Face vertices counter-clockwise about the outward normal.
    std::vector<int> fv(vs.begin(), vs.end());
    Vec3 mid = Vec3::Zero();
    for (int v : fv) mid += f.vertices[v];
    mid /= static_cast<Real>(fv.size());
    const auto [u, w] = orthonormalFrame(n);
    auto angle = [&](int v) { return std::atan2((f.vertices[v] - mid).dot(w), (f.vertices[v] - mid).dot(u)); };
    std::sort(fv.begin(), fv.end(), [&](int s, int t) { return angle(s) < angle(t); });
    f.faceVertices.push_back(std::move(fv));
  }
  for (const auto& e : edgeSet) f.edges.push_back({e.first, e.second});
  f.vertexFaces.assign(nv, {});
  f.vertexEdges.assign(nv, {});
  for (int i = 0; i < static_cast<int>(f.faceVertices.size()); ++i)
    for (int v : f.faceVertices[i]) f.vertexFaces[v].push_back(i);
  for (int i = 0; i < static_cast<int>(f.edges.size()); ++i)
    f.vertexEdges[f.edges[i][0]].push_back(i), f.vertexEdges[f.edges[i][1]].push_back(i);
  return f;
}

}  // namespace

Result<PolyhedronFeatures> polyhedronFeatures(const Shape& s, const Transform& pose) {
  using R = Result<PolyhedronFeatures>;
  const std::string need = "nezami/cundall need polyhedral shapes (polytope, box, tetrahedron); got ";
  if (auto m = s.validate()) return R::failure(*m);
  if (s.inflate() > 0) return R::failure(need + "an inflated " + std::string(toString(s.type())));
  std::vector<Vec3> v;
  std::vector<std::array<int, 3>> tris;
  const ShapeGeometry& g = s.geometry();
  if (const auto* p = std::get_if<Polytope>(&g)) {
    if (p->dimension() != 3)
      return R::failure(need + "a flat polytope (dimension " + std::to_string(p->dimension()) + ")");
    v = p->vertices();
    tris = p->data().triangles;
  } else if (const auto* b = std::get_if<Box>(&g)) {
    // Corner i has +h_k in coordinate k when bit k of i is set; two outward triangles per face.
    const Vec3 h = b->halfExtents;
    for (int i = 0; i < 8; ++i) v.emplace_back(i & 1 ? h.x() : -h.x(), i & 2 ? h.y() : -h.y(), i & 4 ? h.z() : -h.z());
    const int quads[6][4] = {{0, 4, 6, 2}, {1, 3, 7, 5}, {0, 1, 5, 4}, {2, 6, 7, 3}, {0, 2, 3, 1}, {4, 5, 7, 6}};
    for (const auto& q : quads) tris.push_back({q[0], q[1], q[2]}), tris.push_back({q[0], q[2], q[3]});
  } else if (const auto* t = std::get_if<Tetrahedron>(&g)) {
    v.assign(t->v, t->v + 4);
    // Outward for positive volume det[v1−v0, v2−v0, v3−v0]; flipped otherwise.
    tris = {{{1, 2, 3}}, {{0, 3, 2}}, {{0, 1, 3}}, {{0, 2, 1}}};
    if ((v[1] - v[0]).dot((v[2] - v[0]).cross(v[3] - v[0])) < 0)
      for (auto& tri : tris) std::swap(tri[1], tri[2]);
  } else {
    return R::failure(need + std::string(toString(s.type())));
  }
  auto mass = computeMassProperties(s);
  if (!mass.ok()) return R::failure(need + "a shape without volume (" + mass.message() + ")");
  return buildFeatures(v, tris, pose, mass.value().centroid);
}

namespace {

/// Vertices whose support value is within tol of the extreme one (ties after roundoff); only the
/// extreme one when tol < 0.
void tiedVertices(const std::vector<Vec3>& v, const Vec3& n, int extreme, Real sign, Real tol, std::vector<int>& out) {
  out.assign(1, extreme);
  if (tol < 0) return;
  const Real ref = sign * v[extreme].dot(n);
  for (int i = 0; i < static_cast<int>(v.size()); ++i)
    if (i != extreme && sign * v[i].dot(n) >= ref - tol) out.push_back(i);
}

/// Union of the incidence lists of the given vertices, without duplicates.
void gather(const std::vector<std::vector<int>>& incidence, const std::vector<int>& verts, std::vector<int>& out) {
  out.clear();
  for (int v : verts)
    for (int x : incidence[v])
      if (std::find(out.begin(), out.end(), x) == out.end()) out.push_back(x);
}

/// Largest |coordinate| of both bodies: the roundoff scale of the support values.
Real coordinateScale(const PolyhedronFeatures& a, const PolyhedronFeatures& b) {
  Real s = 0;
  for (const auto* f : {&a, &b})
    for (const Vec3& v : f->vertices) s = std::max(s, v.cwiseAbs().maxCoeff());
  return s;
}

struct Climb {
  Vec3 normal = Vec3::Zero();
  Real gap = -std::numeric_limits<Real>::infinity();
  int evaluations = 0, iterations = 0;
  bool capped = false;
};

// One revised-Nezami climb from the start normal n0 (Descantes et al. 2019 Alg. 2).
Climb nezamiClimb(const PolyhedronFeatures& a, const PolyhedronFeatures& b, const Vec3& n0,
                  const CommonPlaneOptions& opt, Real tieTol) {
  Climb c;
  c.normal = n0;
  // Lines 1-3: closest vertices and gap along the start plane.
  Gap best = evaluateGap(a, b, n0);
  c.evaluations = 1;
  bool improved = false;
  // Erratum (digest §1.4): keep n_best/gap_best apart from the candidates (line 8 would overwrite
  // n12 with V1V2 even when nothing improves), and try both signs of the unoriented planes.
  auto tryNormal = [&](const Vec3& n) {
    ++c.evaluations;
    const Gap g = evaluateGap(a, b, n);
    if (g.gap > best.gap) best = g, c.normal = n, improved = true;
  };
  auto tryBothSigns = [&](const Vec3& n) { tryNormal(n), tryNormal(-n); };
  std::vector<int> t1, t2, f1, f2, e1s, e2s;
  // Line 5: iterate while a candidate improves the gap (then the closest pair stops changing).
  for (;; ++c.iterations) {
    if (c.iterations == opt.maxIterations) {
      c.capped = true;
      break;
    }
    improved = false;
    // Candidates come from the closest vertices and normal at the start of the pass (lines 6-21).
    // With allTiedVertices, from every vertex tied for closest: after a face candidate wins, all
    // the vertices of that face are closest, and each leads to different neighbouring facets.
    const Vec3 nRef = c.normal;
    tiedVertices(a.vertices, nRef, best.iA, +1, opt.allTiedVertices ? tieTol : -1, t1);
    tiedVertices(b.vertices, nRef, best.iB, -1, opt.allTiedVertices ? tieTol : -1, t2);
    // Line 8: bisector planes of V1V2, both signs (overlap makes V1V2 point against n).
    // V1 = V2 (touching vertices) gives no direction and is skipped.
    const Vec3 d0 = b.vertices[t2[0]] - a.vertices[t1[0]];
    const Vec3 pb = d0.norm() > 0 ? Vec3(d0.stableNormalized()) : nRef;
    for (int v1 : t1)
      for (int v2 : t2) {
        const Vec3 d = b.vertices[v2] - a.vertices[v1];
        if (d.norm() > 0) tryBothSigns(d.stableNormalized());
      }
    // Lines 9-10, 22: faces containing V1 (outward normals of A) and V2 (B's normals negated).
    gather(a.vertexFaces, t1, f1), gather(b.vertexFaces, t2, f2);
    for (int fi : f1) tryNormal(a.faceNormals[fi]);
    for (int fi : f2) tryNormal(-b.faceNormals[fi]);
    // Lines 11-15: planes P12 parallel to E1 and E2 (non-parallel pairs).
    gather(a.vertexEdges, t1, e1s), gather(b.vertexEdges, t2, e2s);
    for (int e1 : e1s) {
      const Vec3 u = a.vertices[a.edges[e1][1]] - a.vertices[a.edges[e1][0]];
      for (int e2 : e2s) {
        const Vec3 w = b.vertices[b.edges[e2][1]] - b.vertices[b.edges[e2][0]];
        const Vec3 x = accurateCross(u, w);
        const Real len = x.norm();
        if (len > kParallelSin * u.norm() * w.norm()) tryBothSigns(x / len);
      }
    }
    // Lines 16-21: planes P1 (P2) through an edge E1 (E2) and E × (E × n): normal n minus its
    // component along the edge, for the best normal so far and for the V1V2 direction of line 8.
    auto edgePlanes = [&](const PolyhedronFeatures& f, const std::vector<int>& es) {
      for (int e : es) {
        const Vec3 u = (f.vertices[f.edges[e][1]] - f.vertices[f.edges[e][0]]).normalized();
        for (const Vec3& ref : {nRef, pb}) {
          const Vec3 p = ref - ref.dot(u) * u;
          const Real len = p.norm();
          if (len > kParallelSin) tryBothSigns(p / len);
        }
      }
    };
    edgePlanes(a, e1s), edgePlanes(b, e2s);
    if (!improved) break;
  }
  c.gap = best.gap;
  return c;
}

// One revised-Cundall climb from the start normal (Descantes et al. 2019 Alg. 1 lines 4-28).
Climb cundallClimb(const PolyhedronFeatures& a, const PolyhedronFeatures& b, const Vec3& n0,
                   const CommonPlaneOptions& opt) {
  // Line 2: tilt tangents from tan 5° down to tan(1e-7°) (L356: 1e-7·π/180 rad).
  static const Real kMax = std::tan(5 * kDegree), kMin = std::tan(1e-7 * kDegree);
  Climb c;
  Vec3 n = n0;
  Gap cur = evaluateGap(a, b, n);
  c.evaluations = 1;
  // Line 4: passes while the closest vertices change.
  for (;; ++c.iterations) {
    if (c.iterations == opt.maxIterations) {
      c.capped = true;
      break;
    }
    const std::pair<int, int> before{cur.iA, cur.iB};
    // Lines 7-8: frame (n, p1, q1) and its 45° rotation about n; the eight tilts n ± k p1, n ± k q1,
    // n ± k p2, n ± k q2 are tried together at each scale k (digest §1.2).
    const auto [p1, q1] = orthonormalFrame(n);
    const Vec3 p2 = (p1 + q1) * std::sqrt(0.5), q2 = (q1 - p1) * std::sqrt(0.5);
    // Lines 9-26: keep the best improving tilt at this k, else halve k. Improving steps keep k, so
    // crawling along a ridge at small k can take very many steps: maxEvaluations bounds it.
    for (Real k = kMax; k >= kMin && !c.capped;) {
      Gap trial;
      Vec3 trialN = n;
      for (const Vec3& dir : {p1, q1, p2, q2})
        for (const Real sk : {k, -k}) {
          const Vec3 m = (n + sk * dir).normalized();  // erratum: |n ± k p| = sqrt(1 + k²), not 1 + k²
          const Gap g = evaluateGap(a, b, m);
          if (g.gap > trial.gap) trial = g, trialN = m;
        }
      c.evaluations += 8;
      if (trial.gap > cur.gap)
        cur = trial, n = trialN;
      else
        k *= 0.5;
      if (c.evaluations >= opt.maxEvaluations) c.capped = true;
    }
    if (c.capped || std::pair{cur.iA, cur.iB} == before) break;
  }
  c.normal = n, c.gap = cur.gap;
  return c;
}

/// Runs a climb from each start (centroid bisector n12, then the orthogonal p12, q12; L68) and
/// keeps the best: the erratum of digest §1.2 (a best gap per start, not one shared gap_max).
template <class ClimbFn>
ContactResult bestOfStarts(const PolyhedronFeatures& a, const PolyhedronFeatures& b, int starts, PenetrationMethod m,
                           ClimbFn climb) {
  const Vec3 n12 = centroidDirection(a, b);
  const auto [p12, q12] = orthonormalFrame(n12);
  const Vec3 startNormals[3] = {n12, p12, q12};
  Climb best;
  int evaluations = 0, iterations = 0;
  bool capped = false;
  for (int s = 0; s < std::clamp(starts, 1, 3); ++s) {
    const Climb c = climb(startNormals[s]);
    evaluations += c.evaluations, iterations += c.iterations, capped = capped || c.capped;
    if (c.gap > best.gap) best = c;
  }
  return makeResult(a, b, best.normal, evaluations, iterations, capped, m);
}

}  // namespace

ContactResult revisedNezami(const PolyhedronFeatures& a, const PolyhedronFeatures& b) {
  return revisedNezami(a, b, CommonPlaneOptions{});
}

// Revised Nezami, Descantes et al. 2019 Alg. 2. At convergence the closest pair is a support pair
// of the best normal, and every facet normal of A−B incident to it (face of A, −face of B, E1×E2)
// has been evaluated exactly, so a converged answer is an exact facet normal, not an approximation.
// It is a local search, though: the best facet near the start need not be the global one.
ContactResult revisedNezami(const PolyhedronFeatures& a, const PolyhedronFeatures& b, const CommonPlaneOptions& opt) {
  if (a.vertices.empty() || b.vertices.empty())
    return invalid("nezami: empty polyhedron features", PenetrationMethod::Nezami);
  // Ties: support values within ~1e-12 of the coordinate scale (dot-product roundoff is ~1e-16).
  const Real tieTol = 1e-12 * coordinateScale(a, b);
  return bestOfStarts(a, b, opt.starts > 0 ? opt.starts : 1, PenetrationMethod::Nezami,
                      [&](const Vec3& n0) { return nezamiClimb(a, b, n0, opt, tieTol); });
}

ContactResult revisedCundall(const PolyhedronFeatures& a, const PolyhedronFeatures& b) {
  return revisedCundall(a, b, CommonPlaneOptions{});
}

// Revised Cundall, Descantes et al. 2019 Alg. 1, with the digest's errata (§1.2): tilted normals
// renormalised, eight trial tilts per scale, and a best gap per start, the best start winning.
ContactResult revisedCundall(const PolyhedronFeatures& a, const PolyhedronFeatures& b, const CommonPlaneOptions& opt) {
  if (a.vertices.empty() || b.vertices.empty())
    return invalid("cundall: empty polyhedron features", PenetrationMethod::Cundall);
  return bestOfStarts(a, b, opt.starts > 0 ? opt.starts : 3, PenetrationMethod::Cundall,
                      [&](const Vec3& n0) { return cundallClimb(a, b, n0, opt); });
}

}  // namespace proxima
