// proxima_bench_gjk_profile: one cell of the distance benchmark (proxima_bench's icosphere pairs and
// rotations) answered in a plain loop, without Google Benchmark, for profilers and for checking that
// a refactor of the GJK path is bit-identical.
//
// Usage: proxima_bench_gjk_profile N CONFIG [REPEATS] [MODE]
//   N        icosphere vertices: 12, 42, 162, 642, 2562 or 10242
//   CONFIG   0 distant (g = 2), 1 close (1e-3), 2 touching (1e-9), 3 overlapping (-0.1)
//   REPEATS  passes over the cell's 1000 pairs (default 10)
//   MODE     0 cold, default support mode (Auto); 1 warm (one GjkCache per pair, the passes alternate
//            between the cell's two poses); 2 cold hill-climbing; 3 cold brute force; 4 cold, exact signs
// Prints the time per query (wall clock: a rough figure on a shared machine; proxima_bench is the
// measurement), the mean GJK iterations and a hash of every result field of the first two passes
// (status, distance, witnesses, normal, iterations, simplex size) that changes if any bit does.
//
// Examples:
//   proxima_bench_gjk_profile 12 1 400                     # N = 12 close pairs, cold
//   valgrind --tool=cachegrind --branch-sim=yes proxima_bench_gjk_profile 12 1 10   # instructions, mispredicts
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <vector>

#include "cases.hpp"
#include "result_hash.hpp"
#include "proxima/narrowphase/gjk.hpp"

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s N CONFIG [REPEATS] [MODE]   (see the comment at the top of gjk_profile.cpp)\n",
                 argv[0]);
    return 2;
  }
  const int n = std::atoi(argv[1]), config = std::atoi(argv[2]);
  const int repeats = argc > 3 ? std::atoi(argv[3]) : 10, mode = argc > 4 ? std::atoi(argv[4]) : 0;
  const auto& configs = pbench::configs();
  if (config < 0 || config >= static_cast<int>(configs.size()) || repeats < 1 || mode < 0 || mode > 4) {
    std::fprintf(stderr, "CONFIG must be 0-3, REPEATS >= 1, MODE 0-4\n");
    return 2;
  }
  const proxima::Polytope* poly = nullptr;
  try {
    poly = &pbench::icosphere(n);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "N: %s\n", e.what());
    return 2;
  }
  // The same seed as proxima_bench's icosphere cells of this configuration.
  const std::uint64_t seed = 0x9E3779B97F4A7C15ull + 7919ull * static_cast<std::uint64_t>(config);
  const pbench::CellPoses poses = pbench::spherePoses(configs[static_cast<std::size_t>(config)].gap, seed);
  proxima::GjkOptions o;
  if (mode == 2) o.supportMode = proxima::SupportMode::HillClimb;
  if (mode == 3) o.supportMode = proxima::SupportMode::BruteForce;
  if (mode == 4) o.signs = proxima::SignMode::Exact;
  std::vector<proxima::GjkCache> caches(poses.pose0.size());
  pbench::ResultHash hash;
  long iterations = 0;
  const auto t0 = std::chrono::steady_clock::now();
  for (int r = 0; r < repeats; ++r)
    for (std::size_t i = 0; i < poses.pose0.size(); ++i) {
      const pbench::PosePair& p = (mode == 1 && (r & 1)) ? poses.pose1[i] : poses.pose0[i];
      const proxima::DistanceResult res =
          proxima::gjkDistance(*poly, p.a, *poly, p.b, o, mode == 1 ? &caches[i] : nullptr);
      if (r < 2) hash.mix(res);
      iterations += res.iterations;
    }
  const double queries = static_cast<double>(repeats) * static_cast<double>(poses.pose0.size());
  const double ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count() / queries;
  std::printf("N=%d config=%s mode=%d  %.1f ns/query  iterations %.3f  hash %016llx\n", n,
              configs[static_cast<std::size_t>(config)].name, mode, ns, static_cast<double>(iterations) / queries,
              static_cast<unsigned long long>(hash.h));
  return 0;
}
