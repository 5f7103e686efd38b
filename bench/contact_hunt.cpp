// proxima_contact_hunt: a randomised hunt for wrong answers of contact() (GJK-TD) and distance() near
// contact, over every pair of 10 shape kinds (sphere, ellipsoid, capsule, cylinder, cone, box,
// polytope, rounded box, sphero-polytope, rounded cylinder) in both orders and four conditions (base,
// far from the origin, size ratios up to 1000:1, near-parallel faces and flat shapes). Checks need no
// trusted answer from the library: exact long-double brackets of the placement, closed forms, swap and
// translation invariance, continuity along gap sweeps, depth against the overlap along found
// directions, witnesses on their support planes. Written for the contact hunt of 2026-11-27
// (docs/validation.md §22); kept as a tool, not a test: its tolerances are strict by design and it
// reports the open cases listed there. Not built by the default scripts (bench targets).
//
// Usage: proxima_contact_hunt [PAIRS [SWEEPS [SEED [KIND]]]]        counts per kind pair and condition
//        proxima_contact_hunt PAIRS SWEEPS SEED KA KB COND SWEEP I   replays one case verbosely
//        (the six numbers after PAIRS SWEEPS are a failure's printed id)
#include <proxima/core/tolerances.hpp>
#include <proxima/narrowphase/distance.hpp>
#include <proxima/narrowphase/penetration.hpp>

#include <chrono>
#include <csignal>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <unistd.h>
#include <vector>

using namespace proxima;
using LD = long double;
using LV = Eigen::Matrix<LD, 3, 1>;
using LM = Eigen::Matrix<LD, 3, 3>;

static LV L(const Vec3& v) { return v.cast<LD>(); }

enum Kind { kSphere, kEllipsoid, kCapsule, kCylinder, kCone, kBox, kPolytope, kRBox, kSPoly, kRCyl, kKinds };
static const char* kName[] = {"sphere", "ellipsoid", "capsule", "cylinder", "cone",
                              "box",    "polytope",  "rbox",    "spoly",    "rcyl"};

struct Body {
  int kind = 0;
  Shape shape;
  // core description (local)
  int coreType = 0;  // 0 point, 1 ellipsoid, 2 segment, 3 cylinder, 4 cone, 5 box, 6 polytope
  Vec3 v = Vec3::Zero();  // radii / half extents
  Real r = 0, hl = 0, h = 0;  // cylinder/cone radius, half length, cone height
  std::vector<Vec3> verts;
  std::vector<Vec3> triN;  // polytope triangle normals
  std::vector<Vec3> triP;  // a point of each triangle
  Real R = 0;              // total radius (inflate + sphere/capsule radius)
  Real size = 1;           // bounding radius
  std::string desc;
};

static LV coreSupport(const Body& b, const LV& d) {
  switch (b.coreType) {
    case 0: return LV::Zero();
    case 1: {
      LV D = L(b.v);
      LV dd = D.cwiseProduct(d);
      LD n = dd.norm();
      if (!(n > 0)) return LV(D.x(), 0, 0);
      return D.cwiseProduct(dd) / n;
    }
    case 2: return LV(0, 0, d.z() < 0 ? -LD(b.hl) : LD(b.hl));
    case 3: {
      LD rho = std::hypot(d.x(), d.y());
      LV s(0, 0, d.z() < 0 ? -LD(b.hl) : LD(b.hl));
      if (rho > 0) s.x() = LD(b.r) * d.x() / rho, s.y() = LD(b.r) * d.y() / rho;
      return s;
    }
    case 4: {
      LD hh = LD(b.h) / 2, rho = std::hypot(d.x(), d.y());
      LD apex = d.z() * hh, rim = LD(b.r) * rho - d.z() * hh;
      if (apex >= rim) return LV(0, 0, hh);
      if (rho > 0) return LV(LD(b.r) * d.x() / rho, LD(b.r) * d.y() / rho, -hh);
      return LV(0, 0, -hh);
    }
    case 5: return LV(d.x() < 0 ? -LD(b.v.x()) : LD(b.v.x()), d.y() < 0 ? -LD(b.v.y()) : LD(b.v.y()),
                      d.z() < 0 ? -LD(b.v.z()) : LD(b.v.z()));
    default: {
      LD best = -1e300L;
      LV bs = LV::Zero();
      for (const Vec3& p : b.verts) {
        LD x = d.dot(L(p));
        if (x > best) best = x, bs = L(p);
      }
      return bs;
    }
  }
}
// support value of the posed core / full body along world n (exact linear map with the stored matrix)
static LD coreH(const Body& b, const Transform& T, const LV& n) {
  LM R = T.rotation.cast<LD>();
  LV dl = R.transpose() * n;
  return n.dot(L(T.translation)) + dl.dot(coreSupport(b, dl));
}
static LD fullH(const Body& b, const Transform& T, const LV& n) {
  LM R = T.rotation.cast<LD>();
  LV dl = R.transpose() * n;
  LD hc = n.dot(L(T.translation)) + dl.dot(coreSupport(b, dl));
  return hc + LD(b.R) * dl.norm();
}
static LV coreSupWorld(const Body& b, const Transform& T, const LV& n) {
  LM R = T.rotation.cast<LD>();
  return R * coreSupport(b, R.transpose() * n) + L(T.translation);
}

// ------------------------------------------------------------------------------------------------
struct Rng {
  std::mt19937_64 g;
  explicit Rng(uint64_t s) : g(s) {}
  double uni(double a, double b) { return std::uniform_real_distribution<double>(a, b)(g); }
  bool coin(double p = 0.5) { return uni(0, 1) < p; }
  int irange(int a, int b) { return std::uniform_int_distribution<int>(a, b)(g); }
  Vec3 unit() {
    Vec3 v;
    do v = Vec3(std::normal_distribution<double>()(g), std::normal_distribution<double>()(g),
                std::normal_distribution<double>()(g));
    while (v.norm() < 1e-3);
    return v.normalized();
  }
  Quat rot() {
    Eigen::Vector4d q(std::normal_distribution<double>()(g), std::normal_distribution<double>()(g),
                      std::normal_distribution<double>()(g), std::normal_distribution<double>()(g));
    q.normalize();
    return Quat(q[0], q[1], q[2], q[3]);
  }
  double logu(double lo, double hi) { return std::pow(10.0, uni(lo, hi)); }
};

static char buf[4096];
static std::string fmtV(const Vec3& v) {
  std::snprintf(buf, sizeof buf, "[%.17g, %.17g, %.17g]", v.x(), v.y(), v.z());
  return buf;
}

static Body makeBody(Rng& rg, int kind, double s, bool flat) {
  Body b;
  b.kind = kind;
  auto thin = [&](double x) { return flat && rg.coin(0.5) ? x * rg.logu(-6, -2) : x; };
  switch (kind) {
    case kSphere: {
      Real r = s * rg.uni(0.3, 1);
      b.shape = Shape(Sphere{r});
      b.coreType = 0, b.R = r, b.size = r;
      std::snprintf(buf, sizeof buf, "Sphere{%.17g}", r);
      break;
    }
    case kEllipsoid: {
      Vec3 v(s * rg.uni(0.1, 1), s * rg.uni(0.1, 1), s * rg.uni(0.1, 1));
      if (flat) v[rg.irange(0, 2)] = thin(v[0]);
      b.shape = Shape(Ellipsoid{v});
      b.coreType = 1, b.v = v, b.size = v.maxCoeff();
      std::snprintf(buf, sizeof buf, "Ellipsoid{Vec3(%.17g, %.17g, %.17g)}", v.x(), v.y(), v.z());
      break;
    }
    case kCapsule: {
      Real r = s * rg.uni(0.1, 0.6), hl = s * rg.uni(0.05, 1);
      if (flat && rg.coin()) r = thin(r);
      b.shape = Shape(Capsule{r, hl});
      b.coreType = 2, b.hl = hl, b.R = r, b.size = r + hl;
      std::snprintf(buf, sizeof buf, "Capsule{%.17g, %.17g}", r, hl);
      break;
    }
    case kCylinder:
    case kRCyl: {
      Real r = s * rg.uni(0.1, 1), hl = s * rg.uni(0.05, 1);
      if (flat) hl = thin(hl);
      Real inf = kind == kRCyl ? s * (rg.coin(0.1) ? 1e-6 : rg.uni(0.01, 0.3)) : 0;
      b.shape = Shape(Cylinder{r, hl}, inf);
      b.coreType = 3, b.r = r, b.hl = hl, b.R = inf, b.size = std::hypot(r, hl) + inf;
      std::snprintf(buf, sizeof buf, "Shape(Cylinder{%.17g, %.17g}, %.17g)", r, hl, inf);
      break;
    }
    case kCone: {
      Real r = s * rg.uni(0.1, 1), h = s * rg.uni(0.1, 2);
      if (flat) h = thin(h);
      b.shape = Shape(Cone{r, h});
      b.coreType = 4, b.r = r, b.h = h, b.size = std::hypot(r, h / 2);
      std::snprintf(buf, sizeof buf, "Cone{%.17g, %.17g}", r, h);
      break;
    }
    case kBox:
    case kRBox: {
      Vec3 v(s * rg.uni(0.05, 1), s * rg.uni(0.05, 1), s * rg.uni(0.05, 1));
      if (flat) v[rg.irange(0, 2)] = thin(v[0]);
      Real inf = kind == kRBox ? s * (rg.coin(0.1) ? 1e-6 : rg.uni(0.01, 0.3)) : 0;
      b.shape = Shape(Box{v}, inf);
      b.coreType = 5, b.v = v, b.R = inf, b.size = v.norm() + inf;
      std::snprintf(buf, sizeof buf, "Shape(Box{Vec3(%.17g, %.17g, %.17g)}, %.17g)", v.x(), v.y(), v.z(), inf);
      break;
    }
    default: {
      // random hull: points on an ellipsoid-ish cloud; some with a guaranteed facet
      int np = rg.irange(6, 20);
      std::vector<Vec3> pts;
      Vec3 sc(rg.uni(0.3, 1), rg.uni(0.3, 1), rg.uni(0.3, 1));
      if (flat) sc[rg.irange(0, 2)] = thin(sc[0]);
      for (int i = 0; i < np; ++i) pts.push_back(s * rg.unit().cwiseProduct(sc));
      auto P = Polytope::fromPoints(pts);
      if (!P.ok()) { std::fprintf(stderr, "hull failed\n"); std::exit(2); }
      Real inf = kind == kSPoly ? s * (rg.coin(0.1) ? 1e-6 : rg.uni(0.01, 0.3)) : 0;
      b.shape = Shape(P.value(), inf);
      b.coreType = 6, b.R = inf;
      const PolytopeData& D = P.value().data();
      b.verts = D.vertices;
      for (size_t t = 0; t < D.triangles.size(); ++t)
        if (D.triangleNormals[t].norm() > 0.5) b.triN.push_back(D.triangleNormals[t]), b.triP.push_back(D.vertices[D.triangles[t][0]]);
      Real m = 0;
      for (auto& p : b.verts) m = std::max(m, p.norm());
      b.size = m + inf;
      std::string d = "Shape(Polytope::fromPoints(std::vector<Vec3>{";
      for (auto& p : pts) {
        std::snprintf(buf, sizeof buf, "{%.17g, %.17g, %.17g},", p.x(), p.y(), p.z());
        d += buf;
      }
      std::snprintf(buf, sizeof buf, "}).value(), %.17g)", inf);
      d += buf;
      b.desc = d;
      return b;
    }
  }
  b.desc = buf;
  return b;
}

// A local "flat feature" normal of the body (outward), for the parallel condition.
static Vec3 flatNormal(Rng& rg, const Body& b) {
  switch (b.coreType) {
    case 1: {
      int i; b.v.minCoeff(&i);
      Vec3 e = Vec3::Zero(); e[i] = rg.coin() ? 1 : -1; return e;
    }
    case 2: { double p = rg.uni(0, 2 * M_PI); return Vec3(std::cos(p), std::sin(p), 0); }
    case 3:
      if (rg.coin(0.7)) return Vec3(0, 0, rg.coin() ? 1 : -1);
      else { double p = rg.uni(0, 2 * M_PI); return Vec3(std::cos(p), std::sin(p), 0); }
    case 4:
      if (rg.coin(0.6)) return Vec3(0, 0, -1);
      else { double p = rg.uni(0, 2 * M_PI); return Vec3(b.h * std::cos(p), b.h * std::sin(p), b.r).normalized(); }
    case 5: { Vec3 e = Vec3::Zero(); e[rg.irange(0, 2)] = rg.coin() ? 1 : -1; return e; }
    case 6: if (!b.triN.empty()) return b.triN[rg.irange(0, (int)b.triN.size() - 1)]; return rg.unit();
    default: return rg.unit();
  }
}

static Vec3 tilt(Rng& rg, const Vec3& n, double ang) {
  if (ang == 0) return n;
  Vec3 t = rg.unit();
  t -= t.dot(n) * n;
  t.normalize();
  return (n * std::cos(ang) + t * std::sin(ang)).normalized();
}

// ------------------------------------------------------------------------------------------------
// statistics
struct Stat {
  long pairs = 0, queries = 0, failedPairs = 0, hardPairs = 0, normalPairs = 0, alignPairs = 0, statusPairs = 0;
  std::map<std::string, long> fails;
  std::map<std::string, double> worst;     // worst ratio (err / tol) among failures
  std::map<std::string, double> maxRatio;  // worst ratio overall for the ratio-type checks
  std::map<std::string, std::string> repro;
};
static std::map<std::string, Stat> stats;
static std::string curCase;
static std::string curId;
static bool verbose = false;
static volatile sig_atomic_t alarmFired = 0;
static char caseBuf[8192];
static void onAlarm(int) {
  const char msg[] = "\n*** HANG (>20 s) in case:\n";
  (void)!write(2, msg, sizeof msg - 1);
  (void)!write(2, caseBuf, strnlen(caseBuf, sizeof caseBuf));
  _exit(3);
}

struct Pair {
  Body A, B;
  Transform pa, pb;
  std::string condition;
};

static std::string reproOf(const Pair& P) {
  std::string s = "A = " + P.A.desc + "\n   poseA = Transform(Mat3 rows " + fmtV(P.pa.rotation.row(0)) + fmtV(P.pa.rotation.row(1)) +
                  fmtV(P.pa.rotation.row(2)) + ", p " + fmtV(P.pa.translation) + ")\n   B = " + P.B.desc +
                  "\n   poseB = Transform(Mat3 rows " + fmtV(P.pb.rotation.row(0)) + fmtV(P.pb.rotation.row(1)) +
                  fmtV(P.pb.rotation.row(2)) + ", p " + fmtV(P.pb.translation) + ")";
  return s;
}

static long gFailCount = 0, gHard = 0, gNormal = 0, gAlign = 0, gStatus = 0;
static int category(const std::string& c) {
  if (c.rfind("wB - wA", 0) == 0) return 2;
  if (c.rfind("sd == -overlap", 0) == 0 || c.rfind("witness on support", 0) == 0 || c.rfind("swap contact normal", 0) == 0) return 1;
  if (c.rfind("status max_iterations", 0) == 0) return 3;
  return 0;
}
static void record(Stat& st, const std::string& check, double ratio, const Pair& P, const std::string& detail) {
  double& m = st.maxRatio[check];
  if (ratio > m) m = ratio;
  if (!(ratio <= 1.0)) {
    ++gFailCount;
    switch (category(check)) { case 0: ++gHard; break; case 1: ++gNormal; break; case 2: ++gAlign; break; default: ++gStatus; }
    st.fails[check]++;
    double& w = st.worst[check];
    if (!(ratio <= w) || st.repro[check].empty()) {
      if (std::isnan(ratio) || ratio > w) w = std::isnan(ratio) ? 1e300 : ratio;
      st.repro[check] = "id " + curId + "\n   " + reproOf(P) + "\n   " + detail;
    }
  }
}
static void note(Stat& st, const std::string& check, double ratio) {
  double& m = st.maxRatio[check];
  if (ratio > m) m = ratio;
}

static bool finiteV(const Vec3& v) { return std::isfinite(v.x()) && std::isfinite(v.y()) && std::isfinite(v.z()); }

// overlap along world unit n: hA(n) + hB(-n) - ... (in world: hA(n) + hB(-n) counts translations)
static LD overlapAlong(const Pair& P, const LV& n) { return fullH(P.A, P.pa, n) + fullH(P.B, P.pb, -n); }

static LV ldUnit(Rng& rg) { Vec3 u = rg.unit(); return L(u); }

// local search for a smaller overlap than `target` (returns the smallest overlap found)
static LD minOverlapSearch(const Pair& P, Rng& rg, const LV& start, LV* best) {
  LV n = start.normalized();
  LD f = overlapAlong(P, n);
  for (int k = 0; k < 48; ++k) {
    LV m = ldUnit(rg);
    LD g = overlapAlong(P, m);
    if (g < f) f = g, n = m;
  }
  for (LD step = 0.3L; step > 1e-13L; step *= 0.3L) {
    for (int it = 0; it < 12; ++it) {
      bool improved = false;
      LV t1 = n.cross(LV(0.3L, 0.5L, 0.8L)).normalized();
      LV t2 = n.cross(t1).normalized();
      for (int j = 0; j < 8; ++j) {
        LD a = 2 * M_PI * j / 8;
        LV m = (n + step * (std::cos(a) * t1 + std::sin(a) * t2)).normalized();
        LD g = overlapAlong(P, m);
        if (g < f) { f = g, n = m, improved = true; break; }
      }
      if (!improved) break;
    }
  }
  if (best) *best = n;
  return f;
}

static double nowSec() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

struct Expect {
  bool exact = false;  // core gap >= 0: signed distance within [lo, hi]
  LD lo = 0, hi = 0;
  LD upperDepth = 1e300L;  // known upper bound of depth (overlap along placement n)
  bool closed = false;     // closed form signed distance
  LD cf = 0;
};

// Runs all queries and checks on one pair; returns contact signed distance (A,B order).
static double checkPair(Stat& st, const Pair& P, const Expect& E, Rng& rg, double* sdDist = nullptr) {
  const double S = P.A.size + P.B.size + (P.pb.translation - P.pa.translation).norm();
  // far from the origin: the repo's convention (validation.md §9): scale at least 4 |A's position|
  const double tol = tol::kEpaRelative * std::max(S, 4.0 * P.pa.translation.norm());
  std::snprintf(caseBuf, sizeof caseBuf, "%s\n", reproOf(P).c_str());
  struct Tally {
    Stat& st; long before, h, nn, a, s;
    ~Tally() {
      if (gFailCount > before) st.failedPairs++;
      if (gHard > h) st.hardPairs++;
      if (gNormal > nn) st.normalPairs++;
      if (gAlign > a) st.alignPairs++;
      if (gStatus > s) st.statusPairs++;
    }
  } tally{st, gFailCount, gHard, gNormal, gAlign, gStatus};
  alarm(20);
  DistanceResult dab, dba;
  ContactResult cab, cba;
  double t0 = nowSec();
  try {
    dab = distance(P.A.shape, P.pa, P.B.shape, P.pb);
    dba = distance(P.B.shape, P.pb, P.A.shape, P.pa);
    cab = contact(P.A.shape, P.pa, P.B.shape, P.pb);
    cba = contact(P.B.shape, P.pb, P.A.shape, P.pa);
  } catch (const std::exception& e) {
    alarm(0);
    record(st, "exception", 1e300, P, e.what());
    return 0;
  }
  alarm(0);
  double dt = nowSec() - t0;
  if (verbose) {
    std::printf("%s\n  tol %.3g S %.6g R %.6g\n", reproOf(P).c_str(), tol, S, P.A.R + P.B.R);
    auto pr = [](const char* w, const DistanceResult& r) {
      std::printf("  %-10s %-12s sd %.17g lb %.17g n %s\n     wA %s wB %s it %d rs %d nw %d\n", w, std::string(toString(r.status)).c_str(), r.distance, r.lowerBound,
                  fmtV(r.normal).c_str(), fmtV(r.witnessA).c_str(), fmtV(r.witnessB).c_str(), r.iterations, r.restarts, r.newtonSteps);
    };
    pr("dist AB", dab); pr("dist BA", dba); pr("contact AB", cab); pr("contact BA", cba);
    std::printf("  expansions AB %d BA %d; exact %d [%.17Lg, %.17Lg] upperDepth %.17Lg closed %d %.17Lg\n", cab.expansions, cba.expansions, E.exact, E.lo, E.hi, E.upperDepth, E.closed, E.cf);
  }
  st.queries += 4, st.pairs++;
  if (dt > 0.2) record(st, "slow(>0.2s/4 queries)", dt / 0.2, P, "time " + std::to_string(dt));
  std::string d;
  auto statusOk = [](Status s) { return s == Status::Separated || s == Status::Overlapping; };
  // --- sanity
  {
    bool bad = false;
    std::string why;
    bool maxIt = false;
    for (const DistanceResult* r : std::initializer_list<const DistanceResult*>{&dab, &dba, &cab, &cba}) {
      if (r->status == Status::MaxIterations) maxIt = true, why += " max_iterations(" + std::string(r == &dab ? "dist AB" : r == &dba ? "dist BA" : r == &cab ? "contact AB" : "contact BA") + ")";
      else if (!statusOk(r->status)) bad = true, why += std::string(" status ") + std::string(toString(r->status)) + " " + r->message;
      if (!std::isfinite(r->distance)) bad = true, why += " nonfinite distance";
      if (!finiteV(r->normal) || !finiteV(r->witnessA) || !finiteV(r->witnessB)) bad = true, why += " nonfinite vec";
    }
    for (const ContactResult* r : {&cab, &cba})
      if (std::abs(r->normal.norm() - 1) > 1e-12) bad = true, why += " contact normal not unit |n|-1=" + std::to_string(r->normal.norm() - 1);
    for (const DistanceResult* r : {&dab, &dba})
      if (r->normal.norm() != 0 && std::abs(r->normal.norm() - 1) > 1e-12) bad = true, why += " distance normal not unit";
      else if (r->normal.norm() == 0 && r->status == Status::Separated) bad = true, why += " separated with zero normal";
    if (bad) { record(st, "sanity(status/NaN/unit normal)", 1e300, P, why); return cab.distance; }
    if (maxIt) {
      std::snprintf(buf, sizeof buf, "%s; dist AB %.17g lb %.17g", why.c_str(), dab.distance, dab.lowerBound);
      record(st, "status max_iterations (values still checked)", 1e300, P, buf);
    }
  }
  const double Rsum = P.A.R + P.B.R;
  // a normal read off the core difference (cores apart) is only as good as eps S / core distance
  auto tolNormal = [&](const DistanceResult& r, bool coresApart) {
    if (!coresApart) return tol;
    const double dc = std::max(std::abs(r.distance + Rsum), 1e-300);
    return tol * (1 + S / dc);
  };
  // --- swap symmetry
  {
    double e = std::abs(cab.distance - cba.distance);
    std::snprintf(buf, sizeof buf, "contact sd AB %.17g BA %.17g diff %.3g tol %.3g", cab.distance, cba.distance, e, tol);
    record(st, "swap contact sd", e / tol, P, buf);
    bool coresOverlapA = dab.status == Status::Overlapping && dab.normal.norm() == 0;
    bool coresOverlapB = dba.status == Status::Overlapping && dba.normal.norm() == 0;
    if (!coresOverlapA && !coresOverlapB) {
      double e2 = std::abs(dab.distance - dba.distance);
      std::snprintf(buf, sizeof buf, "distance AB %.17g BA %.17g diff %.3g tol %.3g", dab.distance, dba.distance, e2, tol);
      record(st, "swap distance", e2 / tol, P, buf);
    }
    // normals: opposite, unless the optimum is not unique (then the other's normal gives the same overlap)
    double nd = (cab.normal + cba.normal).norm();
    if (nd > 1e-6) {
      LD ovA = overlapAlong(P, L(Vec3(-cba.normal)));
      double e3 = std::abs((double)ovA + cab.distance);  // overlap along -n_BA should be the same depth
      e3 /= std::max(tolNormal(cab, dab.normal.norm() != 0), tolNormal(cba, dba.normal.norm() != 0)) / tol;
      std::snprintf(buf, sizeof buf, "nAB %s nBA %s |nAB+nBA| %.3g; overlap along -nBA %.17Lg vs -sdAB %.17g", fmtV(cab.normal).c_str(),
                    fmtV(cba.normal).c_str(), nd, ovA, -cab.distance);
      record(st, "swap contact normal (non-equivalent)", e3 / tol, P, buf);
    }
  }
  // --- distance vs contact classification
  {
    bool ovD = dab.status == Status::Overlapping, ovC = cab.status == Status::Overlapping;
    if (ovD != ovC) {
      double mag = std::max(std::abs(cab.distance), std::abs(dab.distance));
      std::snprintf(buf, sizeof buf, "distance() %s %.17g, contact() %s sd %.17g (tol %.3g)", std::string(toString(dab.status)).c_str(),
                    dab.distance, std::string(toString(cab.status)).c_str(), cab.distance, tol);
      record(st, "distance/contact classification", mag / tol, P, buf);
    }
    // distance's signed value (cores apart) vs contact's
    if (!(dab.status == Status::Overlapping && dab.normal.norm() == 0)) {
      double e = std::abs(dab.distance - cab.distance);
      std::snprintf(buf, sizeof buf, "distance() %.17g contact() sd %.17g", dab.distance, cab.distance);
      record(st, "distance vs contact value (cores apart)", e / tol, P, buf);
    } else {
      // distance() promises -(rA+rB) as an upper bound of the signed distance
      double e = cab.distance - dab.distance;
      std::snprintf(buf, sizeof buf, "distance() bound %.17g contact() sd %.17g", dab.distance, cab.distance);
      record(st, "contact sd <= distance() bound (cores overlap)", e / tol, P, buf);
    }
  }
  // --- normal/witness consistency of contact (both orders) and distance
  const bool apartAB = dab.normal.norm() != 0, apartBA = dba.normal.norm() != 0;
  auto consist = [&](const char* which, const DistanceResult& r, const Pair& Q, bool coresApart) {
    if (r.normal.norm() == 0) return;
    const double tn = tolNormal(r, coresApart);
    LV n = L(r.normal).normalized();
    LD ov = overlapAlong(Q, n);
    double e = std::abs((double)ov + r.distance);
    note(st, std::string("normal-check raw err/tol [") + which + "]", e / tol);
    std::snprintf(buf, sizeof buf, "%s: sd %.17g, overlap along its normal %.17Lg (normal %s)", which, r.distance, ov, fmtV(r.normal).c_str());
    record(st, std::string("sd == -overlap along own normal [") + which + "]", e / tn, Q, buf);
    LD hA = fullH(Q.A, Q.pa, n), hB = fullH(Q.B, Q.pb, -n);
    double ea = std::abs((double)(n.dot(L(r.witnessA)) - hA));
    double eb = std::abs((double)(-n.dot(L(r.witnessB)) - hB));
    double ec = (r.witnessB - r.witnessA - r.distance * r.normal).norm();
    std::snprintf(buf, sizeof buf, "%s: n.wA-hA %.3g, -n.wB-hB %.3g, |wB-wA-sd n| %.3g", which, (double)(n.dot(L(r.witnessA)) - hA),
                  (double)(-n.dot(L(r.witnessB)) - hB), ec);
    record(st, std::string("witness on support plane [") + which + "]", std::max(ea, eb) / tn, Q, buf);
    record(st, std::string("wB - wA == sd n [") + which + "]", ec / tol, Q, buf);
  };
  Pair Q = P;
  std::swap(Q.A, Q.B), std::swap(Q.pa, Q.pb);
  consist("contact", cab, P, apartAB);
  consist("contact", cba, Q, apartBA);
  consist("distance", dab, P, apartAB);
  consist("distance", dba, Q, apartBA);
  // --- oracles
  if (E.exact) {
    for (auto [nm, val] : {std::pair<const char*, double>{"contact", cab.distance}, {"contact BA", cba.distance},
                           {"distance", dab.distance}, {"distance BA", dba.distance}}) {
      double e = 0;
      if (val < (double)E.lo) e = (double)E.lo - val;
      if (val > (double)E.hi) e = val - (double)E.hi;
      std::snprintf(buf, sizeof buf, "%s sd %.17g, exact in [%.17Lg, %.17Lg] (tol %.3g)", nm, val, E.lo, E.hi, tol);
      std::string nmS = std::string(nm).find("contact") == 0 ? "oracle exact sd (cores apart) [contact]" : "oracle exact sd (cores apart) [distance]";
      record(st, nmS, e / tol, P, buf);
    }
  }
  if (E.exact) {
    for (auto [nm, r] : {std::pair<const char*, const DistanceResult*>{"AB", &dab}, {"BA", &dba}}) {
      if (r->status != Status::Separated) continue;
      double e = r->lowerBound - (double)E.hi;
      std::snprintf(buf, sizeof buf, "distance %s: lowerBound %.17g > exact max %.17Lg (distance %.17g)", nm, r->lowerBound, E.hi, r->distance);
      record(st, "distance lowerBound certificate (<= exact, at 1e-14 S)", e / (tol / 100), P, buf);
    }
  }
  if (E.closed) {
    for (auto [nm, val] : {std::pair<const char*, double>{"contact", cab.distance}, {"contact BA", cba.distance}}) {
      double e = std::abs(val - (double)E.cf);
      std::snprintf(buf, sizeof buf, "%s sd %.17g, closed form %.17Lg (tol %.3g)", nm, val, E.cf, tol);
      record(st, "closed form sd [contact]", e / tol, P, buf);
    }
  }
  if (cab.distance < 0) {
    double e = -cab.distance - (double)E.upperDepth;
    if (E.upperDepth < 1e299L) {
      std::snprintf(buf, sizeof buf, "depth %.17g > overlap along placement normal %.17Lg", -cab.distance, E.upperDepth);
      record(st, "depth <= overlap along placement n", e / tol, P, buf);
    }
    // search for a direction with smaller overlap than the depth
    LV bn;
    LD mo = minOverlapSearch(P, rg, L(cab.normal), &bn);
    double e2 = -cab.distance - (double)mo;
    std::snprintf(buf, sizeof buf, "depth %.17g but overlap %.17Lg along n = [%.17Lg, %.17Lg, %.17Lg]", -cab.distance, mo, bn.x(), bn.y(), bn.z());
    record(st, "depth <= min overlap (direction search)", e2 / tol, P, buf);
  }
  if (sdDist) *sdDist = dab.distance;
  return cab.distance;
}

// ------------------------------------------------------------------------------------------------
// Placement: B's core support point along -n at A's core support point along n plus g n.
static Vec3 placeB(const Pair& P, const LV& n, LD g) {
  LV xA = coreSupWorld(P.A, P.pa, n);
  LM RB = P.pb.rotation.cast<LD>();
  LV sB = coreSupport(P.B, RB.transpose() * (-n));
  LV pB = xA + g * n - RB * sB;
  return Vec3((double)pB.x(), (double)pB.y(), (double)pB.z());
}
static Expect expectOf(const Pair& P, const LV& n, LD g) {
  Expect E;
  LV xA = coreSupWorld(P.A, P.pa, n);
  LV xB = coreSupWorld(P.B, P.pb, -n);
  LD w = n.dot(xB - xA);
  LD Rt = LD(P.A.R) + LD(P.B.R);
  if (g >= 0 && w >= 0) {
    E.exact = true;
    E.lo = w - Rt;
    E.hi = (xB - xA).norm() - Rt;
  }
  E.upperDepth = overlapAlong(P, n);
  (void)g;
  return E;
}

// closed forms with a sphere as A
static bool closedForm(const Pair& P0, LD& sd) {
  Pair P = P0;
  if (P.A.kind != kSphere) {
    if (P.B.kind != kSphere) return false;
    std::swap(P.A, P.B), std::swap(P.pa, P.pb);
  }
  LV c = P.pb.rotation.cast<LD>().transpose() * (L(P.pa.translation) - L(P.pb.translation));  // in B's frame
  LD ra = P.A.R;
  switch (P.B.kind) {
    case kSphere: sd = (L(P.pb.translation) - L(P.pa.translation)).norm() - ra - P.B.R; return true;
    case kCapsule: {
      LD z = std::clamp(c.z(), -LD(P.B.hl), LD(P.B.hl));
      sd = (c - LV(0, 0, z)).norm() - ra - P.B.R;
      return true;
    }
    case kBox:
    case kRBox: {
      LV o;
      bool inside = true;
      LD m = 1e300L;
      for (int i = 0; i < 3; ++i) {
        o[i] = std::max(std::abs(c[i]) - LD(P.B.v[i]), LD(0));
        if (std::abs(c[i]) > LD(P.B.v[i])) inside = false;
        m = std::min(m, LD(P.B.v[i]) - std::abs(c[i]));
      }
      sd = inside ? -m - ra - P.B.R : o.norm() - ra - P.B.R;
      return true;
    }
    case kCylinder:
    case kRCyl: {
      LD rho = std::hypot(c.x(), c.y());
      LD dr = rho - P.B.r, dz = std::abs(c.z()) - P.B.hl;
      if (dr <= 0 && dz <= 0) sd = std::max(dr, dz) - ra - P.B.R;
      else sd = std::hypot(std::max(dr, LD(0)), std::max(dz, LD(0))) - ra - P.B.R;
      return true;
    }
    case kPolytope:
    case kSPoly: {
      if (P.B.verts.size() < 4) return false;
      LD m = 1e300L;
      for (size_t t = 0; t < P.B.triN.size(); ++t) m = std::min(m, L(P.B.triN[t]).dot(L(P.B.triP[t]) - c));
      if (m <= 0) return false;  // outside: no closed form here
      sd = -m - ra - P.B.R;
      return true;
    }
    default: return false;
  }
}

// ------------------------------------------------------------------------------------------------
enum Cond { kBase, kFar, kRatio, kParallel, kConds };
static const char* kCondName[] = {"base", "far(1e3..1e6)", "ratio(<=1000:1)", "parallel/flat"};

static void drawPair(Rng& rg, int ka, int kb, int cond, Pair& P, LV& n, double& gscale) {
  double sA = 1, sB = 1;
  if (cond == kRatio) {
    double r = rg.logu(1, 3);
    (rg.coin() ? sA : sB) = rg.coin() ? r : 1 / r;
  }
  bool flat = cond == kParallel;
  P.A = makeBody(rg, ka, sA, flat);
  P.B = makeBody(rg, kb, sB, flat);
  P.pa = Transform(rg.rot(), Vec3(rg.unit() * rg.uni(0, 1) * sA));
  if (cond == kParallel) {
    Vec3 fa = flatNormal(rg, P.A);
    Vec3 nw = P.pa.rotation * fa;
    double th = rg.coin(0.3) ? 0 : rg.logu(-12, -3);
    nw = tilt(rg, nw, th);
    Vec3 fb = flatNormal(rg, P.B);
    // rotate B so that its face normal fb points along -nw (tilted)
    Quat q = Quat::FromTwoVectors(fb, Vec3(-tilt(rg, nw, rg.coin(0.3) ? 0 : rg.logu(-12, -3))));
    Quat spin(Eigen::AngleAxis<Real>(rg.uni(0, 2 * M_PI), fb));
    P.pb = Transform(q * spin, Vec3::Zero());
    n = L(nw).normalized();
  } else {
    P.pb = Transform(rg.rot(), Vec3::Zero());
    n = L(rg.unit());
  }
  gscale = std::min(P.A.size, P.B.size);
}

static Vec3 toV(const LV& x) { return Vec3((double)x.x(), (double)x.y(), (double)x.z()); }

int main(int argc, char** argv) {
  int N = argc > 1 ? std::atoi(argv[1]) : 200;    // random pairs per kind-pair and condition
  int NS = argc > 2 ? std::atoi(argv[2]) : 10;    // sweeps per kind-pair and condition
  uint64_t seed = argc > 3 ? std::strtoull(argv[3], nullptr, 10) : 20261127;
  int onlyA = argc > 4 ? std::atoi(argv[4]) : -1;
  signal(SIGALRM, onAlarm);
  int repKa = -1, repKb = -1, repCond = -1, repI = -1, repSweep = -1;
  if (argc > 5) repKa = onlyA, repKb = std::atoi(argv[5]), repCond = std::atoi(argv[6]), repSweep = std::atoi(argv[7]), repI = std::atoi(argv[8]), verbose = true;
  Rng rg(seed);
  auto mix = [&](int ka, int kb, int cond, int sw, int i) {
    uint64_t h = seed * 0x9E3779B97F4A7C15ULL;
    for (uint64_t x : {uint64_t(ka), uint64_t(kb), uint64_t(cond), uint64_t(sw), uint64_t(i)}) h = (h ^ (x + 0x632BE59BD9B4E019ULL)) * 0xBF58476D1CE4E5B9ULL, h ^= h >> 31;
    return h;
  };
  for (int ka = 0; ka < kKinds; ++ka)
    for (int kb = ka; kb < kKinds; ++kb) {
      if (repKa < 0 && onlyA >= 0 && ka != onlyA && kb != onlyA) continue;
      if (repKa >= 0 && (ka != repKa || kb != repKb)) continue;
      for (int cond = 0; cond < kConds; ++cond) {
        if (repKa >= 0 && cond != repCond) continue;
        std::string key = std::string(kName[ka]) + "-" + kName[kb] + " | " + kCondName[cond];
        Stat& st = stats[key];
        // One case of this cell: its seed and reproducer id ("seed ka kb cond sweep i"), then its pair.
        auto beginCase = [&](int sweep, int i, Pair& P, LV& n, double& gs) {
          rg.g.seed(mix(ka, kb, cond, sweep, i));
          curId = std::to_string(seed) + " " + std::to_string(ka) + " " + std::to_string(kb) + " " + std::to_string(cond) +
                  " " + std::to_string(sweep) + " " + std::to_string(i);
          drawPair(rg, ka, kb, cond, P, n, gs);
        };
        // The expected values of Q placed at gap g along n, with its closed form where there is one.
        auto expectWithClosedForm = [](const Pair& Q, const LV& n, LD g) {
          Expect E = expectOf(Q, n, g);
          LD cf;
          if (closedForm(Q, cf)) E.closed = true, E.cf = cf;
          return E;
        };
        // random pairs at signed gaps +-1e-12..1e-1 of the size
        for (int i = 0; i < N; ++i) {
          if (repKa >= 0 && (repSweep != 0 || i != repI)) continue;
          Pair P;
          LV n;
          double gs;
          beginCase(0, i, P, n, gs);
          if (rg.coin()) std::swap(P.A, P.B), std::swap(P.pa, P.pb), n = -n;  // which one is "A" for placement
          double mag = gs * rg.logu(-12, -1);
          double s = rg.coin(0.1) ? 0 : (rg.coin() ? mag : -mag);
          LD Rt = LD(P.A.R) + LD(P.B.R);
          LD g = (Rt > 0 && rg.coin()) ? LD(s) : LD(s) + Rt;  // target the core gap or the full signed distance
          P.pb.translation = placeB(P, n, g);
          if (cond == kFar) {
            Vec3 O = rg.unit() * rg.logu(3, 6) * std::max(P.A.size, P.B.size);
            // unshifted run first, then the shifted one; compare
            double sd0 = checkPair(st, P, expectWithClosedForm(P, n, g), rg);
            Pair F = P;
            F.pa.translation = toV(L(P.pa.translation) + L(O));
            F.pb.translation = toV(L(P.pb.translation) + L(O));
            double sd1 = checkPair(st, F, expectWithClosedForm(F, n, g), rg);
            double tolF = tol::kEpaRelative * std::max(P.A.size + P.B.size, 4 * O.norm());
            std::snprintf(buf, sizeof buf, "sd at origin %.17g, shifted by %s: %.17g (tol %.3g)", sd0, fmtV(O).c_str(), sd1, tolF);
            record(st, "translation invariance", std::abs(sd0 - sd1) / tolF, F, buf);
          } else {
            checkPair(st, P, expectWithClosedForm(P, n, g), rg);
          }
        }
        // sweeps through contact: B translated along n over a ladder of core gaps
        for (int i = 0; i < NS; ++i) {
          if (repKa >= 0 && (repSweep != 1 || i != repI)) continue;
          Pair P;
          LV n;
          double gs;
          beginCase(1, i, P, n, gs);
          Vec3 O = Vec3::Zero();
          if (cond == kFar) O = rg.unit() * rg.logu(3, 6) * std::max(P.A.size, P.B.size);
          P.pa.translation = toV(L(P.pa.translation) + L(O));
          std::vector<LD> ladder;
          for (int e = -1; e >= -12; --e) ladder.push_back(LD(gs) * std::pow(10.0L, LD(e)));
          ladder.push_back(0);
          for (int e = -12; e <= -1; ++e) ladder.push_back(-LD(gs) * std::pow(10.0L, LD(e)));
          LD Rt = LD(P.A.R) + LD(P.B.R);
          bool fullTarget = Rt > 0 && rg.coin(0.3);  // otherwise core gaps (the inflated transition)
          Vec3 base = placeB(P, n, 0);
          double prevSd = 0, prevG = 0;
          bool havePrev = false;
          for (LD g0 : ladder) {
            LD g = fullTarget ? g0 + Rt : g0;
            P.pb.translation = toV(L(base) + g * n);
            const Expect E = expectWithClosedForm(P, n, g);
            if (verbose) std::printf("ladder core gap %.6Lg\n", g);
            double sd = checkPair(st, P, E, rg);
            double tol = tol::kEpaRelative * std::max(P.A.size + P.B.size + (P.pb.translation - P.pa.translation).norm(), 4 * O.norm());
            if (havePrev) {
              double step = std::abs((double)g - prevG);
              double jump = std::abs(sd - prevSd) - step;
              std::snprintf(buf, sizeof buf, "core gap %.6Lg -> %.6Lg (step %.3g): sd %.17g -> %.17g, excess %.3g (tol %.3g)", (LD)prevG, g, step,
                            prevSd, sd, jump, tol);
              record(st, "sweep Lipschitz continuity", jump / (2 * tol), P, buf);
            }
            prevSd = sd, prevG = (double)g, havePrev = true;
          }
        }
        std::fprintf(stderr, "%-40s pairs %ld fails %zu kinds\n", key.c_str(), st.pairs, st.fails.size());
      }
    }
  // report
  std::printf("\n==== SUMMARY (seed %llu, N=%d, sweeps=%d) ====\n", (unsigned long long)seed, N, NS);
  for (auto& [key, st] : stats) {
    long tot = 0;
    for (auto& [c, k] : st.fails) tot += k;
    std::printf("%-45s pairs %6ld queries %7ld failures %ld failedPairs %ld hard %ld normal %ld align %ld status %ld\n", key.c_str(), st.pairs, st.queries, tot, st.failedPairs, st.hardPairs, st.normalPairs, st.alignPairs, st.statusPairs);
    for (auto& [c, k] : st.fails) std::printf("    FAIL %-55s %6ld  worst %.3g tol\n", c.c_str(), k, st.worst[c]);
  }
  std::printf("\n==== MAX RATIOS (err / tol) per check over all pairs ====\n");
  for (auto& [key, st] : stats) {
    std::printf("%s:", key.c_str());
    for (auto& [c, m] : st.maxRatio) std::printf(" [%s %.2g]", c.c_str(), m);
    std::printf("\n");
  }
  std::printf("\n==== REPRODUCERS ====\n");
  for (auto& [key, st] : stats)
    for (auto& [c, s] : st.repro) std::printf("--- %s :: %s\n   %s\n", key.c_str(), c.c_str(), s.c_str());
  return 0;
}
