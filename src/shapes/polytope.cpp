// Convex polytope from a point cloud: Qhull for solid hulls (vertices, outward triangles, vertex
// adjacency for hill-climbing); our own handling of the degenerate clouds Qhull rejects
// (single point, collinear, coplanar), which are valid input for distance queries.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <numeric>
#include <set>
#include <sstream>
#include <unordered_map>

#include "proxima/shapes/convex.hpp"

extern "C" {
#include <libqhull_r/libqhull_r.h>
}

namespace proxima {
namespace {

void buildAdjacency(PolytopeData& d, const std::vector<std::set<int>>& nb) {
  d.adjacencyOffsets.assign(nb.size() + 1, 0);
  d.adjacency.clear();
  for (std::size_t i = 0; i < nb.size(); ++i) {
    d.adjacency.insert(d.adjacency.end(), nb[i].begin(), nb[i].end());
    d.adjacencyOffsets[i + 1] = static_cast<int>(d.adjacency.size());
  }
}

// Andrew's monotone chain on 2-D coordinates; returns indices in counter-clockwise order without
// collinear points.
std::vector<int> hull2d(const std::vector<Vec2>& p) {
  std::vector<int> idx(p.size());
  std::iota(idx.begin(), idx.end(), 0);
  std::sort(idx.begin(), idx.end(),
            [&](int a, int b) { return p[a].x() < p[b].x() || (p[a].x() == p[b].x() && p[a].y() < p[b].y()); });
  auto cross = [&](int o, int a, int b) {
    return (p[a] - p[o]).x() * (p[b] - p[o]).y() - (p[a] - p[o]).y() * (p[b] - p[o]).x();
  };
  std::vector<int> h(2 * idx.size());
  int k = 0;
  for (int i : idx) {
    while (k >= 2 && cross(h[k - 2], h[k - 1], i) <= 0) --k;
    h[k++] = i;
  }
  for (int j = static_cast<int>(idx.size()) - 2, t = k + 1; j >= 0; --j) {
    const int i = idx[j];
    while (k >= t && cross(h[k - 2], h[k - 1], i) <= 0) --k;
    h[k++] = i;
  }
  h.resize(std::max(k - 1, 1));
  return h;
}

// Solid hull with Qhull; returns false when Qhull reports the input as flat.
bool qhull3d(const std::vector<Vec3>& pts, PolytopeData& d) {
  std::vector<double> coords(pts.size() * 3);
  for (std::size_t i = 0; i < pts.size(); ++i)
    for (int k = 0; k < 3; ++k) coords[3 * i + k] = pts[i][k];
  qhT qh_qh;
  qhT* qh = &qh_qh;
  QHULL_LIB_CHECK
  qh_zero(qh, nullptr);
  char options[] = "qhull";  // merged facets are fanned below (Qt produced non-convex triangles on slivers)
  // Qhull reports precision problems on stderr; we handle them (fallback to the flat hull), so
  // its messages go to /dev/null.
  static FILE* devnull = std::fopen("/dev/null", "w");
  const int exitcode =
      qh_new_qhull(qh, 3, static_cast<int>(pts.size()), coords.data(), False, options, nullptr, devnull);
  bool ok = exitcode == 0;
  if (ok) {
    std::vector<int> remap(pts.size(), -1);
    vertexT* vertex;
    FORALLvertices {
      const int id = qh_pointid(qh, vertex->point);
      remap[id] = static_cast<int>(d.vertices.size());
      d.vertices.push_back(pts[id]);
    }
    std::vector<std::set<int>> nb(d.vertices.size());
    facetT* facet;
    FORALLfacets {
      std::vector<int> f;
      vertexT** vertexp;
      FOREACHvertex_(facet->vertices) f.push_back(remap[qh_pointid(qh, vertex->point)]);
      if (f.size() < 3) continue;
      const Vec3 qn(facet->normal[0], facet->normal[1], facet->normal[2]);
      if (f.size() > 3) {
        // A merged (non-simplicial) facet: its boundary is the 2-D convex hull of its vertices in the
        // facet plane (Qhull may list vertices that are within roundoff inside it); fan the boundary
        // counter-clockwise about the outward normal, and link inner vertices to the boundary.
        Vec3 c = Vec3::Zero();
        for (int i : f) c += d.vertices[i];
        c /= static_cast<Real>(f.size());
        Vec3 e1 = Vec3::Zero();
        for (int i : f)
          if ((d.vertices[i] - c).squaredNorm() > e1.squaredNorm()) e1 = d.vertices[i] - c;
        e1 = (e1 - e1.dot(qn) * qn).normalized();
        const Vec3 e2 = qn.cross(e1);
        std::vector<Vec2> q2;
        for (int i : f) q2.emplace_back((d.vertices[i] - c).dot(e1), (d.vertices[i] - c).dot(e2));
        const std::vector<int> ring = hull2d(q2);
        std::vector<int> boundary;
        for (int r : ring) boundary.push_back(f[r]);
        for (int i : f)
          if (std::find(boundary.begin(), boundary.end(), i) == boundary.end())
            for (int j : boundary) nb[i].insert(j), nb[j].insert(i);
        if (boundary.size() < 3) continue;
        f = boundary;
      }
      for (std::size_t k = 1; k + 1 < f.size(); ++k) {
        int tri[3] = {f[0], f[k], f[k + 1]};
        for (int i = 0; i < 3; ++i)
          for (int j = 0; j < 3; ++j)
            if (i != j) nb[tri[i]].insert(tri[j]);
        const Vec3 n = (d.vertices[tri[1]] - d.vertices[tri[0]]).cross(d.vertices[tri[2]] - d.vertices[tri[0]]);
        // Orient by Qhull's facet normal. Zero-area triangles (Qt may emit them) have no usable own
        // normal; they are kept so that the surface stays closed, and contribute no volume.
        if (n.dot(qn) < 0) std::swap(tri[1], tri[2]);
        d.triangles.push_back({tri[0], tri[1], tri[2]});
      }
    }
    buildAdjacency(d, nb);
  }
  qh_freeqhull(qh, !qh_ALL);
  int curlong, totlong;
  qh_memfreeshort(qh, &curlong, &totlong);
  return ok && d.vertices.size() >= 4;
}

// Largest |coordinate| and largest side of the bounding box of the vertices.
void measureExtent(PolytopeData& d) {
  d.maxAbsCoordinate = 0, d.extent = 0;
  if (d.vertices.empty()) return;
  Vec3 lo = d.vertices[0], hi = lo;
  for (const Vec3& q : d.vertices) {
    lo = lo.cwiseMin(q), hi = hi.cwiseMax(q);
    d.maxAbsCoordinate = std::max(d.maxAbsCoordinate, q.cwiseAbs().maxCoeff());
  }
  d.extent = (hi - lo).maxCoeff();
}

// Per triangle, its merged facet as a counter-clockwise loop of vertex ids (PolytopeData::
// facetLoops): the vertices within 1e-9 x extent of the triangle's plane reachable from it over
// hull edges (a facet is connected), ordered by pseudo-angle about their centroid. (After
// measureExtent.)
void buildFacetLoops(PolytopeData& d) {
  const auto& v = d.vertices;
  const Real ext = d.maxAbsCoordinate;
  // 1e-9 x the largest coordinate, but never more than 1e-9 x the polytope's own width (a polytope far
  // from the origin, e.g. half-size 1e110 at 1e120, had every vertex "on" every facet plane), nor less
  // than the rounding of the plane test (~eps x the coordinates). For polytopes about the origin the
  // first term is the smaller one: the same tolerance as before.
  const Real tolPlane = std::max(1e-9 * std::min(ext, d.extent), 64 * tol::kEps * ext);
  d.facetLoopOffsets.assign(1, 0);
  d.facetLoops.clear();
  std::vector<int> ids, stack;
  std::vector<char> seen(v.size(), 0);
  std::vector<std::pair<Real, int>> ang;
  for (std::size_t t = 0; t < d.triangles.size(); ++t) {
    const Vec3& m = d.triangleNormals[t];
    ids.clear();
    if (m.squaredNorm() > 0) {
      const int v0 = d.triangles[t][0];
      const Real h = m.dot(v[v0]);
      ids.push_back(v0), stack.assign(1, v0), seen[v0] = 1;
      while (!stack.empty()) {
        const int cur = stack.back();
        stack.pop_back();
        for (int e = d.adjacencyOffsets[cur]; e < d.adjacencyOffsets[cur + 1]; ++e) {
          const int nb = d.adjacency[e];
          if (seen[nb] || !(m.dot(v[nb]) >= h - tolPlane)) continue;
          seen[nb] = 1, ids.push_back(nb), stack.push_back(nb);
        }
      }
      for (int i : ids) seen[i] = 0;
      Vec3 c = Vec3::Zero();
      for (int i : ids) c += v[i];
      c /= static_cast<Real>(ids.size());
      const Vec3 e1 = (v[ids[0]] - c).normalized(), e2 = m.cross(e1);
      ang.clear();
      for (int i : ids) {
        const Vec3 q = v[i] - c;
        ang.emplace_back(detail::pseudoAngle(q.dot(e1), q.dot(e2)), i);
      }
      std::sort(ang.begin(), ang.end());
      for (const auto& [a, i] : ang) d.facetLoops.push_back(i);
    }
    d.facetLoopOffsets.push_back(static_cast<int>(d.facetLoops.size()));
  }
}

}  // namespace

Result<Polytope> Polytope::fromPoints(std::span<const Vec3> points) {
  if (points.empty()) return Result<Polytope>::failure("polytope has no points");
  for (std::size_t i = 0; i < points.size(); ++i)
    if (!points[i].allFinite()) {
      std::ostringstream m;
      m << "point " << i << " has a non-finite coordinate";
      return Result<Polytope>::failure(m.str());
    }
  std::vector<Vec3> pts(points.begin(), points.end());
  // Extreme coordinates: the hull works on squares and fourth powers of coordinate differences
  // (normalised cross products here and inside Qhull), which overflow beyond ~1e77 (a cube of
  // half-size 1e80 came out flat with 2 vertices) and underflow below ~1e-77. Such clouds are
  // hulled scaled by a power of two that brings the largest coordinate into [0.5, 1) — exact, the
  // same bits up to the exponent — and the vertices are scaled back at the end (exact again;
  // coordinates below ~1e-308 of the largest one, far under the merge radius, may round). Clouds
  // within [2^-100, 2^100] are left as they are, so their hulls stay bit-identical.
  int scaleExp = 0;
  {
    Real big = 0;
    for (const Vec3& q : pts) big = std::max(big, q.cwiseAbs().maxCoeff());
    if (big > 0 && (big > 0x1p100 || big < 0x1p-100)) {
      std::frexp(big, &scaleExp);
      for (Vec3& q : pts)
        for (int k = 0; k < 3; ++k) q[k] = std::ldexp(q[k], -scaleExp);
    }
  }
  // Merge exact and near-coincident points (closer than tol::kHullMergeRelative x extent; first
  // occurrence kept): Qhull's precision handling turns near-duplicates into non-convex facets with
  // missing hull edges (found by the fuzz oracle), which would break mass properties and
  // hill-climbing. The hull moves by at most that radius.
  {
    Vec3 lo = pts[0], hi = pts[0];
    for (const Vec3& q : pts) lo = lo.cwiseMin(q), hi = hi.cwiseMax(q);
    const Real radius = tol::kHullMergeRelative * (hi - lo).norm();
    if (radius > 0 && pts.size() > 1) {
      std::unordered_map<std::uint64_t, std::vector<int>> grid;
      auto cellOf = [&](const Vec3& q) {
        return Eigen::Vector3<long long>(static_cast<long long>(std::floor((q.x() - lo.x()) / radius)),
                                         static_cast<long long>(std::floor((q.y() - lo.y()) / radius)),
                                         static_cast<long long>(std::floor((q.z() - lo.z()) / radius)));
      };
      auto key = [](long long x, long long y, long long z) {
        return (static_cast<std::uint64_t>(x) * 73856093ull) ^ (static_cast<std::uint64_t>(y) * 19349663ull) ^
               (static_cast<std::uint64_t>(z) * 83492791ull);
      };
      std::vector<Vec3> kept;
      for (const Vec3& q : pts) {
        const auto c = cellOf(q);
        bool dup = false;
        for (long long dx = -1; dx <= 1 && !dup; ++dx)
          for (long long dy = -1; dy <= 1 && !dup; ++dy)
            for (long long dz = -1; dz <= 1 && !dup; ++dz) {
              auto it = grid.find(key(c.x() + dx, c.y() + dy, c.z() + dz));
              if (it == grid.end()) continue;
              for (int k : it->second)
                if ((kept[k] - q).norm() <= radius) dup = true;
            }
        if (dup) continue;
        grid[key(c.x(), c.y(), c.z())].push_back(static_cast<int>(kept.size()));
        kept.push_back(q);
      }
      pts.swap(kept);
    }
  }
  auto data = std::make_shared<PolytopeData>();  // mutable until handed to the Polytope
  data->inputPointCount = points.size();

  // Affine dimension with a relative tolerance: farthest point, farthest from the line, farthest
  // from the plane.
  const Vec3 p0 = pts[0];
  std::size_t i1 = 0;
  Real far = 0;
  for (std::size_t i = 0; i < pts.size(); ++i)
    if ((pts[i] - p0).squaredNorm() > far) far = (pts[i] - p0).squaredNorm(), i1 = i;
  const Real extent = std::sqrt(far);
  const Real flatTol = tol::kHullFlatRelative * extent;
  int dim = 0;
  std::size_t i2 = 0;
  Vec3 e1 = Vec3::Zero(), nrm = Vec3::Zero();
  if (extent > 0) {
    dim = 1;
    e1 = (pts[i1] - p0) / extent;
    Real best = 0;
    for (std::size_t i = 0; i < pts.size(); ++i) {
      const Vec3 q = pts[i] - p0;
      const Real dl = (q - q.dot(e1) * e1).norm();
      if (dl > best) best = dl, i2 = i;
    }
    if (best > flatTol) {
      dim = 2;
      nrm = (pts[i1] - p0).cross(pts[i2] - p0).normalized();
      Real off = 0;
      for (const Vec3& q : pts) off = std::max(off, std::abs((q - p0).dot(nrm)));
      if (off > flatTol) dim = 3;
    }
  }
  if (dim == 3 && !qhull3d(pts, *data)) {
    data->vertices.clear(), data->triangles.clear();
    dim = 2;  // Qhull judged it flat within its own precision
  }
  data->dimension = dim;
  if (dim == 0) {
    data->vertices = {p0};
    buildAdjacency(*data, {std::set<int>{}});
  } else if (dim == 1) {
    // Extreme points along the line.
    std::size_t lo = 0, hi = 0;
    for (std::size_t i = 0; i < pts.size(); ++i) {
      if ((pts[i] - p0).dot(e1) < (pts[lo] - p0).dot(e1)) lo = i;
      if ((pts[i] - p0).dot(e1) > (pts[hi] - p0).dot(e1)) hi = i;
    }
    data->vertices = {pts[lo], pts[hi]};
    buildAdjacency(*data, {std::set<int>{1}, std::set<int>{0}});
  } else if (dim == 2) {
    const Vec3 e2 = nrm.cross(e1);
    std::vector<Vec2> q(pts.size());
    for (std::size_t i = 0; i < pts.size(); ++i) q[i] = Vec2((pts[i] - p0).dot(e1), (pts[i] - p0).dot(e2));
    const std::vector<int> h = hull2d(q);
    const int m = static_cast<int>(h.size());
    std::vector<std::set<int>> nb(m);
    for (int i = 0; i < m; ++i) {
      data->vertices.push_back(pts[h[i]]);
      if (m > 1) nb[i].insert((i + 1) % m), nb[i].insert((i + m - 1) % m);
    }
    nb[0].erase(0);
    buildAdjacency(*data, nb);
  }
  const std::size_t nv = data->vertices.size(), padded = (nv + 3) / 4 * 4;
  // Triangle normals and vertex -> triangles (CSR).
  data->triangleNormals.reserve(data->triangles.size());
  data->vertexTriangleOffsets.assign(nv + 1, 0);
  for (const auto& t : data->triangles) {
    const Vec3 c = (data->vertices[t[1]] - data->vertices[t[0]]).cross(data->vertices[t[2]] - data->vertices[t[0]]);
    const Real len = c.norm();
    data->triangleNormals.push_back(len > 0 ? Vec3(c / len) : Vec3::Zero());
    for (int k : t) ++data->vertexTriangleOffsets[k + 1];
  }
  for (std::size_t i = 0; i < nv; ++i) data->vertexTriangleOffsets[i + 1] += data->vertexTriangleOffsets[i];
  data->vertexTriangles.resize(data->vertexTriangleOffsets[nv]);
  {
    std::vector<int> fill(data->vertexTriangleOffsets.begin(), data->vertexTriangleOffsets.end() - 1);
    for (std::size_t f = 0; f < data->triangles.size(); ++f)
      for (int k : data->triangles[f]) data->vertexTriangles[fill[k]++] = static_cast<int>(f);
  }
  measureExtent(*data);
  buildFacetLoops(*data);
  // Back to the input's scale, after the normals and facet loops (scale-free, but their squares
  // would overflow on the unscaled vertices). Powers of two: the extent scales exactly.
  if (scaleExp != 0) {
    for (Vec3& q : data->vertices)
      for (int k = 0; k < 3; ++k) q[k] = std::ldexp(q[k], scaleExp);
    data->maxAbsCoordinate = std::ldexp(data->maxAbsCoordinate, scaleExp);
    data->extent = std::ldexp(data->extent, scaleExp);
  }
  data->xs.resize(padded), data->ys.resize(padded), data->zs.resize(padded);
  for (std::size_t i = 0; i < padded; ++i) {
    const Vec3& q = data->vertices[i < nv ? i : 0];
    data->xs[i] = q.x(), data->ys[i] = q.y(), data->zs[i] = q.z();
  }
  Polytope p;
  p.data_ = data;
  for (int sx = -1; sx <= 1; ++sx)
    for (int sy = -1; sy <= 1; ++sy)
      for (int sz = -1; sz <= 1; ++sz)
        if (sx || sy || sz) data->seeds[PolytopeData::seedIndex(sx, sy, sz)] = p.bruteForce(Vec3(sx, sy, sz));
  return p;
}

// Index of the largest d·x over the padded structure-of-arrays copy (n a multiple of 4, NaN-free
// padding). Four lanes, each with its own running maximum and index; ties keep the lowest index,
// like a scalar scan. Compiled twice: with AVX2 (one 4-wide register per lane group, chosen at run
// time on CPUs that have it) and for baseline x86-64 (two SSE2 halves). The scan is GJK's inner
// loop for brute-force support, and its cost is instruction throughput. (Polytope::bruteForce,
// inline in convex.hpp, calls it directly.)
__attribute__((target_clones("avx2", "default"))) int detail::argmaxDot(const Real* xs, const Real* ys, const Real* zs,
                                                                        std::size_t n, Real dx0, Real dy0, Real dz0) {
  typedef Real v4 __attribute__((vector_size(32)));
  typedef long long i4 __attribute__((vector_size(32)));
  const v4 dx = {dx0, dx0, dx0, dx0}, dy = {dy0, dy0, dy0, dy0}, dz = {dz0, dz0, dz0, dz0};
  v4 best = {-HUGE_VAL, -HUGE_VAL, -HUGE_VAL, -HUGE_VAL};
  i4 idx = {0, 1, 2, 3}, bi = idx;
  const i4 four = {4, 4, 4, 4};
  for (std::size_t i = 0; i < n; i += 4) {
    v4 x, y, z;
    std::memcpy(&x, xs + i, 32), std::memcpy(&y, ys + i, 32), std::memcpy(&z, zs + i, 32);
    const v4 s = dx * x + dy * y + dz * z;
    const i4 g = s > best;
    best = g ? s : best, bi = g ? idx : bi;
    idx += four;
  }
  // Reduction without data-dependent branches (which lane wins is random from call to call, and a
  // mispredicted branch costs more than this whole scan for small hulls): the largest lane value,
  // then the lowest index holding it (lanes below the maximum are masked to a huge index).
  const Real m = std::max(std::max(best[0], best[1]), std::max(best[2], best[3]));
  const v4 mv = {m, m, m, m};
  const i4 big = {1LL << 62, 1LL << 62, 1LL << 62, 1LL << 62};
  const i4 cand = (best == mv) ? bi : big;
  const long long k01 = cand[0] < cand[1] ? cand[0] : cand[1], k23 = cand[2] < cand[3] ? cand[2] : cand[3];
  const long long k = k01 < k23 ? k01 : k23;
  return m > -HUGE_VAL ? static_cast<int>(k) : -1;  // -1: NaN direction
}

// The certificate (SupportMemo): with r >= |v| for every vertex, a vertex's height d·v changes by at
// most r |d - d0| between directions d0 and d, and each computed height (three products, two sums)
// differs from the exact one by at most 3u r |d| (u = 2^-53). Take the highest vertex at d0
// (computed height M) and the highest one outside the window [M - w, M] (computed M - G). At any d
// with |d - d0| <= ρ <= |d0| / 2 (so |d| <= 1.5 |d0|), the first's computed height exceeds the
// second's when G > 2 r ρ + 2 · 3u r |d0| + 2 · 3u r |d|, which holds for ρ = (G - 64 u r |d0|) / (2 r)
// (15 u r |d0| are needed). Then the scan's answer at d (the lowest index with the largest computed
// height) is the same vertex as the one among the window's vertices by the same arithmetic and tie
// rule.
int Polytope::bruteForceRemembering(const Vec3& d, SupportMemo& memo) const {
  const int k = bruteForce(d);
  memo.radius = 0;
  memo.count = 0;
  const PolytopeData& D = *data_;
  const int n = static_cast<int>(D.vertices.size());
  const Real d0 = d.norm();
  const Real r = std::sqrt(3.0) * D.maxAbsCoordinate * (1 + 1e-12);
  if (!(d0 > 0 && std::isfinite(d0) && r > 0 && std::isfinite(r))) return k;
  const Real window = tol::kSupportMemoWindow * r * d0;
  const Real top = d.x() * D.xs[static_cast<std::size_t>(k)] + d.y() * D.ys[static_cast<std::size_t>(k)] +
                   d.z() * D.zs[static_cast<std::size_t>(k)];
  Real outside = -std::numeric_limits<Real>::infinity();
  int count = 0;
  for (int i = 0; i < n; ++i) {
    const auto u = static_cast<std::size_t>(i);
    const Real s = d.x() * D.xs[u] + d.y() * D.ys[u] + d.z() * D.zs[u];
    if (s >= top - window) {
      if (count == SupportMemo::kMaxCandidates || i > 255) return k;  // too many to remember
      memo.candidate[count++] = static_cast<std::uint8_t>(i);
    } else {
      outside = std::max(outside, s);
    }
  }
  // (every vertex in the window: any direction within |d0| / 2)
  const Real gap = top - outside;
  Real rho = std::min(0.5 * d0, (gap - 64 * tol::kEps * r * d0) / (2 * r));
  const float cx = static_cast<float>(d.x()), cy = static_cast<float>(d.y()), cz = static_cast<float>(d.z());
  const Real shift = Vec3(d.x() - cx, d.y() - cy, d.z() - cz).norm();
  rho = (rho - shift) * (1 - 1e-6);  // (the float centre's offset; the caller's |d - centre| rounding)
  if (!(rho > 1e-30)) return k;  // (no subnormal float radius)
  memo.centre[0] = cx, memo.centre[1] = cy, memo.centre[2] = cz;
  memo.radius = static_cast<float>(rho * (1 - 0x1p-22));  // (at most rho: the conversion rounds by <= 2^-24)
  memo.count = static_cast<std::uint8_t>(count);
  return k;
}

Vec3 Polytope::supportSearched(const Vec3& d, SupportHint& hint, SupportMemo& memo) const {
  const auto& v = data_->vertices;
  const int n = static_cast<int>(v.size());
  const bool brute =
      hint.mode == SupportMode::BruteForce || (hint.mode == SupportMode::Auto && n < tol::kHillClimbMinVertices);
  if (!brute || n == 0) {
    memo.radius = 0;
    return support(d, hint);
  }
  return v[static_cast<std::size_t>(hint.vertex = bruteForceRemembering(d, memo))];
}

int Polytope::hillClimb(const Vec3& d, int start) const {
  const auto& v = data_->vertices;
  const int n = static_cast<int>(v.size());
  int cur = (start >= 0 && start < n) ? start : 0;
  Real best = d.dot(v[cur]);
  const int* adj = data_->adjacency.data();
  const int* off = data_->adjacencyOffsets.data();
  // Steepest ascent: every neighbour is evaluated (conditional moves, no data-dependent branch) and
  // the walk moves to the best one if it strictly improves d·x. Strict improvement terminates, and on
  // a convex polytope's edge graph the local maximum is a global one. A NaN direction compares false
  // and stops at once.
  for (;;) {
    int next = cur;
    Real nb = best;
    for (int e = off[cur]; e < off[cur + 1]; ++e) {
      const int j = adj[e];
      const Real s = d.dot(v[j]);
      const bool better = s > nb;
      nb = better ? s : nb;
      next = better ? j : next;
    }
    if (next == cur) return cur;
    cur = next, best = nb;
  }
}

}  // namespace proxima
