#include "contact_cases.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <numbers>
#include <random>
#include <stdexcept>
#include <thread>

#include "sat_oracle.hpp"  // tests/: the independent long-double SAT oracle

namespace pbench {

namespace oracle = proxima::oracle;
using proxima::Box;
using proxima::Shape;

const char* kindName(ContactKind k) {
  switch (k) {
    case ContactKind::Icosphere: return "icosphere";
    case ContactKind::Box: return "box";
    case ContactKind::Box25: return "box25";
    case ContactKind::Polytope: return "polytope";
    case ContactKind::EdgeEdge: return "edge_edge";
    case ContactKind::VertexFace: return "vertex_face";
    case ContactKind::FaceFace: return "face_face";
    case ContactKind::Ellipsoid: return "ellipsoid";
  }
  return "?";
}

bool kindHasDepthTargets(ContactKind k) {
  return k == ContactKind::Box || k == ContactKind::Box25 || k == ContactKind::Polytope || k == ContactKind::Ellipsoid;
}

std::string depthLabel(double d) {
  if (d == 1e-6) return "1e-6";
  if (d == 1e-2) return "1e-2";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", d);
  return buf;
}

std::string ContactCell::name() const {
  return std::string(kindName(kind)) + "/" + depthLabel(target) + "/N:" + std::to_string(n);
}

namespace {

ShapeRef shapeRef(const Shape& s) {
  ShapeRef r;
  if (const auto* p = std::get_if<proxima::Polytope>(&s.geometry())) r.polytope = p;
  else if (const auto* b = std::get_if<Box>(&s.geometry())) r.box = b;
  else if (const auto* e = std::get_if<proxima::Ellipsoid>(&s.geometry())) r.ellipsoid = e;
  else throw std::logic_error("contact bench: only polytopes, boxes and ellipsoids are handed to peers");
  return r;
}

}  // namespace

std::vector<PenPair> ContactCell::peerPairs(bool pose1) const {
  std::vector<PenPair> out;
  out.reserve(pairs.size());
  for (const auto& p : pairs) {
    const PosePair& q = pose1 ? p.pose1 : p.pose0;
    out.push_back({shapeRef(p.a), shapeRef(p.b), q.a, q.b});
  }
  return out;
}

int oracleMaxN() {
  if (const char* e = std::getenv("PROXIMA_BENCH_ORACLE_MAX_N")) return std::atoi(e);
  return 642;
}

int oracleValidatePairs() {
  if (const char* e = std::getenv("PROXIMA_BENCH_ORACLE_VALIDATE")) return std::atoi(e);
  return 20;
}

namespace {

double localRadius(const Shape& s) {
  if (const auto* e = std::get_if<proxima::Ellipsoid>(&s.geometry())) return e->radii.maxCoeff();
  const auto f = oracle::features(s, Transform());
  double r = 0;
  for (const Vec3& v : f.vertices) r = std::max(r, v.norm());
  return r;
}

Box randomBox(std::mt19937_64& rng, double lo, double hi) {
  std::uniform_real_distribution<double> u(lo, hi);
  return Box{Vec3(u(rng), u(rng), u(rng))};
}

proxima::Polytope randomPolytope(std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(-0.5, 0.5);
  std::vector<Vec3> pts(20);
  for (Vec3& p : pts) p = Vec3(u(rng), u(rng), u(rng));
  auto r = proxima::Polytope::fromPoints(pts);
  if (!r || r.value().dimension() != 3) throw std::runtime_error("random polytope: hull failed");
  return std::move(r).value();
}

Mat3 rotZ(double a) { return Eigen::AngleAxis<double>(a, Vec3::UnitZ()).toRotationMatrix(); }

oracle::SatResult sat(const ContactPair& p, const PosePair& q) {
  return oracle::satPenetration(oracle::features(p.a, q.a), oracle::features(p.b, q.b));
}

/// oracle::satPenetration (Gauss-map filter on) with one more necessary condition tested first, in
/// double, for the edge pairs: two Gauss arcs can only intersect when their bounding caps do
/// (angle between cap centres <= sum of half-arc angles, plus a 1e-4 rad margin that is far wider than
/// the oracle's own 1e-9 leniency). B's caps are sorted by the z of their centres so each of A's arcs
/// meets only a z window of them. The surviving pairs are visited in the oracle's order and evaluated
/// with the oracle's own functions, each behind a screen that only skips axes the oracle would also
/// reject (see screenA), so the answer is the oracle's; the icosphere cells use this
/// (N = 642: ~0.45 s per evaluation with the all-pairs arc test) and every run compares it with
/// oracle::satPenetration on a sample of pairs (counter oracle_mismatch).
oracle::SatResult prefilteredSat(const oracle::ConvexFeatures& a, const oracle::ConvexFeatures& b) {
  namespace od = oracle::detail;
  using LD = long double;
  using oracle::Vec3L;
  LD best = -std::numeric_limits<LD>::infinity();
  Vec3L bestN = Vec3L::Zero();
  std::vector<Vec3L> va, vb;  // the same exact conversions the oracle makes, done once
  for (const Vec3& v : a.vertices) va.push_back(od::toL(v));
  for (const Vec3& v : b.vertices) vb.push_back(od::toL(v));
  // Same evaluation and early exit as oracle::satPenetration's `consider`.
  auto consider = [&](const Vec3L& n) {
    LD ha = -std::numeric_limits<LD>::infinity();
    for (const Vec3L& v : va) ha = std::max(ha, v.dot(n));
    LD lb = std::numeric_limits<LD>::infinity();
    for (const Vec3L& v : vb) {
      lb = std::min(lb, v.dot(n));
      if (lb - ha <= best) return;
    }
    best = lb - ha, bestN = n;
  };
  // Cheap screens in front of `consider`, exact in the same arithmetic: any vertex a0 of A has
  // a0·n <= max_A a·n (the same rounded products), so once the running min over B satisfies
  // lb - a0·n <= best, consider(n) would return without a change too (rounding is monotone). The
  // same with a vertex b0 of B and the running max over A.
  auto screenA = [&](const Vec3L& n, int a0) {
    const LD al = va[a0].dot(n);
    LD lb = std::numeric_limits<LD>::infinity();
    for (const Vec3L& v : vb) {
      lb = std::min(lb, v.dot(n));
      if (lb - al <= best) return;
    }
    consider(n);
  };
  auto screenB = [&](const Vec3L& n, int b0) {
    const LD bl = vb[b0].dot(n);
    LD ha = -std::numeric_limits<LD>::infinity();
    for (const Vec3L& v : va) {
      ha = std::max(ha, v.dot(n));
      if (bl - ha <= best) return;
    }
    consider(n);
  };
  const std::vector<Vec3L> tna = od::triangleNormals(a), tnb = od::triangleNormals(b);
  for (std::size_t t = 0; t < tna.size(); ++t)
    if (tna[t].squaredNorm() > 0) screenA(tna[t], a.triangles[t][0]);
  for (std::size_t t = 0; t < tnb.size(); ++t)
    if (tnb[t].squaredNorm() > 0) screenB(-tnb[t], b.triangles[t][0]);

  const auto ena = od::edgeNormals(a, tna), enb = od::edgeNormals(b, tnb);
  constexpr double kMargin = 1e-4;
  struct Cap {
    Vec3 m = Vec3::Zero();
    double r = 0, cr = 1, sr = 0;  // half-arc angle (+ margin/2), its cosine and sine
    bool always = true;  // unknown normals or a near-antipodal arc: never filtered
  };
  auto cap = [](const Vec3L& p, const Vec3L& q, double sign) {
    Cap c;
    if (p.squaredNorm() == 0 || q.squaredNorm() == 0) return c;
    const Vec3 pd = sign * Vec3(double(p.x()), double(p.y()), double(p.z()));
    const Vec3 qd = sign * Vec3(double(q.x()), double(q.y()), double(q.z()));
    const Vec3 s = pd + qd;
    if (s.norm() < 1e-3) return c;
    c.m = s.normalized();
    c.r = 0.5 * std::acos(std::clamp(pd.dot(qd), -1.0, 1.0)) + 0.5 * kMargin;
    c.cr = std::cos(c.r), c.sr = std::sin(c.r);
    c.always = false;
    return c;
  };
  std::vector<Cap> capA(ena.size()), capB(enb.size());
  for (std::size_t i = 0; i < ena.size(); ++i) capA[i] = cap(ena[i][0], ena[i][1], 1.0);
  for (std::size_t j = 0; j < enb.size(); ++j) capB[j] = cap(enb[j][0], enb[j][1], -1.0);  // B's normals negated
  std::vector<int> alwaysB, sortedB;
  double rMaxB = 0;
  for (int j = 0; j < static_cast<int>(enb.size()); ++j) {
    if (capB[j].always) alwaysB.push_back(j);
    else sortedB.push_back(j), rMaxB = std::max(rMaxB, capB[j].r);
  }
  std::sort(sortedB.begin(), sortedB.end(), [&](int x, int y) { return capB[x].m.z() < capB[y].m.z(); });
  std::vector<double> zB(sortedB.size());
  for (std::size_t k = 0; k < sortedB.size(); ++k) zB[k] = capB[sortedB[k]].m.z();
  std::vector<int> cand;
  for (std::size_t i = 0; i < a.edges.size(); ++i) {
    cand.clear();
    const Cap& ca = capA[i];
    if (ca.always) {
      for (int j = 0; j < static_cast<int>(enb.size()); ++j) cand.push_back(j);
    } else {
      cand = alwaysB;
      // |z_a - z_b| <= chord <= angle between the centres <= r_a + r_b + margin.
      const double w = ca.r + rMaxB;
      auto lo = std::lower_bound(zB.begin(), zB.end(), ca.m.z() - w);
      auto hi = std::upper_bound(zB.begin(), zB.end(), ca.m.z() + w);
      for (auto it = lo; it != hi; ++it) {
        const int j = sortedB[it - zB.begin()];
        const Cap& cb = capB[j];
        // angle(m_a, m_b) <= r_a + r_b  <=>  m_a·m_b >= cos(r_a + r_b) (both r < pi/2 + margin).
        if (ca.r + cb.r >= std::numbers::pi || ca.m.dot(cb.m) >= ca.cr * cb.cr - ca.sr * cb.sr) cand.push_back(j);
      }
      std::sort(cand.begin(), cand.end());  // the oracle's visiting order (ties keep the first)
    }
    const Vec3L ea = od::toL(a.vertices[a.edges[i][1]]) - od::toL(a.vertices[a.edges[i][0]]);
    for (int j : cand) {
      if (!od::arcsMayIntersect(ena[i], enb[j])) continue;
      const Vec3L eb = od::toL(b.vertices[b.edges[j][1]]) - od::toL(b.vertices[b.edges[j][0]]);
      const Vec3L c = ea.cross(eb);
      const LD len = c.norm();
      if (!(len > 1e-12L * ea.norm() * eb.norm())) continue;
      screenA(c / len, a.edges[i][0]);
      screenA(-c / len, a.edges[i][0]);
    }
  }
  oracle::SatResult r;
  r.gap = best;
  r.depth = -best;
  r.overlapping = best < 0;
  r.normal = Vec3(double(bestN.x()), double(bestN.y()), double(bestN.z()));
  return r;
}

/// B placed along the random direction u with overlap `target` along u, then moved along the
/// oracle normal until the oracle depth is within 1e-3 of the target (a few steps; the final pose is
/// what the oracle is evaluated on, so hitting the target exactly does not matter).
void placeAtDepth(ContactPair& p, std::mt19937_64& rng, double target) {
  const Vec3 u = randomUnit(rng);
  const auto fa = oracle::features(p.a, p.pose0.a);
  const auto fb = oracle::features(p.b, Transform(p.pose0.b.rotation, Vec3::Zero()));
  double ha = -INFINITY, lb = INFINITY;
  for (const Vec3& v : fa.vertices) ha = std::max(ha, v.dot(u));
  for (const Vec3& v : fb.vertices) lb = std::min(lb, v.dot(u));
  p.pose0.b.translation = (ha - lb - target) * u;
  for (int it = 0; it < 8; ++it) {
    const auto r = sat(p, p.pose0);
    const double d = static_cast<double>(r.depth);
    if (std::abs(d - target) <= 1e-3 * target) break;
    // Moving B by s along +n lowers the overlap along n by s.
    p.pose0.b.translation += (d - target) * r.normal;
  }
}

/// One small "time step": both bodies rotated by `angle` about random axes and moved by `dist`.
PosePair stepPose(const PosePair& p, std::mt19937_64& rng, double angle, double dist) {
  PosePair q;
  q.a = Transform(Mat3(smallRotation(rng, angle) * p.a.rotation), Vec3(p.a.translation + dist * randomUnit(rng)));
  q.b = Transform(Mat3(smallRotation(rng, angle) * p.b.rotation), Vec3(p.b.translation + dist * randomUnit(rng)));
  return q;
}

/// The scene seen in frame g (A stays at the origin).
PosePair inFrame(const Mat3& g, const PosePair& p) {
  return {Transform(Mat3(g * p.a.rotation), Vec3(g * p.a.translation)),
          Transform(Mat3(g * p.b.rotation), Vec3(g * p.b.translation))};
}

/// Descantes-style feature cases (boxes, depth `t` along A's local z before the random frame).
void placeFeatureCase(ContactKind kind, ContactPair& p, std::mt19937_64& rng, double t) {
  std::uniform_real_distribution<double> uni(0, 1);
  const double pi = std::numbers::pi;
  PosePair q;
  if (kind == ContactKind::FaceFace || kind == ContactKind::VertexFace) {
    // A: a slab whose top face (z = hz) is wider than B's whole footprint (radius <= 0.3 sqrt 3).
    const Box a{Vec3(0.55 + 0.1 * uni(rng), 0.55 + 0.1 * uni(rng), 0.25 + 0.25 * uni(rng))};
    const Box b = randomBox(rng, 0.2, 0.3);
    p.a = Shape(a);
    p.b = Shape(b);
    // B's centre off A's axis (up to 0.1 for faces, 0.4 for the corner, which stays inside A's top
    // face), so the line of centres is not the contact normal.
    const double r = kind == ContactKind::FaceFace ? 0.1 : 0.4;
    const Vec3 off(r * (2 * uni(rng) - 1), r * (2 * uni(rng) - 1), 0);
    if (kind == ContactKind::FaceFace) {
      // Parallel faces: B only turned about z; its bottom face lies t below A's top face.
      q.b = Transform(rotZ(2 * pi * uni(rng)), Vec3(off + Vec3(0, 0, a.halfExtents.z() + b.halfExtents.z() - t)));
    } else {
      // B's corner (-hx, -hy, -hz) points straight down and lies t below A's top face; the next
      // corners are >= 2 min(h)^2 / |h| ~ 0.15 higher.
      const Vec3 corner = -b.halfExtents;
      const Mat3 down = proxima::Quat::FromTwoVectors(corner.normalized(), -Vec3::UnitZ()).toRotationMatrix();
      q.b = Transform(Mat3(rotZ(2 * pi * uni(rng)) * down),
                      Vec3(off + Vec3(0, 0, a.halfExtents.z() + corner.norm() - t)));
    }
  } else {  // EdgeEdge
    // A: a square prism along x turned 45 deg about x (a ridge along x at z = h sqrt 2);
    // B: a square prism along y turned 45 deg about y (a keel along y at z = -h sqrt 2), then
    // turned about z by up to 60 deg so the edges cross at a generic angle. The deepest axis is
    // ridge x keel = z, with overlap t; every face axis overlaps by > 0.17.
    const double ha = 0.2 + 0.1 * uni(rng), hb = 0.2 + 0.1 * uni(rng);
    p.a = Shape(Box{Vec3(0.5, ha, ha)});
    p.b = Shape(Box{Vec3(hb, 0.5, hb)});
    const Mat3 ra = Eigen::AngleAxis<double>(pi / 4, Vec3::UnitX()).toRotationMatrix();
    const Mat3 rb = Eigen::AngleAxis<double>(pi / 4, Vec3::UnitY()).toRotationMatrix();
    const double phi = (2 * uni(rng) - 1) * pi / 3;
    q.a = Transform(ra, Vec3::Zero());
    // The crossing point stays > 0.08 inside both edges: |x| <= 0.25 + 0.1 tan 60 deg, |s| <= 0.2.
    const Vec3 off(0.25 * (2 * uni(rng) - 1), 0.1 * (2 * uni(rng) - 1), 0);
    q.b = Transform(Mat3(rotZ(phi) * rb), Vec3(off + Vec3(0, 0, std::sqrt(2.0) * (ha + hb) - t)));
  }
  p.pose0 = inFrame(randomRotation(rng), q);
}

/// Ellipsoid cells. B is placed so that A's support point towards u and B's towards -u coincide,
/// then pushed by `depth` along -u: both surfaces have normal ±u there, so u is a stationary
/// direction of the overlap F(u) = h_A(u) + h_B(-u) with F = depth. It is the global minimum, i.e. the
/// exact depth, whenever depth < rA + rB (the rolling radii, c^2/a = 0.25 each here): a ball of radius
/// rA + rB centred at w - (rA + rB) u lies inside the Minkowski difference (Blaschke's rolling
/// theorem), so no direction can give less than F. Exact up to the placement's rounding (~1e-16).
const proxima::Ellipsoid kBenchEllipsoid{Vec3(1, 0.75, 0.5)};

PosePair placeEllipsoids(const Mat3& ra, const Mat3& rb, const Vec3& u, double depth) {
  proxima::SupportHint h;
  const Vec3 pa = ra * kBenchEllipsoid.support(ra.transpose() * u, h);
  const Vec3 sb = rb * kBenchEllipsoid.support(rb.transpose() * Vec3(-u), h);
  return {Transform(ra, Vec3::Zero()), Transform(rb, Vec3(pa - depth * u - sb))};
}

}  // namespace

double overlapAlong(const ContactPair& p, bool pose1, const Vec3& n) {
  const PosePair& q = pose1 ? p.pose1 : p.pose0;
  if (std::holds_alternative<proxima::Ellipsoid>(p.a.geometry())) {
    proxima::SupportHint ha, hb;
    const Vec3 sa = q.a.apply(p.a.support(q.a.rotateInverse(n), ha));
    const Vec3 sb = q.b.apply(p.b.support(q.b.rotateInverse(Vec3(-n)), hb));
    return n.dot(sa - sb);
  }
  return -static_cast<double>(oracle::supportGap(oracle::features(p.a, q.a), oracle::features(p.b, q.b), n));
}

ContactCell makeContactCell(ContactKind kind, int n, double target, bool withPose1) {
  ContactCell c;
  c.kind = kind;
  c.n = n;
  c.target = target;
  const std::uint64_t seed = 0xC0117AC7ull + 1000003ull * static_cast<std::uint64_t>(kind) +
                             static_cast<std::uint64_t>(std::llround(-std::log10(target) * 16));
  std::mt19937_64 rng(seed);
  c.pairs.resize(kPairs);

  if (kind == ContactKind::Ellipsoid) {
    // Exact references by construction (placeEllipsoids); pose1 = both bodies turned by a small
    // step and the contact direction turned too, at the same depth.
    const double step = std::min(1e-4, 1e-2 * target);
    c.ref0.assign(kPairs, OracleRef{});
    if (withPose1) c.ref1.assign(kPairs, OracleRef{});
    for (int i = 0; i < kPairs; ++i) {
      ContactPair& p = c.pairs[i];
      p.a = p.b = Shape(kBenchEllipsoid);
      p.scale = kBenchEllipsoid.radii.maxCoeff();
      const Mat3 ra = randomRotation(rng), rb = randomRotation(rng);
      const Vec3 u = randomUnit(rng);
      p.pose0 = placeEllipsoids(ra, rb, u, target);
      const Vec3 u1 = smallRotation(rng, step) * u;
      p.pose1 = placeEllipsoids(Mat3(smallRotation(rng, step) * ra), Mat3(smallRotation(rng, step) * rb), u1, target);
      c.ref0[i] = {true, true, target, u};
      if (withPose1) c.ref1[i] = {true, true, target, u1};
    }
    c.overlapping = kPairs;
    c.meanDepth = c.minDepth = c.maxDepth = target;
    return c;
  }

  if (kind == ContactKind::Icosphere) {
    // The distance benchmark's "overlapping" rotations (same seed as bench_main.cpp's configuration
    // index 3), but B at x = 2 r_in - 0.1 with r_in the icosphere's inradius instead of 1.9: the
    // inscribed balls overlap by 0.1, so every pair overlaps by at least 0.1 (at x = 1.9 only 1 % of
    // the N = 12 pairs and 95 % of the N = 42 pairs overlap at all). For N >= 162, r_in > 0.98.
    const proxima::Polytope& poly = icosphere(n);
    double rin = INFINITY;
    for (const auto& t : poly.data().triangles) {
      const auto& v = poly.vertices();
      const Vec3 nrm = (v[t[1]] - v[t[0]]).cross(v[t[2]] - v[t[0]]).normalized();
      rin = std::min(rin, nrm.dot(v[t[0]]));
    }
    c.target = 0.1;
    c.inradius = rin;
    const CellPoses poses = spherePoses(2 * rin - 0.1 - 2, 0x9E3779B97F4A7C15ull + 7919ull * 3);
    const Shape s(poly);
    for (int i = 0; i < kPairs; ++i) {
      c.pairs[i].a = s;
      c.pairs[i].b = s;
      c.pairs[i].pose0 = poses.pose0[i];
      c.pairs[i].pose1 = poses.pose1[i];
      c.pairs[i].scale = 1;
    }
  } else {
    // Step of the warm variant: small against the depth, so the pair stays overlapping.
    const double step = std::min(1e-4, 1e-2 * target);
    for (auto& p : c.pairs) {
      if (kindHasDepthTargets(kind)) {
        if (kind == ContactKind::Polytope) {
          p.a = Shape(randomPolytope(rng));
          p.b = Shape(randomPolytope(rng));
        } else {
          const double big = kind == ContactKind::Box25 ? 25.0 : 1.0;
          p.a = Shape(randomBox(rng, 0.25 * big, 0.5 * big));
          p.b = Shape(randomBox(rng, 0.25, 0.5));
        }
        p.pose0.a = Transform(randomRotation(rng), Vec3::Zero());
        p.pose0.b = Transform(randomRotation(rng), Vec3::Zero());
        placeAtDepth(p, rng, target);
      } else {
        placeFeatureCase(kind, p, rng, target);
      }
      p.pose1 = stepPose(p.pose0, rng, step, step);
    }
    for (auto& p : c.pairs) p.scale = std::max(localRadius(p.a), localRadius(p.b));
  }

  // Oracle on up to two threads (the machine has two cores).
  c.ref0.assign(kPairs, OracleRef{});
  if (withPose1) c.ref1.assign(kPairs, OracleRef{});
  if (kind == ContactKind::Icosphere && n > oracleMaxN()) return c;
  const auto t0 = std::chrono::steady_clock::now();
  const bool prefilter = kind == ContactKind::Icosphere;
  auto work = [&](int first, int stride) {
    for (int i = first; i < kPairs; i += stride) {
      auto fill = [&](OracleRef& r, const PosePair& q) {
        const ContactPair& p = c.pairs[i];
        const auto s = prefilter ? prefilteredSat(oracle::features(p.a, q.a), oracle::features(p.b, q.b)) : sat(p, q);
        r.checked = true;
        r.overlapping = s.overlapping;
        r.depth = static_cast<double>(s.depth);
        r.normal = s.normal;
      };
      fill(c.ref0[i], c.pairs[i].pose0);
      if (withPose1) fill(c.ref1[i], c.pairs[i].pose1);
    }
  };
  const int threads = std::max(1u, std::min(2u, std::thread::hardware_concurrency()));
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(work, t, threads);
  work(0, threads);
  for (auto& th : pool) th.join();
  c.oracleSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  // The prefiltered oracle against the plain one on the first pairs (pose 0): identical answers
  // expected, bit for bit.
  if (prefilter) {
    const int m = std::min(kPairs, oracleValidatePairs());
    std::vector<int> bad(m, 0);
    const auto t1 = std::chrono::steady_clock::now();
    auto check = [&](int first, int stride) {
      for (int i = first; i < m; i += stride) {
        const auto s = sat(c.pairs[i], c.pairs[i].pose0);
        bad[i] = static_cast<double>(s.depth) != c.ref0[i].depth || s.normal != c.ref0[i].normal ||
                 s.overlapping != c.ref0[i].overlapping;
      }
    };
    std::vector<std::thread> vpool;
    for (int t = 1; t < threads; ++t) vpool.emplace_back(check, t, threads);
    check(0, threads);
    for (auto& th : vpool) th.join();
    c.oracleValidated = m;
    for (int b : bad) c.oracleMismatch += b;
    c.oracleValidateSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count();
  }

  double sum = 0;
  c.minDepth = INFINITY, c.maxDepth = -INFINITY;
  for (int i = 0; i < kPairs; ++i) {
    const double d = c.ref0[i].depth;
    c.overlapping += c.ref0[i].overlapping;
    sum += d;
    c.minDepth = std::min(c.minDepth, d);
    c.maxDepth = std::max(c.maxDepth, d);
  }
  c.meanDepth = sum / kPairs;
  return c;
}

}  // namespace pbench
