// Scenario -> Simulation: materials, a shared library of scaled particle shapes, deterministic
// particle insertion (random sequential addition or a simple cubic lattice, both without overlap of
// bounding spheres), walls (including a lid placed above the particles), and the time step.
#include "proxima/dem/builder.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <limits>
#include <map>
#include <numbers>
#include <optional>
#include <tuple>
#include <unordered_map>
#include <variant>

#include "proxima/core/random.hpp"

namespace proxima::dem {
namespace {

std::string num(Real x, const char* fmt = "%.6g") {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, x);
  return buf;
}

/// Relative step of the size quantisation for continuous distributions (1 %).
constexpr Real kSizeStep = 1.01;
/// Random insertion: attempts per particle, and consecutive failed particles that end a block.
constexpr int kAttempts = 1000;
constexpr int kFailuresToStop = 10;
/// Deposition: random drop spots tried per particle (the lowest resting height wins).
constexpr int kDropSpots = 24;

/// A drawn size factor and the key of its shape-library entry.
struct DrawnSize {
  Real s = 1;
  int kind = 0;           ///< 0 fixed, 1 table entry, 2 quantised
  std::int64_t code = 0;  ///< table index or quantum
};

DrawnSize drawSize(const SizeDistribution& d, SeededRandom& rng) {
  using K = SizeDistribution::Kind;
  switch (d.kind) {
    case K::Fixed:
      return {d.min, 0, 0};
    case K::Table: {
      const Real u = rng.uniform();
      Real acc = 0, total = 0;
      for (Real f : d.fractions) total += f;
      std::size_t k = 0;
      for (; k + 1 < d.sizes.size(); ++k) {
        acc += d.fractions[k] / total;
        if (u < acc) break;
      }
      return {d.sizes[k], 1, static_cast<std::int64_t>(k)};
    }
    case K::Uniform:
    case K::LogNormal: {
      Real s = 0;
      if (d.kind == K::Uniform) {
        s = rng.uniform(d.min, d.max);
      } else if (d.min == d.max) {
        s = d.min;  // (a window of one size: nothing to draw, as rng.uniform(min, min) gives min)
      } else {
        // Truncated log-normal: redraw outside [min, max]; clamp if the window is (nearly) empty.
        int tries = 0;
        do s = d.median * std::exp(d.sigma * rng.normal());
        while ((s < d.min || s > d.max) && ++tries < 1000);
        s = std::clamp(s, d.min, d.max);
      }
      const auto q = static_cast<std::int64_t>(std::llround(std::log(s) / std::log(kSizeStep)));
      return {std::pow(kSizeStep, static_cast<Real>(q)), 2, q};
    }
  }
  return {1, 0, 0};
}

Real normalCdf(Real x) { return 0.5 * std::erfc(-x / std::numbers::sqrt2); }

/// E[s³] of the distribution (before the 1 % quantisation), for volume fractions.
Real meanCube(const SizeDistribution& d) {
  using K = SizeDistribution::Kind;
  switch (d.kind) {
    case K::Fixed:
      return d.min * d.min * d.min;
    case K::Uniform:
      if (d.max <= d.min) return d.min * d.min * d.min;
      return (std::pow(d.max, 4) - std::pow(d.min, 4)) / (4 * (d.max - d.min));
    case K::Table: {
      Real sum = 0, total = 0;
      for (std::size_t k = 0; k < d.sizes.size(); ++k)
        sum += d.fractions[k] * std::pow(d.sizes[k], 3), total += d.fractions[k];
      return total > 0 ? sum / total : 1;
    }
    case K::LogNormal: {
      const Real mu = std::log(d.median), sg = d.sigma;
      if (!(sg > 0)) return std::pow(std::clamp(d.median, d.min, d.max), 3);
      // ∫ s³ over the truncated window: E[s³] = e^{3μ + 9σ²/2} [Φ(b - 3σ) - Φ(a - 3σ)] / [Φ(b) - Φ(a)]
      const Real a = d.min > 0 ? (std::log(d.min) - mu) / sg : -std::numeric_limits<Real>::infinity();
      const Real b = std::isfinite(d.max) ? (std::log(d.max) - mu) / sg : std::numeric_limits<Real>::infinity();
      const Real mass = normalCdf(b) - normalCdf(a);
      if (!(mass > 1e-300)) return std::pow(std::clamp(d.median, d.min, d.max), 3);
      return std::exp(3 * mu + 4.5 * sg * sg) * (normalCdf(b - 3 * sg) - normalCdf(a - 3 * sg)) / mass;
    }
  }
  return 1;
}

/// A typical large size factor (cell size of the insertion grid).
Real largeSize(const SizeDistribution& d) {
  using K = SizeDistribution::Kind;
  switch (d.kind) {
    case K::Fixed:
      return d.min;
    case K::Uniform:
      return d.max;
    case K::Table:
      return *std::max_element(d.sizes.begin(), d.sizes.end());
    case K::LogNormal:
      return std::min(d.max, d.median * std::exp(2 * d.sigma));
  }
  return 1;
}

/// Uniform hash grid of placed bounding spheres (insertion only).
class SphereGrid {
 public:
  explicit SphereGrid(Real cell) : h_(cell) {}

  [[nodiscard]] bool overlaps(const Vec3& c, Real r) const {
    if (centres_.empty()) return false;
    const Real reach = r + rmax_;
    const auto lo = cellOf(c - Vec3::Constant(reach)), hi = cellOf(c + Vec3::Constant(reach));
    for (std::int64_t x = lo[0]; x <= hi[0]; ++x)
      for (std::int64_t y = lo[1]; y <= hi[1]; ++y)
        for (std::int64_t z = lo[2]; z <= hi[2]; ++z) {
          auto it = cells_.find(key(x, y, z));
          if (it == cells_.end()) continue;
          for (int k : it->second) {
            const Real d = r + radii_[static_cast<std::size_t>(k)];
            if ((centres_[static_cast<std::size_t>(k)] - c).squaredNorm() < d * d) return true;
          }
        }
    return false;
  }
  void insert(const Vec3& c, Real r) {
    const auto k = cellOf(c);
    cells_[key(k[0], k[1], k[2])].push_back(static_cast<int>(centres_.size()));
    centres_.push_back(c);
    radii_.push_back(r);
    rmax_ = std::max(rmax_, r);
  }

 private:
  [[nodiscard]] std::array<std::int64_t, 3> cellOf(const Vec3& p) const {
    return {static_cast<std::int64_t>(std::floor(p.x() / h_)), static_cast<std::int64_t>(std::floor(p.y() / h_)),
            static_cast<std::int64_t>(std::floor(p.z() / h_))};
  }
  static std::uint64_t key(std::int64_t x, std::int64_t y, std::int64_t z) {
    // Collisions only cost extra distance tests.
    std::uint64_t k = static_cast<std::uint64_t>(x) * 0x9E3779B97F4A7C15ull;
    k ^= static_cast<std::uint64_t>(y) * 0xC2B2AE3D27D4EB4Full + (k << 6) + (k >> 2);
    k ^= static_cast<std::uint64_t>(z) * 0x165667B19E3779F9ull + (k << 6) + (k >> 2);
    return k;
  }
  Real h_;
  Real rmax_ = 0;
  std::vector<Vec3> centres_;
  std::vector<Real> radii_;
  std::unordered_map<std::uint64_t, std::vector<int>> cells_;
};

/// Placed bounding spheres binned by (x, y) column: the resting height of a sphere dropped along −z.
class ColumnGrid {
 public:
  explicit ColumnGrid(Real cell) : h_(cell) {}

  /// Lowest centre height at which a sphere of radius r dropped at (x, y) from above rests on a
  /// placed sphere, or `floor` if none is below it.
  [[nodiscard]] Real landingHeight(Real x, Real y, Real r, Real floor) const {
    Real z = floor;
    const Real reach = r + rmax_;
    const auto x0 = cellOf(x - reach), x1 = cellOf(x + reach), y0 = cellOf(y - reach), y1 = cellOf(y + reach);
    for (std::int64_t cx = x0; cx <= x1; ++cx)
      for (std::int64_t cy = y0; cy <= y1; ++cy) {
        auto it = cells_.find(key(cx, cy));
        if (it == cells_.end()) continue;
        for (int k : it->second) {
          const Vec3& c = centres_[static_cast<std::size_t>(k)];
          const Real d = r + radii_[static_cast<std::size_t>(k)];
          const Real h2 = d * d - (c.x() - x) * (c.x() - x) - (c.y() - y) * (c.y() - y);
          if (h2 > 0) z = std::max(z, c.z() + std::sqrt(h2));
        }
      }
    return z;
  }
  void insert(const Vec3& c, Real r) {
    cells_[key(cellOf(c.x()), cellOf(c.y()))].push_back(static_cast<int>(centres_.size()));
    centres_.push_back(c);
    radii_.push_back(r);
    rmax_ = std::max(rmax_, r);
  }

 private:
  [[nodiscard]] std::int64_t cellOf(Real v) const { return static_cast<std::int64_t>(std::floor(v / h_)); }
  static std::uint64_t key(std::int64_t x, std::int64_t y) {
    return static_cast<std::uint64_t>(x) * 0x9E3779B97F4A7C15ull ^ static_cast<std::uint64_t>(y) * 0xC2B2AE3D27D4EB4Full;
  }
  Real h_;
  Real rmax_ = 0;
  std::vector<Vec3> centres_;
  std::vector<Real> radii_;
  std::unordered_map<std::uint64_t, std::vector<int>> cells_;
};

/// Squared distance from p to triangle abc (Ericson, Real-Time Collision Detection §5.1.5).
Real pointTriangleDistanceSq(const Vec3& p, const Vec3& a, const Vec3& b, const Vec3& c) {
  const Vec3 ab = b - a, ac = c - a, ap = p - a;
  const Real d1 = ab.dot(ap), d2 = ac.dot(ap);
  if (d1 <= 0 && d2 <= 0) return ap.squaredNorm();
  const Vec3 bp = p - b;
  const Real d3 = ab.dot(bp), d4 = ac.dot(bp);
  if (d3 >= 0 && d4 <= d3) return bp.squaredNorm();
  const Real vc = d1 * d4 - d3 * d2;
  if (vc <= 0 && d1 >= 0 && d3 <= 0) return (p - (a + ab * (d1 / (d1 - d3)))).squaredNorm();
  const Vec3 cp = p - c;
  const Real d5 = ab.dot(cp), d6 = ac.dot(cp);
  if (d6 >= 0 && d5 <= d6) return cp.squaredNorm();
  const Real vb = d5 * d2 - d1 * d6;
  if (vb <= 0 && d2 >= 0 && d6 <= 0) return (p - (a + ac * (d2 / (d2 - d6)))).squaredNorm();
  const Real va = d3 * d6 - d5 * d4;
  if (va <= 0 && d4 - d3 >= 0 && d5 - d6 >= 0)
    return (p - (b + (c - b) * ((d4 - d3) / ((d4 - d3) + (d5 - d6))))).squaredNorm();
  const Real denom = 1 / (va + vb + vc);
  return (p - (a + ab * (vb * denom) + ac * (vc * denom))).squaredNorm();
}

/// Free space for insertion: the half-spaces of the plane walls and the clearance to mesh triangles.
struct Obstacles {
  struct Plane {
    Vec3 point, normal;
    std::string name;
  };
  struct Tri {
    Vec3 a, b, c, lo, hi;
  };
  std::vector<Plane> planes;
  std::vector<Tri> triangles;

  [[nodiscard]] bool clear(const Vec3& x, Real r) const {
    for (const Plane& p : planes)
      if ((x - p.point).dot(p.normal) < r) return false;
    for (const Tri& t : triangles) {
      if ((x.array() + r < t.lo.array()).any() || (x.array() - r > t.hi.array()).any()) continue;
      if (pointTriangleDistanceSq(x, t.a, t.b, t.c) < r * r) return false;
    }
    return true;
  }
  /// The name of a plane wall the whole box [lo, hi] lies behind (no particle can go there), or "".
  [[nodiscard]] std::string behind(const Vec3& lo, const Vec3& hi) const {
    for (const Plane& p : planes) {
      bool all = true;
      for (int c = 0; c < 8 && all; ++c) {
        const Vec3 x((c & 1) ? hi.x() : lo.x(), (c & 2) ? hi.y() : lo.y(), (c & 4) ? hi.z() : lo.z());
        all = (x - p.point).dot(p.normal) <= 0;
      }
      if (all) return p.name;
    }
    return {};
  }
};

bool isDeferredLid(const Wall& w) { return w.kind == WallKind::Plane && w.aboveParticles; }

}  // namespace

Result<Shape> scaledShape(const Shape& shape, Real s) {
  if (!(std::isfinite(s) && s > 0))
    return Result<Shape>::failure("size factor must be finite and > 0 (got " + num(s) + ")");
  std::string error;
  Shape out = std::visit(
      [&](const auto& g) -> Shape {
        using G = std::decay_t<decltype(g)>;
        if constexpr (std::is_same_v<G, Point>) {
          return Shape(Point{s * g.p});
        } else if constexpr (std::is_same_v<G, Segment>) {
          return Shape(Segment{s * g.a, s * g.b});
        } else if constexpr (std::is_same_v<G, Triangle>) {
          return Shape(Triangle{{s * g.v[0], s * g.v[1], s * g.v[2]}});
        } else if constexpr (std::is_same_v<G, Tetrahedron>) {
          return Shape(Tetrahedron{{s * g.v[0], s * g.v[1], s * g.v[2], s * g.v[3]}});
        } else if constexpr (std::is_same_v<G, Sphere>) {
          return Shape(Sphere{s * g.radius});
        } else if constexpr (std::is_same_v<G, Ellipsoid>) {
          return Shape(Ellipsoid{s * g.radii});
        } else if constexpr (std::is_same_v<G, Box>) {
          return Shape(Box{s * g.halfExtents});
        } else if constexpr (std::is_same_v<G, Capsule>) {
          return Shape(Capsule{s * g.radius, s * g.halfLength});
        } else if constexpr (std::is_same_v<G, Cylinder>) {
          return Shape(Cylinder{s * g.radius, s * g.halfLength});
        } else if constexpr (std::is_same_v<G, Cone>) {
          return Shape(Cone{s * g.radius, s * g.height});
        } else {
          static_assert(std::is_same_v<G, Polytope>);
          if (g.vertexCount() == 0) {
            error = "empty polytope";
            return Shape();
          }
          std::vector<Vec3> pts;
          pts.reserve(g.vertices().size());
          for (const Vec3& v : g.vertices()) pts.push_back(s * v);
          auto hull = Polytope::fromPoints(pts);
          if (!hull) {
            error = hull.message();
            return Shape();
          }
          return Shape(std::move(hull).value());
        }
      },
      shape.geometry());
  if (!error.empty()) return Result<Shape>::failure("scaling a " + std::string(toString(shape.type())) + ": " + error);
  out.setInflate(s * shape.inflate());
  return out;
}

Result<bool> buildSimulation(const Scenario& sc, Simulation& sim, const InsertionProgress& progress) {
  const std::string file = sc.sourceFile.empty() ? std::string() : sc.sourceFile + ": ";
  auto fail = [&](const std::string& msg) { return Result<bool>::failure(file + msg); };
  auto warn = [&](const std::string& msg) { std::cerr << "proxima: warning: " << file << msg << "\n"; };
  const int nMat = static_cast<int>(sc.materials.size());
  const int nTpl = static_cast<int>(sc.templates.size());
  // Building into a used Simulation would append a second copy of the scene to the first.
  if (!sim.isFresh())
    return fail("buildSimulation needs a freshly constructed Simulation (this one already has materials, "
                "shapes, particles or walls, or has started)");

  // ---- consistency of the plain data (scenarios may be built in code) ----
  if (nMat == 0) return fail("materials: at least one material is needed");
  if (nMat > kMaxMaterials)
    return fail("materials: " + tooManyMaterials(static_cast<std::size_t>(nMat)));
  for (std::size_t i = 0; i < sc.overrides.size(); ++i)
    if (sc.overrides[i].a < 0 || sc.overrides[i].a >= nMat || sc.overrides[i].b < 0 || sc.overrides[i].b >= nMat)
      return fail("interactions[" + std::to_string(i) + "].materials: material index out of range");
  for (int t = 0; t < nTpl; ++t)
    if (sc.templates[t].material < 0 || sc.templates[t].material >= nMat)
      return fail("templates[" + std::to_string(t) + "].material: material index out of range");
  for (std::size_t w = 0; w < sc.walls.size(); ++w)
    if (sc.walls[w].material < 0 || sc.walls[w].material >= nMat)
      return fail("walls[" + std::to_string(w) + "] (" + sc.walls[w].name + ").material: material index out of range");
  for (std::size_t b = 0; b < sc.insertions.size(); ++b) {
    const InsertionSpec& ins = sc.insertions[b];
    const std::string at = "particles[" + std::to_string(b) + "]";
    if (ins.templateIndex < 0 || ins.templateIndex >= nTpl) return fail(at + ".template: template index out of range");
    if (!((ins.region.max - ins.region.min).array() > 0).all())
      return fail(at + ".region: max must be greater than min in every component");
    if (ins.count < 0 || (ins.count == 0 && !(ins.volumeFraction > 0)))
      return fail(at + ": needs a count >= 1 or a volume_fraction > 0");
    if (ins.count > 1000000000) return fail(at + ".count: more than 1e9 particles");
  }

  sim.setMaterials(sc.materials, sc.model);
  for (const auto& o : sc.overrides) sim.overridePair(o.a, o.b, o.restitution, o.friction, o.rollingFriction);
  SimulationOptions& opt = sim.options();
  opt.gravity = sc.gravity;
  opt.skin = sc.skin;
  opt.conservativeBound = sc.conservativeBound;
  opt.threads = sc.threads;

  // ---- shape library: template × size quantum ----
  std::vector<ParticleShape> unit;  // each template at s = 1
  for (int t = 0; t < nTpl; ++t) {
    auto ps = makeParticleShape(sc.templates[t].name, sc.templates[t].shape);
    if (!ps) return fail("templates[" + std::to_string(t) + "].shape: " + ps.message());
    unit.push_back(std::move(ps).value());
  }
  std::map<std::tuple<int, int, std::int64_t>, int> library;
  std::vector<Real> shapeRadius;  // bounding radius per library entry
  auto shapeFor = [&](int t, const DrawnSize& d, std::string& error) -> int {
    const auto key = std::make_tuple(t, d.kind, d.code);
    if (auto it = library.find(key); it != library.end()) return it->second;
    ParticleShape ps;
    if (d.s == 1) {
      ps = unit[static_cast<std::size_t>(t)];
    } else {
      auto shape = scaledShape(sc.templates[t].shape, d.s);
      if (!shape) {
        error = shape.message();
        return -1;
      }
      auto made = makeParticleShape(sc.templates[t].name, shape.value());
      if (!made) {
        error = made.message();
        return -1;
      }
      ps = std::move(made).value();
    }
    const Real r = ps.boundingRadius;
    const int index = sim.addShape(std::move(ps));
    library.emplace(key, index);
    if (shapeRadius.size() <= static_cast<std::size_t>(index)) shapeRadius.resize(static_cast<std::size_t>(index) + 1);
    shapeRadius[static_cast<std::size_t>(index)] = r;
    return index;
  };

  // ---- obstacles for insertion: plane walls (not lids placed later) and mesh triangles ----
  Obstacles obstacles;
  for (const Wall& w : sc.walls) {
    if (w.kind == WallKind::Plane) {
      if (!isDeferredLid(w)) obstacles.planes.push_back({w.origin, w.normal.normalized(), w.name});
    } else {
      for (const auto& tri : w.triangles) {
        const Vec3 a = w.vertices[static_cast<std::size_t>(tri[0])] + w.origin;
        const Vec3 b = w.vertices[static_cast<std::size_t>(tri[1])] + w.origin;
        const Vec3 c = w.vertices[static_cast<std::size_t>(tri[2])] + w.origin;
        obstacles.triangles.push_back({a, b, c, a.cwiseMin(b).cwiseMin(c), a.cwiseMax(b).cwiseMax(c)});
      }
    }
  }

  Real cell = 0;
  for (const InsertionSpec& ins : sc.insertions) {
    const auto t = static_cast<std::size_t>(ins.templateIndex);
    cell = std::max(cell, 2 * unit[t].boundingRadius * largeSize(sc.templates[t].size));
  }
  if (!(cell > 0) || !std::isfinite(cell)) cell = 1;
  SphereGrid grid(cell);
  ColumnGrid columns(cell);

  // ---- insertion ----
  std::vector<Vec3> placedCentre;
  std::vector<Real> placedRadius;
  Real maxInsertionSpeed = 0;
  double plannedBytes = 0;  // estimated memory of the particles inserted so far
  for (std::size_t b = 0; b < sc.insertions.size(); ++b) {
    const InsertionSpec& ins = sc.insertions[b];
    const std::string at = "particles[" + std::to_string(b) + "]";
    const int t = ins.templateIndex;
    const ParticleTemplate& tpl = sc.templates[static_cast<std::size_t>(t)];
    const Vec3 extent = ins.region.max - ins.region.min;
    SeededRandom rng(ins.seed);
    // What to tell the user when not every particle fits.
    const std::string outside = obstacles.behind(ins.region.min, ins.region.max);
    const std::string advice = outside.empty() ? std::string("; enlarge the region or lower the count")
                                               : "; the region lies entirely outside wall '" + outside +
                                                     "' (behind its plane): move the region inside the walls";

    std::int64_t count = ins.count;
    if (count == 0) {
      const Real meanVolume = unit[static_cast<std::size_t>(t)].volume * meanCube(tpl.size);
      const Real n = ins.volumeFraction * extent.prod() / meanVolume;
      if (!(meanVolume > 0) || !std::isfinite(n) || n > 1e9)
        return fail(at + ".volume_fraction: gives an unreasonable particle count (" + num(n) + ")");
      count = std::llround(n);
      if (count == 0) {
        warn(at + ".volume_fraction: " + num(ins.volumeFraction) +
             " of the region is less than half a particle; no particles inserted");
        continue;
      }
    }

    // Memory before anything is allocated: a count this machine cannot hold would otherwise grow
    // silently until the kernel kills the run. Per particle, peak resident set measured on the
    // benchmark beds (docs/benchmarks.md): ~3.2 kB for spheres, ~14 kB for 24-vertex polyhedra with
    // their per-pair caches; taken with margin.
    {
      const bool sphere = tpl.shape.type() == ShapeType::Sphere;
      plannedBytes += static_cast<double>(count) * (sphere ? 4e3 : 16e3);
      const long pages = sysconf(_SC_PHYS_PAGES), pageSize = sysconf(_SC_PAGE_SIZE);
      const double physical = pages > 0 && pageSize > 0 ? static_cast<double>(pages) * static_cast<double>(pageSize) : 0;
      if (physical > 0 && plannedBytes > 0.9 * physical)
        return fail(at + ": " + std::to_string(count) + " particles bring the run to about " + num(plannedBytes / 1e9) +
                    " GB of memory; this machine has " + num(physical / 1e9) + " GB. Lower the count (or the volume_fraction)");
    }
    // Sizes first (the lattice spacing needs the largest), then per particle: orientation, velocity, position.
    std::vector<DrawnSize> sizes(static_cast<std::size_t>(count));
    for (auto& d : sizes) d = drawSize(tpl.size, rng);
    std::vector<int> shapeOf(sizes.size());
    for (std::size_t i = 0; i < sizes.size(); ++i) {
      std::string error;
      shapeOf[i] = shapeFor(t, sizes[i], error);
      if (shapeOf[i] < 0) return fail("templates[" + std::to_string(t) + "].size: " + error);
    }
    maxInsertionSpeed = std::max(maxInsertionSpeed, ins.velocity.norm() + ins.velocityJitter);

    std::int64_t placed = 0;
    auto place = [&](std::size_t i, const Vec3& x, const Quat& q, const Vec3& v) {
      const Real r = shapeRadius[static_cast<std::size_t>(shapeOf[i])];
      sim.addParticle(shapeOf[i], tpl.material, x, q, v);
      grid.insert(x, r);
      columns.insert(x, r);
      placedCentre.push_back(x);
      placedRadius.push_back(r);
      ++placed;
      if (progress && placed % 16384 == 0) progress(b, placed, count);
    };
    auto kinematics = [&](Quat& q, Vec3& v) {
      q = ins.randomOrientation ? rng.orientation() : Quat::Identity();
      v = ins.velocity;
      if (ins.velocityJitter > 0) v += ins.velocityJitter * rng.inUnitBall();
    };

    if (ins.method != InsertionSpec::Method::Lattice) {
      // Sequential addition: each particle gets its orientation and velocity, then a free spot for
      // its bounding sphere; a block ends after kFailuresToStop particles in a row find none.
      const bool deposition = ins.method == InsertionSpec::Method::Deposition;
      // Random: the first of kAttempts uniformly random centres that is free.
      auto randomSpot = [&](Real r) -> std::optional<Vec3> {
        for (int a = 0; a < kAttempts; ++a) {
          Vec3 x;
          for (int k = 0; k < 3; ++k) x[k] = rng.uniform(ins.region.min[k] + r, ins.region.max[k] - r);
          if (obstacles.clear(x, r) && !grid.overlaps(x, r)) return x;
        }
        return std::nullopt;
      };
      // Geometric deposition of bounding spheres (in the spirit of the De Cola et al. deposition the
      // thesis uses, §5.3.4, without rolling): the sphere is dropped vertically at kDropSpots random
      // (x, y) spots and kept at the lowest resting height found, on the region's floor or on a
      // sphere already placed. Denser than random addition, so the bed starts compact.
      auto depositionSpot = [&](Real r) -> std::optional<Vec3> {
        std::optional<Vec3> best;
        for (int a = 0; a < kDropSpots; ++a) {
          const Real x = rng.uniform(ins.region.min.x() + r, ins.region.max.x() - r);
          const Real y = rng.uniform(ins.region.min.y() + r, ins.region.max.y() - r);
          // A hair above tangency, so that rounding never reads as an overlap.
          const Real z = columns.landingHeight(x, y, r, ins.region.min.z() + r) + 1e-9 * r;
          if (z + r > ins.region.max.z() || (best && z >= best->z())) continue;
          const Vec3 c(x, y, z);
          if (obstacles.clear(c, r) && !grid.overlaps(c, r)) best = c;
        }
        return best;
      };
      int failures = 0;
      for (std::size_t i = 0; i < sizes.size() && failures < kFailuresToStop; ++i) {
        Quat q;
        Vec3 v;
        kinematics(q, v);
        const Real r = shapeRadius[static_cast<std::size_t>(shapeOf[i])];
        std::optional<Vec3> spot;
        if ((extent.array() >= 2 * r).all()) spot = deposition ? depositionSpot(r) : randomSpot(r);
        if (spot) place(i, *spot, q, v);
        failures = spot ? 0 : failures + 1;
      }
      if (placed < count)
        warn(at + ": only " + std::to_string(placed) + " of " + std::to_string(count) +
             (deposition ? " particles fit in the region by deposition (bounding spheres)"
                         : " particles fit in the region (bounding spheres, " + std::to_string(kAttempts) +
                               " random attempts each)") +
             advice);
    } else {
      Real rmax = 0;
      for (int s : shapeOf) rmax = std::max(rmax, shapeRadius[static_cast<std::size_t>(s)]);
      const Real spacing = 2 * rmax * 1.01;
      std::array<std::int64_t, 3> sites{};
      for (int k = 0; k < 3; ++k)
        sites[static_cast<std::size_t>(k)] =
            extent[k] >= 2 * rmax ? static_cast<std::int64_t>(std::floor((extent[k] - 2 * rmax) / spacing)) + 1 : 0;
      std::size_t i = 0;
      for (std::int64_t z = 0; z < sites[2] && i < sizes.size(); ++z)
        for (std::int64_t y = 0; y < sites[1] && i < sizes.size(); ++y)
          for (std::int64_t x = 0; x < sites[0] && i < sizes.size(); ++x) {
            const Vec3 c = ins.region.min + Vec3::Constant(rmax) +
                           spacing * Vec3(static_cast<Real>(x), static_cast<Real>(y), static_cast<Real>(z));
            const Real r = shapeRadius[static_cast<std::size_t>(shapeOf[i])];
            if (!obstacles.clear(c, r) || grid.overlaps(c, r)) continue;
            Quat q;
            Vec3 v;
            kinematics(q, v);
            place(i, c, q, v);
            ++i;
          }
      if (placed < count)
        warn(at + ": only " + std::to_string(placed) + " of " + std::to_string(count) +
             " particles fit on the lattice (spacing " + num(spacing) + " m = 1.01 x the largest bounding diameter)" +
             advice);
    }
  }
  if (placedCentre.empty())
    return fail("particles: no particles were created (check the counts, volume fractions and regions)");

  // ---- walls (scenario order), lids above the particles resolved now ----
  Real top = -std::numeric_limits<Real>::infinity();
  for (std::size_t i = 0; i < placedCentre.size(); ++i) top = std::max(top, placedCentre[i].z() + placedRadius[i]);
  for (const Wall& w0 : sc.walls) {
    Wall w = w0;
    if (isDeferredLid(w)) w.origin = Vec3(0, 0, top + w.gap);
    sim.addWall(std::move(w));
  }

  // ---- time step ----
  Real speed = sc.characteristicSpeed;
  if (!(speed > 0)) {
    // Free fall from the highest particle to the lowest floor (an upward-facing plane or the lowest
    // mesh vertex), or over the insertion regions' height when nothing is below.
    // (stableNorm: the plain norm of a gravity of 1e155 or more overflowed, and so did the estimate)
    const Real g = sc.gravity.stableNorm();
    Real fall = 0;
    if (g > 0) {
      const Vec3 down = sc.gravity / g;
      Real highest = std::numeric_limits<Real>::infinity();  // smallest depth along gravity
      for (const Vec3& c : placedCentre) highest = std::min(highest, down.dot(c));
      Real floor = -std::numeric_limits<Real>::infinity();
      for (const Wall& w : sc.walls) {
        if (w.kind == WallKind::Plane) {
          if (w.isLid() || w.normal.normalized().dot(down) > -0.1) continue;
          floor = std::max(floor, down.dot(w.origin));
        } else {
          for (const Vec3& v : w.vertices) floor = std::max(floor, down.dot(Vec3(v + w.origin)));
        }
      }
      if (std::isfinite(floor)) {
        fall = std::max<Real>(0, floor - highest);
      } else {
        for (const InsertionSpec& ins : sc.insertions)
          fall = std::max(fall, down.cwiseAbs().dot(ins.region.max - ins.region.min));
      }
    }
    speed = std::max<Real>(0.1, std::sqrt(2 * g * fall)) + maxInsertionSpeed;
  }
  // A wall moving at a prescribed velocity meets the particles at least that fast: with the impact
  // speed, the limits keep it from crossing a particle's radius in one step (a mesh piston at 1 km/s
  // passed through a bed unnoticed, 2026-11-27). Also with an explicit impact_speed: a faster wall
  // overrides it.
  for (const Wall& w : sc.walls)
    if (!w.isLid()) speed = std::max(speed, w.velocity.norm() + maxInsertionSpeed);
  // (dampedLimit: damped contacts, and the distance a particle at the impact speed covers in a step)
  const auto [limit, dampedLimit] = sim.timeStepLimits(speed);
  if (!(limit > 0) || !std::isfinite(limit) || !(dampedLimit > 0))
    return fail("time.step: the stable time-step limit could not be computed (got " + num(std::min(limit, dampedLimit)) +
                "); check the particles' speeds (velocity, velocity_jitter, time.impact_speed) and the materials");
  if (sc.timeStep > 0) {
    if (sc.timeStep > limit && !sc.forceTimeStep)
      return fail("time.step: " + num(sc.timeStep, "%.1e") + " s exceeds the stable limit " + num(limit, "%.1e") +
                  " s for these particles and materials; lower it or set time.force_step: true");
    if (sc.timeStep > dampedLimit && !sc.forceTimeStep)
      return fail("time.step: " + num(sc.timeStep, "%.1e") + " s exceeds the stable limit " + num(dampedLimit, "%.1e") +
                  " s of these contacts with their damping (a low restitution damps them heavily) or of the impact "
                  "speed (" + num(speed) + " m/s moves a particle by its radius in that time); lower it or set "
                  "time.force_step: true");
    opt.timeStep = sc.timeStep;
  } else {
    // safety x the undamped limit (the usual DEM margin), within the damped limit itself: heavily
    // damped contacts (restitution <~ 0.05) and fast particles need the smaller step.
    opt.timeStep = std::min(sc.safetyFactor * limit, dampedLimit);
  }
  return sim.initialize();
}

}  // namespace proxima::dem
