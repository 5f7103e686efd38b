// proxima_bench_contact_profile: one cell of the penetration benchmark (proxima_bench_contact's pairs,
// the same seeds) answered by proxima::contact() in a plain loop, without Google Benchmark and
// without the oracle's share of the run, for profilers and for checking that a refactor of the
// penetration path is bit-identical.
//
// Usage: proxima_bench_contact_profile KIND DEPTH [REPEATS] [MODE]
//   KIND     icosphere, box, box25, polytope, edge_edge, vertex_face, face_face, ellipsoid
//   DEPTH    relative depth target: 1e-6, 1e-2 or 0.3 (icosphere: N instead, 12 ... 2562; the
//            feature kinds ignore it)
//   REPEATS  passes over the cell's 1000 pairs (default 20)
//   MODE     0 cold, single point (proxima_td); 1 cold with the manifold; 2 warm (one ContactCache per
//            pair, the passes alternate between the cell's two poses); 3 warm with the manifold (the
//            DEM's use: the cache's manifold memo too)
// Prints the time per query (wall clock: a rough figure on a shared machine; proxima_bench_contact is
// the measurement) and a hash of every result field of every query (status, depth, normal,
// witnesses, contact point, manifold) that changes if any bit does, and the mean number of polytope
// expansions per query with the share of queries answered without one, and the final polytope size.
//
// Example:
//   proxima_bench_contact_profile polytope 1e-2 200          # then perf record ... the same
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "contact_cases.hpp"
#include "result_hash.hpp"
#include "proxima/narrowphase/penetration.hpp"

int main(int argc, char** argv) {
  using pbench::ContactKind;
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s KIND DEPTH [REPEATS] [MODE]   (see the comment at the top of contact_profile.cpp)\n",
                 argv[0]);
    return 2;
  }
  const std::string kindName = argv[1];
  const double depth = std::atof(argv[2]);
  const int repeats = argc > 3 ? std::atoi(argv[3]) : 20, mode = argc > 4 ? std::atoi(argv[4]) : 0;
  const ContactKind kinds[] = {ContactKind::Icosphere, ContactKind::Box,        ContactKind::Box25,
                               ContactKind::Polytope,  ContactKind::EdgeEdge,   ContactKind::VertexFace,
                               ContactKind::FaceFace,  ContactKind::Ellipsoid};
  int k = -1;
  for (int i = 0; i < 8; ++i)
    if (kindName == pbench::kindName(kinds[i])) k = i;
  if (k < 0 || repeats < 1 || mode < 0 || mode > 3 || !(depth > 0)) {
    std::fprintf(stderr, "KIND must be one of icosphere box box25 polytope edge_edge vertex_face face_face ellipsoid; "
                         "DEPTH > 0, REPEATS >= 1, MODE 0-3\n");
    return 2;
  }
  const ContactKind kind = kinds[k];
  int n = 8;
  double target = depth;
  if (kind == ContactKind::Icosphere) n = static_cast<int>(depth), target = 0.1;
  if (kind == ContactKind::Polytope) n = 20;
  if (kind == ContactKind::Ellipsoid) n = 0;
  if (kind == ContactKind::EdgeEdge || kind == ContactKind::VertexFace || kind == ContactKind::FaceFace) target = 1e-2;
  const bool warm = mode >= 2;
  const pbench::ContactCell cell = pbench::makeContactCell(kind, n, target, warm);
  proxima::PenetrationOptions o;
  o.manifold = mode == 1 || mode == 3;
  std::vector<proxima::ContactCache> caches(cell.pairs.size());
  pbench::ResultHash hash;
  double expansions = 0, noExpansion = 0, vertices = 0;  // (how the answers were reached: the warm start's share)
  const auto t0 = std::chrono::steady_clock::now();
  for (int r = 0; r < repeats; ++r)
    for (std::size_t i = 0; i < cell.pairs.size(); ++i) {
      const pbench::ContactPair& p = cell.pairs[i];
      const pbench::PosePair& q = (warm && (r & 1)) ? p.pose1 : p.pose0;
      const proxima::ContactResult res = proxima::contact(p.a, q.a, p.b, q.b, o, warm ? &caches[i] : nullptr);
      hash.mix(res);
      expansions += res.expansions;
      noExpansion += res.expansions == 0;
      vertices += res.polytopeVertices;
    }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const double queries = static_cast<double>(repeats) * static_cast<double>(cell.pairs.size());
  std::printf("%s: %.1f ns per query over %.0f queries; result hash %016llx; expansions %.2f per query, none in %.1f %%, "
              "final polytope %.1f vertices\n",
              cell.name().c_str(), 1e9 * s / queries, queries, static_cast<unsigned long long>(hash.h),
              expansions / queries, 100 * noExpansion / queries, vertices / queries);
  return 0;
}
