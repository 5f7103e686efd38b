// Private: GJK-TD, the expanding-polytope penetration query of Descantes, Tricoire & Richard (2019)
// §3.2, Algorithm 3, on two support-mapped cores (no radii), in the local frame of body A.
//
// Departures from the printed algorithm, each for robustness (digest notes (a)-(h)):
//  - the polytope stays convex: a new support point E replaces every face it sees (decided by the
//    exact orient3d predicate), not only the closest one. When E sees only the closest face this is
//    the paper's 3-face "tent"; otherwise the paper's step could leave a non-convex polytope whose
//    face planes no longer bound the depth from below (note (g)).
//  - a face is accepted when E is not strictly beyond it (exactly) or beyond it by at most
//    tol::kEpaRelative x scale (note (c)); the closest face's plane distance is then a certified
//    lower bound and the support value along its normal an upper bound on the depth.
//  - barycentrics from area ratios in the face plane (note (d)), not D = det[OS1 OS2 OS3], which
//    vanishes for touching bodies.
//  - GJK simplices of 1-3 points are blown up to a tetrahedron (note (e)); flat CSOs (both bodies
//    flat and coplanar, or degenerate) report depth 0.
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>

#include "box_box.hpp"
#include "cores.hpp"
#include "face_geometry.hpp"
#include "lean_face.hpp"
#include "proxima/core/predicates.hpp"
#include "proxima/narrowphase/gjk.hpp"
#include "proxima/narrowphase/penetration.hpp"

namespace proxima::detail {

// The small helpers below are forced inline: gjkTd's instantiations are large enough that GCC's
// growth limits left them (and Eigen's == and allFinite, std::min / std::max of a list) as calls,
// which pass every Vec3 through memory and stall on the store forward.
/// a == b component by component (Eigen's ==: false when either has a NaN).
[[gnu::always_inline]] inline bool sameVec(const Vec3& a, const Vec3& b) {
  return (a.x() == b.x()) & (a.y() == b.y()) & (a.z() == b.z());
}
/// Every component finite (Eigen's allFinite).
[[gnu::always_inline]] inline bool finiteVec(const Vec3& a) {
  return std::isfinite(a.x()) & std::isfinite(a.y()) & std::isfinite(a.z());
}
/// std::min({a, b, c}) and std::max({a, b, c}): the same fold (first extreme wins, same comparisons).
[[gnu::always_inline]] inline Real min3(Real a, Real b, Real c) {
  Real m = a;
  if (b < m) m = b;
  if (c < m) m = c;
  return m;
}
[[gnu::always_inline]] inline Real max3(Real a, Real b, Real c) {
  Real m = a;
  if (m < b) m = b;
  if (m < c) m = c;
  return m;
}

/// Convex polytope inside the CSO A - B, grown by support points (beneath-beyond insertion with
/// exact visibility). Fixed capacity: no allocation per query.
class ExpandingPolytope {
 public:
  static constexpr int kMaxV = tol::kEpaMaxVertices;
  static constexpr int kMaxF = 2 * kMaxV;

  struct Face {
    int v[3];
    int adj[3];     ///< adj[i]: face across the edge v[i] -> v[i+1]
    Vec3 n;         ///< outward unit normal
    Real d;         ///< plane distance from the origin, n·y[v[0]] (negative: origin outside)
    Vec3 cross;     ///< (y1 - y0) x (y2 - y0) as rounded, for the orient3d filter
    Vec3 crossAbs;  ///< |u_y v_z| + |u_z v_y|, ...: the filter's magnitude terms
    bool alive;
  };

  Vec3 y[kMaxV];   ///< CSO points, A's frame
  Vec3 pa[kMaxV];  ///< A's support points, A's frame
  Vec3 lb[kMaxV];  ///< B's support points, B's own frame (exactly as returned)
  int nv = 0;
  Face f[kMaxF];
  int nf = 0;  ///< face slots used (alive or free)
  Real scale2 = 0;

  int addVertex(const Vec3& yy, const Vec3& a, const Vec3& b) {
    if (nv >= kMaxV) return -1;
    y[nv] = yy, pa[nv] = a, lb[nv] = b, onHull_[nv] = false;
    scale2 = std::max(scale2, yy.squaredNorm());
    return nv++;
  }

  [[nodiscard]] Real scale() const { return std::sqrt(scale2); }

  /// Empties the polytope (the scratch arrays keep their stamps; they wrap safely).
  void reset() {
    nv = 0, nf = 0, scale2 = 0, freeCount_ = 0;
    if (stamp_ > (1 << 28)) {
      stamp_ = 0;
      std::fill(std::begin(state_), std::end(state_), 0);
      std::fill(std::begin(startStamp_), std::end(startStamp_), 0);
      std::fill(std::begin(endStamp_), std::end(endStamp_), 0);
      std::fill(std::begin(mark), std::end(mark), 0);
      markStamp = 0;
    }
  }

  /// Scratch marks for callers (vertex sets), valid while mark[i] == markStamp.
  int mark[kMaxV] = {};
  int markStamp = 0;

  /// Vertex s repeats an earlier vertex of the polytope exactly (then it cannot lie beyond any face:
  /// the polytope only grows, so a point that was ever one of its vertices stays in it). Only
  /// vertices that were on the polytope count: the blow-up of GJK's simplex adds support points it
  /// does not use (a dropped fifth point of a flat tetrahedron, the unused one of the two supports
  /// along a triangle's normals, rejected collinear points), which may lie outside it. A support point
  /// repeating such an orphan was taken as a vertex, and its face accepted at a depth far from it: a
  /// sphere whose centre lies within ~1e-15 of a box's corner got up to its radius too much depth.
  [[nodiscard]] bool duplicates(int s) const {
    for (int i = 0; i < s; ++i)
      if (onHull_[i] && sameVec(y[i], y[s])) return true;
    return false;
  }

  /// Strictly beyond the plane of face k (exact). The orient3d filter with the face's cross
  /// product cached: det = cross·w and its magnitude bound crossAbs·|w| are what exactOrient3d
  /// computes first; only uncertain cases go to it (and to GMP).
  [[nodiscard]] bool sees(int vertex, int k) const { return seesPoint(y[vertex], k); }

  /// The same for a point q that need not be a vertex yet (a ring point before its insertion).
  [[nodiscard]] bool seesPoint(const Vec3& q, int k) const {
    const Face& g = f[k];
    // A vertex of the face itself lies on its plane (common: supports repeat at convergence).
    if (sameVec(q, y[g.v[0]]) || sameVec(q, y[g.v[1]]) || sameVec(q, y[g.v[2]])) return false;
    return faceOrient(g.cross, g.crossAbs, y[g.v[0]], y[g.v[1]], y[g.v[2]], q, Vec3(q - y[g.v[0]])) > 0;
  }

  /// Tetrahedron from four affinely independent vertices (any orientation).
  void buildTetrahedron(int i0, int i1, int i2, int i3) {
    buildTetrahedron(i0, i1, i2, i3, exactOrient3d(y[i0], y[i1], y[i2], y[i3]));
  }
  /// The same with the sign of orient3d(i0, i1, i2, i3) already known (non-zero).
  void buildTetrahedron(int i0, int i1, int i2, int i3, int orientation) {
    if (orientation > 0) std::swap(i1, i2);
    nf = 0;
    freeCount_ = 0;
    const int t[4][3] = {{i0, i1, i2}, {i0, i3, i1}, {i1, i3, i2}, {i2, i3, i0}};
    for (const auto& tri : t) makeFace(tri[0], tri[1], tri[2]);
    // Faces 0-3 in this order (the free list is empty): face a's edge v[i] -> v[i+1] is shared with
    // face kAdj[a][i] (where it runs the other way).
    static constexpr int kAdj[4][3] = {{1, 2, 3}, {3, 2, 0}, {1, 3, 0}, {2, 1, 0}};
    for (int a = 0; a < 4; ++a)
      for (int i = 0; i < 3; ++i) f[a].adj[i] = kAdj[a][i];
  }

  /// The origin lies strictly inside face k's half-space (exact; the filter of sees() first).
  [[nodiscard]] bool originBelow(int k) const {
    const Face& g = f[k];
    return faceOrient(g.cross, g.crossAbs, y[g.v[0]], y[g.v[1]], y[g.v[2]], Vec3::Zero(), Vec3(-y[g.v[0]])) < 0;
  }

  /// Index of a face that vertex sees strictly, or -1 (vertex inside or on the polytope).
  [[nodiscard]] int findVisibleFace(int vertex) const {
    for (int k = 0; k < nf; ++k)
      if (f[k].alive && sees(vertex, k)) return k;
    return -1;
  }

  /// Alive face with the smallest plane distance, or -1.
  [[nodiscard]] int closestFace() const {
    int best = -1;
    Real bd = std::numeric_limits<Real>::infinity();
    for (int k = 0; k < nf; ++k)
      if (f[k].alive && f[k].d < bd) bd = f[k].d, best = k;
    return best;
  }

  /// Curved pairs: re-fits the plane of every alive sliver face (refitIfSliver). A face is a sliver
  /// for its plane when |cross| < |crossAbs| / 64: the cross product at v[0] carries a rounding of
  /// ~3u |crossAbs| per component (the orient3d filter's own bound), so the unit normal from it may
  /// be off by ~3u |crossAbs| / |cross| rad, beyond 4e-14. Polyhedral pairs do not call it (their
  /// final facet is re-fitted from all of its vertices instead, in gjkTd).
  void refitSlivers() {
    for (int k = 0; k < nf; ++k)
      if (f[k].alive) refitIfSliver(f[k]);
  }
  /// The same for the faces the last insert() made: the fan around its vertex, found from the
  /// first horizon edge's outside face and walked through adj[1] (the edge v -> vertex of face
  /// (u, v, vertex) is shared with the face that starts at v). Call it right after insert().
  void refitNewSlivers() {
    const Horizon& e = horizon_[0];
    const int j = hasEdge(e.outside, e.v, e.u);
    if (j < 0) return;
    const int first = f[e.outside].adj[j];
    int k = first;
    for (int n = 0; n < kMaxF && k >= 0; ++n) {
      refitIfSliver(f[k]);
      k = f[k].adj[1];
      if (k == first) break;
    }
  }

  /// Re-fits face g's unit normal and plane distance from the cross product at its largest angle
  /// (the vertex opposite its longest edge, the vertices kept in cyclic order: the same
  /// orientation), in double if it is well conditioned there, else in long double. A triangle's
  /// cross product is the same at each of its vertices in exact arithmetic, but its rounding is
  /// relative to the product of the two edges used: the two shorter ones give the most accurate
  /// normal. On a needle with two nearly coincident vertices, the degenerate face Descantes et al.
  /// (2019) name as ill-conditioned for GJK (§2, review of GJK), the short edge is a difference of
  /// nearby coordinates (exact) and the angle at it is near 90°. cross / crossAbs stay as they are:
  /// the exact orientation tests do not depend on the plane.
  void refitIfSliver(Face& g) const {
    constexpr Real kSliver2 = 1.0 / 4096;  // (|cross| < |crossAbs| / 64)
    // (well conditioned, or zero area in floating point: never chosen)
    if (!(g.cross.squaredNorm() < kSliver2 * g.crossAbs.squaredNorm()) || !std::isfinite(g.d)) return;
    Real e2[3];  // edge i runs v[i] -> v[i+1]; the vertex opposite it is v[i+2]
    for (int i = 0; i < 3; ++i) e2[i] = (y[g.v[i == 2 ? 0 : i + 1]] - y[g.v[i]]).squaredNorm();
    int longest = 0;
    if (e2[1] > e2[longest]) longest = 1;
    if (e2[2] > e2[longest]) longest = 2;
    const int o = (longest + 2) % 3;
    const Vec3 &y0 = y[g.v[o]], &y1 = y[g.v[(o + 1) % 3]], &y2 = y[g.v[(o + 2) % 3]];
    Vec3 c, cAbs, n;
    Real d;
    faceCross(y0, y1, y2, c, cAbs);
    if (c.squaredNorm() >= kSliver2 * cAbs.squaredNorm()) {
      if (faceNormalise(y0, y1, y2, c, n, d)) g.n = n, g.d = d;
      return;
    }
    using LVec = Eigen::Matrix<long double, 3, 1>;
    const LVec p0 = y0.cast<long double>(), p1 = y1.cast<long double>(), p2 = y2.cast<long double>();
    const LVec lc = (p1 - p0).cross(p2 - p0);
    const long double len = lc.norm();
    if (!(len > 0) || !std::isfinite(len)) return;  // (the double plane stays)
    const LVec ln = lc / len;
    g.n = ln.cast<Real>();
    g.d = static_cast<Real>((ln.dot(p0) + ln.dot(p1) + ln.dot(p2)) / 3.0L);
  }

  /// Adds `vertex` to the hull: removes every face it sees (starting from `start`, which it must
  /// see) and stitches the horizon to it. False when capacity runs out or the horizon is not a
  /// simple cycle (cannot happen with exact predicates; checked anyway).
  bool insert(int vertex, int start) {
    ++stamp_;
    int stack[kMaxF];
    int top = 0;
    int visibleCount = 0;
    stack[top++] = start;
    visible_[visibleCount++] = start;
    state_[start] = stamp_ * 2 + 1;  // visible
    int horizonCount = 0;
    while (top > 0) {
      const int k = stack[--top];
      for (int i = 0; i < 3; ++i) {
        const int g = f[k].adj[i];
        if (state_[g] == stamp_ * 2 + 1) continue;
        bool visible = false;
        if (state_[g] != stamp_ * 2) {
          visible = sees(vertex, g);
          state_[g] = visible ? stamp_ * 2 + 1 : stamp_ * 2;
        }
        if (visible) {
          stack[top++] = g;
          visible_[visibleCount++] = g;
        } else {
          if (horizonCount >= kMaxV) return false;
          horizon_[horizonCount++] = {f[k].v[i], f[k].v[(i + 1) % 3], g};
        }
      }
    }
    // Free the visible faces.
    for (int i = 0; i < visibleCount; ++i) f[visible_[i]].alive = false, free_[freeCount_++] = visible_[i];
    // New faces (u, v, vertex) on each horizon edge u -> v, linked to the outside face and to each
    // other through the horizon vertices.
    for (int h = 0; h < horizonCount; ++h) {
      const Horizon& e = horizon_[h];
      const int k = makeFace(e.u, e.v, vertex);
      if (k < 0) return false;
      f[k].adj[0] = e.outside;
      const int j = hasEdge(e.outside, e.v, e.u);
      if (j < 0) return false;
      f[e.outside].adj[j] = k;
      if (startStamp_[e.u] == stamp_ || endStamp_[e.v] == stamp_) return false;  // not a simple cycle
      startStamp_[e.u] = stamp_, startAt_[e.u] = k;
      endStamp_[e.v] = stamp_, endAt_[e.v] = k;
    }
    for (int h = 0; h < horizonCount; ++h) {
      const Horizon& e = horizon_[h];
      if (startStamp_[e.v] != stamp_ || endStamp_[e.u] != stamp_) return false;
      const int k = startAt_[e.u];
      f[k].adj[1] = startAt_[e.v];  // edge v -> vertex, shared with the face starting at v
      f[k].adj[2] = endAt_[e.u];    // edge vertex -> u, shared with the face ending at u
    }
    return true;
  }

 private:
  struct Horizon {
    int u, v, outside;
  };
  bool onHull_[kMaxV] = {};  ///< vertex i was a vertex of a face of the polytope (see duplicates())
  int free_[kMaxF];
  int freeCount_ = 0;
  int visible_[kMaxF];
  int state_[kMaxF] = {};
  int stamp_ = 0;
  Horizon horizon_[kMaxV];
  int startAt_[kMaxV], endAt_[kMaxV];
  int startStamp_[kMaxV] = {}, endStamp_[kMaxV] = {};

  [[nodiscard]] int hasEdge(int k, int u, int w) const {
    for (int i = 0; i < 3; ++i)
      if (f[k].v[i] == u && f[k].v[(i + 1) % 3] == w) return i;
    return -1;
  }

  int makeFace(int a, int b, int c) {
    int k;
    if (freeCount_ > 0)
      k = free_[--freeCount_];
    else if (nf < kMaxF)
      k = nf++;
    else
      return -1;
    state_[k] = 0;
    Face& g = f[k];
    g.v[0] = a, g.v[1] = b, g.v[2] = c;
    onHull_[a] = onHull_[b] = onHull_[c] = true;
    g.adj[0] = g.adj[1] = g.adj[2] = -1;
    g.alive = true;
    if (!facePlane(y[a], y[b], y[c], g.cross, g.crossAbs, g.n, g.d)) {
      g.n = Vec3::Zero();
      g.d = std::numeric_limits<Real>::infinity();  // zero-area in floating point: never chosen
    }
    return k;
  }
};

/// Per-thread scratch polytope (~60 kB; one per thread, shared by every shape pair).
ExpandingPolytope& scratchPolytope();

/// The cold cache (value-initialised once): copying it is cheaper than value-initialising it per
/// query, which compiled to a `rep stos`.
inline const ContactCache& coldContactCache() {
  static const ContactCache kCold{};
  return kCold;
}

/// GJK followed by GJK-TD on two cores, warm-started from and updating the pair's cache cc. Radii
/// are handled by the caller. coldCache: cc is scratch, to be reset to the cold state first (done
/// only when something reads it: two boxes answered by the separating-axis test only write it).
template <class SA, class SB>
ContactResult gjkTd(const SA& a, const Transform& poseA, const SB& b, const Transform& poseB,
                    const PenetrationOptions& opt, ContactCache& cc, bool coldCache) {
  ContactResult out;
  out.method = PenetrationMethod::GjkTd;

  // B relative to A, exactly as GJK computes it. (Two boxes: with the separating-axis search, which the
  // AVX2 form runs on the relative pose in registers; the answer is written below.)
  Mat3 R;
  Vec3 t;
  [[maybe_unused]] BoxBoxSat sat;
  [[maybe_unused]] bool satAnswered = false;
  if constexpr (std::is_same_v<SA, Box> && std::is_same_v<SB, Box>)
    satAnswered = relativePoseBoxBoxSat(poseA, poseB, a.halfExtents, b.halfExtents, opt.boxBoxSat, R, t, sat);
  else
    relativePose(poseA, poseB, R, t);
  // A one-point overlap answer: depth along nLocal, witnesses za on A and zb on B (all in A's frame).
  auto answerOnePoint = [&](Real depth, const Vec3& nLocal, const Vec3& za, const Vec3& zb) {
    out.status = Status::Overlapping;
    out.distance = -depth;
    out.depth = depth;
    out.lowerBound = -depth;
    out.normal = poseA.rotate(nLocal);
    out.witnessA = poseA.apply(za);
    out.witnessB = poseA.apply(zb);
    out.contactPoint = 0.5 * (out.witnessA + out.witnessB);
    out.simplexSize = 1;
    out.simplexA[0] = out.witnessA, out.simplexB[0] = out.witnessB, out.lambda[0] = 1;
  };

  // A face answer: the origin's projection on the triangle paF[i] - pbA[i] (barycentrics lam), depth d
  // along nLocal; all in A's frame. lowerBound is the caller's.
  auto answerOnFace = [&](Status st, Real d, const Vec3& nLocal, const Vec3* paF, const Vec3* pbA, const Real* lam)
      __attribute__((always_inline)) {
    // (zeros from scalars: Eigen 3.4 assigns Zero() through std::fill_n, which GCC left as a call here)
    Vec3 za(0, 0, 0), zb(0, 0, 0);
    for (int i = 0; i < 3; ++i) {
      za += lam[i] * paF[i];
      zb += lam[i] * pbA[i];
    }
    out.status = st;
    out.distance = -d;
    out.depth = d;
    out.normal = poseA.rotate(nLocal);
    out.witnessA = poseA.apply(za);
    out.witnessB = poseA.apply(zb);
    out.contactPoint = 0.5 * (out.witnessA + out.witnessB);
    if (!opt.reportSimplex) {
      out.simplexSize = 0;
      return;
    }
    out.simplexSize = 3;
    for (int i = 0; i < 3; ++i) {
      out.simplexA[i] = poseA.apply(paF[i]);
      out.simplexB[i] = poseA.apply(pbA[i]);
      out.lambda[i] = lam[i];
    }
    out.lambda[3] = 0;
  };

  // Two overlapping boxes: the separating-axis minimum is the depth (box_box.hpp), no polytope.
  if constexpr (std::is_same_v<SA, Box> && std::is_same_v<SB, Box>) {
    if (satAnswered) {
      answerOnePoint(sat.depth, sat.normal, sat.za, sat.zb);
      cc.hasFace = false;
      cc.supportVertexA = cc.supportVertexB = -1;
      return out;
    }
  }
  if (coldCache) cc = coldContactCache();
  SupportHint hintA = cc.gjk.hintA, hintB = cc.gjk.hintB;

  ExpandingPolytope& P = scratchPolytope();
  P.reset();
  int gjkIterations = 0;
  // A point of B's own frame in A's frame.
  auto toA = [&](const Vec3& lb) -> Vec3 { return mulMat(R, lb) + t; };
  // CSO support point along dir, s_A(dir) - s_B(-dir), in A's frame; sa is A's support point (A's
  // frame), lb B's support point exactly as B returns it (B's frame).
  auto csoSupport = [&](const Vec3& dir, Vec3& sa, Vec3& lb) __attribute__((always_inline))->Vec3 {
    sa = a.support(dir, hintA);
    lb = b.support(mulMatT(R, Vec3(-dir)), hintB);
    return sa - toA(lb);
  };
  // The same, added to the polytope: its index, -1 when full, -2 when not finite.
  auto support = [&](const Vec3& dir) -> int {
    Vec3 sa, lb;
    const Vec3 w = csoSupport(dir, sa, lb);
    if (!finiteVec(w)) return -2;
    return P.addVertex(w, sa, lb);
  };
  // Keeps the last added vertex s only if it lies strictly outside the polytope, inserting it.
  // False when the polytope lost consistency.
  auto keepIfOutside = [&](int s) -> bool {
    const int k = P.duplicates(s) ? -1 : P.findVisibleFace(s);
    if (k < 0) {
      --P.nv;
      return true;
    }
    return P.insert(s, k);
  };
  // Remembers the closest face (support points in each body's frame) and the normal for the next
  // query of this pair.
  // (points: CSO points y, A's support points pa and B's lb of a polytope of nv vertices; face: the
  // indices of the closest face)
  // (forced inline: small, and once csoSupport and answerOnFace were, GCC left it as a call that
  // passed every point through memory, ~4 % of a settled polyhedral bed's step)
  // (heights: nLocal·y[i] when the caller has them, else null)
  auto rememberFace = [&](const int* face, const Vec3* y, const Vec3* pa, const Vec3* lb, int nv, const Vec3& nLocal,
                          const Real* heights = nullptr) __attribute__((always_inline)) {
    cc.hasFace = true;
    cc.normalLocalA = nLocal;
    cc.faceSize = 3;
    for (int i = 0; i < 3; ++i) cc.faceA[i] = pa[face[i]], cc.faceB[i] = lb[face[i]];
    // The polytope's vertex deepest along -n: next step's apex of the warm tetrahedron.
    int apex = 0;
    Real lowest = heights ? heights[0] : nLocal.dot(y[0]);
    for (int i = 1; i < nv; ++i) {
      const Real h = heights ? heights[i] : nLocal.dot(y[i]);
      if (h < lowest) lowest = h, apex = i;
    }
    cc.apexA = pa[apex], cc.apexB = lb[apex];
    cc.gjk.hintA = hintA, cc.gjk.hintB = hintB;
  };
  // ContactCache's ring around face k of P (polyhedral pairs only): the far vertex of each neighbour
  // face, then of each neighbour's other neighbours, without repeats.
  auto rememberRing = [&](int k) {
    if constexpr (kPolyhedralCore<SA> && kPolyhedralCore<SB>) {
      int m = 0;
      // (the vertex of face g that is not on its edge u-w)
      auto farVertex = [&](int g, int u, int w) {
        for (int j = 0; j < 3; ++j) {
          const int o = P.f[g].v[j];
          if (o != u && o != w) return o;
        }
        return -1;
      };
      int taken[ContactCache::kRing + 3];
      int nt = 0;
      for (int i = 0; i < 3; ++i) taken[nt++] = P.f[k].v[i];
      auto take = [&](int o) {
        if (o < 0 || m >= ContactCache::kRing) return;
        for (int q = 0; q < nt; ++q)
          if (taken[q] == o) return;
        taken[nt++] = o;
        cc.ringA[m] = P.pa[o], cc.ringB[m] = P.lb[o], ++m;
      };
      int nb[3];
      for (int i = 0; i < 3; ++i) {
        const int g = P.f[k].adj[i];
        nb[i] = g >= 0 && P.f[g].alive ? g : -1;
        if (nb[i] >= 0) take(farVertex(g, P.f[k].v[i], P.f[k].v[i == 2 ? 0 : i + 1]));
      }
      // The second ring only for finely faceted bodies: around a few dozen vertices the first ring
      // already reaches most of the answer's neighbourhood, and the rest costs more than it saves
      // (warm 12-vertex icospheres: ~6 % slower with it, 42-vertex ones ~7 % faster).
      auto fine = [](const auto& core) {
        if constexpr (std::is_same_v<std::decay_t<decltype(core)>, PolytopeRef>)
          return core.p->vertexCount() > 32;
        else
          return false;
      };
      const bool wide = fine(a) && fine(b);
      for (int i = 0; i < 3 && wide; ++i) {
        const int g = nb[i];
        if (g < 0) continue;
        for (int e = 0; e < 3; ++e) {
          const int h = P.f[g].adj[e];
          if (h < 0 || h == k || !P.f[h].alive) continue;
          take(farVertex(h, P.f[g].v[e], P.f[g].v[e == 2 ? 0 : e + 1]));
        }
      }
      cc.ringSize = m;
    }
  };
  // fail / touching write `out`; every exit then returns `out` by name, so it is constructed in
  // place (a returned reference would copy the ~700-byte result).
  auto fail = [&](Status st, const char* why) {
    out.status = st;
    out.message = why;
  };
  // Touching or flat CSO: depth 0 along a known normal (A's frame).
  auto touching = [&](const Vec3& nLocal) {
    out.status = Status::Overlapping;
    out.distance = 0;
    out.depth = 0;
    out.normal = poseA.rotate(nLocal);
    out.contactPoint = 0.5 * (out.witnessA + out.witnessB);
    out.iterations = gjkIterations;
    cc.hasFace = false;
  };

  // GJK's cache as a one-point simplex (support points in each body's frame) with a Newton normal:
  // GJK's next query of the pair starts its Newton finish there.
  [[maybe_unused]] auto seedGjkCache = [&](const Vec3& sa, const Vec3& lb, const Vec3& nLocal) {
    cc.gjk.valid = true;
    cc.gjk.size = 1;
    cc.gjk.localA[0] = sa;
    cc.gjk.localB[0] = lb;
    cc.gjk.hasNormal = true;
    cc.gjk.normalA() = nLocal;
  };
  // Smooth pairs answered by newtonOverlap: one support pair is the whole answer. The caches keep
  // it (a 1-point "face" and GJK's Newton normal) so the next step starts there whether the pair
  // still overlaps (Newton again) or has separated (GJK's own Newton warm start).
  [[maybe_unused]] auto acceptOverlap = [&](const OverlapNewtonState& ns, int iterations, int expansions) {
    answerOnePoint(ns.F, ns.n, ns.sa, toA(ns.lb));
    out.iterations = iterations + ns.steps;
    out.newtonSteps = ns.steps;
    out.expansions = expansions;
    out.polytopeVertices = P.nv;
    cc.hasFace = true;
    cc.normalLocalA = ns.n;
    cc.faceSize = 1;
    cc.faceA[0] = cc.apexA = ns.sa;
    cc.faceB[0] = cc.apexB = ns.lb;
    cc.supportVertexA = cc.supportVertexB = -1;
    seedGjkCache(ns.sa, ns.lb, ns.n);
    cc.gjk.hintA = hintA, cc.gjk.hintB = hintB;
  };
  // Newton from a start direction (A's frame, unit); false if it cannot certify. When it ends on a
  // direction along which the bodies are apart (F <= 0: separated for certain), GJK's cache gets that
  // direction, so that GJK's own Newton finish starts there.
  [[maybe_unused]] auto tryOverlapNewton = [&](const Vec3& u0, int iterations, int expansions) -> bool {
    if constexpr (kRollingPair<SA, SB>) {
      if (!opt.gjk.smoothNewton || !(u0.squaredNorm() > 0.5)) return false;
      OverlapNewtonState ns;
      ns.u = u0;
      ns.w = csoSupport(u0, ns.sa, ns.lb);
      if (newtonOverlap(a, b, R, opt.relTolerance, ns, csoSupport)) {
        acceptOverlap(ns, iterations, expansions);
        return true;
      }
      out.newtonSteps += ns.steps;  // (a failed attempt's steps)
      if (ns.F <= 0 && ns.w.allFinite()) seedGjkCache(ns.sa, ns.lb, ns.u);
    }
    return false;
  };
  // Smooth pairs try Newton on the overlap before anything else, from the pair's last normal
  // (overlapping or apart at the last step) or, cold, from the line of centres. It answers every
  // persisting contact with one support pair, and a pair that has just come into contact without
  // GJK's slow certification of a grazing overlap on curved surfaces; a pair still apart costs one
  // support pair more than GJK alone.
  if constexpr (kRollingPair<SA, SB>) {
    if (opt.gjk.smoothNewton) {
      const Vec3 u0 = cc.hasFace                        ? cc.normalLocalA
                      : cc.gjk.valid && cc.gjk.hasNormal ? cc.gjk.normalA()
                      : t.squaredNorm() > 0              ? Vec3(t.normalized())
                                                         : Vec3::UnitX();
      if (tryOverlapNewton(u0, 0, 0)) return out;
    }
  }

  // --- Persisting face contact of two polyhedral cores (every DEM step of a resting pair): the lean
  // form of the warm start below. Same points, same arithmetic, same certificate, same result bits
  // (tests compare the two bit for bit), without building the expanding polytope: the cached face and
  // apex make a tetrahedron; when it strictly contains the origin (exact signs), its base is its
  // closest face, and the support point along the base's normal does not lie beyond the base by
  // more than the tolerance, the base is the answer with no expansion, which is what the general
  // path concludes in that case. Anything else (a side face closer, the origin outside, a sliver base
  // that needs the long-double re-fit) falls through to the general path with the hints restored.
  if constexpr (kPolyhedralCore<SA> && kPolyhedralCore<SB>) {
    if (opt.leanWarmFace && cc.hasFace && cc.faceSize == 3) {
      Vec3 y[5], pa[5], lb[5];
      // B's points in A's frame (R lb + t), kept: the answer's witnesses on B are these same values
      // (same bits), not a second product.
      Vec3 bA[5];
      // toA for the support point, forced inline here only: GCC kept it as a call, and the general
      // path, which it serves too, runs faster with it out of line.
      auto toALean = [&](const Vec3& l) __attribute__((always_inline)) -> Vec3 { return mulMat(R, l) + t; };
      for (int i = 0; i < 4; ++i) {
        pa[i] = i < 3 ? cc.faceA[i] : cc.apexA;
        lb[i] = i < 3 ? cc.faceB[i] : cc.apexB;
      }
      // The tetrahedron's points, the base's orientation and the four faces at once (lean_face.hpp:
      // the points as toA rounds them, each face as buildTetrahedron's makeFace does).
      Real scale2 = 0;
      LeanFaces F;
      const int orientation = leanTetrahedron(R, t, pa, lb, y, bA, scale2, F);
      bool ok = orientation != 0;
      // ExpandingPolytope::originBelow / sees for face k: sign of orient3d(face, q), w = q - y[v0].
      auto below = [&](int k, const Vec3& w, const Vec3& q) __attribute__((always_inline)) {
        return faceOrient(F.crossOf(k), F.crossAbsOf(k), y[F.v[k][0]], y[F.v[k][1]], y[F.v[k][2]], q, w);
      };
      if (ok) {
        // The origin strictly below every face: the filter's verdict, or where it could not decide
        // a face, face by face with the exact predicate.
        if (F.originInside < 0)
          for (int k = 0; k < 4 && ok; ++k) ok = below(k, Vec3(-y[F.v[k][0]]), Vec3::Zero()) < 0;
        else
          ok = F.originInside == 1;
      }
      ok = ok && (F.planeValid & 1u);
      auto wellShaped = [&](int k) { return ((F.wellShaped >> k) & 1u) != 0; };
      // The side faces' plane distances estimated from their cross products c, as c·y / |c| compared
      // in squares (see the window test below; valid for well-shaped faces). A side face surely closer
      // than the base refuses it below whatever the support point is (as a deep contact's warm
      // tetrahedron often does: its apex is far): refuse before the support search. "Surely": under
      // the base's distance by more than that test's margin of 1e-12 scale.
      if (ok) {
        const Real rhs = F.d[0] - 1e-12 * std::sqrt(scale2);
        for (int k = 1; k < 4; ++k)
          ok = ok && !(rhs > 0 && wellShaped(k) && F.cy[k] * F.cy[k] < rhs * rhs * F.c2[k]);
      }
      const SupportHint hintA0 = hintA, hintB0 = hintB;
      bool planed[4] = {true, false, false, false};
      if (ok) {
        const Vec3 n = F.normalOf(0);
        Vec3 sa, sb;
        // (csoSupport's sa - toA(sb), with toA(sb) kept for the witnesses and inline: a csoSupport
        // variant that returned it called the out-of-line toA here, 5 152 -> 5 172 instructions per
        // narrow-phase call on the settled polyhedra10k bed)
        // (each body's search remembered across steps: a persisting contact's normal turns little, and
        // the scan then evaluates only the vertices that can still be the highest, same vertex)
        sa = supportRemembered(a, n, hintA, cc.memoA);
        sb = supportRemembered(b, mulMatT(R, Vec3(-n)), hintB, cc.memoB);
        bA[4] = toALean(sb);
        y[4] = sa - bA[4];
        pa[4] = sa, lb[4] = sb;
        ok = finiteVec(y[4]);
        if (ok) {
          scale2 = std::max(scale2, y[4].squaredNorm());
          // closestFace(): the first face with the smallest plane distance must be the base. A side
          // face whose plane lies beyond the base's by more than the coplanar window below (1e-9
          // scale, plus a margin of 1e-12 scale) is neither closer nor a candidate there: decided from
          // its cross product c by (c·y)² > t² |c|², without its square root and division. The margin
          // covers the difference between c·y / |c| and the plane distance facePlane computes only for
          // a well-shaped face: the rounding of c is relative to the filter's magnitudes |c|_abs, so
          // the difference grows as u |c|_abs |edge| / |c|; with |c|_abs <= 100 |c| it stays below
          // ~1e-13 scale. Sliver faces, and all others, get their plane as before (same bits).
          const Real window = F.d[0] + (1e-9 + 1e-12) * std::sqrt(scale2);
          for (int k = 1; k < 4 && ok; ++k) {
            if (F.cy[k] > 0 && wellShaped(k) && F.cy[k] * F.cy[k] > window * window * F.c2[k]) continue;
            planed[k] = true;
            ok = ((F.planeValid >> k) & 1u) && !(F.d[k] < F.d[0]);
          }
        }
        if (ok) {
          const Real h = n.dot(y[4]);
          bool dup = false;
          for (int i = 0; i < 4; ++i) dup = dup || sameVec(y[i], y[4]);
          bool seen = false;
          // (a face vertex is one of y[0..3]: `dup` covers sees()'s on-the-face case)
          if (!dup && h - F.d[0] > opt.relTolerance * std::sqrt(scale2))
            seen = below(0, Vec3(y[4] - y[F.v[0][0]]), y[4]) > 0;
          // Accepted (no expansion). A sliver base takes the general path's long-double re-fit.
          const int* A = F.v[0];
          const Vec3 e0 = y[A[1]] - y[A[0]], e1 = y[A[2]] - y[A[1]], e2 = y[A[0]] - y[A[2]];
          const Real longest2 = max3(e0.squaredNorm(), e1.squaredNorm(), e2.squaredNorm());
          ok = !seen && std::sqrt(F.c2[0]) >= 0.05 * longest2;  // (|cross|: Eigen's norm, same bits)
          if (ok) {
            const Real sc = std::sqrt(scale2);
            // Coplanar faces of one facet: the one whose triangle holds the origin's projection.
            // (The winner's barycentrics are kept: the same call on the same face gave the same bits.)
            int best = 0;
            bool have = false;
            Real worst = -std::numeric_limits<Real>::infinity();
            Real lam[3];
            for (int k = 0; k < 4; ++k) {
              if (!planed[k] || !(F.d[k] <= F.d[0] + 1e-9 * sc) || !(F.normalOf(k).dot(n) >= 1 - 1e-9)) continue;
              const Real l[3] = {F.lambda[0][k], F.lambda[1][k], F.lambda[2][k]};  // (faceBarycentrics')
              const Real m = min3(l[0], l[1], l[2]);
              if (m > worst) worst = m, best = k, have = true, lam[0] = l[0], lam[1] = l[1], lam[2] = l[2];
            }
            if (!have)  // (no candidate: non-finite planes only) the base's own barycentrics
              lam[0] = F.lambda[0][0], lam[1] = F.lambda[1][0], lam[2] = F.lambda[2][0];
            const int* G = F.v[best];
            const Real d = h < 0 ? 0 : h;
            // Another face than the base: its own projection lies off the reported normal by the
            // faces' angle (see the general path's answer below, which does the same).
            if (best != 0) faceBarycentrics(y[G[0]], y[G[1]], y[G[2]], F.normalOf(best), Vec3(d * n), lam);
            if (opt.reportSimplex) {
              Vec3 paF[3], pbA[3];
              for (int i = 0; i < 3; ++i) paF[i] = pa[G[i]], pbA[i] = bA[G[i]];
              answerOnFace(Status::Overlapping, d, n, paF, pbA, lam);
            } else {  // (the DEM's setting) answerOnFace's witnesses in lanes, same bits
              out.status = Status::Overlapping;
              out.distance = -d;
              out.depth = d;
              leanFaceAnswer(poseA.rotation, poseA.translation, n, pa, bA, G, lam, out.normal, out.witnessA,
                             out.witnessB, out.contactPoint);
              out.simplexSize = 0;
            }
            out.lowerBound = -d;
            out.iterations = 0;
            out.expansions = 0;
            out.polytopeVertices = 4;
            cc.supportVertexA = hintA.vertex, cc.supportVertexB = hintB.vertex;
            rememberFace(G, y, pa, lb, 4, n, F.height);
            return out;
          }
        }
      }
      hintA = hintA0, hintB = hintB0;
    }
  }

  // --- Warm start (DEM time steps): the previous closest face, re-evaluated under the current
  // poses, plus the support point opposite to it form a tetrahedron inside the CSO. If it strictly
  // contains the origin (exact orientation tests) the bodies overlap for certain: GJK is skipped and
  // the expansion starts from it; in a persisting face contact the first face examined is accepted.
  // The apex is first the previous query's deepest vertex pair, re-evaluated (no support search;
  // any point of the CSO will do), then if that fails the support point opposite to the face.
  bool warm = false;
  cc.supportVertexA = cc.supportVertexB = -1;
  if (cc.hasFace && cc.faceSize == 3) {
    int f3[3];
    for (int i = 0; i < 3; ++i) f3[i] = P.addVertex(cc.faceA[i] - toA(cc.faceB[i]), cc.faceA[i], cc.faceB[i]);
    Vec3 nf = (P.y[f3[1]] - P.y[f3[0]]).cross(P.y[f3[2]] - P.y[f3[0]]);
    if (nf.dot(cc.normalLocalA) < 0) nf = -nf;
    auto encloses = [&](int deep) {
      if (deep < 0) return false;
      const int orientation = exactOrient3d(P.y[f3[0]], P.y[f3[1]], P.y[f3[2]], P.y[deep]);
      if (orientation == 0) return false;
      P.buildTetrahedron(f3[0], f3[1], f3[2], deep, orientation);
      for (int k = 0; k < P.nf; ++k)
        if (!P.originBelow(k)) return false;
      return true;
    };
    if (nf.squaredNorm() > 0) {
      const Real scale2 = P.scale2;
      warm = encloses(P.addVertex(cc.apexA - toA(cc.apexB), cc.apexA, cc.apexB));
      if (!warm) {
        P.nv = 3, P.scale2 = scale2;
        warm = encloses(support(-nf));
      }
    }
    if (!warm) P.reset();
  }
  if (!warm) {
    const int failedNewtonSteps = out.newtonSteps;
    static_cast<DistanceResult&>(out) = gjkDistance(a, poseA, b, poseB, opt.gjk, &cc.gjk);
    out.newtonSteps += failedNewtonSteps;
    gjkIterations = out.iterations;
    if (out.status != Status::Overlapping) {
      // Apart (or GJK stopped early with a positive distance): no expansion.
      out.depth = 0;
      out.contactPoint = 0.5 * (out.witnessA + out.witnessB);
      cc.hasFace = false;
      return out;
    }
    hintA = cc.gjk.hintA, hintB = cc.gjk.hintB;

    // --- Initial tetrahedron from GJK's simplex (note (e): blow up 1-3 points). ---
    int ids[4];
    int count = 0;
    for (int i = 0; i < cc.gjk.size; ++i) {
      const Vec3 w = cc.gjk.localA[i] - toA(cc.gjk.localB[i]);
      bool dup = false;
      for (int k = 0; k < count; ++k) dup = dup || P.y[ids[k]] == w;
      if (!dup) ids[count++] = P.addVertex(w, cc.gjk.localA[i], cc.gjk.localB[i]);
    }
    if (count == 4 && exactOrient3d(P.y[ids[0]], P.y[ids[1]], P.y[ids[2]], P.y[ids[3]]) == 0) {
      // Flat tetrahedron: keep the three points spanning the largest triangle.
      int drop = 0;
      Real bestArea = -1;
      for (int k = 0; k < 4; ++k) {
        int o[3], m = 0;
        for (int j = 0; j < 4; ++j)
          if (j != k) o[m++] = ids[j];
        const Real area = (P.y[o[1]] - P.y[o[0]]).cross(P.y[o[2]] - P.y[o[0]]).squaredNorm();
        if (area > bestArea) bestArea = area, drop = k;
      }
      for (int k = drop; k < 3; ++k) ids[k] = ids[k + 1];
      count = 3;
    }
    if (count == 0) {
      const int s = support(Vec3::UnitX());
      if (s < 0) {
        fail(Status::Degenerate, "non-finite support point");
        return out;
      }
      ids[count++] = s;
    }
    if (count == 1) {
      const Vec3 dirs[6] = {Vec3::UnitX(),  -Vec3::UnitX(), Vec3::UnitY(),
                            -Vec3::UnitY(), Vec3::UnitZ(),  -Vec3::UnitZ()};
      for (const Vec3& d : dirs) {
        const int s = support(d);
        if (s == -2) {
          fail(Status::Degenerate, "non-finite support point");
          return out;
        }
        if (s >= 0 && P.y[s] != P.y[ids[0]]) {
          ids[count++] = s;
          break;
        }
      }
      if (count == 1) {  // the CSO is a single point: both bodies are points
        touching(Vec3::UnitX());
        return out;
      }
    }
    if (count == 2) {
      const Vec3 u = P.y[ids[1]] - P.y[ids[0]];
      int k = 0;
      const Vec3 au = u.cwiseAbs();
      if (au.y() < au[k]) k = 1;
      if (au.z() < au[k]) k = 2;
      const Vec3 d1 = u.cross(Vec3::Unit(k)).normalized();
      const Vec3 d2 = u.cross(d1).normalized();
      const Vec3 dirs[4] = {d1, -d1, d2, -d2};
      for (const Vec3& d : dirs) {
        const int s = support(d);
        if (s == -2) {
          fail(Status::Degenerate, "non-finite support point");
          return out;
        }
        if (s >= 0 && (P.y[s] - P.y[ids[0]]).cross(u).squaredNorm() > 0) {
          ids[count++] = s;
          break;
        }
      }
      if (count == 2) {  // the CSO is a segment
        touching(d1);
        return out;
      }
    }
    int extra = -1;  // a fifth point making a bipyramid around a GJK triangle
    if (count == 3) {
      const Vec3 n = (P.y[ids[1]] - P.y[ids[0]]).cross(P.y[ids[2]] - P.y[ids[0]]);
      const int sp = support(n), sm = support(-n);
      if (sp == -2 || sm == -2) {
        fail(Status::Degenerate, "non-finite support point");
        return out;
      }
      int op = sp >= 0 ? exactOrient3d(P.y[ids[0]], P.y[ids[1]], P.y[ids[2]], P.y[sp]) : 0;
      int om = sm >= 0 ? exactOrient3d(P.y[ids[0]], P.y[ids[1]], P.y[ids[2]], P.y[sm]) : 0;
      // Flat to the resolution of the coordinates: the CSO's extent on both sides of the triangle's
      // plane within 32 ulps of its size (two coplanar flat bodies, whose B carries the rounding of
      // its relative pose out of the plane). The depth is then 0 to that resolution; expanding the
      // sliver polytope instead accepted a face tilted by rounding, at a depth of up to the bodies'
      // size (identical triangles at one pose: 0.95; a bad-input hunt, 2026-11-27).
      if (sp >= 0 && sm >= 0 && (op != 0 || om != 0)) {
        const Vec3 nn = n.normalized();
        Real size2 = 0;
        for (const int v : {ids[0], ids[1], ids[2], sp, sm}) size2 = std::max(size2, P.y[v].squaredNorm());
        const Real resolution = 32 * tol::kEps * std::sqrt(size2);
        if (std::abs(nn.dot(P.y[sp] - P.y[ids[0]])) <= resolution && std::abs(nn.dot(P.y[sm] - P.y[ids[0]])) <= resolution)
          op = om = 0;
      }
      if (op > 0 && om < 0)
        ids[count++] = sp, extra = sm;
      else if (op > 0)
        ids[count++] = sp;
      else if (om < 0)
        ids[count++] = sm;
      else {
        // The CSO lies in the triangle's plane: depth 0 along its normal.
        Vec3 nn = n.normalized();
        if (nn.dot(P.y[ids[0]]) < 0) nn = -nn;
        touching(nn);
        return out;
      }
    }
    P.buildTetrahedron(ids[0], ids[1], ids[2], ids[3]);
    if (extra >= 0) {
      const int k = P.findVisibleFace(extra);
      if (k >= 0 && !P.insert(extra, k)) {
        fail(Status::Degenerate, "expanding polytope lost consistency");
        return out;
      }
    }
    // Warm start: the previous closest face and the support point along the previous normal, both
    // re-evaluated under the current poses, seed the polytope near the answer.
    if (cc.hasFace) {
      for (int i = 0; i < cc.faceSize; ++i) {
        const int s = P.addVertex(cc.faceA[i] - toA(cc.faceB[i]), cc.faceA[i], cc.faceB[i]);
        if (s < 0) break;
        if (!keepIfOutside(s)) {
          fail(Status::Degenerate, "expanding polytope lost consistency");
          return out;
        }
      }
      const int s = support(cc.normalLocalA);
      if (s >= 0 && !keepIfOutside(s)) {
        fail(Status::Degenerate, "expanding polytope lost consistency");
        return out;
      }
    }

  }  // !warm

  // Curved cores: the CSO has no finite vertex set; as the expansion converges on a curved (or, as a
  // long cone's slant side, a ruled) part of it, support points crowd together at each end of long
  // faces, which become slivers whose planes from the rounded cross product at v[0] are tilted. The
  // closest face (Descantes et al. 2019 §3.2, Algorithm 3 line 9) is chosen by plane distance, which
  // must bound the depth from below, and the location test (line 10) is exact against the face's
  // true plane but made at the support point along the face's computed normal: with a tilted normal
  // a sliver could be chosen at too small a distance, then "located" on the boundary, and the overlap
  // along its tilted normal was reported (an ellipsoid against a cone 0.1 x 60: 7.88e-4 for the true
  // 6.96e-4; the face had two vertices 5e-10 apart, 60 from the third, and a normal off by ~1e-6
  // rad). Sliver planes are re-fitted on these pairs (ExpandingPolytope::refitIfSliver): here for the
  // initial polytope, then for each expansion's new faces. Polyhedral pairs end exactly on facets
  // and re-fit only their final one (below): their path is unchanged.
  constexpr bool kCurved = !(kPolyhedralCore<SA> && kPolyhedralCore<SB>);
  if constexpr (kCurved) P.refitSlivers();

  // --- Expansion (Algorithm 3 lines 8-28). ---
  Status status = Status::MaxIterations;
  int face = -1;
  Real upper = std::numeric_limits<Real>::infinity();
  Real hFinal = std::numeric_limits<Real>::quiet_NaN();  // overlap along the accepted face's normal
  int expansions = 0;
  // The previous answer's ring (ContactCache::ringA), used once the first step has not accepted a
  // face, or at once when the warm tetrahedron's closest face is a side, not its base (so a
  // persisting face accepted at once gives the lean path's answer, same bits): a ring point that
  // lies beyond the closest face is inserted instead of searching for a support point. In a deep
  // contact the warm apex is far and the side faces pass close to the origin; the ring brings back
  // the old answer's neighbour faces, and the base is then usually accepted with one support search
  // (warm icospheres N = 12: 73 % of queries without a support-search expansion, 2 % before).
  Vec3 ringY[ContactCache::kRing];
  // (clamped: a trusted caller's cache is not checked by plausible())
  const int ringSize = std::clamp(cc.ringSize, 0, ContactCache::kRing);
  int ringLeft = kPolyhedralCore<SA> && kPolyhedralCore<SB> && cc.hasFace ? ringSize : 0;
  bool ringUsed[ContactCache::kRing] = {};
  bool ringMapped = false;  // (ringY is computed at the first use)
  // Expands until the closest face is accepted at relative tolerance relTol; false on a failure
  // already written to `out`.
  auto expand = [&](Real relTol) -> bool {
    status = Status::MaxIterations;
    for (;;) {
      face = P.closestFace();
      if (face < 0) return fail(Status::Degenerate, "expanding polytope has no face"), false;
      if (ringLeft > 0 && (expansions > 0 || (warm && face != 0))) {  // (face 0: the warm base)
        if (!ringMapped) {
          ringMapped = true;
          for (int i = 0; i < ringSize; ++i) ringY[i] = cc.ringA[i] - toA(cc.ringB[i]);
        }
        // (The plane test only screens: a point it passes over costs a support search, never a
        // wrong answer; an inserted point passed the exact test.)
        const Vec3& fn = P.f[face].n;
        const Real fd = P.f[face].d, tolerance = relTol * P.scale();
        int r = -1;
        for (int i = 0; i < ringSize && r < 0; ++i)
          if (!ringUsed[i] && fn.dot(ringY[i]) - fd > tolerance && P.seesPoint(ringY[i], face)) r = i;
        if (r >= 0) {
          ringUsed[r] = true, --ringLeft;
          const int v = P.addVertex(ringY[r], cc.ringA[r], cc.ringB[r]);
          if (v >= 0) {
            if (!P.insert(v, face)) return fail(Status::Degenerate, "expanding polytope lost consistency"), false;
            continue;
          }
          ringLeft = 0;  // (capacity: on without the ring)
        }
      }
      const Vec3 n = P.f[face].n;
      const int s = support(n);
      if (s == -2) return fail(Status::Degenerate, "non-finite support point"), false;
      if (s == -1) return true;  // capacity: MaxIterations with the current face
      const Real h = n.dot(P.y[s]);
      upper = std::min(upper, h);
      // Location condition (line 10): E on the face, within tolerance or exactly. A support
      // point that is already a vertex cannot be beyond any face of the (convex) polytope: the
      // face is then a facet of the CSO, exactly.
      if (P.duplicates(s) || !(h - P.f[face].d > relTol * P.scale()) || !P.sees(s, face)) {
        --P.nv;  // E adds nothing
        hFinal = h;
        status = Status::Overlapping;
        // The vertices supporting the accepted normal (the reported one, to rounding, for
        // polyhedral pairs): the manifold's faces are around them.
        if constexpr (kPolyhedralCore<SA> && kPolyhedralCore<SB>)
          cc.supportVertexA = hintA.vertex, cc.supportVertexB = hintB.vertex;
        return true;
      }
      if (expansions >= opt.maxExpansions) {
        --P.nv;
        return true;
      }
      ++expansions;
      if (!P.insert(s, face)) return fail(Status::Degenerate, "expanding polytope lost consistency"), false;
      if constexpr (kCurved) P.refitNewSlivers();
    }
  };
  const Real firstTol = kCurved ? std::max(opt.relTolerance, tol::kEpaCurvedStart) : opt.relTolerance;
  if (!expand(firstTol)) return out;
  if constexpr (kCurved) {
    // Curved surfaces: the polytope converges only linearly, so stop it early and finish with
    // Newton's method for the minimum of the CSO support function h(n) over unit n (its gradient
    // is the support point p(n); the tangential part of p vanishes at the optimum). The Hessian on
    // the sphere is t_i·J t_j - h δ_ij with J = dp/dn by finite differences. Steps must decrease h;
    // if the optimum is not smooth (a flat cap, an apex: H not positive definite) the expansion
    // simply resumes at full tolerance.
    // Analytic Newton with its certificate first (smooth pairs), from the polytope's coarse answer.
    if (status == Status::Overlapping && tryOverlapNewton(P.f[face].n, gjkIterations + expansions, expansions))
      return out;
    if (status == Status::Overlapping && firstTol > opt.relTolerance) {
      Vec3 nn = P.f[face].n, sa, lb;
      Vec3 p = csoSupport(nn, sa, lb);
      Real h = nn.dot(p);
      bool converged = false;
      const Real sc = std::max(P.scale(), p.norm());
      for (int it = 0; it < tol::kEpaNewtonIterations && std::isfinite(h); ++it) {
        const Vec3 t1 = nn.unitOrthogonal(), t2 = nn.cross(t1);
        const Real g1 = t1.dot(p), g2 = t2.dot(p);
        const Real eps = tol::kEpaNewtonStep;
        Vec3 s1, s2, q1, q2;
        const Vec3 p1 = csoSupport(nn + eps * t1, s1, q1), p2 = csoSupport(nn + eps * t2, s2, q2);
        const Real j11 = t1.dot(p1 - p) / eps, j22 = t2.dot(p2 - p) / eps;
        const Real j12 = 0.5 * (t1.dot(p2 - p) + t2.dot(p1 - p)) / eps;
        const Real h11 = j11 - h, h22 = j22 - h, det = h11 * h22 - j12 * j12;
        if (!(h11 > 0 && det > 0)) break;  // not a smooth minimum here
        Real d1 = -(h22 * g1 - j12 * g2) / det, d2 = -(h11 * g2 - j12 * g1) / det;
        // Predicted decrease of h: converged once it is below the rounding of h itself.
        const Real decrease = -0.5 * (g1 * d1 + g2 * d2);
        if (!(decrease > tol::kEpaNewtonDecrease * sc)) {
          converged = decrease >= 0;
          break;
        }
        const Real len = std::hypot(d1, d2);
        if (len > 0.5) d1 *= 0.5 / len, d2 *= 0.5 / len;
        // Backtracking: halve the step until h decreases.
        bool moved = false;
        for (int half = 0; half < 40 && !moved; ++half, d1 *= 0.5, d2 *= 0.5) {
          const Vec3 nNew = (nn + d1 * t1 + d2 * t2).normalized();
          Vec3 saNew, lbNew;
          const Vec3 pNew = csoSupport(nNew, saNew, lbNew);
          const Real hNew = nNew.dot(pNew);
          if (hNew < h) nn = nNew, p = pNew, h = hNew, sa = saNew, lb = lbNew, moved = true;
        }
        if (!moved) break;
      }
      // A better minimum elsewhere would have to show through a face of the (inner) polytope with
      // a plane distance below h; accept Newton's answer only if every such face lies within
      // ~0.25 rad of its normal (the basin it converged in), else finish by expansion.
      if (converged) {
        for (int k = 0; k < P.nf && converged; ++k) {
          const auto& g = P.f[k];
          if (!g.alive || !(g.d < h)) continue;
          for (int i = 0; i < 3 && converged; ++i) {
            const Vec3& v = P.y[g.v[i]];
            converged = nn.dot(v) >= 0.97 * v.norm();
          }
        }
      }
      if (converged && h <= upper) {
        // The support points differ by p, whose part g across nn is the gradient Newton left. Its
        // test is the predicted decrease, ~|g|^2 / H: a flat cap or face on a face makes the
        // finite-difference Hessian huge (the support jumps across the face), so it passes with the
        // supports anywhere on the two faces (7e-5 apart across the normal for a disc touching a
        // polytope face, contact hunt id 20261127 3 6 3 1 32). Each witness moves by g/2 across nn,
        // which keeps it on its support plane and makes w_A - w_B = h nn.
        const Vec3 g = p - h * nn;
        answerOnePoint(h, nn, Vec3(sa - 0.5 * g), Vec3(toA(lb) + 0.5 * g));
        out.iterations = gjkIterations + expansions;
        out.expansions = expansions;
        out.polytopeVertices = P.nv;
        rememberFace(P.f[face].v, P.y, P.pa, P.lb, P.nv, nn);
        return out;
      }
      if (!expand(opt.relTolerance)) return out;
    }
  }

  // --- Read the answer off the closest face. ---
  const auto& F = P.f[face];
  Vec3 n = F.n;
  Real d = F.d;
  const Real sc = P.scale();
  // Coplanar faces of one facet have the same plane: take the one whose triangle contains the
  // origin's projection, so that the witness points are convex combinations.
  int best = face;
  Real lam[3];
  {
    Real worst = -std::numeric_limits<Real>::infinity();
    for (int k = 0; k < P.nf; ++k) {
      const auto& g = P.f[k];
      if (!g.alive || !(g.d <= d + 1e-9 * sc) || !(g.n.dot(n) >= 1 - 1e-9)) continue;
      Real l[3];
      faceBarycentrics(P.y[g.v[0]], P.y[g.v[1]], P.y[g.v[2]], g.n, g.d * g.n, l);
      const Real m = min3(l[0], l[1], l[2]);
      if (m > worst) worst = m, best = k;
    }
  }
  // A well-shaped final triangle has a normal accurate to a few ulps: report the overlap along it
  // (already computed by the acceptance test) and skip the re-fit below.
  bool wellShaped = false;
  if (status == Status::Overlapping && std::isfinite(hFinal)) {
    const Vec3 e0 = P.y[F.v[1]] - P.y[F.v[0]], e1 = P.y[F.v[2]] - P.y[F.v[1]], e2 = P.y[F.v[0]] - P.y[F.v[2]];
    const Real longest2 = max3(e0.squaredNorm(), e1.squaredNorm(), e2.squaredNorm());
    wellShaped = F.cross.norm() >= 0.05 * longest2;
  }
  if (wellShaped) {
    d = hFinal;
  } else if constexpr (kPolyhedralCore<SA> && kPolyhedralCore<SB>) {
    // Re-fit the facet's plane from all of its vertices in long double: the closest triangle can
    // be a sliver (a large face against a small one) whose own normal carries roundoff / height.
    // Faces "of the same facet" are gathered with a tolerance, which can also catch a distinct but
    // nearly coplanar facet (needles, flat slabs): so the re-fitted normal is kept only if its
    // support value, the overlap along it, is smaller (both are upper bounds on the depth).
    int vs[ExpandingPolytope::kMaxV];
    int m = 0;
    int* mark = P.mark;
    const int markStamp = ++P.markStamp;
    for (int k = 0; k < P.nf; ++k) {
      const auto& g = P.f[k];
      if (!g.alive || !(std::abs(g.d - d) <= 1e-12 * sc) || !(g.n.dot(n) >= 1 - 1e-12)) continue;
      for (int i = 0; i < 3; ++i)
        if (mark[g.v[i]] != markStamp) mark[g.v[i]] = markStamp, vs[m++] = g.v[i];
    }
    using LVec = Eigen::Matrix<long double, 3, 1>;
    auto L = [&](int i) -> LVec { return P.y[i].cast<long double>(); };
    // Overlap along a unit direction: the CSO support value, in long double from the support points.
    auto overlapAlong = [&](const LVec& dir) -> long double {
      Vec3 sa, lb;
      csoSupport(dir.cast<Real>(), sa, lb);
      const Vec3 pb = toA(lb);
      return dir.dot(sa.cast<long double>() - pb.cast<long double>());
    };
    int i0 = vs[0], i1 = vs[0], i2 = vs[0];
    long double far = -1;
    for (int j = 0; j < m; ++j)
      if (long double q = (L(vs[j]) - L(i0)).squaredNorm(); q > far) far = q, i1 = vs[j];
    far = -1;
    const LVec u = L(i1) - L(i0);
    for (int j = 0; j < m; ++j)
      if (long double q = u.cross(L(vs[j]) - L(i0)).squaredNorm(); q > far) far = q, i2 = vs[j];
    LVec nl = u.cross(L(i2) - L(i0));
    const long double len = nl.norm();
    const long double hFace = overlapAlong(n.cast<long double>());
    long double hBest = hFace;
    if (m >= 3 && len > 0) {
      nl /= len;
      if (nl.dot(n.cast<long double>()) < 0) nl = -nl;
      const long double hFit = overlapAlong(nl);
      if (hFit < hFace) n = nl.cast<Real>(), hBest = hFit;
    }
    // The reported depth is the overlap along the reported normal (self-consistent, >= the true
    // depth by rounding only); the face's plane distance stays the certified lower bound.
    if (status == Status::Overlapping) d = static_cast<Real>(hBest);
  } else if (status == Status::Overlapping) {
    // Curved pair finished by expansion (non-smooth optimum): report the overlap along the
    // normal, like the other paths (within kEpaRelative x scale above the face's lower bound).
    Vec3 sa, lb;
    d = n.dot(csoSupport(n, sa, lb));
  }
  const auto& G = P.f[best];
  Vec3 paF[3], pbA[3];  // the face's support points on A and B, A's frame
  for (int i = 0; i < 3; ++i) paF[i] = P.pa[G.v[i]], pbA[i] = toA(P.lb[G.v[i]]);
  if (status == Status::MaxIterations) {
    // Report the feasible (upper) value along the best normal; the plane distance stays a bound.
    if (std::isfinite(upper)) {
      out.lowerBound = -upper;
      d = std::max(d, upper);
    }
  }
  if (d < 0) d = 0;  // the origin on (or by rounding just outside) the polytope: touching
  // The witnesses are the face's support points combined by the barycentrics of a point of its plane;
  // w_A - w_B is that point. The closest face's own projection lies along the reported normal. A
  // neighbour taken for its barycentrics, or a normal re-fitted from a sliver, lies off it by the
  // angle between the planes (up to ~5e-5 rad within the windows above): its projection would put
  // w_B - w_A off -d n by d times that angle (2.9e-7 for a plate 2e-6 thick under a box face 0.05
  // deep, contact hunt id 20261127 5 6 3 1 32). Then the point taken is d n itself, whose
  // barycentrics on the face give w_A - w_B = d n up to its tiny offset from the face's plane.
  const bool ownProjection = best == face && n == F.n;
  faceBarycentrics(P.y[G.v[0]], P.y[G.v[1]], P.y[G.v[2]], G.n, ownProjection ? Vec3(G.d * G.n) : Vec3(d * n), lam);
  answerOnFace(status, d, n, paF, pbA, lam);
  if (status == Status::Overlapping) out.lowerBound = -d;
  out.iterations = gjkIterations + expansions;
  out.expansions = expansions;
  out.polytopeVertices = P.nv;
  rememberFace(P.f[best].v, P.y, P.pa, P.lb, P.nv, n);
  // (Only after an expansion: a face accepted at once keeps the ring, as the lean path does.)
  if (expansions > 0) rememberRing(best);
  return out;
}

}  // namespace proxima::detail
