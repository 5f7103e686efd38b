// proxima_bench_accuracy: the "pole" check. Icospheres with every vertex on the unit sphere,
// rotated so that (1,0,0) and (-1,0,0) are vertices exactly. A and B are rotated only about x
// (which keeps both poles fixed exactly), A at the origin, B at x = 2 + g: the two poles are the
// closest points and the exact distance is fl(2 + g) - 2 (computed exactly, Sterbenz), i.e. g up
// to the rounding of the placement. Reports the maximum absolute error over random angles per
// (N, g) for proxima (Signed Volumes and Johnson) and every peer compiled in.
//
// Variant "axis" is exactly that. Note that it is easy for GJK: the closest features are the two
// poles, which lie on the line of centres, so a GJK that starts from the centre direction finds
// them with its first support query. Variant "rotated" turns the whole scene by a random rotation
// (same exact distance; the poses are no longer axis-aligned so every coordinate is rounded).
//
// Usage: proxima_bench_accuracy [--trials T] [--out file.json]
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <numbers>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "cases.hpp"
#include "peers.hpp"
#include "proxima/narrowphase/gjk.hpp"

using namespace pbench;

namespace {

struct Row {
  std::string variant;  // axis: as described above; rotated: the whole scene turned by a random rotation
  int n;
  double gap;
  std::string method;
  bool distance;     // false: boolean peer (only the classification is checked)
  double maxAbsErr;  // distance methods only
  int failures;      // says overlap, no result, or |err| > 1e-6 max(1, g)
  int trials;
};

std::string jsonNumber(double x) {
  if (!std::isfinite(x)) return "null";
  char b[64];
  std::snprintf(b, sizeof b, "%.17g", x);
  return b;
}

}  // namespace

int main(int argc, char** argv) {
  int trials = 100;
  std::string out;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--trials") && i + 1 < argc) trials = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--out") && i + 1 < argc) out = argv[++i];
    else {
      std::fprintf(stderr, "usage: %s [--trials T] [--out file.json]\n", argv[0]);
      return 2;
    }
  }
  const std::vector<double> gaps{2.0, 1e-3, 1e-9};
  std::vector<Row> rows;

  struct ProxMethod {
    const char* name;
    proxima::SubAlgorithm sub;
    proxima::SignMode signs;
  };
  const std::vector<ProxMethod> prox{{"proxima_sv", proxima::SubAlgorithm::SignedVolumes, proxima::SignMode::Fast},
                                     {"proxima_jn", proxima::SubAlgorithm::Johnson, proxima::SignMode::Fast}};
  const auto peers = availablePeers();

  std::printf("%-8s %-7s %-6s %-12s %14s %9s\n", "variant", "N", "gap", "method", "max|err|", "failures");
  for (const char* variant : {"axis", "rotated"})
  for (int n : icosphereSizes()) {
    const proxima::Polytope& poly = icospherePole(n);
    ShapeRef shape;
    shape.polytope = &poly;
    for (double g : gaps) {
      const double c = 2.0 + g;
      const double exact = c - 2.0;  // exact (Sterbenz): the distance between the placed poles
      const double tol = 1e-6 * std::max(1.0, exact);  // same failure threshold as proxima_bench
      std::mt19937_64 rng(0xACC0 + n);
      std::uniform_real_distribution<double> angle(0, 2 * std::numbers::pi);
      const bool rotated = std::strcmp(variant, "rotated") == 0;
      std::vector<PosePair> poses;
      for (int t = 0; t < trials; ++t) {
        PosePair p;
        p.a = Transform(rotationX(angle(rng)), Vec3::Zero());
        p.b = Transform(rotationX(angle(rng)), Vec3(c, 0, 0));
        if (rotated) {
          // Same configuration seen in a random frame: the exact distance is unchanged, but the
          // coordinates are no longer axis-aligned (rounding of the poses adds ~1e-16).
          const Mat3 q = randomRotation(rng);
          p.a = Transform(Mat3(q * p.a.rotation), Vec3::Zero());
          p.b = Transform(Mat3(q * p.b.rotation), Vec3(q * p.b.translation));
        }
        poses.push_back(p);
      }
      auto emit = [&](Row r) {
        std::printf("%-8s %-7d %-6s %-12s %14.3e %9d\n", r.variant.c_str(), r.n, gapLabel(r.gap).c_str(), r.method.c_str(),
                    r.distance ? r.maxAbsErr : std::nan(""), r.failures);
        rows.push_back(std::move(r));
      };
      for (const auto& m : prox) {
        proxima::GjkOptions o;
        o.subAlgorithm = m.sub;
        o.signs = m.signs;
        Row r{variant, n, g, m.name, true, 0, 0, trials};
        for (const auto& p : poses) {
          const auto res = proxima::gjkDistance(poly, p.a, poly, p.b, o);
          const double e = std::abs(res.distance - exact);
          r.maxAbsErr = std::max(r.maxAbsErr, std::isfinite(e) ? e : INFINITY);
          if (res.status != proxima::Status::Separated || !(e <= tol)) ++r.failures;
        }
        emit(r);
      }
      for (const auto& pi : peers) {
        auto runner = makePeerRunner(pi.id, shape, shape, poses);
        Row r{variant, n, g, pi.key, pi.distance, 0, 0, trials};
        for (std::size_t t = 0; t < poses.size(); ++t) {
          const PeerAnswer a = runner->query(t);
          bool fail = !a.valid || a.overlap;
          if (pi.distance) {
            const double e = std::abs(a.distance - exact);
            r.maxAbsErr = std::max(r.maxAbsErr, std::isfinite(e) ? e : INFINITY);
            fail = fail || !(e <= tol);
          }
          r.failures += fail;
        }
        emit(r);
      }
    }
  }

  if (!out.empty()) {
    std::ostringstream js;
    js << "{\n  \"trials\": " << trials << ",\n  \"rows\": [\n";
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const Row& r = rows[i];
      js << "    {\"variant\": \"" << r.variant << "\", \"n\": " << r.n << ", \"gap\": " << jsonNumber(r.gap) << ", \"method\": \"" << r.method
         << "\", \"distance\": " << (r.distance ? "true" : "false")
         << ", \"max_abs_err\": " << (r.distance ? jsonNumber(r.maxAbsErr) : "null") << ", \"failures\": " << r.failures
         << ", \"trials\": " << r.trials << "}" << (i + 1 < rows.size() ? "," : "") << "\n";
    }
    js << "  ]\n}\n";
    std::ofstream f(out);
    f << js.str();
    if (!f) {
      std::fprintf(stderr, "cannot write %s\n", out.c_str());
      return 1;
    }
  }
  return 0;
}
