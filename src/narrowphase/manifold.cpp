// Contact manifold by reference/incident face clipping (the classic polyhedral manifold of game
// physics engines, e.g. Box2D's b2ClipPolygons in 2-D, Bullet's polyhedral clipping in 3-D).
//
// The penetration query gives the exact normal n (A -> B). For polyhedra in face-face or edge-face
// contact, n is (to rounding) the outward normal of a face of A or minus that of a face of B: that
// face is the reference face. The other body's face most opposed to it is the incident face; it is
// clipped against the side planes of the reference face, and every clipped point below the
// reference plane is a contact point with its own depth. Edge-edge and vertex contacts, and curved
// shapes, keep the single contact point.
#include "manifold.hpp"

#include <algorithm>
#include <cmath>
#include <variant>

#include "cores.hpp"

namespace proxima::detail {
namespace {

constexpr int kMaxPoly = 64;  // larger faces fall back to the single point (no allocation here)
// A face counts as the contact face when its normal is within ~1.4e-3 rad of the contact normal.
// GJK-TD returns face normals to ~1e-15 in face contacts; the margin also gives two nearly parallel
// faces that overlap only in part (their closest feature is then an edge-edge crossing within that
// angle of the face normals) the manifold of their overlap, so that such a grain rests on a patch
// instead of rocking on one point. Those points are placed and measured along the face's normal:
// they lie on both surfaces to ~depth x angle, and no point is deeper than the contact (pointDepth).
// (Tightened to ~1.4e-6 rad on 2026-11-27, such contacts fell back to one point: the settled
// polyhedra10k bed then took 3 % longer per step, with more warm queries needing an expansion.)
// (The same tolerance decides when a capsule's segment lies across the normal, or two segments are
// parallel: a capsule resting on a face or on another capsule keeps its two-point line contact.)
constexpr Real kFaceAlignCos = 1.0 - 1e-6;

struct Poly {
  Vec3 p[kMaxPoly];
  int n = 0;
  Vec3 normal = Vec3::Zero();  // outward unit normal (faces only)
  Real align = -2;             // normal · requested direction
};

// Orders coplanar points counter-clockwise about the normal m (around their centroid).
void orderAround(Poly& f, const Vec3& m) {
  if (f.n < 3) return;
  Vec3 c = Vec3::Zero();
  for (int i = 0; i < f.n; ++i) c += f.p[i];
  c /= f.n;
  Vec3 e1 = f.p[0] - c;
  if (!(e1.squaredNorm() > 0)) return;
  e1.normalize();
  const Vec3 e2 = m.cross(e1);
  Real ang[kMaxPoly];
  int idx[kMaxPoly];
  for (int i = 0; i < f.n; ++i) {
    const Vec3 q = f.p[i] - c;
    ang[i] = pseudoAngle(q.dot(e1), q.dot(e2));
    idx[i] = i;
  }
  std::sort(idx, idx + f.n, [&](int a, int b) { return ang[a] < ang[b]; });
  Vec3 tmp[kMaxPoly];
  for (int i = 0; i < f.n; ++i) tmp[i] = f.p[idx[i]];
  std::copy(tmp, tmp + f.n, f.p);
}

// A polytope's remembered triangle search (ManifoldMemo::FaceMemo) about its direction `centre`.
struct FaceSearchMemo {
  ContactCache::ManifoldMemo::FaceMemo* face = nullptr;  // null: nothing remembered or to remember
  Vec3* centre = nullptr;
};

// Face of a core (local frame) whose outward normal is closest to direction d (unit); a segment
// or a point gives its support feature with align = -2 (never a reference face).
// Writes into the caller's f (a Poly is ~1.6 kB: returning it by value copied it every query).
// memo (polytopes): the last search from the same support vertex, reused when d is close enough to
// its direction to keep the same best triangle (same triangle, same alignment bits), else rewritten.
template <class C>
void bestFace(const C& c, const Vec3& d, Poly& f, int hintVertex, FaceSearchMemo memo = {}) {
  f.n = 0, f.normal = Vec3::Zero(), f.align = -2;
  if constexpr (std::is_same_v<C, Point>) {
    f.p[0] = c.p, f.n = 1;
  } else if constexpr (std::is_same_v<C, Segment>) {
    const Real da = d.dot(c.a), db = d.dot(c.b), len = (c.b - c.a).norm();
    // Both ends when the segment is perpendicular to d (edge contact), else the supporting end.
    if (std::abs(da - db) <= (1 - kFaceAlignCos) * len)
      f.p[0] = c.a, f.p[1] = c.b, f.n = 2;
    else
      f.p[0] = da > db ? c.a : c.b, f.n = 1;
  } else if constexpr (std::is_same_v<C, Box>) {
    int k = 0;
    for (int i = 1; i < 3; ++i)
      if (std::abs(d[i]) > std::abs(d[k])) k = i;
    const Real s = d[k] < 0 ? -1 : 1;
    f.normal = s * Vec3::Unit(k);
    f.align = std::abs(d[k]);
    const int i = (k + 1) % 3, j = (k + 2) % 3;
    const Vec3& h = c.halfExtents;
    // Counter-clockwise about the outward normal s·e_k (e_i x e_j = e_k), from the (+, +) corner:
    // the order orderAround would sort them into, without the sort.
    const Real a[4] = {1, -1, -1, 1}, b[4] = {1, 1, -1, -1};
    const Real* si = s > 0 ? a : b;
    const Real* sj = s > 0 ? b : a;
    for (int q = 0; q < 4; ++q) {
      Vec3 p;
      p[k] = s * h[k], p[i] = si[q] * h[i], p[j] = sj[q] * h[j];
      f.p[q] = p;
    }
    f.n = 4;
  } else if constexpr (std::is_same_v<C, Triangle> || std::is_same_v<C, Tetrahedron>) {
    constexpr int nv = std::is_same_v<C, Triangle> ? 3 : 4;
    const Vec3* v = c.v;
    Vec3 ctr = Vec3::Zero();
    for (int i = 0; i < nv; ++i) ctr += v[i];
    ctr /= nv;
    const int tris[4][3] = {{0, 1, 2}, {0, 1, 3}, {0, 2, 3}, {1, 2, 3}};
    const int ntri = nv == 3 ? 1 : 4;
    for (int t = 0; t < ntri; ++t) {
      Vec3 m = (v[tris[t][1]] - v[tris[t][0]]).cross(v[tris[t][2]] - v[tris[t][0]]);
      if (!(m.squaredNorm() > 0)) continue;
      m.normalize();
      if (nv == 4 && m.dot(v[tris[t][0]] - ctr) < 0) m = -m;
      if (nv == 3 && m.dot(d) < 0) m = -m;  // a flat triangle has both sides
      if (m.dot(d) > f.align) {
        f.align = m.dot(d), f.normal = m, f.n = 3;
        for (int q = 0; q < 3; ++q) f.p[q] = v[tris[t][q]];
      }
    }
    orderAround(f, f.normal);
  } else if constexpr (std::is_same_v<C, PolytopeRef>) {
    const PolytopeData& data = c.p->data();
    const auto& v = data.vertices;
    SupportHint hint;
    if (data.dimension == 3) {
      // The face most aligned with d among those around the support vertex: in a face contact the
      // whole facet supports d, so one of its triangles is there. Its merged facet (the polygon
      // Qhull fanned into triangles) is precomputed, counter-clockwise (PolytopeData::facetLoops).
      int v0 = hintVertex;
      if (!(v0 >= 0 && v0 < static_cast<int>(v.size()))) {
        (void)c.p->support(d, hint);  // sets hint.vertex
        v0 = hint.vertex;
      }
      // (conditional moves: which triangle wins is data-dependent and mispredicted as a branch)
      int best = -1;
      Real align = -2;
      const auto ntri = static_cast<int>(data.triangleNormals.size());
      auto* fm = memo.face;
      if (fm && fm->radius > 0 && fm->vertex == v0 && fm->triangle < ntri &&
          (d - *memo.centre).squaredNorm() < Real(fm->radius) * Real(fm->radius)) {
        // Remembered: every other triangle around v0 stays below it (see the radius below).
        best = fm->triangle;
        align = data.triangleNormals[best].dot(d);
      } else {
        Real second = -2;  // the best alignment of the others (nonzero normals)
        for (int e = data.vertexTriangleOffsets[v0]; e < data.vertexTriangleOffsets[v0 + 1]; ++e) {
          const int t = data.vertexTriangles[e];
          const Vec3& m = data.triangleNormals[t];
          const Real a = m.dot(d);
          const bool valid = m.squaredNorm() > 0;  // zero normal: a zero-area triangle
          const bool take = (a > align) & valid;
          second = std::max(second, take ? align : (valid ? a : Real(-2)));
          align = take ? a : align;
          best = take ? t : best;
        }
        if (fm) {
          // The winner stays ahead of every other triangle around v0 for directions within rho of d:
          // each unit normal's alignment moves by at most |m| rho (|m| = 1 to ~1e-15), and each
          // computed dot product is within ~3u |d| of the exact one (u = 2^-53; |d| <= 1.5): 2 rho
          // plus ~10u below the gap, with 64u held back.
          // (A flip of v0 between tied corners of the face searches again: the loop is the search, so
          // a memo certified against every triangle of the body, tried too, cost more: edge contacts'
          // two faces are near ties, and its scan of every triangle ran often.)
          const Real rho = std::min<Real>(0.5, 0.5 * (align - second - 64 * tol::kEps)) * (1 - 1e-6);
          // (a float at most rho: the conversion rounds by at most 2^-24 relative)
          const auto rf = static_cast<float>(rho * (1 - 0x1p-22));
          const bool keep = best >= 0 && best <= 0xffff && v0 <= 0xffff && rho > 1e-30 && d.allFinite();
          fm->radius = keep ? rf : 0.0f;
          fm->vertex = static_cast<std::uint16_t>(keep ? v0 : 0);
          fm->triangle = static_cast<std::uint16_t>(keep ? best : 0);
          *memo.centre = d;
        }
      }
      if (best >= 0) {
        f.align = align, f.normal = data.triangleNormals[best];
        const int b0 = data.facetLoopOffsets[best], b1 = data.facetLoopOffsets[best + 1];
        if (b1 - b0 > kMaxPoly) {  // too large: single point
          f.n = 0;
          return;
        }
        int m = 0;  // (a local count: f.n went through memory on every point)
        for (int i = b0; i < b1; ++i) f.p[m++] = v[data.facetLoops[i]];
        f.n = m;
      }
    } else if (data.dimension == 2 && v.size() >= 3) {
      // A flat polytope is its own face: its hull polygon, in order (both sides).
      Vec3 m = (v[1] - v[0]).cross(v[2] - v[0]).normalized();
      if (m.dot(d) < 0) m = -m;
      f.align = m.dot(d), f.normal = m;
      if (v.size() > static_cast<std::size_t>(kMaxPoly)) return;  // too large: single point (f.n == 0)
      for (const Vec3& q : v) f.p[f.n++] = q;
      orderAround(f, f.normal);
    } else {
      // Segment or point polytope: its supporting feature.
      f.p[0] = c.p->support(d, hint), f.n = 1;
    }
  }
  // Ellipsoids, cylinders, cones: no faces (f.n == 0).
}

// The best alignment with d (unit, the core's frame) of any face of a 3-D polytope core: an upper
// bound on what bestFace can find from any vertex. 2 ("unknown") for every other core.
template <class C>
Real anyFaceAlign(const C& c, const Vec3& d) {
  if constexpr (std::is_same_v<C, PolytopeRef>) {
    const PolytopeData& data = c.p->data();
    if (data.dimension != 3) return 2;
    // (four running maxima: one chain of dot-then-max through every triangle was latency-bound;
    // the maximum does not depend on the order)
    const auto& normals = data.triangleNormals;
    const std::size_t count = normals.size();
    Real best[4] = {-2, -2, -2, -2};
    std::size_t t = 0;
    for (; t + 4 <= count; t += 4)
      for (int j = 0; j < 4; ++j) best[j] = std::max(best[j], normals[t + j].dot(d));
    for (; t < count; ++t) best[0] = std::max(best[0], normals[t].dot(d));
    return std::max(std::max(best[0], best[1]), std::max(best[2], best[3]));
  } else {
    return 2;
  }
}

// inward·(p - a) for inward = m x (b - a), in scalars with Eigen's order of operations (same bits):
// a Vec3 built from scalars and read back as a vector pair waited on a store forward.
struct SidePlane {
  Real ix, iy, iz, ax, ay, az;
  SidePlane(const Vec3& m, const Vec3& a, const Vec3& b) : ax(a.x()), ay(a.y()), az(a.z()) {
    const Real ex = b.x() - ax, ey = b.y() - ay, ez = b.z() - az;
    ix = m.y() * ez - m.z() * ey;
    iy = m.z() * ex - m.x() * ez;
    iz = m.x() * ey - m.y() * ex;
  }
  [[nodiscard]] Real operator()(const Vec3& p) const { return ix * (p.x() - ax) + iy * (p.y() - ay) + iz * (p.z() - az); }
};

// A manifold point's depth: in [0, the contact's depth]. Measured along the reference face's normal,
// which may differ from the contact normal by the alignment tolerance, it could exceed the pair's
// depth by rounding; no point of the manifold is deeper than the pair.
inline Real pointDepth(Real depth, Real contactDepth) { return std::min(std::max<Real>(depth, 0), contactDepth); }

// Sutherland-Hodgman: keeps the part of polygon `in` inside the prism over the convex polygon
// `ref` (counter-clockwise about m).
// Written without data-dependent branches: which points are inside and which edges cross is random
// from contact to contact, and as branches they mispredicted several times per manifold. Every
// candidate is written and the output count advances by the test's outcome (the slot index is
// clamped to the buffer; a convex cut adds at most one point per edge, so the clamp never binds for
// convex input). Each point's side is evaluated once, not once per adjacent edge.
int clip(const Poly& ref, const Vec3& m, const Vec3* in, int nin, Vec3* out) {
  constexpr int kCap = 2 * kMaxPoly + 8;
  Vec3 buf[2][kCap];
  Real side[kCap];
  int n = std::min(nin, 2 * kMaxPoly);
  std::copy(in, in + n, buf[0]);
  int cur = 0;
  for (int e = 0; e < ref.n && n > 0; ++e) {
    const Vec3& a = ref.p[e];
    const Vec3& b = ref.p[e + 1 == ref.n ? 0 : e + 1];
    const SidePlane inward(m, a, b);  // m x (b - a) points into the polygon for CCW order
    const Vec3* src = buf[cur];
    Vec3* dst = buf[1 - cur];
    bool allInside = true;
    for (int i = 0; i < n; ++i) side[i] = inward(src[i]), allInside &= side[i] >= 0;
    // Every point inside this side plane: the pass below would copy the polygon unchanged (no point
    // dropped, no edge crossing). (The manifold's own instructions on the settled polyhedra10k bed:
    // 805 -> 755 per narrow-phase call, instruction_profile.py.)
    if (allInside) continue;
    int m2 = 0;
    for (int i = 0; i < n; ++i) {
      const int j = i + 1 == n ? 0 : i + 1;
      const Vec3& p = src[i];
      const Vec3& q = src[j];
      const Real dp = side[i], dq = side[j];
      const bool keep = dp >= 0, cross = (dp >= 0) != (dq >= 0);
      dst[std::min(m2, kCap - 1)] = p;
      m2 += keep & (m2 < kCap);
      dst[std::min(m2, kCap - 1)] = p + (q - p) * (dp / (dp - dq));  // (unused unless cross)
      m2 += cross & (m2 < kCap);
    }
    n = std::min(m2, 2 * kMaxPoly);
    cur = 1 - cur;
  }
  std::copy(buf[cur], buf[cur] + n, out);
  return n;
}

// Keeps at most 4 points: the deepest, the one farthest from it, then the two that span the
// largest areas on either side (the usual reduction that preserves the support polygon).
// A clipped point (no default initialisers: the array of ~140 is scratch, zero-filling it cost
// more than the clipping).
struct Candidate {
  Vec3 point;
  Real depth;
};

int reduceToFour(Candidate* pts, int n, const Vec3& m) {
  if (n <= 4) return n;
  int a = 0;
  for (int i = 1; i < n; ++i)
    if (pts[i].depth > pts[a].depth) a = i;
  int b = a == 0 ? 1 : 0;
  for (int i = 0; i < n; ++i)
    if ((pts[i].point - pts[a].point).squaredNorm() > (pts[b].point - pts[a].point).squaredNorm()) b = i;
  int c = -1, d = -1;
  Real cMax = 0, dMin = 0;
  for (int i = 0; i < n; ++i) {
    const Real s = m.dot((pts[b].point - pts[a].point).cross(pts[i].point - pts[a].point));
    if (s > cMax) cMax = s, c = i;
    if (s < dMin) dMin = s, d = i;
  }
  Candidate keep[4];
  int k = 0;
  keep[k++] = pts[a], keep[k++] = pts[b];
  if (c >= 0) keep[k++] = pts[c];
  if (d >= 0) keep[k++] = pts[d];
  std::copy(keep, keep + k, pts);
  return k;
}

// Vertex-face contact, decided without clipping (about a quarter of a polyhedral bed's manifolds):
// one incident vertex v at or below the reference plane (depth >= -2 slack, every other vertex
// below -2 slack), and the part of the incident polygon with depth >= -2 slack, the triangle of v and
// the two points where its edges reach that depth, strictly inside the reference polygon's side
// planes. Clipping would then keep v unchanged (it is inside), and every point it creates lies on a
// side plane, outside that triangle, so deeper than -2 slack up to rounding: only v can pass the
// -slack test. Its point and depth are written with the clipping path's arithmetic (same bits).
// True when it has answered (r then holds the result the clipping path would give).
bool singleVertexInside(const Poly& ref, const Vec3* inc, int nInc, Real h, Real rRef, Real rInc, Real slack,
                        const Transform& poseRef, ContactResult& r) {
  if (nInc < 2 || ref.n < 3) return false;
  const Vec3& mm = ref.normal;
  Real depth[kMaxPoly];
  int v = -1, count = 0;
  for (int i = 0; i < nInc; ++i) {
    depth[i] = (h - mm.dot(inc[i])) + rRef + rInc;  // (the clipping path's order)
    const bool at = depth[i] >= -2 * slack;
    v = at ? i : v;
    count += at;
  }
  if (count != 1) return false;
  const Vec3& p = inc[v];
  const int prev = v == 0 ? nInc - 1 : v - 1, next = v + 1 == nInc ? 0 : v + 1;
  auto reach = [&](int q) {  // the point of edge v-q at depth -2 slack (depth[q] < -2 slack)
    const Real t = (depth[v] + 2 * slack) / (depth[v] - depth[q]);
    return Vec3(p + t * (inc[q] - p));
  };
  const Vec3 q1 = reach(prev), q2 = reach(next);
  for (int e = 0; e < ref.n; ++e) {
    const Vec3& a = ref.p[e];
    const Vec3& b = ref.p[e + 1 == ref.n ? 0 : e + 1];
    const SidePlane inward(mm, a, b);  // (clip()'s side test)
    if (!(inward(p) > 0 && inward(q1) > 0 && inward(q2) > 0)) return false;
  }
  const Real coreDepth = h - mm.dot(p);
  const Real d = coreDepth + rRef + rInc;
  if (d < -slack) return true;  // (nothing passes: the single point stays, as after clipping)
  const Vec3 point = p + (0.5 * (coreDepth + rRef - rInc)) * mm;
  r.contactCount = 1;
  r.contacts[0] = {poseRef.apply(point), pointDepth(d, r.depth)};
  return true;
}

}  // namespace

void buildManifold(const Shape& a, const Transform& poseA, const Shape& b, const Transform& poseB, ContactResult& r,
                   int vertexA, int vertexB, ContactCache::ManifoldMemo* memo) {
  singlePointManifold(r);
  const Vec3 n = r.normal;
  if (!(n.squaredNorm() > 0.5)) return;
  const Vec3 dA = poseA.rotateInverse(n), dB = poseB.rotateInverse(Vec3(-n));
  // A persisting vertex or edge contact of two polytopes: the memo holds, for the direction d0 of an
  // earlier search that found no face, the best alignment of *any* face of each body. A face's
  // alignment m·d moves by at most |m| |d - d0| <= (1 + 1e-15) |d - d0| from m·d0 (rounding: a few
  // 1e-16), so while both bodies' directions stay closer to d0 than their gap to the threshold, the
  // search below would find no face again and end at the single point: it is skipped.
  if (memo) {
    auto ruledOut = [](const Vec3& d, const Vec3& d0, Real align0) {
      const Real gap = kFaceAlignCos - align0 - 1e-12;
      return gap > 0 && (1 + 1e-6) * (d - d0).squaredNorm() < gap * gap;
    };
    if (ruledOut(dA, memo->directionA, memo->alignA) && ruledOut(dB, memo->directionB, memo->alignB)) return;
  }
  const Core ca = coreOf(a), cb = coreOf(b);
  Poly fa, fb;
  // (Polytopes, a polyhedral bed's every face search, without the variant's dispatch. Their triangle
  // searches are remembered about memo's directions, which a face contact leaves free: see below.)
  if (const auto* pa = std::get_if<PolytopeRef>(&ca))
    bestFace(*pa, dA, fa, vertexA, memo ? FaceSearchMemo{&memo->faceA, &memo->directionA} : FaceSearchMemo{});
  else
    std::visit([&](const auto& c) { bestFace(c, dA, fa, vertexA); }, ca);
  if (const auto* pb = std::get_if<PolytopeRef>(&cb))
    bestFace(*pb, dB, fb, vertexB, memo ? FaceSearchMemo{&memo->faceB, &memo->directionB} : FaceSearchMemo{});
  else
    std::visit([&](const auto& c) { bestFace(c, dB, fb, vertexB); }, cb);
  if (memo) {
    // No face found: remember each body's best alignment over all its faces about these directions
    // (a polytope's triangle memo, if it was about another direction, is dropped). A face found: the
    // alignments are 2 (never skipping: face contacts search every step), and each direction is the
    // centre of its body's triangle memo, which bestFace keeps or rewrote.
    const bool noFace = !(std::max(fa.align, fb.align) >= kFaceAlignCos);
    if (noFace) {
      if (memo->directionA != dA) memo->faceA.radius = 0;
      if (memo->directionB != dB) memo->faceB.radius = 0;
      memo->directionA = dA, memo->directionB = dB;
    }
    if (!std::holds_alternative<PolytopeRef>(ca)) memo->directionA = dA;
    if (!std::holds_alternative<PolytopeRef>(cb)) memo->directionB = dB;
    memo->alignA = noFace ? std::visit([&](const auto& c) { return anyFaceAlign(c, dA); }, ca) : 2;
    memo->alignB = noFace ? std::visit([&](const auto& c) { return anyFaceAlign(c, dB); }, cb) : 2;
  }
  if (fa.n == 0 || fb.n == 0) return;
  // Reference face: the better aligned one (alignments are frame-independent). Edge-edge and vertex
  // contacts end here, before any polygon is transformed.
  if (fa.n == 2 && fb.n == 2 && fa.align == -2 && fb.align == -2) {
    // Two segment cores (capsules) both lying across the normal: parallel segments touch along a
    // line, and a single point anywhere on it would give the pair a spurious torque. Two points, at
    // the ends of the overlap of the segments along their common direction, each with its own depth.
    const Vec3 a0 = poseA.apply(fa.p[0]), a1 = poseA.apply(fa.p[1]);
    const Vec3 b0 = poseB.apply(fb.p[0]), b1 = poseB.apply(fb.p[1]);
    const Vec3 eb = b1 - b0;
    const Real la = (a1 - a0).norm(), lb = eb.norm();
    if (!(la > 0) || !(lb > 0)) return;
    const Vec3 u = (a1 - a0) / la;
    // Both segments lie across the normal also when they cross (the normal is then their common
    // perpendicular): only parallel ones touch along a line.
    if (!(std::abs(u.dot(eb)) >= kFaceAlignCos * lb)) return;
    const Real ta = u.dot(b0 - a0), tb = u.dot(b1 - a0);
    const Real lo = std::max<Real>(0, std::min(ta, tb)), hi = std::min(la, std::max(ta, tb));
    const Real scale = std::max({la, lb, a0.cwiseAbs().maxCoeff(), b0.cwiseAbs().maxCoeff()});
    if (!(hi - lo > 1e-9 * scale)) return;  // crossing or end-to-end: one point
    const Real ra = a.totalRadius(), rb = b.totalRadius();
    int k = 0;
    for (const Real t : {lo, hi}) {
      const Vec3 qa = a0 + t * u;
      const Real s = std::clamp<Real>((qa - b0).dot(eb) / eb.squaredNorm(), 0, 1);
      const Vec3 qb = b0 + s * eb;
      const Real depth = ra + rb - n.dot(qb - qa);
      if (depth < -1e-12 * scale) continue;
      r.contacts[k++] = {Vec3(0.5 * (qa + qb) + 0.5 * (ra - rb) * n), pointDepth(depth, r.depth)};
    }
    if (k == 2) r.contactCount = 2;
    else singlePointManifold(r);
    return;
  }
  const bool refIsA = fa.align >= fb.align;
  const Poly& ref = refIsA ? fa : fb;
  const Poly& inc = refIsA ? fb : fa;
  if (ref.n < 3 || !(ref.align >= kFaceAlignCos)) return;  // edge-edge or vertex contact
  // A single incident vertex: inside the reference face or not, it is the single point.
  if (inc.n == 1) return;
  const Real rRef = refIsA ? a.totalRadius() : b.totalRadius();
  const Real rInc = refIsA ? b.totalRadius() : a.totalRadius();

  // Clip in the reference body's frame: only the incident polygon is mapped (by the relative pose),
  // and only the kept points go to the world frame.
  const Transform& poseRef = refIsA ? poseA : poseB;
  const Transform& poseInc = refIsA ? poseB : poseA;
  Mat3 rel;
  Vec3 relT;
  relativePose(poseRef, poseInc, rel, relT);
  Vec3 incLocal[kMaxPoly];
  for (int i = 0; i < inc.n; ++i) incLocal[i] = mulMat(rel, inc.p[i]) + relT;
  const Vec3& mm = ref.normal;
  const Real h = mm.dot(ref.p[0]);
  // Tolerances scale with the reference plane's offset in the world (its body may sit far from the
  // origin), as when clipping was done in world coordinates.
  const Real hWorld = h + poseRef.rotate(mm).dot(poseRef.translation);
  const Real slack = 1e-12 * std::max<Real>(1, std::max(std::abs(h), std::abs(hWorld)));
  if (singleVertexInside(ref, incLocal, inc.n, h, rRef, rInc, slack, poseRef, r)) return;
  Vec3 clipped[2 * kMaxPoly + 8];
  const int m = clip(ref, mm, incLocal, inc.n, clipped);
  Candidate pts[2 * kMaxPoly + 8];
  int k = 0;
  for (int i = 0; i < m; ++i) {
    const Real coreDepth = h - mm.dot(clipped[i]);
    const Real depth = coreDepth + rRef + rInc;
    if (depth < -slack) continue;
    const Vec3 point = clipped[i] + (0.5 * (coreDepth + rRef - rInc)) * mm;
    // Clipping a 2-point "polygon" (an edge) yields each crossing twice.
    bool dup = false;
    for (int j = 0; j < k && !dup; ++j) dup = (pts[j].point - point).squaredNorm() <= slack * slack;
    if (dup) continue;
    pts[k++] = {point, pointDepth(depth, r.depth)};
  }
  if (k == 0) return;  // rounding: keep the single point
  k = reduceToFour(pts, k, mm);
  r.contactCount = k;
  for (int i = 0; i < k; ++i) r.contacts[i] = {poseRef.apply(pts[i].point), pts[i].depth};
}

}  // namespace proxima::detail
