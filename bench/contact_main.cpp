// proxima_bench_contact: penetration (contact) queries between overlapping convex bodies, for
// proxima's methods and the peer libraries found at build time, on the same pairs, checked against
// the separating-axis oracle (tests/sat_oracle.hpp, long double). Cases: contact_cases.hpp.
//
// Benchmark names: <kind>/<depth>/N:<n>/<method>
//   kind    icosphere | box | box25 | polytope | edge_edge | vertex_face | face_face
//   depth   0.1 (icospheres: overlap of the circumscribed spheres) | 1e-6 | 1e-2 | 0.3
//   method  proxima_td            contact(), GJK-TD, cold, single contact point (manifold off)
//           proxima_td_manifold   the same with the default options (4-point manifold)
//           proxima_td_warm       one ContactCache per pair, each visit alternating between two
//                                 poses one small step apart (as the distance benchmark's warm)
//           proxima_dist_warm     proxima::distance() with a GjkCache on the same alternation: the
//                                 cost of the overlap test alone, for comparison
//           proxima_nezami / proxima_cundall         contact() with PenetrationMethod Nezami /
//                                 Cundall (world features built inside every query)
//           proxima_nezami_kernel / proxima_cundall_kernel   revisedNezami / revisedCundall on
//                                 features built once, outside the timed loop
//           <peer>                ccd_epa, ccd_mpr, fcl_indep_epa, fcl_libccd_sd, fcl_libccd_mpr,
//                                 bullet_epa, bullet_gjk (peers.hpp)
// Each timed iteration is one query on the next of the cell's 1000 pairs (cycling).
//
// Counters (computed once per benchmark on all pairs, outside the timed loop; warm variants on
// both poses of every pair, 2000 queries; -1 = the cell is time only, oracle not run):
//   failures      queries with any of: depth error > 1e-9 scale, normal off by > 1e-6 rad (and not
//                 an equally deep axis), misclassified (oracle overlapping but reported separated
//                 or depth 0, or the reverse), NaN / no result / exception (a negative depth
//                 reported as overlapping counts as a depth error)
//   fail_depth, fail_normal, misclassified, nan   the four kinds, counted separately
//   err_1e12      queries whose depth error exceeds 1e-12 scale (the accuracy target)
//   max_rel_err   max |depth - oracle| / scale over pairs both call overlapping
//   alt_normals   normals off by > 1e-6 rad but with the same overlap along them (ties; accepted)
//   normal_flips  normals pointing away from the oracle's (dot < -0.5): a sign convention check
//   bad_status    proxima only: results with status MaxIterations or Degenerate
//   expansions    proxima only: mean ContactResult::expansions
//   mean_depth, min_depth, max_depth, overlapping, oracle_s   the cell (oracle on pose 0)
//   inradius, oracle_validated, oracle_mismatch   icospheres: placement radius, and the check of
//                 the prefiltered oracle against the plain one (contact_cases.cpp)
// scale = the larger body's largest vertex distance from its own origin.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "contact_cases.hpp"
#include "peers.hpp"
#include "proxima/narrowphase/common_plane.hpp"
#include "proxima/narrowphase/distance.hpp"
#include "proxima/narrowphase/penetration.hpp"

namespace pbench {
namespace {

using proxima::ContactCache;
using proxima::ContactResult;
using proxima::PenetrationMethod;
using proxima::PenetrationOptions;
using proxima::Status;

double minTime() {
  if (const char* e = std::getenv("PROXIMA_BENCH_MIN_TIME")) return std::atof(e);
  return 0.05;
}

ContactCell& getCell(ContactKind kind, int n, double target) {
  static std::map<std::tuple<int, int, double>, std::unique_ptr<ContactCell>> cells;
  auto& slot = cells[{static_cast<int>(kind), n, target}];
  if (!slot) {
    slot = std::make_unique<ContactCell>(makeContactCell(kind, n, target, /*withPose1=*/true));
    std::fprintf(stderr, "[contact] cell %s: oracle %.1f s, %d/%d overlapping, depth %.3g..%.3g", slot->name().c_str(),
                 slot->oracleSeconds, slot->overlapping, kPairs, slot->minDepth, slot->maxDepth);
    if (slot->oracleValidated)
      std::fprintf(stderr, "; screened oracle vs plain oracle on %d pairs (%.1f s): %d mismatches",
                   slot->oracleValidated, slot->oracleValidateSeconds, slot->oracleMismatch);
    std::fprintf(stderr, "%s\n", slot->checked() ? "" : " (time only: no oracle)");
  }
  return *slot;
}

// ---------------------------------------------------------------------------------------------
/// One answer in proxima's conventions, from proxima or a peer.
struct Answer {
  bool valid = true;  ///< false: no result, error status, exception
  bool overlap = false;
  double depth = 0;
  Vec3 normal = Vec3::Zero();
  bool badStatus = false;
  int expansions = 0;
};

Answer fromContact(const ContactResult& r) {
  Answer a;
  a.valid = r.status == Status::Separated || r.status == Status::Overlapping || r.status == Status::MaxIterations ||
            r.status == Status::Degenerate;
  a.badStatus = r.status == Status::MaxIterations || r.status == Status::Degenerate;
  a.overlap = r.status == Status::Overlapping || (a.badStatus && r.depth > 0);
  a.depth = r.depth;
  a.normal = r.normal;
  a.expansions = r.expansions;
  return a;
}

Answer fromPeer(const PenAnswer& p) {
  Answer a;
  a.valid = p.valid;
  a.overlap = p.overlap;
  a.depth = p.overlap ? p.depth : 0;
  a.normal = p.normal;
  return a;
}

struct Check {
  bool done = false;
  bool checked = true;  ///< false: time-only cell
  int queries = 0, failures = 0, depthFail = 0, normalFail = 0, misclassified = 0, nan = 0;
  int over1e12 = 0, altNormals = 0, flips = 0, badStatus = 0;
  double maxRelErr = 0;
  long expansions = 0;

  void add(const ContactCell& c, int i, bool pose1, const Answer& a, bool requireUnitNormal) {
    ++queries;
    badStatus += a.badStatus;
    expansions += a.expansions;
    const OracleRef& r = pose1 ? c.ref1[i] : c.ref0[i];
    if (!a.valid) {
      ++nan, ++failures;
      return;
    }
    if (!r.checked) return;
    const double s = c.pairs[i].scale;
    const double tol = 1e-9 * s;
    if (!r.overlapping) {
      if (a.overlap && a.depth > tol) ++misclassified, ++failures;
      return;
    }
    if (!a.overlap || a.depth == 0) {
      ++misclassified, ++failures;
      return;
    }
    if (!std::isfinite(a.depth) || !a.normal.allFinite() || !(a.normal.norm() > 0)) {
      ++nan, ++failures;
      return;
    }
    const double err = std::abs(a.depth - r.depth);
    maxRelErr = std::max(maxRelErr, err / s);
    over1e12 += err > 1e-12 * s;
    bool bad = false;
    if (err > tol) ++depthFail, bad = true;
    const Vec3 n = a.normal.normalized();
    const double angle = std::atan2(n.cross(r.normal).norm(), n.dot(r.normal));
    flips += n.dot(r.normal) < -0.5;
    bool normalBad = requireUnitNormal && std::abs(a.normal.norm() - 1) > 1e-12;
    if (angle > 1e-6) {
      // A tie: another axis with the same overlap is an equally valid answer.
      if (overlapAlong(c.pairs[i], pose1, n) <= r.depth + tol) ++altNormals;
      else normalBad = true;
    }
    if (normalBad) ++normalFail, bad = true;
    failures += bad;
  }

  void report(benchmark::State& st, const ContactCell& c, bool proxima) const {
    const double m = checked ? 1.0 : -1.0;
    auto cnt = [&](int v) { return checked ? double(v) : -1.0; };
    st.counters["failures"] = cnt(failures);
    st.counters["fail_depth"] = cnt(depthFail);
    st.counters["fail_normal"] = cnt(normalFail);
    st.counters["misclassified"] = cnt(misclassified);
    st.counters["nan"] = double(nan);
    st.counters["err_1e12"] = cnt(over1e12);
    st.counters["max_rel_err"] = checked ? maxRelErr : -1.0;
    st.counters["alt_normals"] = cnt(altNormals);
    st.counters["normal_flips"] = cnt(flips);
    st.counters["queries"] = double(queries);
    if (proxima) {
      st.counters["bad_status"] = double(badStatus);
      st.counters["expansions"] = queries ? double(expansions) / queries : 0.0;
    }
    st.counters["mean_depth"] = m * c.meanDepth;
    st.counters["min_depth"] = m * c.minDepth;
    st.counters["max_depth"] = m * c.maxDepth;
    st.counters["overlapping"] = cnt(c.overlapping);
    st.counters["oracle_s"] = c.oracleSeconds;
    if (c.kind == ContactKind::Icosphere) {
      st.counters["inradius"] = c.inradius;
      st.counters["oracle_validated"] = c.oracleValidated;
      st.counters["oracle_mismatch"] = c.oracleMismatch;
    }
  }
};

// ---------------------------------------------------------------------------------------------
enum class PMethod { Td, TdManifold, TdWarm, DistWarm, Nezami, Cundall, NezamiKernel, CundallKernel };

struct PMethodInfo {
  PMethod id;
  const char* key;
};

const std::vector<PMethodInfo>& allProximaMethods() {
  static const std::vector<PMethodInfo> m{
      {PMethod::Td, "proxima_td"},         {PMethod::TdManifold, "proxima_td_manifold"},
      {PMethod::TdWarm, "proxima_td_warm"}, {PMethod::DistWarm, "proxima_dist_warm"},
      {PMethod::Nezami, "proxima_nezami"},  {PMethod::Cundall, "proxima_cundall"},
      {PMethod::NezamiKernel, "proxima_nezami_kernel"}, {PMethod::CundallKernel, "proxima_cundall_kernel"}};
  return m;
}

PenetrationOptions optionsFor(PMethod m) {
  PenetrationOptions o;
  o.manifold = m == PMethod::TdManifold;
  if (m == PMethod::Nezami) o.method = PenetrationMethod::Nezami;
  if (m == PMethod::Cundall) o.method = PenetrationMethod::Cundall;
  return o;
}

struct ProximaState {
  Check check;
  std::vector<ContactCache> caches;
  std::vector<proxima::GjkCache> gjkCaches;
  std::vector<proxima::PolyhedronFeatures> fa, fb;
  std::string error;   ///< set when the method cannot run on this cell
  std::size_t k = 0;   ///< query counter, kept across invocations (warm alternation)
};

ContactResult contactQuery(const ContactPair& p, const PosePair& q, const PenetrationOptions& o, ContactCache* cache) {
  return proxima::contact(p.a, q.a, p.b, q.b, o, cache);
}

/// Runs f and turns an exception into an invalid answer.
template <class F>
Answer guarded(F&& f) {
  try {
    return f();
  } catch (...) {
    Answer a;
    a.valid = false;
    return a;
  }
}

void prepareProxima(ContactCell& c, PMethod m, ProximaState& ps) {
  Check& ck = ps.check;
  ck.done = true;
  ck.checked = c.checked();
  const PenetrationOptions o = optionsFor(m);
  const auto& pairs = c.pairs;
  switch (m) {
    case PMethod::TdWarm:
      // Prime every pair's cache with pose 0, then step to pose 1; the timed loop continues the
      // alternation 0, 1, 0, 1, ... so every timed query is warm-started from the other pose.
      ps.caches.assign(kPairs, ContactCache{});
      for (int i = 0; i < kPairs; ++i) guarded([&] { return fromContact(contactQuery(pairs[i], pairs[i].pose0, o, &ps.caches[i])); });
      for (int i = 0; i < kPairs; ++i)
        ck.add(c, i, true, guarded([&] { return fromContact(contactQuery(pairs[i], pairs[i].pose1, o, &ps.caches[i])); }), true);
      for (int i = 0; i < kPairs; ++i)
        ck.add(c, i, false, guarded([&] { return fromContact(contactQuery(pairs[i], pairs[i].pose0, o, &ps.caches[i])); }), true);
      ps.k = kPairs;
      break;
    case PMethod::DistWarm: {
      // Classification only: distance() does not compute a depth when the cores overlap.
      ps.gjkCaches.assign(kPairs, proxima::GjkCache{});
      auto dist = [&](int i, const PosePair& q) {
        return guarded([&] {
          const auto r = proxima::distance(pairs[i].a, q.a, pairs[i].b, q.b, {}, &ps.gjkCaches[i]);
          Answer a;
          a.valid = r.status == Status::Separated || r.status == Status::Overlapping;
          a.overlap = r.status == Status::Overlapping;
          return a;
        });
      };
      for (int i = 0; i < kPairs; ++i) dist(i, pairs[i].pose0);
      for (int pass = 0; pass < 2; ++pass)
        for (int i = 0; i < kPairs; ++i) {
          const bool pose1 = pass == 0;
          const Answer a = dist(i, pose1 ? pairs[i].pose1 : pairs[i].pose0);
          const OracleRef& r = pose1 ? c.ref1[i] : c.ref0[i];
          ++ck.queries;
          if (!a.valid) ++ck.nan, ++ck.failures;
          else if (r.checked && a.overlap != r.overlapping) ++ck.misclassified, ++ck.failures;
        }
      ps.k = kPairs;
      break;
    }
    case PMethod::NezamiKernel:
    case PMethod::CundallKernel: {
      ps.fa.reserve(kPairs), ps.fb.reserve(kPairs);
      for (const auto& p : pairs) {
        auto a = proxima::polyhedronFeatures(p.a, p.pose0.a);
        auto b = proxima::polyhedronFeatures(p.b, p.pose0.b);
        if (!a || !b) {
          ps.error = "polyhedronFeatures: " + (a ? b.message() : a.message());
          ps.fa.clear(), ps.fb.clear();
          return;
        }
        ps.fa.push_back(std::move(a).value());
        ps.fb.push_back(std::move(b).value());
      }
      for (int i = 0; i < kPairs; ++i)
        ck.add(c, i, false, guarded([&] {
                 return fromContact(m == PMethod::NezamiKernel ? proxima::revisedNezami(ps.fa[i], ps.fb[i])
                                                               : proxima::revisedCundall(ps.fa[i], ps.fb[i]));
               }),
               true);
      break;
    }
    default:
      for (int i = 0; i < kPairs; ++i)
        ck.add(c, i, false, guarded([&] { return fromContact(contactQuery(pairs[i], pairs[i].pose0, o, nullptr)); }), true);
      break;
  }
}

void runProxima(benchmark::State& st, ContactKind kind, int n, double target, PMethod m, ProximaState& ps) {
  ContactCell& c = getCell(kind, n, target);
  if (!ps.check.done) prepareProxima(c, m, ps);
  if (!ps.error.empty()) {
    st.SkipWithError(ps.error.c_str());
    return;
  }
  const PenetrationOptions o = optionsFor(m);
  const auto& pairs = c.pairs;
  std::size_t k = ps.k;
  switch (m) {
    case PMethod::TdWarm:
      for (auto _ : st) {
        const std::size_t i = k % kPairs;
        const ContactPair& p = pairs[i];
        ContactResult r = contactQuery(p, ((k / kPairs) & 1) ? p.pose1 : p.pose0, o, &ps.caches[i]);
        benchmark::DoNotOptimize(r);
        ++k;
      }
      break;
    case PMethod::DistWarm:
      for (auto _ : st) {
        const std::size_t i = k % kPairs;
        const ContactPair& p = pairs[i];
        const PosePair& q = ((k / kPairs) & 1) ? p.pose1 : p.pose0;
        auto r = proxima::distance(p.a, q.a, p.b, q.b, {}, &ps.gjkCaches[i]);
        benchmark::DoNotOptimize(r);
        ++k;
      }
      break;
    case PMethod::NezamiKernel:
      for (auto _ : st) {
        const std::size_t i = k % kPairs;
        ContactResult r = proxima::revisedNezami(ps.fa[i], ps.fb[i]);
        benchmark::DoNotOptimize(r);
        ++k;
      }
      break;
    case PMethod::CundallKernel:
      for (auto _ : st) {
        const std::size_t i = k % kPairs;
        ContactResult r = proxima::revisedCundall(ps.fa[i], ps.fb[i]);
        benchmark::DoNotOptimize(r);
        ++k;
      }
      break;
    default:
      for (auto _ : st) {
        const ContactPair& p = pairs[k % kPairs];
        ContactResult r = contactQuery(p, p.pose0, o, nullptr);
        benchmark::DoNotOptimize(r);
        ++k;
      }
      break;
  }
  ps.k = k;
  st.SetItemsProcessed(st.iterations());
  ps.check.report(st, c, true);
}

// ---------------------------------------------------------------------------------------------
struct PeerState {
  Check check;
  std::unique_ptr<PenetrationRunner> runner;
};

void runPeer(benchmark::State& st, ContactKind kind, int n, double target, const PenPeerInfo& peer, PeerState& ps) {
  ContactCell& c = getCell(kind, n, target);
  if (!ps.runner) {
    ps.runner = makePenetrationRunner(peer.id, c.peerPairs());
    ps.check.done = true;
    ps.check.checked = c.checked();
    for (int i = 0; i < kPairs; ++i) ps.check.add(c, i, false, guarded([&] { return fromPeer(ps.runner->query(i)); }), false);
  }
  std::size_t k = 0;
  PenetrationRunner& r = *ps.runner;
  for (auto _ : st) {
    try {
      PenAnswer a = r.query(k % kPairs);
      benchmark::DoNotOptimize(a);
    } catch (...) {
    }
    ++k;
  }
  st.SetItemsProcessed(st.iterations());
  ps.check.report(st, c, false);
}

// ---------------------------------------------------------------------------------------------
struct CellSpec {
  ContactKind kind;
  int n;
  double target;
};

std::vector<CellSpec> cellSpecs() {
  std::vector<CellSpec> s;
  for (int n : {12, 42, 162, 642, 2562}) s.push_back({ContactKind::Icosphere, n, 0.1});
  for (ContactKind k : {ContactKind::Box, ContactKind::Box25, ContactKind::Polytope})
    for (double d : contactDepths()) s.push_back({k, k == ContactKind::Polytope ? 20 : 8, d});
  for (ContactKind k : {ContactKind::EdgeEdge, ContactKind::VertexFace, ContactKind::FaceFace}) s.push_back({k, 8, 1e-2});
  for (double d : contactDepths()) s.push_back({ContactKind::Ellipsoid, 0, d});
  return s;
}

std::vector<PMethod> methodsFor(ContactKind k) {
  switch (k) {
    case ContactKind::Icosphere:
    case ContactKind::Ellipsoid:  // (the common-plane methods take polyhedra only)
      return {PMethod::Td, PMethod::TdManifold, PMethod::TdWarm, PMethod::DistWarm};
    case ContactKind::EdgeEdge:
    case ContactKind::VertexFace:
    case ContactKind::FaceFace:
      return {PMethod::Td, PMethod::TdManifold, PMethod::Nezami, PMethod::Cundall, PMethod::NezamiKernel,
              PMethod::CundallKernel};
    default:
      return {PMethod::Td,     PMethod::TdManifold, PMethod::TdWarm,       PMethod::DistWarm,
              PMethod::Nezami, PMethod::Cundall,    PMethod::NezamiKernel, PMethod::CundallKernel};
  }
}

const char* methodKey(PMethod m) {
  for (const auto& i : allProximaMethods())
    if (i.id == m) return i.key;
  return "?";
}

void registerAll() {
  const double mt = minTime();
  auto tune = [&](benchmark::internal::Benchmark* b) { b->Unit(benchmark::kNanosecond)->MinTime(mt); };
  const auto peers = availablePenetrationPeers();
  for (const CellSpec& cs : cellSpecs()) {
    const std::string prefix = std::string(kindName(cs.kind)) + "/" + depthLabel(cs.target) + "/N:" + std::to_string(cs.n) + "/";
    for (PMethod m : methodsFor(cs.kind)) {
      auto state = std::make_shared<ProximaState>();
      auto fn = [=](benchmark::State& st) { runProxima(st, cs.kind, cs.n, cs.target, m, *state); };
      tune(benchmark::RegisterBenchmark((prefix + methodKey(m)).c_str(), fn));
    }
    for (const auto& p : peers) {
      auto state = std::make_shared<PeerState>();
      auto fn = [=](benchmark::State& st) { runPeer(st, cs.kind, cs.n, cs.target, p, *state); };
      tune(benchmark::RegisterBenchmark((prefix + p.key).c_str(), fn));
    }
  }
}

}  // namespace
}  // namespace pbench

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::AddCustomContext("proxima_pairs_per_cell", std::to_string(pbench::kPairs));
  benchmark::AddCustomContext("proxima_min_time_s", std::to_string(pbench::minTime()));
  benchmark::AddCustomContext("proxima_oracle_max_n", std::to_string(pbench::oracleMaxN()));
  std::string peers;
  for (const auto& p : pbench::availablePenetrationPeers()) {
    if (!peers.empty()) peers += ',';
    peers += p.key;
  }
  benchmark::AddCustomContext("proxima_peers", peers.empty() ? "none" : peers);
  int i = 0;
  for (const auto& d : pbench::penetrationPeerDescriptions())
    benchmark::AddCustomContext("peer_" + std::to_string(i++), d);
  pbench::registerAll();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
