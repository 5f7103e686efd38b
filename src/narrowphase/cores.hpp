// Private: the core of a runtime shape (ARCHITECTURE.md "A shape is a core plus a radius"):
// spheres are inflated points, capsules inflated segments; everything else is its own core.
// Shared by the distance and the contact queries so both see exactly the same geometry.
#pragma once

#include <type_traits>
#include <variant>

#include "proxima/narrowphase/gjk.hpp"
#include "proxima/shapes/shape.hpp"

namespace proxima::detail {

// Non-owning polytope view so the core variant stays cheap to build per query.
struct PolytopeRef {
  const Polytope* p;
  [[nodiscard]] Vec3 support(const Vec3& d, SupportHint& h) const { return p->support(d, h); }
};

/// support(d, h), with a polytope's remembered search (SupportMemo) where the core has one.
template <class C>
[[gnu::always_inline]] inline Vec3 supportRemembered(const C& c, const Vec3& d, SupportHint& h, SupportMemo& m) {
  if constexpr (std::is_same_v<C, PolytopeRef>)
    return c.p->supportRemembered(d, h, m);
  else
    return c.support(d, h);
}

using Core = std::variant<Point, Segment, Triangle, Tetrahedron, Ellipsoid, Box, Cylinder, Cone, PolytopeRef>;

inline Core coreOf(const Shape& s) {
  return std::visit(
      [](const auto& g) -> Core {
        using G = std::decay_t<decltype(g)>;
        if constexpr (std::is_same_v<G, Sphere>)
          return Point{};
        else if constexpr (std::is_same_v<G, Capsule>)
          return Segment{Vec3(0, 0, -g.halfLength), Vec3(0, 0, g.halfLength)};
        else if constexpr (std::is_same_v<G, Polytope>)
          return PolytopeRef{&g};
        else
          return g;
      },
      s.geometry());
}

template <>
struct PolyhedralSupport<PolytopeRef> : std::true_type {};

/// Cores whose CSO with another polyhedral core is a polytope (finite vertex set): GJK-TD ends
/// exactly on them and the final facet can be re-fitted from all of its vertices. (The same list
/// as gjk.hpp's PolyhedralSupport, which GJK's stall rules read.)
template <class C>
inline constexpr bool kPolyhedralCore = PolyhedralSupport<C>::value;

/// Core result -> shape result when the cores did not need expanding: the witnesses move out to the
/// surfaces along the normal, the radii come off the distance and its lower bound, and a negative
/// distance means the radii overlap.
inline void offsetByRadii(DistanceResult& r, Real ra, Real rb) {
  if (r.normal.squaredNorm() > 0) {
    r.witnessA += ra * r.normal;
    r.witnessB -= rb * r.normal;
  }
  r.distance -= ra + rb;
  r.lowerBound -= ra + rb;
  if (r.distance <= 0 && r.status == Status::Separated) r.status = Status::Overlapping;  // touching counts as contact
}

}  // namespace proxima::detail
