#include "proxima/shapes/shape.hpp"

#include <bit>
#include <cmath>
#include <limits>
#include <numbers>
#include <sstream>

#include "proxima/core/hash.hpp"

namespace proxima {
namespace {

constexpr Real kPi = std::numbers::pi_v<Real>;

std::string num(Real x) {
  std::ostringstream s;
  s.precision(17);
  s << x;
  return s.str();
}

std::optional<std::string> checkNonNegative(const char* field, Real x) {
  if (!std::isfinite(x)) return std::string(field) + " is not finite (got " + num(x) + ")";
  if (x < 0) return std::string(field) + " must be >= 0 (got " + num(x) + ")";
  if (x > tol::kMaxMagnitude || (x > 0 && x < tol::kMinMagnitude))
    return std::string(field) + " is outside the supported range [1e-60, 1e60] (got " + num(x) + ")";
  return std::nullopt;
}

std::optional<std::string> checkPoint(const char* field, int i, const Vec3& p) {
  if (!p.allFinite()) return std::string(field) + "[" + std::to_string(i) + "] has a non-finite coordinate";
  if (!(p.array().abs() <= tol::kMaxMagnitude).all())
    return std::string(field) + "[" + std::to_string(i) + "] has a coordinate beyond the supported range (|x| > 1e60)";
  return std::nullopt;
}

// Mass properties of a solid polytope by the divergence theorem: the hull is split into tetrahedra
// (reference point, outward triangle); each contributes its volume, first and second moments
// (∫ x xᵀ dV = V/20 (Σ v_i v_iᵀ + s sᵀ), s = Σ v_i, for a tetrahedron with one vertex at the origin).
MassProperties polytopeMass(const std::vector<Vec3>& v, const std::vector<std::array<int, 3>>& tris) {
  Vec3 ref = Vec3::Zero();
  for (const Vec3& p : v) ref += p;
  ref /= static_cast<Real>(v.size());
  Real vol = 0;
  Vec3 first = Vec3::Zero();
  Mat3 second = Mat3::Zero();
  for (const auto& t : tris) {
    const Vec3 a = v[t[0]] - ref, b = v[t[1]] - ref, c = v[t[2]] - ref;
    const Real det = a.dot(b.cross(c));
    const Real tv = det / 6;
    const Vec3 s = a + b + c;
    vol += tv;
    first += tv * s / 4;
    second += (det / 120) * (a * a.transpose() + b * b.transpose() + c * c.transpose() + s * s.transpose());
  }
  MassProperties m;
  m.volume = vol;
  const Vec3 c = first / vol;
  m.centroid = ref + c;
  const Mat3 cov = second - vol * c * c.transpose();
  m.inertia = cov.trace() * Mat3::Identity() - cov;
  return m;
}

Mat3 diag(Real a, Real b, Real c) { return Vec3(a, b, c).asDiagonal(); }

// Inscribed support polytope: support points along many directions (a refined octahedron mapped
// to the sphere), hulled. Converges as O(h²); used for inflated cores other than points/segments.
Result<MassProperties> supportSampledMass(const Shape& s) {
  std::vector<Vec3> dirs;
  const int n = 48;  // directions per octant edge
  for (int i = 0; i <= n; ++i)
    for (int j = 0; i + j <= n; ++j) {
      const Real a = static_cast<Real>(i) / n, b = static_cast<Real>(j) / n, c = 1 - a - b;
      for (int sx : {-1, 1})
        for (int sy : {-1, 1})
          for (int sz : {-1, 1}) dirs.emplace_back(sx * a, sy * b, sz * c);
    }
  // A generic rotation of the direction set: axis-aligned directions hit ties in the support
  // mappings (flat faces), whose one-sided tie-breaking would bias the sampled hull.
  const Mat3 tilt = Eigen::AngleAxis<Real>(0.1234567, Vec3(1, std::sqrt(2.0), std::sqrt(3.0)).normalized()).toRotationMatrix();
  std::vector<Vec3> pts;
  pts.reserve(dirs.size());
  SupportHint h{0, SupportMode::BruteForce};
  for (const Vec3& d : dirs) pts.push_back(s.support((tilt * d).normalized(), h));
  auto poly = Polytope::fromPoints(pts);
  if (!poly || poly.value().dimension() != 3) return Result<MassProperties>::failure("shape has no volume");
  return polytopeMass(poly.value().data().vertices, poly.value().data().triangles);
}

}  // namespace

std::string_view toString(ShapeType t) {
  static constexpr std::string_view names[] = {"point",   "segment",   "triangle", "tetrahedron",
                                               "sphere",  "ellipsoid", "box",      "capsule",
                                               "cylinder", "cone",     "polytope"};
  return names[static_cast<int>(t)];
}

std::uint64_t Shape::fingerprint() const {
  const std::uint64_t head[2] = {static_cast<std::uint64_t>(geometry_.index()) + 1, std::bit_cast<std::uint64_t>(inflate_)};
  const std::uint64_t h = hashWords(kHashSeed, head, sizeof head);
  return std::visit(
      [&](const auto& g) -> std::uint64_t {
        using G = std::decay_t<decltype(g)>;
        if constexpr (std::is_same_v<G, Polytope>) {
          const std::uint64_t v = g.fingerprint();
          return hashWords(h, &v, sizeof v);
        } else {
          static_assert(sizeof(G) % sizeof(std::uint64_t) == 0, "plain aggregate of Reals expected");
          return hashWords(h, &g, sizeof g);
        }
      },
      geometry_);
}

Vec3 Shape::support(const Vec3& d, SupportHint& h) const {
  Vec3 s = std::visit([&](const auto& g) { return g.support(d, h); }, geometry_);
  if (inflate_ > 0) {
    const Real n = d.norm();
    if (n > 0) s += d * (inflate_ / n);
  }
  return s;
}

namespace {
// A size: 0 or within the supported range (false for negatives, NaN and infinities).
inline bool sizeInRange(Real x) { return x == 0 || (x >= tol::kMinMagnitude && x <= tol::kMaxMagnitude); }
// (element-wise: Eigen's maxCoeff may drop a NaN, a comparison per coordinate does not)
inline bool inRange(const Vec3& p) { return (p.array().abs() <= tol::kMaxMagnitude).all(); }
}  // namespace

// validate()'s checks without building messages (quickValid(), decided once per shape).
bool Shape::checkQuick() const {
  if (!sizeInRange(inflate_)) return false;
  return std::visit(
      [](const auto& g) -> bool {
        using G = std::decay_t<decltype(g)>;
        if constexpr (std::is_same_v<G, Point>) return inRange(g.p);
        else if constexpr (std::is_same_v<G, Segment>) return inRange(g.a) && inRange(g.b);
        else if constexpr (std::is_same_v<G, Triangle> || std::is_same_v<G, Tetrahedron>) {
          bool ok = true;
          for (const Vec3& v : g.v) ok &= inRange(v);
          return ok;
        } else if constexpr (std::is_same_v<G, Sphere>) return sizeInRange(g.radius);
        else if constexpr (std::is_same_v<G, Ellipsoid>)
          return sizeInRange(g.radii[0]) && sizeInRange(g.radii[1]) && sizeInRange(g.radii[2]);
        else if constexpr (std::is_same_v<G, Box>)
          return sizeInRange(g.halfExtents[0]) && sizeInRange(g.halfExtents[1]) &&
                 sizeInRange(g.halfExtents[2]);
        else if constexpr (std::is_same_v<G, Capsule> || std::is_same_v<G, Cylinder>)
          return sizeInRange(g.radius) && sizeInRange(g.halfLength);
        else if constexpr (std::is_same_v<G, Cone>) return sizeInRange(g.radius) && sizeInRange(g.height);
        else if constexpr (std::is_same_v<G, Polytope>)
          return g.vertexCount() != 0 && g.data().maxAbsCoordinate <= tol::kMaxMagnitude &&
                 (g.data().extent == 0 || g.data().extent >= tol::kMinMagnitude);
        else return false;  // a new geometry kind: the full check decides
      },
      geometry_);
}

std::optional<std::string> Shape::validate() const {
  if (quickValid()) return std::nullopt;
  if (auto m = checkNonNegative("inflate", inflate_)) return m;
  return std::visit(
      [](const auto& g) -> std::optional<std::string> {
        using G = std::decay_t<decltype(g)>;
        if constexpr (std::is_same_v<G, Point>) return checkPoint("points", 0, g.p);
        else if constexpr (std::is_same_v<G, Segment>) {
          if (auto m = checkPoint("points", 0, g.a)) return m;
          return checkPoint("points", 1, g.b);
        } else if constexpr (std::is_same_v<G, Triangle> || std::is_same_v<G, Tetrahedron>) {
          for (int i = 0; i < static_cast<int>(std::size(g.v)); ++i)
            if (auto m = checkPoint("points", i, g.v[i])) return m;
          return std::nullopt;
        } else if constexpr (std::is_same_v<G, Sphere>) return checkNonNegative("radius", g.radius);
        else if constexpr (std::is_same_v<G, Ellipsoid>) {
          for (int i = 0; i < 3; ++i)
            if (auto m = checkNonNegative(i == 0 ? "radii[0]" : i == 1 ? "radii[1]" : "radii[2]", g.radii[i])) return m;
          return std::nullopt;
        } else if constexpr (std::is_same_v<G, Box>) {
          for (int i = 0; i < 3; ++i)
            if (auto m = checkNonNegative(i == 0   ? "half_extents[0]"
                                          : i == 1 ? "half_extents[1]"
                                                   : "half_extents[2]",
                                          g.halfExtents[i]))
              return m;
          return std::nullopt;
        } else if constexpr (std::is_same_v<G, Capsule> || std::is_same_v<G, Cylinder>) {
          if (auto m = checkNonNegative("radius", g.radius)) return m;
          return checkNonNegative("half_length", g.halfLength);
        } else if constexpr (std::is_same_v<G, Cone>) {
          if (auto m = checkNonNegative("radius", g.radius)) return m;
          return checkNonNegative("height", g.height);
        } else if constexpr (std::is_same_v<G, Polytope>) {
          if (g.vertexCount() == 0) return std::string("polytope is empty");
          if (g.data().maxAbsCoordinate > tol::kMaxMagnitude)
            return "vertices: a coordinate beyond the supported range (|x| > 1e60, got " + num(g.data().maxAbsCoordinate) + ")";
          if (g.data().extent > 0 && g.data().extent < tol::kMinMagnitude)
            return "vertices: the polytope's extent " + num(g.data().extent) + " is below the supported range (1e-60)";
          return std::nullopt;
        }
      },
      geometry_);
}

Aabb computeAabb(const Shape& s, const Transform& pose) {
  Aabb box;
  SupportHint h{0, SupportMode::Auto};
  for (int k = 0; k < 3; ++k) {
    const Vec3 e = Vec3::Unit(k);
    box.hi[k] = pose.apply(s.support(pose.rotateInverse(e), h))[k];
    box.lo[k] = pose.apply(s.support(pose.rotateInverse(-e), h))[k];
  }
  return box;
}

Result<MassProperties> computeMassProperties(const Shape& s) {
  using R = Result<MassProperties>;
  if (auto m = s.validate()) return R::failure(*m);
  const Real r = s.inflate();
  const ShapeGeometry& g = s.geometry();
  MassProperties m;
  // Inflated points and segments are spheres and capsules.
  if (std::holds_alternative<Point>(g) || std::holds_alternative<Sphere>(g)) {
    const Real rad = s.totalRadius();
    if (!(rad > 0)) return R::failure("a point has no volume (give it a radius or inflate)");
    m.volume = 4.0 / 3.0 * kPi * rad * rad * rad;
    m.centroid = std::holds_alternative<Point>(g) ? std::get<Point>(g).p : Vec3::Zero();
    m.inertia = (0.4 * m.volume * rad * rad) * Mat3::Identity();
    return m;
  }
  if (std::holds_alternative<Segment>(g) || std::holds_alternative<Capsule>(g)) {
    Real rad, h;
    Mat3 rot = Mat3::Identity();
    Vec3 centre = Vec3::Zero();
    if (const auto* c = std::get_if<Capsule>(&g)) {
      rad = c->radius + r, h = c->halfLength;
    } else {
      const auto& sg = std::get<Segment>(g);
      rad = r, h = 0.5 * (sg.b - sg.a).norm(), centre = 0.5 * (sg.a + sg.b);
      if (h > 0) rot = Eigen::Quaternion<Real>::FromTwoVectors(Vec3::UnitZ(), sg.b - sg.a).toRotationMatrix();
    }
    if (!(rad > 0)) return R::failure("a segment has no volume (inflate it to make a capsule)");
    const Real vc = kPi * rad * rad * 2 * h, vs = 4.0 / 3.0 * kPi * rad * rad * rad;
    const Real izz = vc * rad * rad / 2 + vs * 0.4 * rad * rad;
    const Real ixx = vc * (3 * rad * rad + 4 * h * h) / 12 + vs * (0.4 * rad * rad + h * h + 0.75 * h * rad);
    m.volume = vc + vs;
    m.centroid = centre;
    m.inertia = rot * diag(ixx, ixx, izz) * rot.transpose();
    return m;
  }
  if (r > 0) return supportSampledMass(s);
  if (const auto* e = std::get_if<Ellipsoid>(&g)) {
    const Vec3 a = e->radii;
    m.volume = 4.0 / 3.0 * kPi * a.prod();
    if (!(m.volume > 0)) return R::failure("ellipsoid has a zero radius and no volume");
    m.inertia = diag(m.volume / 5 * (a.y() * a.y() + a.z() * a.z()), m.volume / 5 * (a.x() * a.x() + a.z() * a.z()),
                     m.volume / 5 * (a.x() * a.x() + a.y() * a.y()));
    return m;
  }
  if (const auto* b = std::get_if<Box>(&g)) {
    const Vec3 h = b->halfExtents;
    m.volume = 8 * h.prod();
    if (!(m.volume > 0)) return R::failure("box has a zero half extent and no volume");
    m.inertia = diag(m.volume / 3 * (h.y() * h.y() + h.z() * h.z()), m.volume / 3 * (h.x() * h.x() + h.z() * h.z()),
                     m.volume / 3 * (h.x() * h.x() + h.y() * h.y()));
    return m;
  }
  if (const auto* c = std::get_if<Cylinder>(&g)) {
    m.volume = kPi * c->radius * c->radius * 2 * c->halfLength;
    if (!(m.volume > 0)) return R::failure("cylinder has no volume");
    const Real L = 2 * c->halfLength, rr = c->radius * c->radius;
    m.inertia = diag(m.volume * (3 * rr + L * L) / 12, m.volume * (3 * rr + L * L) / 12, m.volume * rr / 2);
    return m;
  }
  if (const auto* c = std::get_if<Cone>(&g)) {
    m.volume = kPi * c->radius * c->radius * c->height / 3;
    if (!(m.volume > 0)) return R::failure("cone has no volume");
    const Real rr = c->radius * c->radius, H = c->height;
    m.centroid = Vec3(0, 0, -H / 4);
    const Real ixx = m.volume * (3.0 / 20 * rr + 3.0 / 80 * H * H);
    m.inertia = diag(ixx, ixx, m.volume * 0.3 * rr);
    return m;
  }
  if (const auto* t = std::get_if<Triangle>(&g)) {
    (void)t;
    return R::failure("a triangle has no volume");
  }
  if (const auto* t = std::get_if<Tetrahedron>(&g)) {
    std::vector<Vec3> v(t->v, t->v + 4);
    const Real det = (v[1] - v[0]).dot((v[2] - v[0]).cross(v[3] - v[0]));
    if (det == 0) return R::failure("tetrahedron is flat and has no volume");
    std::vector<std::array<int, 3>> tris;
    for (int l = 0; l < 4; ++l) {  // face opposite vertex l, oriented away from it
      std::array<int, 3> f{};
      for (int i = 0, k = 0; i < 4; ++i)
        if (i != l) f[k++] = i;
      if ((v[f[1]] - v[f[0]]).cross(v[f[2]] - v[f[0]]).dot(v[l] - v[f[0]]) > 0) std::swap(f[1], f[2]);
      tris.push_back(f);
    }
    return polytopeMass(v, tris);
  }
  const auto& p = std::get<Polytope>(g);
  if (p.dimension() < 3) {
    return R::failure(p.dimension() == 0 ? "polytope is a single point and has no volume"
                                         : "polytope is flat (collinear or coplanar points) and has no volume");
  }
  return polytopeMass(p.data().vertices, p.data().triangles);
}

}  // namespace proxima
