// Randomised fuzz tests of proxima::distance against oracles that do not use GJK.
//
// Oracles (all in long double, with __float128 for ill-conditioned steps):
//  * Polytopal cores (points, segments, triangles, tetrahedra, boxes, polytopes, and the point /
//    segment cores of spheres and capsules, inflated or not): an exact brute-force oracle. The
//    distance between two convex hulls is 0 when they intersect (a vertex of one inside the other
//    solid by half-spaces, or an edge piercing a face), otherwise the minimum over vertex-face,
//    face-vertex and edge-edge closed-form distances. Solid hulls use the library's Qhull
//    triangles only after an independent check (vertices are input points, closed oriented
//    surface, every input point inside every face plane); if the check fails that is reported and
//    the oracle uses its own O(n^4) hull. Flat and lower-dimensional clouds use every triple and
//    pair of the input points. Overlap margins: separating-axis theorem (face normals + all edge
//    cross products), or for big hulls the radius of a ball inside both around probe points.
//    Inflated shapes: core distance - rA - rB (or -(rA + rB) when the cores overlap, the
//    documented convention of distance()).
//  * Curved cores (ellipsoid, cylinder, cone): a primal-dual certificate seeded by the returned
//    witnesses. Primal: the witnesses must lie in their shapes (point-to-shape distances from the
//    implicit definitions) and be |distance| apart along the normal (checked at 1e-9 x scale, the
//    precision of GJK's barycentric witnesses). Distance: alternating projections with our own
//    closest-point maps give core point pairs (upper bounds) and, at the final pair, exact local
//    normals / edge directions; the separation along those directions, from analytic support
//    functions, is a lower bound (weak duality); the distance must lie within tol of [lo, hi].
//    (The separation along the returned normal alone loses (normal error) x (body size), i.e.
//    ~1e-16 x scale / distance: it cannot certify 1e-12 at a 1e-9 gap.) The certificate agrees
//    exactly with the exact oracle on polytopes (env PROXIMA_FUZZ_CERT_ON_EXACT=1 runs it there).
//  * Closed forms for sphere-sphere, sphere-box and capsule-capsule, on top of the exact oracle.
//
// Configurations per random pair: random placement, separated (bounding balls apart), near
// touching at gaps 1e-3, 1e-6, 1e-9 x (largest bounding radius) by translating B along the true
// normal (the oracle's, or a certified proxima normal for curved shapes; the bounds of the new
// configuration are then recomputed independently), overlaps by 1e-3 and 0.3 x (smallest bounding
// radius) past contact, and nearly concentric.
//
// Checks per query, with scale S = max over the bodies of |position| + bounding radius and
// tol = 1e-12 S + 1e-12 |d|: status is separated/overlapping (never max_iterations, degenerate,
// invalid_input); finite output; |d - d_oracle| <= tol (or d within the certified bounds +- tol);
// d_oracle > 1e-9 S => separated; certified overlap margin > 1e-9 S => overlapping; swapping A
// and B changes d by <= tol and negates the normal (to the accuracy implied by tol); witness
// checks as above. Every query runs with Signed Volumes and Johnson for (A, B) and (B, A); Signed
// Volumes must pass everything, Johnson failures are only counted and printed.
//
// Pairs per family: env PROXIMA_FUZZ_PAIRS (default 1500; the labelled long run sets 100000).
// Seeds are fixed; a failure prints the family seed, the pair index and the pair as a JSON line
// for `proxima distance`; PROXIMA_FUZZ_INDEX=i replays only pair i of each family.
// PROXIMA_FUZZ_DEBUG=1 cross-checks the hull-based oracle against the all-triples one.

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <limits>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "proxima/narrowphase/distance.hpp"
#include "proxima/shapes/shape.hpp"

namespace {

using proxima::DistanceResult;
using proxima::GjkOptions;
using proxima::Quat;
using proxima::Real;
using proxima::Status;
using proxima::SubAlgorithm;
using proxima::Vec3;

using LD = long double;
using LV = Eigen::Matrix<LD, 3, 1>;
using LM = Eigen::Matrix<LD, 3, 3>;
constexpr LD kInf = std::numeric_limits<LD>::infinity();

long fuzzPairs() {
  if (const char* e = std::getenv("PROXIMA_FUZZ_PAIRS"); e && *e) {
    const long n = std::strtol(e, nullptr, 10);
    if (n > 0) return n;
  }
  return 1500;
}

LV L(const Vec3& v) { return v.cast<LD>(); }

std::string fmt(double x) {
  char b[48];
  std::snprintf(b, sizeof b, "%.17g", x);
  return b;
}
std::string fmtL(LD x) {
  char b[64];
  std::snprintf(b, sizeof b, "%.6Lg", x);
  return b;
}
std::string vjson(const Vec3& v) { return "[" + fmt(v.x()) + "," + fmt(v.y()) + "," + fmt(v.z()) + "]"; }

// ------------------------------------------------------------------------------------------------
// Exact-ish geometry in long double, with __float128 for the ill-conditioned cases (needle
// triangles, nearly parallel segments) so that the oracle stays at ~1e-18 relative everywhere.

using Q = __float128;
struct Q3 {
  Q x, y, z;
};
Q3 toQ(const LV& v) { return {Q(v.x()), Q(v.y()), Q(v.z())}; }
Q3 operator-(const Q3& a, const Q3& b) { return {a.x - b.x, a.y - b.y, a.z - b.z}; }
Q3 operator+(const Q3& a, const Q3& b) { return {a.x + b.x, a.y + b.y, a.z + b.z}; }
Q3 operator*(Q s, const Q3& a) { return {s * a.x, s * a.y, s * a.z}; }
Q qdot(const Q3& a, const Q3& b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
Q3 qcross(const Q3& a, const Q3& b) { return {a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x}; }
LV toLV(const Q3& a) { return LV(LD(a.x), LD(a.y), LD(a.z)); }

constexpr LD kIllConditioned = 1e-8L;  // sin^2 of the angle below which quad precision is used

// (b - a) x (c - a), accurate in direction even for needle triangles.
LV triNormal(const LV& a, const LV& b, const LV& c) {
  const LV ab = b - a, ac = c - a;
  const LV n = ab.cross(ac);
  if (n.squaredNorm() > kIllConditioned * ab.squaredNorm() * ac.squaredNorm()) return n;
  const Q3 qa = toQ(a);
  return toLV(qcross(toQ(b) - qa, toQ(c) - qa));
}

LV closestOnSegment(const LV& p, const LV& a, const LV& b) {
  const LV ab = b - a;
  const LD l2 = ab.squaredNorm();
  if (!(l2 > 0)) return a;
  const LD t = std::clamp((p - a).dot(ab) / l2, LD(0), LD(1));
  return a + t * ab;
}

LV closestOnTriangle(const LV& p, const LV& a, const LV& b, const LV& c) {
  const LV n = triNormal(a, b, c);
  const LD n2 = n.squaredNorm();
  if (n2 > 0) {
    const LV q = p - (n.dot(p - a) / n2) * n;
    if ((b - a).cross(q - a).dot(n) >= 0 && (c - b).cross(q - b).dot(n) >= 0 && (a - c).cross(q - c).dot(n) >= 0)
      return q;
  }
  LV best = closestOnSegment(p, a, b);
  LD bd = (p - best).squaredNorm();
  const LV x1 = closestOnSegment(p, b, c), x2 = closestOnSegment(p, c, a);
  if ((p - x1).squaredNorm() < bd) best = x1, bd = (p - x1).squaredNorm();
  if ((p - x2).squaredNorm() < bd) best = x2;
  return best;
}

// Closest pair of two segments: the 4 endpoint-segment candidates plus the interior-interior
// stationary point when it lies inside both (every other case has an endpoint in the pair).
void segSegClosest(const LV& p0, const LV& p1, const LV& q0, const LV& q1, LD& best, LV& ba, LV& bb) {
  auto upd = [&](const LV& x, const LV& y) {
    const LD d = (x - y).norm();
    if (d < best) best = d, ba = x, bb = y;
  };
  upd(p0, closestOnSegment(p0, q0, q1));
  upd(p1, closestOnSegment(p1, q0, q1));
  upd(closestOnSegment(q0, p0, p1), q0);
  upd(closestOnSegment(q1, p0, p1), q1);
  const LV d1 = p1 - p0, d2 = q1 - q0;
  const LD a = d1.squaredNorm(), e = d2.squaredNorm();
  if (!(a > 0 && e > 0)) return;
  const LD denom = d1.cross(d2).squaredNorm();
  if (denom > kIllConditioned * a * e) {
    const LV r = p0 - q0;
    const LD b = d1.dot(d2), c = d1.dot(r), f = d2.dot(r);
    const LD s = (b * f - c * e) / denom, t = (a * f - b * c) / denom;
    if (s > 0 && s < 1 && t > 0 && t < 1) upd(p0 + s * d1, q0 + t * d2);
  } else {
    const Q3 P0 = toQ(p0), Q0 = toQ(q0), D1 = toQ(p1) - P0, D2 = toQ(q1) - Q0, R = P0 - Q0;
    const Q A = qdot(D1, D1), E = qdot(D2, D2), B = qdot(D1, D2), C = qdot(D1, R), F = qdot(D2, R);
    const Q3 X = qcross(D1, D2);
    const Q den = qdot(X, X);
    if (den > 0) {
      const Q s = (B * F - C * E) / den, t = (A * F - B * C) / den;
      if (s > 0 && s < 1 && t > 0 && t < 1) upd(toLV(P0 + s * D1), toLV(Q0 + t * D2));
    }
  }
}


// Segment pq crosses triangle abc (non-coplanar case; coplanar contacts show up as distance 0).
// Sign of orient(w, x, y, z): long double when clearly above its rounding bound (including the
// rounding of the differences of large coordinates), else quad. Slivers (triangles on
// near-duplicate points) have planes too ill-conditioned for long double signs.
int orientSign(const LV& w, const LV& x, const LV& y, const LV& z) {
  const LV a = x - w, b = y - w, c = z - w;
  const LD v = a.cross(b).dot(c);
  const LD M = std::max({w.cwiseAbs().maxCoeff(), x.cwiseAbs().maxCoeff(), y.cwiseAbs().maxCoeff(), z.cwiseAbs().maxCoeff()});
  const LD na = a.norm(), nb = b.norm(), nc = c.norm();
  if (std::abs(v) > 1e-17L * na * nb * nc + 1e-18L * M * (na * nb + nb * nc + na * nc)) return v > 0 ? 1 : -1;
  const Q3 W = toQ(w);
  const Q q = qdot(qcross(toQ(x) - W, toQ(y) - W), toQ(z) - W);
  return q > 0 ? 1 : q < 0 ? -1 : 0;
}

bool segPierces(const LV& p, const LV& q, const LV& a, const LV& b, const LV& c) {
  const int sp = orientSign(a, b, c, p), sq = orientSign(a, b, c, q);
  if ((sp > 0 && sq > 0) || (sp < 0 && sq < 0) || (sp == 0 && sq == 0)) return false;
  const int s1 = orientSign(p, q, a, b), s2 = orientSign(p, q, b, c), s3 = orientSign(p, q, c, a);
  const bool neg = s1 < 0 || s2 < 0 || s3 < 0, pos = s1 > 0 || s2 > 0 || s3 > 0;
  return !(neg && pos);
}

// Closest point to y of the ellipsoid sum (x_i/a_i)^2 <= 1 (y itself inside). Eberly's method:
// bisection on the Lagrange multiplier, in long double.
LV ellipsoidClosest(const LV& y, const LV& a) {
  LD s = 0;
  for (int i = 0; i < 3; ++i) s += (y[i] / a[i]) * (y[i] / a[i]);
  if (s <= 1) return y;
  auto G = [&](LD t) {
    LD g = -1;
    for (int i = 0; i < 3; ++i) {
      const LD q = a[i] * y[i] / (t + a[i] * a[i]);
      g += q * q;
    }
    return g;
  };
  LD lo = 0, hi = a.maxCoeff() * y.norm() * LD(1.0001) + LD(1e-300);
  for (int it = 0; it < 400; ++it) {
    const LD mid = LD(0.5) * (lo + hi);
    if (mid <= lo || mid >= hi) break;
    (G(mid) > 0 ? lo : hi) = mid;
  }
  const LD t = LD(0.5) * (lo + hi);
  LV x;
  for (int i = 0; i < 3; ++i) x[i] = a[i] * a[i] * y[i] / (t + a[i] * a[i]);
  return x;
}

// ------------------------------------------------------------------------------------------------
// Oracle polytope in world coordinates.

struct OPoly {
  std::vector<LV> v;
  std::vector<std::array<int, 2>> e;
  std::vector<std::array<int, 3>> f;
  bool solid = false;
  std::vector<LV> fn;  // unit outward normals of solid faces (zero for degenerate faces)
  std::vector<LV> ec, fc;
  std::vector<LD> er, fr;
};

void finishPoly(OPoly& P) {
  constexpr LD kPad = 1 + 1e-15L;
  for (const auto& e : P.e) {
    const LV c = LD(0.5) * (P.v[e[0]] + P.v[e[1]]);
    P.ec.push_back(c);
    P.er.push_back(std::max((P.v[e[0]] - c).norm(), (P.v[e[1]] - c).norm()) * kPad);
  }
  for (const auto& f : P.f) {
    const LV c = (P.v[f[0]] + P.v[f[1]] + P.v[f[2]]) / LD(3);
    P.fc.push_back(c);
    P.fr.push_back(std::max({(P.v[f[0]] - c).norm(), (P.v[f[1]] - c).norm(), (P.v[f[2]] - c).norm()}) * kPad);
    if (P.solid) {
      const LV n = triNormal(P.v[f[0]], P.v[f[1]], P.v[f[2]]);
      const LD nn = n.norm();
      P.fn.push_back(nn > 0 ? LV(n / nn) : LV::Zero());
    }
  }
}

OPoly makeSolid(std::vector<LV> v, const std::vector<std::array<int, 3>>& tris) {
  OPoly P;
  P.v = std::move(v);
  P.f = tris;
  P.solid = true;
  std::set<std::pair<int, int>> edges;
  for (const auto& t : tris)
    for (int k = 0; k < 3; ++k) edges.insert({std::min(t[k], t[(k + 1) % 3]), std::max(t[k], t[(k + 1) % 3])});
  for (const auto& [i, j] : edges) P.e.push_back({i, j});
  finishPoly(P);
  return P;
}

// Flat or lower-dimensional cloud (points already unique): every pair is an edge, every triple a face.
OPoly makeFlat(std::vector<LV> v) {
  OPoly P;
  P.v = std::move(v);
  const int n = static_cast<int>(P.v.size());
  if (n == 1) P.e.push_back({0, 0});
  for (int i = 0; i < n; ++i)
    for (int j = i + 1; j < n; ++j) {
      P.e.push_back({i, j});
      for (int k = j + 1; k < n; ++k) P.f.push_back({i, j, k});
    }
  finishPoly(P);
  return P;
}

bool insideSolid(const OPoly& P, const LV& x) {
  for (std::size_t i = 0; i < P.f.size(); ++i)
    if (P.fn[i].dot(x - P.v[P.f[i][0]]) > 0) return false;
  return true;
}

LV pointPolyClosest(const OPoly& P, const LV& x) {
  if (P.solid && insideSolid(P, x)) return x;
  LD best = kInf;
  LV bp = P.v[0];
  auto upd = [&](const LV& q) {
    const LD d = (x - q).norm();
    if (d < best) best = d, bp = q;
  };
  if (!P.f.empty()) {
    for (std::size_t j = 0; j < P.f.size(); ++j) {
      if ((x - P.fc[j]).norm() - P.fr[j] >= best) continue;
      const auto& t = P.f[j];
      upd(closestOnTriangle(x, P.v[t[0]], P.v[t[1]], P.v[t[2]]));
    }
  } else {
    for (const auto& e : P.e) upd(closestOnSegment(x, P.v[e[0]], P.v[e[1]]));
  }
  return bp;
}

struct PolyDist {
  bool overlap = false;
  LD d = kInf;
  LV pa = LV::Zero(), pb = LV::Zero();
};

PolyDist polyPolyDistance(const OPoly& A, const OPoly& B) {
  PolyDist r;
  auto overlapped = [&]() {
    r.overlap = true;
    r.d = 0;
    return r;
  };
  if (A.solid)
    for (const LV& x : B.v)
      if (insideSolid(A, x)) return overlapped();
  if (B.solid)
    for (const LV& x : A.v)
      if (insideSolid(B, x)) return overlapped();
  auto pierce = [](const OPoly& E, const OPoly& F) {
    for (std::size_t i = 0; i < E.e.size(); ++i)
      for (std::size_t j = 0; j < F.f.size(); ++j) {
        if ((E.ec[i] - F.fc[j]).norm() > E.er[i] + F.fr[j]) continue;
        const auto& t = F.f[j];
        if (segPierces(E.v[E.e[i][0]], E.v[E.e[i][1]], F.v[t[0]], F.v[t[1]], F.v[t[2]])) return true;
      }
    return false;
  };
  if (pierce(A, B) || pierce(B, A)) return overlapped();

  LD best = kInf;
  auto upd = [&](const LV& x, const LV& y) {
    const LD d = (x - y).norm();
    if (d < best) best = d, r.pa = x, r.pb = y;
  };
  for (const LV& x : A.v)
    for (const LV& y : B.v) upd(x, y);
  for (const LV& x : A.v)
    for (std::size_t j = 0; j < B.f.size(); ++j) {
      if ((x - B.fc[j]).norm() - B.fr[j] >= best) continue;
      const auto& t = B.f[j];
      upd(x, closestOnTriangle(x, B.v[t[0]], B.v[t[1]], B.v[t[2]]));
    }
  for (const LV& y : B.v)
    for (std::size_t j = 0; j < A.f.size(); ++j) {
      if ((y - A.fc[j]).norm() - A.fr[j] >= best) continue;
      const auto& t = A.f[j];
      upd(closestOnTriangle(y, A.v[t[0]], A.v[t[1]], A.v[t[2]]), y);
    }
  for (std::size_t i = 0; i < A.e.size(); ++i)
    for (std::size_t j = 0; j < B.e.size(); ++j) {
      if ((A.ec[i] - B.ec[j]).norm() - A.er[i] - B.er[j] >= best) continue;
      segSegClosest(A.v[A.e[i][0]], A.v[A.e[i][1]], B.v[B.e[j][0]], B.v[B.e[j][1]], best, r.pa, r.pb);
    }
  r.d = best;
  return r;
}

// Penetration depth by the separating-axis theorem: the minimum over candidate axes (face
// normals, including the plane of flat clouds, and every edge-edge cross product) of the overlap
// of the projections. Extra candidates never hurt (each gives an upper bound on the depth). Only
// used to decide whether an overlap is deep enough (> 1e-9 x scale) to require the overlapping
// status, so it runs in double on centred coordinates (error ~1e-16 x scale) with the few
// ill-conditioned axes (nearly parallel edges) in long double; it stops as soon as the depth drops
// below stopBelow.
LD satDepth(const OPoly& A, const OPoly& B, LD stopBelow) {
  const LV c0 = A.v[0];
  std::vector<Vec3> va, vb;
  for (const LV& x : A.v) va.push_back((x - c0).cast<double>());
  for (const LV& x : B.v) vb.push_back((x - c0).cast<double>());
  LD depth = kInf;
  bool any = false;
  auto test = [&](const Vec3& u) {
    double maxA = -HUGE_VAL, minA = HUGE_VAL, maxB = -HUGE_VAL, minB = HUGE_VAL;
    for (const Vec3& x : va) {
      const double s = u.dot(x);
      maxA = std::max(maxA, s), minA = std::min(minA, s);
    }
    for (const Vec3& x : vb) {
      const double s = u.dot(x);
      maxB = std::max(maxB, s), minB = std::min(minB, s);
    }
    any = true;
    depth = std::min({depth, LD(maxA - minB), LD(maxB - minA)});
    return depth <= stopBelow;
  };
  auto testL = [&](const LV& u) {
    const LD n = u.norm();
    return n > 0 && test((u / n).cast<double>());
  };
  for (const OPoly* P : {&A, &B})
    for (const auto& t : P->f)
      if (testL(triNormal(P->v[t[0]], P->v[t[1]], P->v[t[2]]))) return depth;
  std::vector<Vec3> ea, eb;
  for (const auto& e : A.e) ea.push_back((A.v[e[1]] - A.v[e[0]]).cast<double>());
  for (const auto& e : B.e) eb.push_back((B.v[e[1]] - B.v[e[0]]).cast<double>());
  for (std::size_t i = 0; i < ea.size(); ++i)
    for (std::size_t j = 0; j < eb.size(); ++j) {
      const Vec3 c = ea[i].cross(eb[j]);
      const double c2 = c.squaredNorm(), s2 = ea[i].squaredNorm() * eb[j].squaredNorm();
      if (!(c2 > 0) && !(s2 > 0)) continue;
      bool stop;
      if (c2 > 1e-12 * s2) stop = test(c / std::sqrt(c2));
      else stop = testL((A.v[A.e[i][1]] - A.v[A.e[i][0]]).cross(B.v[B.e[j][1]] - B.v[B.e[j][0]]));
      if (stop) return depth;
    }
  return any ? depth : 0;
}

// Lower bound on the penetration depth of two solid polytopes: a ball around p inside both.
LD pointDepth(const OPoly& P, const LV& p) {
  if (!P.solid) return 0;
  LD m = kInf;
  for (std::size_t i = 0; i < P.f.size(); ++i)
    if (P.fn[i].squaredNorm() > 0) m = std::min(m, -P.fn[i].dot(p - P.v[P.f[i][0]]));
  return m;
}

// ------------------------------------------------------------------------------------------------
// Random numbers and bodies.

struct Rng {
  std::mt19937_64 g;
  explicit Rng(std::uint64_t s) : g(s) {}
  double uni(double a = 0, double b = 1) { return std::uniform_real_distribution<double>(a, b)(g); }
  int irange(int a, int b) { return std::uniform_int_distribution<int>(a, b)(g); }
  double normal() { return std::normal_distribution<double>(0, 1)(g); }
  bool coin(double p = 0.5) { return uni() < p; }
  Vec3 unit() {
    Vec3 v;
    do v = Vec3(normal(), normal(), normal());
    while (v.norm() < 1e-6);
    return v.normalized();
  }
  Vec3 inBall() { return unit() * std::cbrt(uni()); }
  Quat rotation() {
    Eigen::Vector4d q;
    do q = Eigen::Vector4d(normal(), normal(), normal(), normal());
    while (q.norm() < 1e-6);
    q.normalize();
    return Quat(q[0], q[1], q[2], q[3]);
  }
};

struct Body {
  std::string type = "point";
  std::vector<Vec3> pts;
  Vec3 vec = Vec3::Ones();  // ellipsoid radii / box half extents
  double radius = 0, halfLength = 0, height = 0, inflate = 0;
  Quat q = Quat::Identity();
  Vec3 pos = Vec3::Zero();
  proxima::Shape shape;
  proxima::Transform pose;

  std::string buildShape() {
    using namespace proxima;
    if (type == "point") shape = Shape(Point{pts.at(0)}, inflate);
    else if (type == "segment") shape = Shape(Segment{pts.at(0), pts.at(1)}, inflate);
    else if (type == "triangle") shape = Shape(Triangle{{pts.at(0), pts.at(1), pts.at(2)}}, inflate);
    else if (type == "tetrahedron") shape = Shape(Tetrahedron{{pts.at(0), pts.at(1), pts.at(2), pts.at(3)}}, inflate);
    else if (type == "sphere") shape = Shape(Sphere{radius}, inflate);
    else if (type == "ellipsoid") shape = Shape(Ellipsoid{vec}, inflate);
    else if (type == "box") shape = Shape(Box{vec}, inflate);
    else if (type == "capsule") shape = Shape(Capsule{radius, halfLength}, inflate);
    else if (type == "cylinder") shape = Shape(Cylinder{radius, halfLength}, inflate);
    else if (type == "cone") shape = Shape(Cone{radius, height}, inflate);
    else if (type == "polytope") {
      auto r = Polytope::fromPoints(pts);
      if (!r) return "Polytope::fromPoints failed: " + r.message();
      shape = Shape(std::move(r).value(), inflate);
    } else return "unknown type " + type;
    place();
    return "";
  }
  void place() { pose = proxima::Transform(q, pos); }

  std::string json() const {
    std::string s = "{\"type\":\"" + type + "\"";
    if (type == "point") s += ",\"point\":" + vjson(pts[0]);
    else if (type == "segment" || type == "triangle" || type == "tetrahedron" || type == "polytope") {
      s += ",\"points\":[";
      for (std::size_t i = 0; i < pts.size(); ++i) s += (i ? "," : "") + vjson(pts[i]);
      s += "]";
    } else if (type == "sphere") s += ",\"radius\":" + fmt(radius);
    else if (type == "ellipsoid") s += ",\"radii\":" + vjson(vec);
    else if (type == "box") s += ",\"half_extents\":" + vjson(vec);
    else if (type == "capsule" || type == "cylinder") s += ",\"radius\":" + fmt(radius) + ",\"half_length\":" + fmt(halfLength);
    else if (type == "cone") s += ",\"radius\":" + fmt(radius) + ",\"height\":" + fmt(height);
    s += ",\"position\":" + vjson(pos) + ",\"orientation\":[" + fmt(q.w()) + "," + fmt(q.x()) + "," + fmt(q.y()) +
         "," + fmt(q.z()) + "],\"inflate\":" + fmt(inflate) + "}";
    return s;
  }
};

std::string pairJson(const Body& a, const Body& b) { return "{\"a\":" + a.json() + ",\"b\":" + b.json() + "}"; }

// ------------------------------------------------------------------------------------------------
// Oracle view of a body: core (polytopal or analytic) + total radius.

struct LocalCore {
  enum Kind { Poly, Ell, Cyl, Cone } kind = Poly;
  std::vector<LV> verts;                  // hull vertices (solid) or unique input points
  std::vector<std::array<int, 3>> tris;   // outward boundary triangles when solid
  std::vector<LV> supp;                   // every input point (support function)
  LV radii = LV::Ones();
  LD cr = 0, ch = 0;                      // cylinder/cone radius and half height
  LD rad = 0;                             // total rounding radius
  LD bound = 0;                           // bounding radius about the local origin (incl. rad)
  std::string hullError;                  // the library hull failed the independent check
  LD hullOutside = 0;                     // max (input point beyond a hull face) / extent
  LD flatThickness = 0;                   // library-flat cloud: thickness / extent
};

std::vector<LV> uniquePts(const std::vector<Vec3>& pts) {
  std::vector<Vec3> u;
  for (const Vec3& p : pts)
    if (std::find(u.begin(), u.end(), p) == u.end()) u.push_back(p);
  std::vector<LV> out;
  for (const Vec3& p : u) out.push_back(L(p));
  return out;
}

void orientOutward(const std::vector<LV>& v, std::vector<std::array<int, 3>>& tris) {
  LV c = LV::Zero();
  for (const LV& p : v) c += p;
  c /= LD(v.size());
  for (auto& t : tris)
    if (triNormal(v[t[0]], v[t[1]], v[t[2]]).dot(c - v[t[0]]) > 0) std::swap(t[1], t[2]);
}

// Independent check of a solid hull from the library: vertices are input points, the triangles
// form a closed oriented surface, every input point lies inside every face plane.
std::string verifyHull(const proxima::Polytope& P, const std::vector<Vec3>& input, LD& outside) {
  const auto& D = P.data();
  const int nv = static_cast<int>(D.vertices.size());
  if (D.triangles.empty()) return "solid hull without triangles";
  for (const Vec3& v : D.vertices)
    if (std::find(input.begin(), input.end(), v) == input.end()) return "hull vertex is not an input point";
  std::map<std::pair<int, int>, int> cnt;
  for (const auto& t : D.triangles)
    for (int k = 0; k < 3; ++k) {
      if (t[k] < 0 || t[k] >= nv) return "triangle index out of range";
      ++cnt[{t[k], t[(k + 1) % 3]}];
    }
  for (const auto& [e, c] : cnt) {
    const auto it = cnt.find({e.second, e.first});
    if (c != 1 || it == cnt.end() || it->second != 1)
      return "hull triangles are not a closed oriented surface (edge " + std::to_string(e.first) + "-" +
             std::to_string(e.second) + ")";
  }
  LD extent = 0;
  for (const Vec3& p : input) extent = std::max(extent, (L(p) - L(input[0])).norm());
  LV c = LV::Zero();
  for (const Vec3& v : D.vertices) c += L(v);
  c /= LD(nv);
  LD vol = 0;
  for (const auto& t : D.triangles) {
    const LV a = L(D.vertices[t[0]]), b = L(D.vertices[t[1]]), cc = L(D.vertices[t[2]]);
    vol += (a - c).dot((b - c).cross(cc - c));
    const LV n = triNormal(a, b, cc);
    // Sliver triangles (area ~ roundoff x extent^2, from near-duplicate points) have no reliable
    // normal of their own: the rounding of their vertices alone tilts it by ~u extent^2 / |n|.
    if (!(n.norm() > 1e-10L * extent * extent)) continue;
    const LV u = n / n.norm();
    for (const Vec3& p : input) outside = std::max(outside, u.dot(L(p) - a) / extent);
  }
  // A needle or slab whose volume is at roundoff (|6V| <= 1e-10 extent^3) has no reliable orientation.
  if (!(vol > 0) && std::abs(vol) > 1e-10L * extent * extent * extent) return "hull triangles are oriented inward";
  // Qhull merges facets whose points are coplanar within its roundoff (~1e-12 x extent with
  // near-duplicate points); the library also merges points closer than 1e-12 x extent. Hull faces are
  // used for mass properties and adjacency, where 1e-11 x extent is far below any effect.
  if (outside > 1e-11L) return "an input point lies outside a hull face by " + fmtL(outside) + " x extent";
  return "";
}

// Independent (slow, O(n^4)) hull for when the library's triangles fail the check: every triple
// whose plane has all points on one side (to 1e-13 x extent), oriented outward. Not a manifold
// (coplanar facets appear as overlapping triangles) but the union covers the boundary and the
// planes bound the hull, which is all the oracle needs.
std::vector<std::array<int, 3>> bruteHull(const std::vector<LV>& v) {
  LD extent = 0;
  for (const LV& p : v) extent = std::max(extent, (p - v[0]).norm());
  const LD eps = 1e-13L * extent;
  const int n = static_cast<int>(v.size());
  std::vector<std::array<int, 3>> tris;
  for (int i = 0; i < n; ++i)
    for (int j = i + 1; j < n; ++j)
      for (int k = j + 1; k < n; ++k) {
        const LV nn = triNormal(v[i], v[j], v[k]);
        const LD len = nn.norm();
        if (!(len > 1e-12L * extent * extent)) continue;
        const LV u = nn / len;
        bool below = true, above = true;
        for (const LV& p : v) {
          const LD s = u.dot(p - v[i]);
          below = below && s <= eps, above = above && s >= -eps;
        }
        if (below) tris.push_back({i, j, k});
        else if (above) tris.push_back({i, k, j});
      }
  return tris;
}

LD flatThickness(const std::vector<LV>& v) {
  if (v.size() < 2) return 0;
  LD extent = 0;
  std::size_t i1 = 0;
  for (std::size_t i = 0; i < v.size(); ++i)
    if ((v[i] - v[0]).norm() > extent) extent = (v[i] - v[0]).norm(), i1 = i;
  if (!(extent > 0)) return 0;
  // best plane through v0, v[i1] and the farthest point from that line
  const LV e = (v[i1] - v[0]) / extent;
  std::size_t i2 = 0;
  LD far = 0;
  for (std::size_t i = 0; i < v.size(); ++i) {
    const LV q = v[i] - v[0];
    const LD d = (q - q.dot(e) * e).norm();
    if (d > far) far = d, i2 = i;
  }
  const LV n = triNormal(v[0], v[i1], v[i2]);
  if (!(n.norm() > 0)) return far / extent;
  LD off = 0;
  for (const LV& p : v) off = std::max(off, std::abs((n / n.norm()).dot(p - v[0])));
  return off / extent;
}

LocalCore makeLocalCore(const Body& b) {
  LocalCore lc;
  lc.rad = b.inflate;
  auto setPoly = [&](const std::vector<Vec3>& pts) {
    lc.supp.clear();
    for (const Vec3& p : pts) lc.supp.push_back(L(p));
    lc.verts = uniquePts(pts);
  };
  if (b.type == "point") setPoly({b.pts[0]});
  else if (b.type == "segment") setPoly({b.pts[0], b.pts[1]});
  else if (b.type == "triangle") setPoly({b.pts[0], b.pts[1], b.pts[2]});
  else if (b.type == "tetrahedron") {
    setPoly(b.pts);
    if (lc.verts.size() == 4) {
      // Orientation from the sign of the volume in quad precision (a centroid test is unreliable
      // for nearly flat tetrahedra): for a positive volume these faces point outward.
      const Q3 q0 = toQ(lc.verts[0]);
      const Q det = qdot(qcross(toQ(lc.verts[1]) - q0, toQ(lc.verts[2]) - q0), toQ(lc.verts[3]) - q0);
      if (det > 0) lc.tris = {{0, 2, 1}, {0, 1, 3}, {0, 3, 2}, {1, 2, 3}};
      if (det < 0) lc.tris = {{0, 1, 2}, {0, 3, 1}, {0, 2, 3}, {1, 3, 2}};
    }
  } else if (b.type == "box") {
    std::vector<Vec3> corners;
    for (int i = 0; i < 8; ++i)
      corners.emplace_back(i & 1 ? b.vec.x() : -b.vec.x(), i & 2 ? b.vec.y() : -b.vec.y(), i & 4 ? b.vec.z() : -b.vec.z());
    setPoly(corners);
    if ((b.vec.array() > 0).all()) {
      for (int k = 0; k < 3; ++k)
        for (int s = 0; s < 2; ++s) {
          const int k1 = (k + 1) % 3, k2 = (k + 2) % 3;
          auto idx = [&](int u, int w) { return (s << k) | (u << k1) | (w << k2); };
          const int c0 = idx(0, 0), c1 = idx(1, 0), c2 = idx(1, 1), c3 = idx(0, 1);
          lc.tris.push_back({c0, c1, c2});
          lc.tris.push_back({c0, c2, c3});
        }
      lc.verts.clear();
      for (const Vec3& c : corners) lc.verts.push_back(L(c));
      orientOutward(lc.verts, lc.tris);
    }
  } else if (b.type == "sphere") {
    setPoly({Vec3::Zero()});
    lc.rad += b.radius;
  } else if (b.type == "capsule") {
    setPoly({Vec3(0, 0, -b.halfLength), Vec3(0, 0, b.halfLength)});
    lc.rad += b.radius;
  } else if (b.type == "ellipsoid") {
    lc.kind = LocalCore::Ell;
    lc.radii = L(b.vec);
  } else if (b.type == "cylinder") {
    lc.kind = LocalCore::Cyl;
    lc.cr = b.radius, lc.ch = b.halfLength;
  } else if (b.type == "cone") {
    lc.kind = LocalCore::Cone;
    lc.cr = b.radius, lc.ch = LD(0.5) * b.height;
  } else if (b.type == "polytope") {
    const auto& P = std::get<proxima::Polytope>(b.shape.geometry());
    setPoly(b.pts);
    if (P.dimension() == 3) {
      lc.hullError = verifyHull(P, b.pts, lc.hullOutside);
      lc.verts.clear();
      if (lc.hullError.empty()) {
        for (const Vec3& v : P.vertices()) lc.verts.push_back(L(v));
        lc.tris = P.data().triangles;
      } else {  // the library's triangles are unusable: fall back on our own (slow) hull
        lc.verts = uniquePts(b.pts);
        lc.tris = bruteHull(lc.verts);
      }
    } else {
      lc.flatThickness = flatThickness(lc.verts);
    }
  }
  switch (lc.kind) {
    case LocalCore::Poly:
      for (const LV& p : lc.supp) lc.bound = std::max(lc.bound, p.norm());
      break;
    case LocalCore::Ell: lc.bound = lc.radii.maxCoeff(); break;
    case LocalCore::Cyl:
    case LocalCore::Cone: lc.bound = std::hypot(lc.cr, lc.ch); break;
  }
  lc.bound = lc.bound * (1 + 1e-15L) + lc.rad;
  return lc;
}

struct OBody {
  const LocalCore* lc = nullptr;
  LM R;
  LV t;
  OPoly poly;
  std::vector<LV> wsupp;
  LD scale = 0;
  std::vector<LV> wsuppUnique() const {
    std::vector<LV> u;
    for (const LV& p : wsupp)
      if (std::find(u.begin(), u.end(), p) == u.end()) u.push_back(p);
    return u;
  }
};

OBody makeOBody(const LocalCore& lc, const proxima::Transform& pose) {
  OBody o;
  o.lc = &lc;
  o.R = pose.rotation.cast<LD>();
  o.t = L(pose.translation);
  if (lc.kind == LocalCore::Poly) {
    std::vector<LV> w;
    for (const LV& p : lc.verts) w.push_back(o.R * p + o.t);
    o.poly = lc.tris.empty() ? makeFlat(std::move(w)) : makeSolid(std::move(w), lc.tris);
    for (const LV& p : lc.supp) o.wsupp.push_back(o.R * p + o.t);
  }
  o.scale = o.t.norm() + lc.bound;
  return o;
}

// max over the core of u.x (world), from analytic formulas.
LD coreSupport(const OBody& b, const LV& u) {
  const LocalCore& c = *b.lc;
  if (c.kind == LocalCore::Poly) {
    LD m = -kInf;
    for (const LV& p : b.wsupp) m = std::max(m, u.dot(p));
    return m;
  }
  const LV v = b.R.transpose() * u;
  LD h = 0;
  if (c.kind == LocalCore::Ell) h = c.radii.cwiseProduct(v).norm();
  else if (c.kind == LocalCore::Cyl) h = c.cr * std::hypot(v.x(), v.y()) + c.ch * std::abs(v.z());
  else h = std::max(v.z() * c.ch, c.cr * std::hypot(v.x(), v.y()) - v.z() * c.ch);
  return h + u.dot(b.t);
}
LD fullSupport(const OBody& b, const LV& u) { return coreSupport(b, u) + b.lc->rad * u.norm(); }

// Closest point of the core to a world point (the point itself inside), from the implicit
// definitions; coreDistance is its distance.
LV coreClosest(const OBody& b, const LV& x) {
  const LocalCore& c = *b.lc;
  if (c.kind == LocalCore::Poly) return pointPolyClosest(b.poly, x);
  const LV y = b.R.transpose() * (x - b.t);
  LV z;
  if (c.kind == LocalCore::Ell) {
    z = ellipsoidClosest(y, c.radii);
  } else {
    const LD rho = std::hypot(y.x(), y.y());
    LD rr, zz;
    if (c.kind == LocalCore::Cyl) {
      rr = std::min(rho, c.cr);
      zz = std::clamp(y.z(), -c.ch, c.ch);
    } else {  // cone: closest point in the (rho, z) half plane to the triangle (-R,-h), (R,-h), (0,h)
      const LV q = closestOnTriangle(LV(rho, y.z(), 0), LV(-c.cr, -c.ch, 0), LV(c.cr, -c.ch, 0), LV(0, c.ch, 0));
      rr = std::max(q.x(), LD(0)), zz = q.y();
    }
    if (rr == rho && zz == y.z()) return x;  // inside
    z = rho > 0 ? LV(y.x() * (rr / rho), y.y() * (rr / rho), zz) : LV(0, 0, zz);
  }
  if (z == y) return x;
  return b.R * z + b.t;
}
LD coreDistance(const OBody& b, const LV& x) { return (x - coreClosest(b, x)).norm(); }

// A ball of radius m/sqrt(3) around p lies in both bodies if the 7 octahedron points do.
LD certifyOverlap(const OBody& A, const OBody& B, const LV& p, LD m) {
  for (int k = -1; k < 6; ++k) {
    LV x = p;
    if (k >= 0) x[k / 2] += (k % 2 ? m : -m);
    if (coreDistance(A, x) > A.lc->rad || coreDistance(B, x) > B.lc->rad) return -1;
  }
  return m / std::sqrt(LD(3));
}

// ------------------------------------------------------------------------------------------------
// Checks.

struct Ref {
  bool exact = false;
  LD d = 0;                  // exact: expected distance() (signed; -(rA+rB) when the cores overlap)
  LD lo = -kInf, hi = kInf;  // certified bounds on the signed distance
  LD margin = -1;            // certified overlap margin (> 0: overlapping at least this much)
  std::optional<LD> closedForm;
  bool hasNormal = false;  // exact oracle with the cores apart: the true normal (A to B)
  LV normal = LV::Zero();
  Ref swapped() const {
    Ref r = *this;
    r.normal = -normal;
    return r;
  }
};

std::string refStr(const Ref& r, LD S) {
  std::string s = "scale=" + fmtL(S);
  if (r.exact) s += " oracle_distance=" + fmtL(r.d);
  if (r.lo > -kInf) s += " lower_bound=" + fmtL(r.lo);
  if (r.hi < kInf) s += " upper_bound=" + fmtL(r.hi);
  if (r.margin > 0) s += " overlap_margin=" + fmtL(r.margin);
  if (r.closedForm) s += " closed_form=" + fmtL(*r.closedForm);
  return s;
}

std::string resultStr(const DistanceResult& r) {
  return "status=" + std::string(proxima::toString(r.status)) + " distance=" + fmt(r.distance) +
         " witness_a=" + vjson(r.witnessA) + " witness_b=" + vjson(r.witnessB) + " normal=" + vjson(r.normal) +
         " iterations=" + std::to_string(r.iterations) + " simplex=" + std::to_string(r.simplexSize) +
         (r.message.empty() ? "" : " message=\"" + r.message + "\"");
}

LD tolFor(LD S, LD d) { return 1e-12L * S + 1e-12L * std::abs(d); }

// Directions that are exact for the certificate: unit outward normals of the core at a boundary
// point x where the normal cone may be a single ray (faces, smooth surface points), and unit
// directions of polytope edges through x. A direction computed as a difference of two nearby
// points is only accurate to (rounding of the points) / distance, and where a support function is
// not smooth (faces, edges) the separation loses that error to first order; these do not.
void localGeometry(const OBody& b, const LV& x, LD eta, std::vector<LV>& normals, std::vector<LV>& edges) {
  const LocalCore& c = *b.lc;
  if (c.kind == LocalCore::Poly) {
    const OPoly& P = b.poly;
    for (std::size_t j = 0; j < P.f.size(); ++j) {
      if ((x - P.fc[j]).norm() - P.fr[j] > eta) continue;
      const auto& t = P.f[j];
      if ((x - closestOnTriangle(x, P.v[t[0]], P.v[t[1]], P.v[t[2]])).norm() > eta) continue;
      if (P.solid) {
        if (P.fn[j].squaredNorm() > 0) normals.push_back(P.fn[j]);
      } else {
        const LV n = triNormal(P.v[t[0]], P.v[t[1]], P.v[t[2]]);
        if (n.norm() > 0) normals.push_back(n / n.norm()), normals.push_back(-n / n.norm());
      }
    }
    for (std::size_t j = 0; j < P.e.size(); ++j) {
      if ((x - P.ec[j]).norm() - P.er[j] > eta) continue;
      const LV a = P.v[P.e[j][0]], e = P.v[P.e[j][1]] - a;
      if (!(e.norm() > 0) || (x - closestOnSegment(x, a, a + e)).norm() > eta) continue;
      edges.push_back(e / e.norm());
    }
    return;
  }
  const LV y = b.R.transpose() * (x - b.t);
  auto push = [&](const LV& local) {
    const LD n = local.norm();
    if (n > 0) normals.push_back(b.R * (local / n));
  };
  if (c.kind == LocalCore::Ell) {
    push(LV(y.x() / (c.radii.x() * c.radii.x()), y.y() / (c.radii.y() * c.radii.y()), y.z() / (c.radii.z() * c.radii.z())));
    return;
  }
  const LD rho = std::hypot(y.x(), y.y());
  if (c.kind == LocalCore::Cyl) {
    if (std::abs(rho - c.cr) <= eta && rho > 0) push(LV(y.x(), y.y(), 0));
    if (std::abs(y.z() - c.ch) <= eta) push(LV(0, 0, 1));
    if (std::abs(y.z() + c.ch) <= eta) push(LV(0, 0, -1));
    return;
  }
  // cone: base z = -h, lateral line from (R, -h) to (0, h) in the (rho, z) half plane
  if (std::abs(y.z() + c.ch) <= eta) push(LV(0, 0, -1));
  const LD nr = 2 * c.ch, nz = c.cr, nn = std::hypot(nr, nz);  // outward normal of the lateral line
  if (nn > 0 && rho > 0 && std::abs((rho - c.cr) * nr + (y.z() + c.ch) * nz) / nn <= eta)
    push(LV(y.x() / rho * nr, y.y() / rho * nr, nz * rho / rho));
}

// Certified bounds lo <= (core distance) <= hi, seeded by GJK's core witnesses and independent of
// GJK's arithmetic: alternating projections (our closest-point maps) give pairs of core points
// (upper bounds); at the final pair, exact local normals / edge directions give candidate
// directions whose separation from analytic support functions is a lower bound (weak duality).
void certifyCores(const OBody& A, const OBody& B, LV pA, LV pB, const LV& n, LD S, LD& lo, LD& hi) {
  auto sep = [&](const LV& u) { return -coreSupport(B, -u) - coreSupport(A, u); };
  auto tryDir = [&](const LV& u) {
    const LD un = u.norm();
    if (un > 0 && std::isfinite(un)) lo = std::max(lo, sep(u / un));
  };
  lo = 0;  // a distance is never negative (overlapping cores: GJK may report a rounding-level distance)
  hi = kInf;
  tryDir(n);
  for (int it = 0; it < 40; ++it) {
    const LV nA = coreClosest(A, pB);
    const LV nB = coreClosest(B, nA);
    hi = std::min({hi, (pB - nA).norm(), (nB - nA).norm()});
    const LD moved = (nA - pA).norm() + (nB - pB).norm();
    pA = nA, pB = nB;
    if (moved <= 1e-19L * S) break;
  }
  const LV diff = pB - pA;
  tryDir(diff);
  const LD eta = 1e-10L * S;
  std::vector<LV> nrmA, nrmB, edA, edB;
  localGeometry(A, pA, eta, nrmA, edA);
  localGeometry(B, pB, eta, nrmB, edB);
  for (const LV& u : nrmA) tryDir(u);
  for (const LV& u : nrmB) tryDir(-u);
  for (const auto* E : {&edA, &edB})
    for (const LV& e : *E) tryDir(diff - diff.dot(e) * e);
  for (const LV& ea : edA)
    for (const LV& eb : edB) {
      const LV c = ea.cross(eb);
      tryDir(c.dot(diff) >= 0 ? c : LV(-c));
    }
}

struct CheckOut {
  std::vector<std::string> errs;
  LD err = 0;      // |d - oracle| (exact oracle) or the certified error bound
  LD witErr = 0;   // witness defects (membership, |wB - wA| vs d, along-normal), absolute
  LD normErr = 0;  // |n - n_oracle| * core distance (exact oracle, cores apart)
};

// Witness points are checked at the brief's ~1e-9 relative tolerance; distances at 1e-12.
LD witnessTol(LD S) { return 1e-9L * S; }

CheckOut checkResult(const OBody& A, const OBody& B, const Ref& ref, const DistanceResult& r, LD S) {
  CheckOut c;
  auto fail = [&](const std::string& s) { c.errs.push_back(s); };
  if (r.status != Status::Separated && r.status != Status::Overlapping)
    fail("status " + std::string(proxima::toString(r.status)) + " for valid input");
  if (!std::isfinite(r.distance) || !r.witnessA.allFinite() || !r.witnessB.allFinite() || !r.normal.allFinite()) {
    fail("non-finite output");
    c.err = kInf;
    return c;
  }
  const LD d = r.distance, tol = tolFor(S, d), tolW = witnessTol(S);
  const LD rA = A.lc->rad, rB = B.lc->rad;
  const LV wA = L(r.witnessA), wB = L(r.witnessB), n = L(r.normal);
  if (n.squaredNorm() > 0) {
    if (std::abs(n.norm() - 1) > 1e-12L) fail("normal is not unit (|n| = " + fmtL(n.norm()) + ")");
    const LV cA = wA - rA * n, cB = wB + rB * n;
    const LD mA = coreDistance(A, cA), mB = coreDistance(B, cB);
    const LD dc = d + rA + rB;
    const LD eNorm = std::abs((cB - cA).norm() - dc), eDir = (cB - cA - dc * n).norm();
    c.witErr = std::max({mA, mB, eNorm, eDir});
    if (mA > tolW) fail("witness_a is outside A by " + fmtL(mA));
    if (mB > tolW) fail("witness_b is outside B by " + fmtL(mB));
    if (eNorm > tolW)
      fail("|witness_b - witness_a| (cores) = " + fmtL((cB - cA).norm()) + " differs from distance + radii = " + fmtL(dc));
    if (eDir > tolW) fail("witness_b - witness_a differs from distance * normal by " + fmtL(eDir));
    if (!ref.exact || std::getenv("PROXIMA_FUZZ_CERT_ON_EXACT")) {
      LD lo, hi;
      certifyCores(A, B, cA, cB, n, S, lo, hi);
      // lo <= true core distance <= hi. Below lo: wrong. Above lo + tol: not certified optimal
      // (the dual check of the brief, with the best direction we can find). Above hi: wrong.
      c.err = std::max({dc - lo, lo - dc, dc - hi, LD(0)});
      if (lo - dc > tol) fail("certificate: core distance " + fmtL(dc) + " below the certified lower bound " + fmtL(lo));
      else if (dc - lo > tol)
        fail("certificate: core distance " + fmtL(dc) + " not certified: best dual lower bound " + fmtL(lo) +
             (dc > hi + tol ? ", and above the certified upper bound " + fmtL(hi) : std::string()));
    }
    if (ref.hasNormal) c.normErr = (n - ref.normal).norm() * dc;
  } else {
    const LD mA = coreDistance(A, wA), mB = coreDistance(B, wB);
    c.witErr = std::max({mA, mB, (wA - wB).norm()});
    if (mA > tolW) fail("witness_a is outside the core of A by " + fmtL(mA));
    if (mB > tolW) fail("witness_b is outside the core of B by " + fmtL(mB));
    if ((wA - wB).norm() > tolW) fail("zero normal (cores overlap) but witnesses " + fmtL((wA - wB).norm()) + " apart");
    if (std::abs(d + (rA + rB)) > 1e-15L * (rA + rB)) fail("zero normal but distance != -(rA + rB)");
    c.err = (wA - wB).norm();
  }
  if (ref.exact) {
    c.err = std::abs(d - ref.d);
    if (c.err > tol) fail("|d - d_oracle| = " + fmtL(c.err) + " > tol " + fmtL(tol));
  }
  if (ref.closedForm) {
    const LD e = std::abs(d - *ref.closedForm);
    c.err = std::max(c.err, e);
    if (e > tol) fail("|d - d_closed_form| = " + fmtL(e) + " > tol " + fmtL(tol));
  }
  if (d < ref.lo - tol) fail("distance below the certified lower bound of the configuration");
  if (d > ref.hi + tol) fail("distance above the certified upper bound of the configuration");
  const LD thr = 1e-9L * S;
  const LD sepLower = ref.exact ? ref.d : ref.lo;
  if (sepLower > thr && r.status != Status::Separated) fail("bodies are apart (by " + fmtL(sepLower) + ") but status is not separated");
  if (ref.margin > thr && r.status != Status::Overlapping)
    fail("bodies overlap (margin " + fmtL(ref.margin) + ") but status is not overlapping");
  return c;
}

void symCheck(const DistanceResult& ab, const DistanceResult& ba, LD S, LD rA, LD rB, std::vector<std::string>& errs,
              LD* symErr) {
  if (!std::isfinite(ab.distance) || !std::isfinite(ba.distance)) return;
  const LD tol = tolFor(S, std::max(std::abs(LD(ab.distance)), std::abs(LD(ba.distance))));
  const LD e = std::abs(LD(ab.distance) - LD(ba.distance));
  if (symErr) *symErr = std::max(*symErr, e / S);
  if (e > tol) errs.push_back("swap(A,B) changes the distance by " + fmtL(e));
  if (ab.normal.squaredNorm() > 0 && ba.normal.squaredNorm() > 0) {
    const LD dc = LD(ab.distance) + rA + rB;
    if (dc > 1e3L * tol) {
      const LD bound = 4 * std::sqrt(2 * tol / dc + (tol / dc) * (tol / dc)) + 1e-12L;
      const LD ne = (L(ab.normal) + L(ba.normal)).norm();
      if (ne > bound) errs.push_back("swap(A,B) does not negate the normal (|n_ab + n_ba| = " + fmtL(ne) + ")");
    }
  }
}

// ------------------------------------------------------------------------------------------------
// Families.

// Gross-error bar for the edge-of-precision families: relative to the coordinate scale S.
constexpr LD kGrossRel = 1e-6L;
// Families whose strict misses are reported rather than failed (measured limits of double-precision
// GJK: needle hulls and 1e4 scale ratios at gaps ~1e-9 S, curved surfaces' linear convergence).
const std::set<std::string> kEdgeOfPrecisionFamilies = {
    "FuzzPolytope.DegenerateHulls", "FuzzPolytope.ScaleRatio1e4", "FuzzSmooth.Curved", "FuzzSmooth.Inflated", "FuzzSmooth.ScaleRatio1e4",
    "FuzzSmooth.FarFromOrigin1e5", "FuzzClosedForm.CapsuleCapsule"};

struct FamilyStats {
  std::string name;
  std::uint64_t seed = 0;
  long pairs = 0, configs = 0, queries = 0;
  long svFail = 0, jFail = 0, svPrinted = 0, jPrinted = 0, hullPrinted = 0;
  long hullFail = 0, oracleInconsistent = 0, baseSkipped = 0, exactConfigs = 0, certConfigs = 0;
  long sepRequired = 0, overlapRequired = 0;
  // Families at the edge of double precision (see docs/validation.md §5): their queries are held to
  // the strict 1e-12 S bar and every miss is counted and printed, but only gross errors fail the test
  // (wrong status, non-finite output, or an error / misclassification beyond kGrossRel * S).
  bool strict = true;
  long svStrictMiss = 0, svStrictPrinted = 0;
  std::map<std::string, LD> svMax, jMax, svMaxAbs;
  std::map<std::string, long> svStatus, svCat, jCat;
  std::map<int, long> svHist;  // SV queries by decade of error / scale
  LD svSym = 0, svWit = 0, svNorm = 0, hullOutside = 0, flatThick = 0;
  int svMaxIter = 0, jMaxIter = 0;
  std::vector<std::string> order;
};

struct PairCtx {
  FamilyStats* st;
  long index;
  std::uint64_t pairSeed;
};

GjkOptions opts(SubAlgorithm s) {
  GjkOptions o;
  o.subAlgorithm = s;
  return o;
}

struct ConfigOut {
  DistanceResult sv;
  bool svOk = false;
};

ConfigOut runConfig(const PairCtx& pc, const std::string& cfg, const Body& A, const Body& B, const OBody& oa,
                    const OBody& ob, const Ref& ref) {
  FamilyStats& st = *pc.st;
  if (!st.svMax.count(cfg)) st.order.push_back(cfg), st.svMax[cfg] = 0, st.jMax[cfg] = 0, st.svMaxAbs[cfg] = 0;
  ++st.configs;
  (ref.exact ? st.exactConfigs : st.certConfigs)++;
  const LD S = std::max(oa.scale, ob.scale);
  if ((ref.exact ? ref.d : ref.lo) > 1e-9L * S) ++st.sepRequired;
  if (ref.margin > 1e-9L * S) ++st.overlapRequired;
  ConfigOut out;
  for (SubAlgorithm sa : {SubAlgorithm::SignedVolumes, SubAlgorithm::Johnson}) {
    const bool sv = sa == SubAlgorithm::SignedVolumes;
    const DistanceResult ab = proxima::distance(A.shape, A.pose, B.shape, B.pose, opts(sa));
    const DistanceResult ba = proxima::distance(B.shape, B.pose, A.shape, A.pose, opts(sa));
    st.queries += 2;
    const CheckOut c1 = checkResult(oa, ob, ref, ab, S), c2 = checkResult(ob, oa, ref.swapped(), ba, S);
    std::vector<std::string> symErrs;
    symCheck(ab, ba, S, oa.lc->rad, ob.lc->rad, symErrs, sv ? &st.svSym : nullptr);
    const LD err = std::max(c1.err, c2.err);
    if (sv) {
      st.svMax[cfg] = std::max(st.svMax[cfg], err / S);
      st.svMaxAbs[cfg] = std::max(st.svMaxAbs[cfg], err);
      st.svMaxIter = std::max({st.svMaxIter, ab.iterations, ba.iterations});
      st.svWit = std::max({st.svWit, c1.witErr / S, c2.witErr / S});
      for (const LD e : {c1.err, c2.err}) {
        const int b = e / S < 1e-15L ? -16 : e / S >= 1e-4L ? -4 : int(std::floor(std::log10(double(e / S))));
        ++st.svHist[b];
      }
      st.svNorm = std::max({st.svNorm, c1.normErr / S, c2.normErr / S});
      ++st.svStatus[std::string(proxima::toString(ab.status))];
      out.sv = ab;
      out.svOk = c1.errs.empty();
    } else {
      st.jMax[cfg] = std::max(st.jMax[cfg], err / S);
      st.jMaxIter = std::max({st.jMaxIter, ab.iterations, ba.iterations});
    }
    if (c1.errs.empty() && c2.errs.empty() && symErrs.empty()) continue;
    std::ostringstream m;
    m << st.name << " [" << (sv ? "SignedVolumes" : "Johnson") << "] seed=0x" << std::hex << st.seed << std::dec
      << " index=" << pc.index << " (pair rng seed 0x" << std::hex << pc.pairSeed << std::dec << ") config=" << cfg
      << "\n  pair (a,b): " << pairJson(A, B) << "\n  reference: " << refStr(ref, S);
    if (!c1.errs.empty()) {
      m << "\n  query (a,b): " << resultStr(ab);
      for (const auto& e : c1.errs) m << "\n    - " << e;
    }
    if (!c2.errs.empty()) {
      m << "\n  query (b,a): " << resultStr(ba);
      for (const auto& e : c2.errs) m << "\n    - " << e;
    }
    if (!symErrs.empty()) {
      m << "\n  (a,b): " << resultStr(ab) << "\n  (b,a): " << resultStr(ba);
      for (const auto& e : symErrs) m << "\n    - " << e;
    }
    {
      std::set<std::string> cats;
      const std::vector<std::string>* lists[] = {&c1.errs, &c2.errs, &symErrs};
      for (const std::vector<std::string>* E : lists)
        for (const auto& e : *E) cats.insert(e.substr(0, e.find_first_of(":0123456789(")));
      for (const auto& k : cats) ++(sv ? st.svCat : st.jCat)[k + " [" + cfg + "]"];
    }
    if (sv && !st.strict) {
      bool gross = false;
      for (const DistanceResult* r : {&ab, &ba}) {
        if (r->status != Status::Separated && r->status != Status::Overlapping) gross = true;
        if (!std::isfinite(r->distance)) gross = true;
      }
      if (err > kGrossRel * S) gross = true;
      const LD refSep = ref.exact ? ref.d : ref.lo;
      if (refSep > kGrossRel * S && (ab.status == Status::Overlapping || ba.status == Status::Overlapping)) gross = true;
      if (ref.margin > kGrossRel * S && (ab.status == Status::Separated || ba.status == Status::Separated)) gross = true;
      if (!gross) {
        ++st.svStrictMiss;
        if (st.svStrictPrinted++ < 3) std::cout << "[fuzz][strict miss, reported] " << m.str() << "\n";
        continue;
      }
    }
    if (sv) {
      ++st.svFail;
      if (st.svPrinted++ < 12) ADD_FAILURE() << m.str();
    } else {
      ++st.jFail;
      if (st.jPrinted++ < 2) std::cout << "[fuzz][johnson, informational] " << m.str() << "\n";
    }
  }
  return out;
}

Ref exactRef(const PairCtx& pc, const OBody& A, const OBody& B, PolyDist* out = nullptr,
             const std::vector<LV>& depthProbes = {}) {
  const PolyDist pd = polyPolyDistance(A.poly, B.poly);
  if (out) *out = pd;
  if (std::getenv("PROXIMA_FUZZ_DEBUG")) {  // cross-check the hull-based oracle against all input triples
    const PolyDist p2 = polyPolyDistance(makeFlat(A.wsuppUnique()), makeFlat(B.wsuppUnique()));
    std::printf("oracle hull: overlap %d d %.20Lg | all triples: overlap %d d %.20Lg\n", pd.overlap, pd.d, p2.overlap, p2.d);
  }
  const LD rA = A.lc->rad, rB = B.lc->rad;
  const LD S = std::max(A.scale, B.scale);
  Ref ref;
  ref.exact = true;
  ref.d = pd.overlap ? -(rA + rB) : pd.d - rA - rB;
  if (pd.overlap || pd.d == 0) {
    // Certified overlap margin of the cores: exact SAT depth when affordable, otherwise the
    // radius of a ball inside both around a few probe points (a lower bound).
    LD depth = 0;
    const double cost = double(A.poly.e.size()) * double(B.poly.e.size()) * double(A.poly.v.size() + B.poly.v.size());
    if (cost <= 4e5) {
      depth = satDepth(A.poly, B.poly, 1e-9L * S);
      if (depth < -1e-12L * S) {
        ++pc.st->oracleInconsistent;
        ADD_FAILURE() << pc.st->name << " index=" << pc.index << ": oracle inconsistency (brute force says the cores "
                      << "touch/overlap, SAT finds a separating axis with gap " << fmtL(-depth) << ")";
      }
    } else {
      std::vector<LV> probes = depthProbes;
      probes.push_back(LD(0.5) * (A.t + B.t));
      probes.push_back(A.t);
      probes.push_back(B.t);
      for (const LV& p : probes) depth = std::max(depth, std::min(pointDepth(A.poly, p), pointDepth(B.poly, p)));
    }
    ref.margin = std::max(depth, LD(0)) + rA + rB;
  } else {
    ref.margin = -ref.d;
    if (pd.d > 0) ref.hasNormal = true, ref.normal = (pd.pb - pd.pa) / pd.d;
  }
  return ref;
}

using ClosedForm = std::function<LD(const Body& a, const Body& b)>;

void runPair(const PairCtx& pc, Rng& rng, Body A, Body B, const ClosedForm& closed) {
  FamilyStats& st = *pc.st;
  ++st.pairs;
  for (Body* b : {&A, &B})
    if (const std::string e = b->buildShape(); !e.empty()) {
      ++st.svFail;
      ADD_FAILURE() << st.name << " index=" << pc.index << ": " << e << "\n  body: " << b->json();
      return;
    }
  const LocalCore la = makeLocalCore(A), lb = makeLocalCore(B);
  for (const auto* lc : {&la, &lb}) {
    st.hullOutside = std::max(st.hullOutside, lc->hullOutside);
    st.flatThick = std::max(st.flatThick, lc->flatThickness);
    if (!lc->hullError.empty()) {
      ++st.hullFail;
      if (st.hullPrinted++ < 5)
        ADD_FAILURE() << st.name << " index=" << pc.index << ": library hull (Polytope::data().triangles) failed "
                      << "the independent check: " << lc->hullError << " (the oracle falls back on its own hull)"
                      << "\n  pair: " << pairJson(A, B);
    }
  }
  const bool exact = la.kind == LocalCore::Poly && lb.kind == LocalCore::Poly;
  const LD rA = la.rad, rB = lb.rad;
  const double RA = double(la.bound), RB = double(lb.bound);
  const double Lg = std::max({RA, RB, 1e-12});
  const double Rmin = std::max(std::min(RA, RB), 1e-6 * Lg);
  const Vec3 dir = rng.unit();

  auto evaluate = [&](const std::string& cfg, Ref ref, const OBody& oa, const OBody& ob) {
    if (closed) ref.closedForm = closed(A, B);
    if (closed && exact) {
      const LD S = std::max(oa.scale, ob.scale);
      if (std::abs(*ref.closedForm - ref.d) > 1e-14L * S) {
        ++st.oracleInconsistent;
        ADD_FAILURE() << st.name << " index=" << pc.index << " config=" << cfg << ": oracle " << fmtL(ref.d)
                      << " disagrees with the closed form " << fmtL(*ref.closedForm) << "\n  pair: " << pairJson(A, B);
      }
    }
    return runConfig(pc, cfg, A, B, oa, ob, ref);
  };
  const OBody oa = makeOBody(la, A.pose);

  // 1. random placement (mostly overlapping or close).
  {
    B.pos = A.pos + dir * ((RA + RB) * rng.uni(0.2, 1.2));
    B.place();
    const OBody ob = makeOBody(lb, B.pose);
    Ref ref;
    if (exact) ref = exactRef(pc, oa, ob);
    else {
      ref.lo = (ob.t - oa.t).norm() - la.bound - lb.bound;
      ref.margin = certifyOverlap(oa, ob, LD(0.5) * (oa.t + ob.t), LD(0.05) * Rmin);
    }
    evaluate("random", ref, oa, ob);
  }
  // 2. separated base: bounding balls apart.
  const Vec3 basePos = A.pos + dir * (RA + RB + Lg * rng.uni(0.05, 1.0));
  B.pos = basePos;
  B.place();
  LV n0, wA0, wB0;
  LD d0 = 0, slack = 0;
  {
    const OBody ob = makeOBody(lb, B.pose);
    Ref ref;
    PolyDist pd;
    if (exact) ref = exactRef(pc, oa, ob, &pd);
    else ref.lo = (ob.t - oa.t).norm() - la.bound - lb.bound;
    const ConfigOut co = evaluate("separated", ref, oa, ob);
    if (exact) {
      const LV diff = pd.pb - pd.pa;
      if (pd.overlap || !(diff.norm() > 0)) {
        ++st.oracleInconsistent;
        ADD_FAILURE() << st.name << " index=" << pc.index << ": oracle finds contact between bodies whose bounding "
                      << "balls are apart\n  pair: " << pairJson(A, B);
        return;
      }
      n0 = diff / diff.norm();
      d0 = diff.norm() - rA - rB;
      wA0 = pd.pa + rA * n0;
      wB0 = pd.pb - rB * n0;
    } else {
      if (!co.svOk || !(co.sv.normal.squaredNorm() > 0)) {
        ++st.baseSkipped;
        return;
      }
      n0 = L(co.sv.normal);
      n0 /= n0.norm();
      d0 = co.sv.distance;
      wA0 = L(co.sv.witnessA);
      wB0 = L(co.sv.witnessB);
      slack = coreDistance(oa, wA0 - rA * n0) + coreDistance(ob, wB0 + rB * n0);
    }
  }
  const Vec3 nd = n0.cast<double>();
  // 3. near-touching gaps along the normal.
  const std::pair<const char*, double> gaps[] = {{"gap1e-3", 1e-3}, {"gap1e-6", 1e-6}, {"gap1e-9", 1e-9}};
  for (const auto& [name, g] : gaps) {
    B.pos = basePos + double(LD(g * Lg) - d0) * nd;
    B.place();
    const OBody ob = makeOBody(lb, B.pose);
    Ref ref;
    if (exact) ref = exactRef(pc, oa, ob);
    else {
      const LV s = L(B.pos) - L(basePos);
      ref.lo = -fullSupport(ob, -n0) - fullSupport(oa, n0);
      ref.hi = (wB0 + s - wA0).norm() + slack;
    }
    evaluate(name, ref, oa, ob);
  }
  // 4. overlaps: translate past contact by delta along the normal.
  const std::pair<const char*, double> overlaps[] = {{"overlap1e-3", 1e-3 * Rmin}, {"overlap0.3", 0.3 * Rmin}};
  for (const auto& [name, delta] : overlaps) {
    B.pos = basePos + double(LD(-delta) - d0) * nd;
    B.place();
    const OBody ob = makeOBody(lb, B.pose);
    Ref ref;
    const LV probe = wA0 - (rA + LD(0.5 * delta)) * n0;
    if (exact) ref = exactRef(pc, oa, ob, nullptr, {probe});
    else {
      ref.lo = -fullSupport(ob, -n0) - fullSupport(oa, n0);
      ref.margin = certifyOverlap(oa, ob, wA0 - LD(0.5 * delta) * n0, LD(0.25 * delta));
    }
    evaluate(name, ref, oa, ob);
  }
  // 5. (nearly) concentric.
  {
    B.pos = A.pos + (1e-3 * Rmin) * rng.unit();
    B.place();
    const OBody ob = makeOBody(lb, B.pose);
    Ref ref;
    if (exact) ref = exactRef(pc, oa, ob);
    else ref.margin = certifyOverlap(oa, ob, LD(0.5) * (oa.t + ob.t), LD(0.05) * Rmin);
    evaluate("concentric", ref, oa, ob);
  }
}

using Gen = std::function<void(Rng&, Body&, Body&)>;

void runFamily(const std::string& name, std::uint64_t seed, const Gen& gen, const ClosedForm& closed = nullptr) {
  const long n = fuzzPairs();
  FamilyStats st;
  st.name = name;
  st.strict = !kEdgeOfPrecisionFamilies.count(name);
  st.seed = seed;
  const auto t0 = std::chrono::steady_clock::now();
  long only = -1;  // PROXIMA_FUZZ_INDEX=i replays pair i of every family (reproduction)
  if (const char* e = std::getenv("PROXIMA_FUZZ_INDEX"); e && *e) only = std::strtol(e, nullptr, 10);
  for (long i = only >= 0 ? only : 0; i < (only >= 0 ? only + 1 : n); ++i) {
    const std::uint64_t ps = seed ^ (0x9E3779B97F4A7C15ull * static_cast<std::uint64_t>(i + 1));
    Rng rng(ps);
    Body A, B;
    gen(rng, A, B);
    runPair(PairCtx{&st, i, ps}, rng, A, B, closed);
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::ostringstream o;
  o << "[fuzz] " << name << ": " << st.pairs << " pairs, " << st.configs << " configurations (" << st.exactConfigs
    << " exact oracle, " << st.certConfigs << " certificate), " << st.queries << " queries, " << secs << " s\n";
  o << "[fuzz]   strict (1e-12 S) bar: " << (st.strict ? "enforced" : "reported") << ";  SV strict misses: "
    << st.svStrictMiss << " of " << st.queries / 2 << " SV queries\n";
  o << "[fuzz]   SignedVolumes failures: " << st.svFail << "   Johnson failures: " << st.jFail
    << "   hull-check failures: " << st.hullFail << "   oracle inconsistencies: " << st.oracleInconsistent
    << "   smooth bases skipped: " << st.baseSkipped << "\n";
  o << "[fuzz]   classification checks: must-be-separated " << st.sepRequired << ", must-be-overlapping "
    << st.overlapRequired << "\n";
  o << "[fuzz]   SV max error / scale per config:";
  for (const auto& c : st.order) o << "  " << c << "=" << fmtL(st.svMax[c]);
  o << "\n[fuzz]   SV max abs error per config:";
  for (const auto& c : st.order) o << "  " << c << "=" << fmtL(st.svMaxAbs[c]);
  o << "\n[fuzz]   Johnson max error / scale:";
  for (const auto& c : st.order) o << "  " << c << "=" << fmtL(st.jMax[c]);
  o << "\n[fuzz]   SV witness defect / scale " << fmtL(st.svWit) << ";  SV |n - n_oracle| * distance / scale "
    << fmtL(st.svNorm);
  o << "\n[fuzz]   SV swap asymmetry / scale " << fmtL(st.svSym) << ";  max iterations SV " << st.svMaxIter
    << ", Johnson " << st.jMaxIter << ";  hull max outside/extent " << fmtL(st.hullOutside)
    << ";  flat-classified max thickness/extent " << fmtL(st.flatThick) << "\n[fuzz]   SV statuses (a,b):";
  for (const auto& [k, v] : st.svStatus) o << " " << k << "=" << v;
  o << "\n[fuzz]   SV queries by error/scale:";
  for (const auto& [b, v] : st.svHist)
    o << "  " << (b == -16 ? std::string("<1e-15") : b == -4 ? std::string(">=1e-4") : "1e" + std::to_string(b)) << ":" << v;
  for (const auto& [k, v] : st.svCat) o << "\n[fuzz]   SV failing check: " << k << " x" << v;
  for (const auto& [k, v] : st.jCat) o << "\n[fuzz]   Johnson failing check: " << k << " x" << v;
  std::cout << o.str() << std::endl;
  EXPECT_EQ(st.svFail, 0) << name << ": Signed Volumes failures (first ones printed above)";
  EXPECT_EQ(st.hullFail, 0);
  EXPECT_EQ(st.oracleInconsistent, 0);
}

// ---- shape generators ----

std::vector<Vec3> cloud(Rng& r, int n, double s) {
  const int mode = r.irange(0, 2);
  Vec3 ax = Vec3::Ones();
  if (mode == 2) ax = Vec3(r.uni(0.2, 1), r.uni(0.2, 1), r.uni(0.2, 1));
  const Vec3 c = r.inBall() * (0.2 * s);
  std::vector<Vec3> p;
  for (int i = 0; i < n; ++i) p.push_back(c + (mode == 1 ? r.inBall() : Vec3(r.unit().cwiseProduct(ax))) * s);
  return p;
}

Body polytopeBody(std::vector<Vec3> pts) {
  Body b;
  b.type = "polytope";
  b.pts = std::move(pts);
  return b;
}

Body randomHull(Rng& r, double s, int nmin = 4, int nmax = 20) {
  return polytopeBody(cloud(r, r.irange(nmin, nmax), s * r.uni(0.5, 2)));
}

Body degenerateHull(Rng& r, double s) {
  std::vector<Vec3> p;
  const Vec3 c = r.inBall() * (0.2 * s);
  const Quat frame = r.rotation();
  const Vec3 e1 = frame * Vec3::UnitX(), e2 = frame * Vec3::UnitY(), e3 = frame * Vec3::UnitZ();
  switch (r.irange(0, 9)) {
    case 0: {  // exact duplicates
      for (const Vec3& q : cloud(r, r.irange(4, 8), s))
        for (int k = r.irange(1, 3); k > 0; --k) p.push_back(q);
      std::shuffle(p.begin(), p.end(), r.g);
      break;
    }
    case 1: {  // near duplicates
      for (const Vec3& q : cloud(r, r.irange(4, 8), s)) {
        p.push_back(q);
        p.push_back(q + r.unit() * (1e-12 * s));
      }
      break;
    }
    case 2:  // exactly coplanar (z = 0)
      for (int i = r.irange(3, 12); i > 0; --i) {
        const Vec3 q = r.inBall() * s;
        p.emplace_back(q.x(), q.y(), 0.0);
      }
      break;
    case 3:  // coplanar in a tilted plane (coplanar up to rounding)
      for (int i = r.irange(3, 12); i > 0; --i) p.push_back(c + r.uni(-s, s) * e1 + r.uni(-s, s) * e2);
      break;
    case 4:  // exactly collinear
      for (int i = r.irange(2, 8); i > 0; --i) p.emplace_back(r.uni(-s, s), 0.0, 0.0);
      break;
    case 5:  // collinear needle along a tilted line
      for (int i = r.irange(2, 8); i > 0; --i) p.push_back(c + r.uni(-2 * s, 2 * s) * e1);
      break;
    case 6: {  // a single point, possibly repeated
      const Vec3 q = r.inBall() * s;
      for (int i = r.irange(1, 4); i > 0; --i) p.push_back(q);
      break;
    }
    case 7:  // thin slab (solid, 1e-9 thick)
      for (int i = r.irange(4, 12); i > 0; --i)
        p.push_back(c + r.uni(-s, s) * e1 + r.uni(-s, s) * e2 + r.uni(-1e-9, 1e-9) * s * e3);
      break;
    case 8:  // thin needle (solid, 1e-9 wide)
      for (int i = r.irange(4, 10); i > 0; --i)
        p.push_back(c + r.uni(-2 * s, 2 * s) * e1 + r.uni(-1e-9, 1e-9) * s * e2 + r.uni(-1e-9, 1e-9) * s * e3);
      break;
    default:  // coplanar grid with collinear subsets and a duplicate
      for (int i = -1; i <= 1; ++i)
        for (int j = -1; j <= 1; ++j) p.push_back(c + (0.5 * s * i) * e1 + (0.5 * s * j) * e2);
      p.push_back(p[4]);
      break;
  }
  return polytopeBody(p);
}

Body primitive(Rng& r, double s) {
  Body b;
  auto pt = [&]() -> Vec3 { return r.inBall() * s; };
  switch (r.irange(0, 5)) {
    case 0: b.type = "point", b.pts = {pt()}; break;
    case 1: b.type = "segment", b.pts = {pt(), pt()}; break;
    case 2:
      b.type = "triangle", b.pts = {pt(), pt(), pt()};
      if (r.coin(0.1)) b.pts[2] = b.pts[0] + r.uni(-1, 2) * (b.pts[1] - b.pts[0]);  // collinear
      break;
    case 3:
      b.type = "tetrahedron", b.pts = {pt(), pt(), pt(), pt()};
      if (r.coin(0.15)) b.pts[3] = b.pts[0] + r.uni(0, 1) * (b.pts[1] - b.pts[0]) + r.uni(0, 1) * (b.pts[2] - b.pts[0]);
      break;
    case 4:
      b.type = "box", b.vec = Vec3(r.uni(0.05, 1), r.uni(0.05, 1), r.uni(0.05, 1)) * s;
      if (r.coin(0.15)) b.vec[r.irange(0, 2)] = 0;
      if (r.coin(0.05)) b.vec[r.irange(0, 2)] = 0;
      break;
    default: b = randomHull(r, s); break;
  }
  return b;
}

Body curved(Rng& r, double s) {
  Body b;
  switch (r.irange(0, 4)) {
    case 0: b.type = "sphere", b.radius = s * r.uni(0.2, 1); break;
    case 1: b.type = "ellipsoid", b.vec = Vec3(r.uni(0.1, 1), r.uni(0.1, 1), r.uni(0.1, 1)) * s; break;
    case 2: b.type = "capsule", b.radius = s * r.uni(0.1, 0.6), b.halfLength = s * r.uni(0, 1); break;
    case 3: b.type = "cylinder", b.radius = s * r.uni(0.1, 1), b.halfLength = s * r.uni(0.05, 1); break;
    default: b.type = "cone", b.radius = s * r.uni(0.1, 1), b.height = s * r.uni(0.1, 2); break;
  }
  return b;
}

Body anyShape(Rng& r, double s) { return r.coin() ? curved(r, s) : primitive(r, s); }

void inflateMaybe(Rng& r, Body& b, double s, double p) {
  if (!r.coin(p)) return;
  b.inflate = r.coin(0.1) ? 1e-6 * s : s * r.uni(0.01, 0.5);
}

void posePair(Rng& r, Body& A, Body& B, const Vec3& offset = Vec3::Zero()) {
  A.q = r.rotation();
  B.q = r.rotation();
  A.pos = offset + r.inBall();
}

Vec3 farOffset(Rng& r) { return Vec3(r.coin() ? 1e5 : -1e5, r.coin() ? 1e5 : -1e5, r.coin() ? 1e5 : -1e5); }
double ratioScale(Rng& r) { return r.coin() ? 1e4 : 1e-4; }

// ------------------------------------------------------------------------------------------------
// Polytope families (exact brute-force oracle).

TEST(FuzzPolytope, RandomHulls) {
  runFamily("FuzzPolytope.RandomHulls", 0x5eed0001, [](Rng& r, Body& A, Body& B) {
    A = randomHull(r, 1);
    B = randomHull(r, 1);
    posePair(r, A, B);
  });
}

TEST(FuzzPolytope, DegenerateHulls) {
  runFamily("FuzzPolytope.DegenerateHulls", 0x5eed0002, [](Rng& r, Body& A, Body& B) {
    A = degenerateHull(r, 1);
    B = r.coin(0.6) ? degenerateHull(r, 1) : randomHull(r, 1);
    if (r.coin()) std::swap(A, B);
    posePair(r, A, B);
  });
}

TEST(FuzzPolytope, Primitives) {
  runFamily("FuzzPolytope.Primitives", 0x5eed0003, [](Rng& r, Body& A, Body& B) {
    A = primitive(r, 1);
    B = primitive(r, 1);
    posePair(r, A, B);
  });
}

TEST(FuzzPolytope, ScaleRatio1e4) {
  runFamily("FuzzPolytope.ScaleRatio1e4", 0x5eed0004, [](Rng& r, Body& A, Body& B) {
    A = r.coin(0.7) ? randomHull(r, 1) : primitive(r, 1);
    const double s = ratioScale(r);
    B = r.coin(0.7) ? randomHull(r, s) : primitive(r, s);
    if (r.coin()) std::swap(A, B);
    posePair(r, A, B);
  });
}

TEST(FuzzPolytope, FarFromOrigin1e5) {
  runFamily("FuzzPolytope.FarFromOrigin1e5", 0x5eed0005, [](Rng& r, Body& A, Body& B) {
    A = r.coin(0.7) ? randomHull(r, 1) : primitive(r, 1);
    B = r.coin(0.7) ? randomHull(r, 1) : r.coin() ? primitive(r, 1) : degenerateHull(r, 1);
    posePair(r, A, B, farOffset(r));
  });
}

// 32..64 vertices: the polytope support mapping switches to hill-climbing (kHillClimbThreshold).
TEST(FuzzPolytope, LargeHullsHillClimb) {
  runFamily("FuzzPolytope.LargeHullsHillClimb", 0x5eed0006, [](Rng& r, Body& A, Body& B) {
    // A quarter of the clouds get near-duplicate points (1e-12 apart), which Qhull handles badly.
    auto big = [&r]() {
      std::vector<Vec3> p = cloud(r, r.irange(32, 64), r.uni(0.5, 2));
      if (r.coin(0.25))
        for (int i = static_cast<int>(p.size()) - 1; i >= 0; --i)
          if (r.coin(0.3)) p.push_back(p[i] + r.unit() * 1e-12);
      return polytopeBody(p);
    };
    A = big();
    B = r.coin() ? big() : primitive(r, 1);
    posePair(r, A, B);
  });
}

// ------------------------------------------------------------------------------------------------
// Curved / inflated families (certificate oracle; exact oracle when both cores are polytopal).

TEST(FuzzSmooth, Curved) {
  runFamily("FuzzSmooth.Curved", 0x5eed0101, [](Rng& r, Body& A, Body& B) {
    A = curved(r, r.uni(0.5, 2));
    B = r.coin(0.6) ? curved(r, r.uni(0.5, 2)) : primitive(r, 1);
    if (r.coin()) std::swap(A, B);
    posePair(r, A, B);
  });
}

TEST(FuzzSmooth, Inflated) {
  runFamily("FuzzSmooth.Inflated", 0x5eed0102, [](Rng& r, Body& A, Body& B) {
    A = anyShape(r, 1);
    inflateMaybe(r, A, 1, 1.0);
    B = anyShape(r, 1);
    inflateMaybe(r, B, 1, 0.5);
    if (r.coin()) std::swap(A, B);
    posePair(r, A, B);
  });
}

TEST(FuzzSmooth, ScaleRatio1e4) {
  runFamily("FuzzSmooth.ScaleRatio1e4", 0x5eed0103, [](Rng& r, Body& A, Body& B) {
    A = curved(r, 1);
    inflateMaybe(r, A, 1, 0.3);
    const double s = ratioScale(r);
    B = anyShape(r, s);
    inflateMaybe(r, B, s, 0.3);
    if (r.coin()) std::swap(A, B);
    posePair(r, A, B);
  });
}

TEST(FuzzSmooth, FarFromOrigin1e5) {
  runFamily("FuzzSmooth.FarFromOrigin1e5", 0x5eed0104, [](Rng& r, Body& A, Body& B) {
    A = curved(r, 1);
    inflateMaybe(r, A, 1, 0.3);
    B = anyShape(r, 1);
    inflateMaybe(r, B, 1, 0.3);
    if (r.coin()) std::swap(A, B);
    posePair(r, A, B, farOffset(r));
  });
}

// ------------------------------------------------------------------------------------------------
// Closed forms (in addition to the exact oracle): sphere-sphere, sphere-box, capsule-capsule.

Body randomSphere(Rng& r, double s) {
  Body b;
  b.type = "sphere";
  b.radius = s * r.uni(0.01, 1);
  return b;
}

void scaleVariant(Rng& r, double& sA, double& sB, Vec3& offset) {
  sA = sB = 1;
  offset = Vec3::Zero();
  switch (r.irange(0, 2)) {
    case 1: (r.coin() ? sA : sB) = ratioScale(r); break;
    case 2: offset = farOffset(r); break;
    default: break;
  }
}

TEST(FuzzClosedForm, SphereSphere) {
  runFamily(
      "FuzzClosedForm.SphereSphere", 0x5eed0201,
      [](Rng& r, Body& A, Body& B) {
        double sA, sB;
        Vec3 off;
        scaleVariant(r, sA, sB, off);
        A = randomSphere(r, sA);
        B = randomSphere(r, sB);
        posePair(r, A, B, off);
      },
      [](const Body& a, const Body& b) {
        return (L(b.pos) - L(a.pos)).norm() - LD(a.radius) - LD(b.radius);
      });
}

TEST(FuzzClosedForm, SphereBox) {
  runFamily(
      "FuzzClosedForm.SphereBox", 0x5eed0202,
      [](Rng& r, Body& A, Body& B) {
        double sA, sB;
        Vec3 off;
        scaleVariant(r, sA, sB, off);
        A = randomSphere(r, sA);
        B.type = "box";
        B.vec = Vec3(r.uni(0.05, 1), r.uni(0.05, 1), r.uni(0.05, 1)) * sB;
        posePair(r, A, B, off);
      },
      [](const Body& a, const Body& b) {
        const LV c = b.pose.rotation.cast<LD>().transpose() * (L(a.pos) - L(b.pos));
        LV o;
        for (int i = 0; i < 3; ++i) o[i] = std::max(std::abs(c[i]) - LD(b.vec[i]), LD(0));
        return o.norm() - LD(a.radius);  // = -r when the centre is inside (proxima's documented bound)
      });
}

TEST(FuzzClosedForm, CapsuleCapsule) {
  runFamily(
      "FuzzClosedForm.CapsuleCapsule", 0x5eed0203,
      [](Rng& r, Body& A, Body& B) {
        double sA, sB;
        Vec3 off;
        scaleVariant(r, sA, sB, off);
        A.type = B.type = "capsule";
        A.radius = sA * r.uni(0.01, 0.6), A.halfLength = sA * r.uni(0, 1);
        B.radius = sB * r.uni(0.01, 0.6), B.halfLength = sB * r.uni(0, 1);
        posePair(r, A, B, off);
      },
      [](const Body& a, const Body& b) {
        auto ends = [](const Body& c, LV& p, LV& q) {
          const LM R = c.pose.rotation.cast<LD>();
          p = R * LV(0, 0, -LD(c.halfLength)) + L(c.pos);
          q = R * LV(0, 0, LD(c.halfLength)) + L(c.pos);
        };
        LV p0, p1, q0, q1, x, y;
        ends(a, p0, p1);
        ends(b, q0, q1);
        LD best = kInf;
        segSegClosest(p0, p1, q0, q1, best, x, y);
        return best - LD(a.radius) - LD(b.radius);
      });
}

}  // namespace
