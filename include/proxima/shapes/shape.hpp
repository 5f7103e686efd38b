// Runtime shape: one of the support-mapped convex shapes plus an optional inflation radius.
// This is what the command line, the pair dispatch and (later) the simulator hold; the
// algorithms themselves are templates over the support concept (convex.hpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <variant>

#include "proxima/shapes/convex.hpp"

namespace proxima {

enum class ShapeType { Point, Segment, Triangle, Tetrahedron, Sphere, Ellipsoid, Box, Capsule, Cylinder, Cone, Polytope };

/// Lower-case name as used in JSON ("point", "polytope", ...).
std::string_view toString(ShapeType t);

using ShapeGeometry =
    std::variant<Point, Segment, Triangle, Tetrahedron, Sphere, Ellipsoid, Box, Capsule, Cylinder, Cone, Polytope>;

class Shape {
 public:
  Shape() : Shape(Point{}) {}
  template <class G>
  Shape(G g, Real inflate = 0) : geometry_(std::move(g)), inflate_(inflate), valid_(checkQuick()) {}  // NOLINT
  Shape(const Shape&) = default;
  Shape& operator=(const Shape&) = default;
  /// (A moved-from polytope is empty, which validation refuses: the source decides again.)
  Shape(Shape&& o) noexcept : geometry_(std::move(o.geometry_)), inflate_(o.inflate_), valid_(o.valid_) {
    o.valid_ = o.checkQuick();
  }
  Shape& operator=(Shape&& o) noexcept {
    if (this != &o) {
      geometry_ = std::move(o.geometry_), inflate_ = o.inflate_, valid_ = o.valid_;
      o.valid_ = o.checkQuick();
    }
    return *this;
  }

  [[nodiscard]] ShapeType type() const { return static_cast<ShapeType>(geometry_.index()); }
  [[nodiscard]] const ShapeGeometry& geometry() const { return geometry_; }
  /// Extra radius added around the shape (Minkowski sum with a ball).
  [[nodiscard]] Real inflate() const { return inflate_; }
  void setInflate(Real r) { inflate_ = r, valid_ = checkQuick(); }

  /// Total rounding radius: inflate() plus the intrinsic radius of spheres and capsules.
  [[nodiscard]] Real totalRadius() const {
    if (const auto* s = std::get_if<Sphere>(&geometry_)) return inflate_ + s->radius;
    if (const auto* c = std::get_if<Capsule>(&geometry_)) return inflate_ + c->radius;
    return inflate_;
  }

  /// Support point of the whole shape (core + radius) in its local frame.
  [[nodiscard]] Vec3 support(const Vec3& d, SupportHint& h) const;

  /// Hash of the type, the geometry and the inflation: equal for equal shapes. Warm-start caches
  /// record it to detect being reused for another pair (or the same pair swapped).
  [[nodiscard]] std::uint64_t fingerprint() const;

  /// nullopt when the shape is usable; otherwise a message naming the offending field.
  [[nodiscard]] std::optional<std::string> validate() const;
  /// validate() without the messages: true when validate() would return nothing. Decided when the
  /// shape is made (the geometry cannot change afterwards; setInflate decides again): every query
  /// of the runtime API checks both shapes, and the check was ~3 % of a box-box contact query.
  [[nodiscard]] bool quickValid() const { return valid_; }

 private:
  [[nodiscard]] bool checkQuick() const;
  ShapeGeometry geometry_ = Point{};
  Real inflate_ = 0;
  bool valid_ = true;
};

struct Aabb {
  Vec3 lo = Vec3::Zero(), hi = Vec3::Zero();
  [[nodiscard]] bool overlaps(const Aabb& o) const {
    return (lo.array() <= o.hi.array()).all() && (o.lo.array() <= hi.array()).all();
  }
};

/// Tight world AABB of the shape under a pose (six support calls; exact for every convex shape).
Aabb computeAabb(const Shape& s, const Transform& pose = {});

/// Mass properties per unit density in the shape's local frame.
struct MassProperties {
  Real volume = 0;
  Vec3 centroid = Vec3::Zero();
  Mat3 inertia = Mat3::Zero();  ///< about the centroid, per unit density (multiply by density)
};

/// Exact for every shape type and for inflated points and segments (spheres, capsules).
/// Inflated polytopes and other inflated cores: volume exact by Steiner's formula for polytopes;
/// centroid and inertia by numerical integration (documented as approximate, ~1e-4 relative).
/// Fails for shapes without volume (point, segment, triangle, flat polytopes) naming why.
Result<MassProperties> computeMassProperties(const Shape& s);

}  // namespace proxima
