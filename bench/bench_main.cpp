// proxima_bench: GJK distance queries between "polygonal spheres" (icospheres with 12..10242
// vertices on the unit sphere) and between ellipsoids, for proxima's variants (cold/warm start,
// brute-force/hill-climbing support, Signed Volumes/Johnson) and for the peer libraries found at
// build time (FCL, Bullet, libccd), on the same pairs.
//
// Benchmark names: <shape>/<config>/N:<vertices>/<method>
//   shape   icosphere | ellipsoid (N:0)
//   config  distant (g=2) | close (g=1e-3) | touching (g=1e-9) | overlapping (g=-0.1)
//   method  proxima_<sv|jn>_<cold|warm>[_<bf|hc>] | fcl_libccd | fcl_indep | bullet | ccd_gjk | ccd_mpr
// Each timed iteration is one query on the next of 1000 pre-generated pairs (cycling).
//
// Counters (computed once per benchmark, outside the timed loop, on all 1000 pairs — and for the
// warm variants on both poses of every pair):
//   failures      answers that disagree with the reference: |d - d_ref| > 1e-6 max(1, |d_ref|), or a
//                 wrong overlap classification (beyond the same tolerance). Reference = proxima,
//                 Signed Volumes with exact signs, brute-force support, cold start.
//   max_err       largest |d - d_ref| over pairs that both call separated (proxima and distance peers)
//   iters         mean GJK iterations (proxima only)
//   overlap_frac  fraction of the cell's pairs that the reference calls overlapping
//   mean_d        mean reference distance of the cell's pairs (0 for overlapping pairs)
//   ref_exact_err ellipsoids only: max |d_ref - g| (the exact distance of an ellipsoid pair is g)
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "cases.hpp"
#include "peers.hpp"
#include "proxima/narrowphase/gjk.hpp"

namespace pbench {
namespace {

using proxima::DistanceResult;
using proxima::GjkCache;
using proxima::GjkOptions;
using proxima::Status;
using proxima::SubAlgorithm;
using proxima::SupportMode;

struct Ref {
  bool overlap = false;
  double distance = 0;
};

struct Cell {
  bool ellipsoidCell = false;
  int n = 0;
  Config config{};
  const proxima::Polytope* polytope = nullptr;
  proxima::Ellipsoid ellipsoid{kEllipsoidRadii};
  CellPoses poses;
  std::vector<Ref> ref0, ref1;
  double overlapFrac = 0;
  double meanDistance = 0;  ///< mean reference distance over the pose-0 pairs
  double refExactErr = 0;  ///< ellipsoids: max |d_ref - g| over pose-0 pairs (exact distance known)

  [[nodiscard]] ShapeRef shape() const {
    ShapeRef s;
    if (ellipsoidCell) s.ellipsoid = &ellipsoid;
    else s.polytope = polytope;
    return s;
  }
};

template <class S>
DistanceResult query(const S& s, const PosePair& p, const GjkOptions& o, GjkCache* cache) {
  return proxima::gjkDistance<S, S>(s, p.a, s, p.b, o, cache);
}

Ref toRef(const DistanceResult& r) { return {r.status == Status::Overlapping, r.distance}; }

template <class S>
void computeReference(Cell& c, const S& s) {
  GjkOptions o;
  o.subAlgorithm = SubAlgorithm::SignedVolumes;
  o.signs = proxima::SignMode::Exact;
  o.supportMode = SupportMode::BruteForce;
  o.smoothNewton = false;  // plain GJK: independent of the Newton finish the variants use on ellipsoids
  int overlaps = 0;
  double sum = 0;
  for (int i = 0; i < kPairs; ++i) {
    c.ref0.push_back(toRef(query(s, c.poses.pose0[i], o, nullptr)));
    c.ref1.push_back(toRef(query(s, c.poses.pose1[i], o, nullptr)));
    overlaps += c.ref0.back().overlap;
    sum += c.ref0.back().distance;
  }
  c.overlapFrac = double(overlaps) / kPairs;
  c.meanDistance = sum / kPairs;
}

Cell& getCell(bool ellipsoidCell, int n, int configIndex) {
  static std::map<std::tuple<bool, int, int>, std::unique_ptr<Cell>> cells;
  auto& slot = cells[{ellipsoidCell, n, configIndex}];
  if (slot) return *slot;
  slot = std::make_unique<Cell>();
  Cell& c = *slot;
  c.ellipsoidCell = ellipsoidCell;
  c.n = n;
  c.config = configs()[configIndex];
  // The same seed for every N of a configuration: the rotations are the same across N.
  const std::uint64_t seed = 0x9E3779B97F4A7C15ull + 7919ull * configIndex + (ellipsoidCell ? 104729ull : 0ull);
  if (ellipsoidCell) {
    c.poses = ellipsoidPoses(c.ellipsoid, c.config.gap, seed);
    computeReference(c, c.ellipsoid);
    if (c.config.gap > 0)
      for (const Ref& r : c.ref0) c.refExactErr = std::max(c.refExactErr, std::abs(r.distance - c.config.gap));
  } else {
    c.polytope = &icosphere(n);
    c.poses = spherePoses(c.config.gap, seed);
    computeReference(c, *c.polytope);
  }
  return c;
}

/// Failure test shared by proxima variants and peers. hasDistance = false: classification only.
bool isFailure(const Ref& ref, bool valid, bool overlap, double d, bool hasDistance) {
  if (!valid) return true;
  const double tol = 1e-6 * std::max(1.0, std::abs(ref.distance));
  if (ref.overlap) return !overlap && (!hasDistance || !(d <= tol));
  if (overlap) return ref.distance > tol;
  if (!hasDistance) return false;
  return !(std::abs(d - ref.distance) <= tol);
}

double minTime() {
  if (const char* e = std::getenv("PROXIMA_BENCH_MIN_TIME")) return std::atof(e);
  return 0.05;
}

// ---------------------------------------------------------------------------------------------
struct ProximaVariant {
  std::string key;
  bool warm;
  SubAlgorithm sub;
  SupportMode mode;
};

struct ProximaState {
  bool checked = false;
  int failures = 0;
  double maxErr = 0, meanIters = 0;
  std::vector<GjkCache> caches;
  std::size_t k = 0;  ///< query counter, kept across invocations so warm poses keep alternating
};

template <class S>
void runProxima(benchmark::State& st, bool ellipsoidCell, int n, int ci, const ProximaVariant& v, ProximaState& ps) {
  Cell& c = getCell(ellipsoidCell, n, ci);
  const S* shape;
  if constexpr (std::is_same_v<S, proxima::Polytope>) shape = c.polytope;
  else shape = &c.ellipsoid;
  GjkOptions o;
  o.subAlgorithm = v.sub;
  o.supportMode = v.mode;
  const auto& p0 = c.poses.pose0;
  const auto& p1 = c.poses.pose1;
  if (!ps.checked) {
    ps.checked = true;
    long iters = 0;
    int queries = 0;
    auto check = [&](const DistanceResult& r, const Ref& ref) {
      const bool ov = r.status == Status::Overlapping;
      const bool valid = r.status == Status::Separated || ov;
      ps.failures += isFailure(ref, valid, ov, r.distance, true);
      if (!ov && !ref.overlap) ps.maxErr = std::max(ps.maxErr, std::abs(r.distance - ref.distance));
      iters += r.iterations;
      ++queries;
    };
    if (v.warm) {
      // Prime every pair's cache with pose 0, then take the step to pose 1; the timed loop continues
      // the alternation 0, 1, 0, 1, ... so every timed query is warm-started from the other pose.
      ps.caches.assign(kPairs, GjkCache{});
      for (int i = 0; i < kPairs; ++i) query(*shape, p0[i], o, &ps.caches[i]);
      for (int i = 0; i < kPairs; ++i) check(query(*shape, p1[i], o, &ps.caches[i]), c.ref1[i]);
      for (int i = 0; i < kPairs; ++i) check(query(*shape, p0[i], o, &ps.caches[i]), c.ref0[i]);
      ps.k = kPairs;  // next timed query: pose 1
    } else {
      for (int i = 0; i < kPairs; ++i) check(query(*shape, p0[i], o, nullptr), c.ref0[i]);
    }
    ps.meanIters = double(iters) / queries;
  }

  std::size_t k = ps.k;
  if (v.warm) {
    for (auto _ : st) {
      const std::size_t i = k % kPairs;
      const PosePair& p = ((k / kPairs) & 1) ? p1[i] : p0[i];
      DistanceResult r = query(*shape, p, o, &ps.caches[i]);
      benchmark::DoNotOptimize(r);
      ++k;
    }
  } else {
    for (auto _ : st) {
      DistanceResult r = query(*shape, p0[k % kPairs], o, nullptr);
      benchmark::DoNotOptimize(r);
      ++k;
    }
  }
  // Keep counting across invocations, so that every pair keeps alternating between its two poses.
  ps.k = k;
  st.SetItemsProcessed(st.iterations());
  st.counters["failures"] = ps.failures;
  st.counters["max_err"] = ps.maxErr;
  st.counters["iters"] = ps.meanIters;
  st.counters["overlap_frac"] = c.overlapFrac;
  st.counters["mean_d"] = c.meanDistance;
  if (c.ellipsoidCell) st.counters["ref_exact_err"] = c.refExactErr;
}

// ---------------------------------------------------------------------------------------------
struct PeerState {
  std::unique_ptr<PeerRunner> runner;
  int failures = 0;
  double maxErr = 0;
};

void runPeer(benchmark::State& st, bool ellipsoidCell, int n, int ci, const PeerInfo& peer, PeerState& ps) {
  Cell& c = getCell(ellipsoidCell, n, ci);
  if (!ps.runner) {
    ps.runner = makePeerRunner(peer.id, c.shape(), c.shape(), c.poses.pose0);
    for (int i = 0; i < kPairs; ++i) {
      const PeerAnswer a = ps.runner->query(i);
      const Ref& ref = c.ref0[i];
      ps.failures += isFailure(ref, a.valid, a.overlap, a.distance, peer.distance);
      if (peer.distance && a.valid && !a.overlap && !ref.overlap)
        ps.maxErr = std::max(ps.maxErr, std::abs(a.distance - ref.distance));
    }
  }
  std::size_t k = 0;
  PeerRunner& r = *ps.runner;
  for (auto _ : st) {
    PeerAnswer a = r.query(k % kPairs);
    benchmark::DoNotOptimize(a);
    ++k;
  }
  st.SetItemsProcessed(st.iterations());
  st.counters["failures"] = ps.failures;
  st.counters["max_err"] = ps.maxErr;
  st.counters["overlap_frac"] = c.overlapFrac;
  st.counters["mean_d"] = c.meanDistance;
  if (c.ellipsoidCell) st.counters["ref_exact_err"] = c.refExactErr;
}

// ---------------------------------------------------------------------------------------------
std::vector<ProximaVariant> proximaVariants(bool withSupportModes) {
  std::vector<ProximaVariant> v;
  for (bool warm : {false, true})
    for (SubAlgorithm sub : {SubAlgorithm::SignedVolumes, SubAlgorithm::Johnson}) {
      const std::string base =
          std::string("proxima_") + (sub == SubAlgorithm::SignedVolumes ? "sv" : "jn") + (warm ? "_warm" : "_cold");
      if (withSupportModes) {
        v.push_back({base + "_bf", warm, sub, SupportMode::BruteForce});
        v.push_back({base + "_hc", warm, sub, SupportMode::HillClimb});
      } else {
        v.push_back({base, warm, sub, SupportMode::Auto});
      }
    }
  return v;
}

void registerAll() {
  const double mt = minTime();
  auto tune = [&](benchmark::internal::Benchmark* b) { b->Unit(benchmark::kNanosecond)->MinTime(mt); };
  const auto peers = availablePeers();
  // Polytopes first (configuration-major so one table is produced contiguously), then ellipsoids.
  for (bool ell : {false, true}) {
    const std::vector<int> sizes = ell ? std::vector<int>{0} : icosphereSizes();
    for (int ci = 0; ci < static_cast<int>(configs().size()); ++ci)
      for (int n : sizes) {
        const std::string prefix = std::string(ell ? "ellipsoid/" : "icosphere/") + configs()[ci].name +
                                   "/N:" + std::to_string(n) + "/";
        for (const auto& v : proximaVariants(!ell)) {
          auto state = std::make_shared<ProximaState>();
          auto fn = [=](benchmark::State& st) {
            if (ell) runProxima<proxima::Ellipsoid>(st, ell, n, ci, v, *state);
            else runProxima<proxima::Polytope>(st, ell, n, ci, v, *state);
          };
          tune(benchmark::RegisterBenchmark((prefix + v.key).c_str(), fn));
        }
        for (const auto& p : peers) {
          auto state = std::make_shared<PeerState>();
          auto fn = [=](benchmark::State& st) { runPeer(st, ell, n, ci, p, *state); };
          tune(benchmark::RegisterBenchmark((prefix + p.key).c_str(), fn));
        }
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
  std::string peers;
  for (const auto& p : pbench::availablePeers()) {
    if (!peers.empty()) peers += ',';
    peers += p.key;
  }
  benchmark::AddCustomContext("proxima_peers", peers.empty() ? "none" : peers);
  int i = 0;
  for (const auto& d : pbench::peerDescriptions()) benchmark::AddCustomContext("peer_" + std::to_string(i++), d);
  pbench::registerAll();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
