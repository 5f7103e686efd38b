// Support-mapped convex shapes (Montanari 2017 §2.2, Eqs. 2.5-2.9; Gilbert & Foo for quadrics).
//
// Every shape exposes `Vec3 support(const Vec3& d, SupportHint& hint) const` in its own local
// frame: a point of the shape maximising d·x. GJK and friends are templates over this concept
// (ARCHITECTURE.md "Algorithms over a support concept"). The hint carries the polytope's last
// support vertex between calls (hill-climbing warm start) and is ignored by the other shapes.
#pragma once

#include <array>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "proxima/core/hash.hpp"
#include "proxima/core/status.hpp"
#include "proxima/core/tolerances.hpp"
#include "proxima/core/types.hpp"

namespace proxima {

/// How a polytope evaluates its support mapping.
enum class SupportMode {
  Auto,        ///< hill-climbing when the polytope has >= tol::kHillClimbMinVertices vertices
  BruteForce,  ///< scan all hull vertices (Montanari Eq. 2.6, linear cost)
  HillClimb,   ///< walk the vertex adjacency from the last support vertex (Cameron 1997)
};

/// Per-query (or per-pair, across time steps) support state.
struct SupportHint {
  int vertex = -1;  ///< last support vertex; -1 = none yet (hill-climbing starts from a seed)
  SupportMode mode = SupportMode::Auto;
};

/// A brute-force support search's certificate for the next search of the same body along a nearby
/// direction (kept per pair and body across DEM steps by GJK-TD's lean warm face): every direction d
/// with |d - centre| < radius has its brute-force maximum among `candidate` (vertex indices in
/// ascending order), so only those are evaluated, with the scan's own arithmetic and tie rule (same
/// vertex). radius 0: nothing remembered. (Floats: a pair keeps two of these in the hot part of its
/// cache; the rounding of the centre is taken off the radius.)
struct SupportMemo {
  static constexpr int kMaxCandidates = 6;
  float centre[3] = {0, 0, 0};
  float radius = 0;
  std::uint8_t candidate[kMaxCandidates] = {};
  std::uint8_t count = 0;
};

struct Point {
  Vec3 p = Vec3::Zero();
  [[nodiscard]] Vec3 support(const Vec3&, SupportHint&) const { return p; }
  /// Its support function d·p is linear: zero Hessian (a sphere's core against an ellipsoid takes
  /// GJK's Newton finish, gjk.hpp).
  [[nodiscard]] Real supportHessianForm(const Vec3&, const Vec3&, const Vec3&, const Vec3&) const { return 0; }
  /// Radius of the largest ball that rolls freely inside (none: a point has no interior).
  [[nodiscard]] Real rollingRadius() const { return 0; }
};

struct Segment {
  Vec3 a = Vec3::Zero(), b = Vec3::Zero();
  [[nodiscard]] Vec3 support(const Vec3& d, SupportHint&) const { return d.dot(b) > d.dot(a) ? b : a; }
};

struct Triangle {
  Vec3 v[3];
  [[nodiscard]] Vec3 support(const Vec3& d, SupportHint&) const {
    int k = 0;
    Real best = d.dot(v[0]);
    for (int i = 1; i < 3; ++i) {
      const Real s = d.dot(v[i]);
      if (s > best) best = s, k = i;
    }
    return v[k];
  }
};

struct Tetrahedron {
  Vec3 v[4];
  [[nodiscard]] Vec3 support(const Vec3& d, SupportHint&) const {
    int k = 0;
    Real best = d.dot(v[0]);
    for (int i = 1; i < 4; ++i) {
      const Real s = d.dot(v[i]);
      if (s > best) best = s, k = i;
    }
    return v[k];
  }
};

/// Sphere of the given radius centred at the origin. For distance queries it is handled as an
/// inflated point (Box2D-style core + radius), which is exact and cheapest.
struct Sphere {
  Real radius = 1;
  [[nodiscard]] Vec3 support(const Vec3& d, SupportHint&) const {
    const Real n = d.norm();
    return n > 0 ? Vec3(d * (radius / n)) : Vec3(radius, 0, 0);
  }
};

/// Axis-aligned ellipsoid with semi-axes radii: s(d) = D² d / ||D d||, D = diag(radii).
struct Ellipsoid {
  Vec3 radii = Vec3::Ones();
  [[nodiscard]] Vec3 support(const Vec3& d, SupportHint&) const {
    const Vec3 dd = radii.cwiseProduct(d);
    const Real n = dd.norm();
    if (!(n > 0)) return Vec3(radii.x(), 0, 0);
    return radii.cwiseProduct(dd) / n;
  }
  /// x^T H y for the Hessian H of the support function h(d) = ||D d|| at a unit direction d whose
  /// support point is s: H = (D^2 - s s^T) / h, h = d·s. Smooth shapes provide it for GJK's Newton
  /// finish (gjk.hpp); H d = 0, so only the tangential block is ever used.
  [[nodiscard]] Real supportHessianForm(const Vec3& d, const Vec3& s, const Vec3& x, const Vec3& y) const {
    const Vec3 r2 = radii.cwiseProduct(radii);
    return (r2.cwiseProduct(x).dot(y) - s.dot(x) * s.dot(y)) / d.dot(s);
  }
  /// Radius of the largest ball that rolls freely inside: the smallest principal radius of
  /// curvature, c^2/a at the tips of the longest axis (a the largest, c the smallest semi-axis). By
  /// Blaschke's rolling theorem the ellipsoid is then the union of such balls, each tangent to the
  /// surface from inside: the overlap certificates of gjk.hpp (detail::newtonOverlap) rest on it.
  [[nodiscard]] Real rollingRadius() const {
    const Real lo = radii.minCoeff(), hi = radii.maxCoeff();
    return hi > 0 ? lo * (lo / hi) : 0;
  }
};

struct Box {
  Vec3 halfExtents = Vec3::Ones();
  [[nodiscard]] Vec3 support(const Vec3& d, SupportHint&) const {
    return {d.x() < 0 ? -halfExtents.x() : halfExtents.x(), d.y() < 0 ? -halfExtents.y() : halfExtents.y(),
            d.z() < 0 ? -halfExtents.z() : halfExtents.z()};
  }
};

/// Capsule along z: the segment from (0,0,-halfLength) to (0,0,halfLength) inflated by radius.
struct Capsule {
  Real radius = 1, halfLength = 1;
  [[nodiscard]] Vec3 support(const Vec3& d, SupportHint&) const {
    const Real n = d.norm();
    Vec3 s = n > 0 ? Vec3(d * (radius / n)) : Vec3(radius, 0, 0);
    s.z() += d.z() < 0 ? -halfLength : halfLength;
    return s;
  }
};

/// Cylinder along z, centred at the origin.
struct Cylinder {
  Real radius = 1, halfLength = 1;
  [[nodiscard]] Vec3 support(const Vec3& d, SupportHint&) const {
    const Real r = std::hypot(d.x(), d.y());
    Vec3 s(0, 0, d.z() < 0 ? -halfLength : halfLength);
    if (r > 0) s.x() = radius * d.x() / r, s.y() = radius * d.y() / r;
    return s;
  }
};

/// Cone along z with its base (radius) at z = -height/2 and its apex at z = +height/2 (the
/// bounding-box-centred convention of Bullet and FCL). Its centroid is at z = -height/4.
struct Cone {
  Real radius = 1, height = 1;
  [[nodiscard]] Vec3 support(const Vec3& d, SupportHint&) const {
    const Real h = 0.5 * height;
    const Real r = std::hypot(d.x(), d.y());
    // Compare the apex with the best base-rim point.
    const Real apex = d.z() * h;
    const Real rim = radius * r - d.z() * h;
    if (apex >= rim) return {0, 0, h};
    if (r > 0) return {radius * d.x() / r, radius * d.y() / r, -h};
    return {0, 0, -h};
  }
};

namespace detail {
/// Pseudo-angle of (x, y) in [-2, 2): the same order as atan2(y, x) over (-π, π] without the
/// transcendental call (orders facet loops and manifold polygons counter-clockwise).
inline Real pseudoAngle(Real x, Real y) {
  const Real l1 = std::abs(x) + std::abs(y);
  const Real r = l1 > 0 ? x / l1 : 1;
  return y >= 0 ? 1 - r : r - 1;
}

/// Index of the largest d·x over a padded structure-of-arrays vertex copy (n a multiple of 4), the
/// lowest on ties; -1 if the direction is NaN. (polytope.cpp: vectorised, AVX2 chosen at run time.)
int argmaxDot(const Real* xs, const Real* ys, const Real* zs, std::size_t n, Real dx, Real dy, Real dz);
}  // namespace detail

/// Immutable hull data of a convex polytope, shared between copies.
struct PolytopeData {
  std::vector<Vec3> vertices;         ///< hull vertices only (interior/duplicate points removed)
  std::vector<int> adjacencyOffsets;  ///< CSR: neighbours of i are adjacency[offsets[i]..offsets[i+1])
  std::vector<int> adjacency;
  std::vector<std::array<int, 3>> triangles;  ///< outward-oriented hull triangles (3-D hulls only)
  int dimension = 3;                          ///< affine dimension of the input: 0 point, 1 segment, 2 flat, 3 solid
  /// Structure-of-arrays copy of the vertices, padded to a multiple of 4 with vertex 0, for the
  /// vectorised brute-force support.
  std::vector<Real> xs, ys, zs;
  /// Extreme vertices along the 26 directions (s_x, s_y, s_z) ∈ {-1, 0, 1}³ \ {0} (axes, cube edges and
  /// corners), at seedIndex(s_x, s_y, s_z): the hill-climbing seed is the one nearest the query
  /// direction, at most ~27° away instead of ~55° with the six axes alone (half as many steps on a
  /// 642-vertex icosphere).
  int seeds[27] = {};
  static constexpr int seedIndex(int sx, int sy, int sz) { return 9 * (sx + 1) + 3 * (sy + 1) + (sz + 1); }
  std::size_t inputPointCount = 0;
  /// Unit outward normal of each triangle (zero for zero-area triangles), and the triangles around
  /// each vertex (CSR), for the contact manifold's face lookup from a support vertex.
  std::vector<Vec3> triangleNormals;
  std::vector<int> vertexTriangleOffsets, vertexTriangles;
  /// The merged facet of each triangle (CSR over triangles): the hull vertices on the triangle's
  /// plane (within 1e-9 x the polytope's extent) connected to it over edges, counter-clockwise
  /// about its normal. Qhull fans a polygonal facet into triangles; the contact manifold clips
  /// against the whole polygon, so it is gathered and ordered once here instead of per query.
  std::vector<int> facetLoopOffsets, facetLoops;
  /// Largest |coordinate| of the vertices and largest side of their bounding box (validation of the
  /// supported range, without a scan per query).
  Real maxAbsCoordinate = 0, extent = 0;
  /// Content hash of `vertices` (Polytope::fingerprint()), computed on first use; 0 = not yet.
  /// (Not copied: PolytopeData is built in place and shared.)
  mutable std::atomic<std::uint64_t> fingerprint{0};
};

/// Convex hull of a point cloud. Degenerate clouds (duplicates, collinear, coplanar, a single
/// point) are valid and give a lower-dimensional polytope. Built with Qhull when solid.
class Polytope {
 public:
  Polytope() = default;
  Polytope(const Polytope&) = default;
  Polytope& operator=(const Polytope&) = default;
  /// A moved-from polytope is empty (not null), like a default one.
  Polytope(Polytope&& o) noexcept : data_(std::exchange(o.data_, emptyData())) {}
  Polytope& operator=(Polytope&& o) noexcept {
    if (this != &o) data_ = std::exchange(o.data_, emptyData());
    return *this;
  }
  /// Builds the hull; fails (with a message naming the offending point) on an empty cloud or
  /// a non-finite coordinate.
  static Result<Polytope> fromPoints(std::span<const Vec3> points);

  /// A default-constructed polytope is empty (no vertices; validation rejects it; its support
  /// point is NaN) rather than null.
  [[nodiscard]] const PolytopeData& data() const { return *data_; }
  /// Hash of the hull vertices: equal for polytopes with the same vertices (in the same order), so
  /// a warm-start cache can tell whether it was filled for this geometry.
  [[nodiscard]] std::uint64_t fingerprint() const {
    std::uint64_t h = data_->fingerprint.load(std::memory_order_relaxed);
    if (h == 0) {
      h = hashWords(kHashSeed, data_->vertices.data(), data_->vertices.size() * sizeof(Vec3)) | 1;  // never 0
      data_->fingerprint.store(h, std::memory_order_relaxed);
    }
    return h;
  }
  [[nodiscard]] const std::vector<Vec3>& vertices() const { return data_->vertices; }
  /// 0 for a default-constructed (empty) polytope, which validation rejects.
  [[nodiscard]] int vertexCount() const { return static_cast<int>(data_->vertices.size()); }
  [[nodiscard]] int dimension() const { return data_->dimension; }
  [[nodiscard]] std::span<const int> neighbours(int i) const {
    return {data_->adjacency.data() + data_->adjacencyOffsets[i],
            static_cast<std::size_t>(data_->adjacencyOffsets[i + 1] - data_->adjacencyOffsets[i])};
  }

  [[nodiscard]] Vec3 support(const Vec3& d, SupportHint& hint) const {
    const auto& v = data_->vertices;
    const int n = static_cast<int>(v.size());
    if (n == 0) [[unlikely]]
      return Vec3::Constant(std::numeric_limits<Real>::quiet_NaN());  // empty polytope: no support
    const bool climb =
        hint.mode == SupportMode::HillClimb || (hint.mode == SupportMode::Auto && n >= tol::kHillClimbMinVertices);
    if (climb) {
      // Start from the last support vertex (warm start) unless the seed for d is already higher:
      // after a large turn of d (overlapping bodies, cold queries) that avoids long walks.
      // (Integer selects rather than branches here and in seedFor: the outcomes are data-dependent.)
      int start = seedFor(d);
      const int h = static_cast<unsigned>(hint.vertex) < static_cast<unsigned>(n) ? hint.vertex : start;
      start += (d.dot(v[h]) >= d.dot(v[start])) * (h - start);
      return v[hint.vertex = hillClimb(d, start)];
    }
    return v[hint.vertex = bruteForce(d)];
  }

  /// support(), remembering where the maximum can be for the next search along a nearby direction
  /// (SupportMemo): while the direction stays within the memo's radius only the remembered candidates
  /// are evaluated, and the vertex the full scan would pick is returned. Memos are made by polytopes
  /// searched by brute force (fewer than tol::kHillClimbMinVertices vertices in Auto mode); others
  /// simply call support(). (Inline: the remembered case is a handful of instructions.)
  [[nodiscard, gnu::always_inline]] Vec3 supportRemembered(const Vec3& d, SupportHint& hint, SupportMemo& memo) const {
    const Real ex = d.x() - memo.centre[0], ey = d.y() - memo.centre[1], ez = d.z() - memo.centre[2];
    const Real rad = memo.radius;
    if (ex * ex + ey * ey + ez * ez < rad * rad) [[likely]] {  // (false for radius 0, a NaN direction)
      const PolytopeData& D = *data_;
      const int n = static_cast<int>(D.vertices.size());
      // (indices clamped: a memo only holds this polytope's vertices, but a cache's bytes come from
      // checkpoints too)
      int best = memo.candidate[0] < n ? memo.candidate[0] : 0;
      if (memo.count > 1) {
        // The full scan's dot product, d_x x + d_y y + d_z z in that order (argmaxDot), and its tie
        // rule: the lowest index among equal maxima (candidates ascend, strict >).
        const Real *xs = D.xs.data(), *ys = D.ys.data(), *zs = D.zs.data();
        Real top = d.x() * xs[best] + d.y() * ys[best] + d.z() * zs[best];
        const int count = memo.count < SupportMemo::kMaxCandidates ? memo.count : SupportMemo::kMaxCandidates;
        for (int c = 1; c < count; ++c) {
          const int i = memo.candidate[c] < n ? memo.candidate[c] : 0;
          const Real s = d.x() * xs[i] + d.y() * ys[i] + d.z() * zs[i];
          const bool better = s > top;
          top = better ? s : top;
          best = better ? i : best;
        }
      }
      return D.vertices[static_cast<std::size_t>(hint.vertex = best)];
    }
    return supportSearched(d, hint, memo);
  }
  /// supportRemembered's search (the direction left the memo's radius): support(), with a new memo
  /// when the scan is brute force.
  [[nodiscard]] Vec3 supportSearched(const Vec3& d, SupportHint& hint, SupportMemo& memo) const;

  /// The seed (of the 26 in PolytopeData::seeds) closest to direction d.
  [[nodiscard]] int seedFor(const Vec3& d) const {
    const Vec3 a = d.cwiseAbs();
    // The best of the 26 directions uses the largest component (score m = max a_i), the two largest
    // ((m + mid)/√2) or all three ((a_x + a_y + a_z)/√3): include the components at or above a
    // threshold. Written without branches (the pattern changes unpredictably from call to call); on
    // ties any of the candidates is a valid start.
    const Real mx = std::max(a.x(), std::max(a.y(), a.z()));
    const Real mid = std::max(std::min(a.x(), a.y()), std::min(std::max(a.x(), a.y()), a.z()));  // median
    const Real s1 = mx, s2 = (mx + mid) * 0.70710678118654752, s3 = (a.x() + a.y() + a.z()) * 0.57735026918962576;
    // thr = all three ? 0 : (two ? mid : mx), selected by index.
    const int two = s2 >= s1, three = (s3 >= s1) & (s3 >= s2);
    const Real thrs[3] = {mx, mid, 0.0};
    const Real thr = thrs[two + three * (2 - two)];
    const int sx = (a.x() >= thr) * (1 - 2 * (d.x() < 0)), sy = (a.y() >= thr) * (1 - 2 * (d.y() < 0)),
              sz = (a.z() >= thr) * (1 - 2 * (d.z() < 0));
    return data_->seeds[PolytopeData::seedIndex(sx, sy, sz)];
  }

  /// Index of a vertex maximising d·x by scanning all hull vertices (Montanari Eq. 2.6), four
  /// at a time over the structure-of-arrays copy.
  [[nodiscard]] int bruteForce(const Vec3& d) const {
    const PolytopeData& D = *data_;
    const int k = detail::argmaxDot(D.xs.data(), D.ys.data(), D.zs.data(), D.xs.size(), d.x(), d.y(), d.z());
    return k < 0 ? 0 : k;  // -1: NaN direction, any vertex will do (the padding repeats vertex 0)
  }

  /// bruteForce(d), and the memo for the directions around d whose maximum lies among the vertices
  /// within a window of it (radius 0 when d is not finite or the window holds too many).
  [[nodiscard]] int bruteForceRemembering(const Vec3& d, SupportMemo& memo) const;

  /// Steepest-ascent hill-climbing: move to the neighbour that improves d·x most, while one strictly
  /// improves it. On the edge graph of a convex polytope a local maximum is global, and strict
  /// improvement guarantees termination.
  [[nodiscard]] int hillClimb(const Vec3& d, int start) const;

 private:
  static const std::shared_ptr<const PolytopeData>& emptyData() {
    static const std::shared_ptr<const PolytopeData> kEmpty = [] {
      auto d = std::make_shared<PolytopeData>();
      d->dimension = -1;
      return d;
    }();
    return kEmpty;
  }
  std::shared_ptr<const PolytopeData> data_ = emptyData();
};

/// A core shape inflated by a radius (Minkowski sum with a ball): sphero-polytopes, rounded boxes.
template <class Core>
struct Inflated {
  Core core;
  Real radius = 0;
  [[nodiscard]] Vec3 support(const Vec3& d, SupportHint& h) const {
    const Real n = d.norm();
    Vec3 s = core.support(d, h);
    if (n > 0) s += d * (radius / n);
    return s;
  }
};

/// A shape placed by a pose: support in world frame.
template <class S>
struct Transformed {
  S shape;
  Transform pose;
  [[nodiscard]] Vec3 support(const Vec3& d, SupportHint& h) const {
    return pose.apply(shape.support(pose.rotateInverse(d), h));
  }
};

}  // namespace proxima
