// Private: the core of a runtime shape (ARCHITECTURE.md "A shape is a core plus a radius"):
// spheres are inflated points, capsules inflated segments; everything else is its own core.
// Shared by the distance and the contact queries so both see exactly the same geometry.
#pragma once

#include <cstddef>
#include <type_traits>
#include <utility>
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

/// C's position in Core's list of alternatives.
template <class C, std::size_t I = 0>
consteval std::size_t coreIndex() {
  if constexpr (std::is_same_v<std::variant_alternative_t<I, Core>, C>)
    return I;
  else
    return coreIndex<C, I + 1>();
}

/// distance() and contact() query two cores of different types in one order only, the later type in
/// Core's list first: (X, Y) with X before Y runs as (Y, X) and swaps the answer back (gjk.hpp's
/// swapSides). So GJK and GJK-TD are instantiated once per unordered pair of core types (45 instead
/// of 81: the two dispatch units were ~2/3 of the library's compile time, and GJK-TD's the build's
/// critical path), query(a, b) and query(b, a) agree bit for bit for them, and distance() and
/// contact() take the same order. The pair's warm-start cache holds its points in that order too,
/// whichever order the caller uses.
template <class X, class Y>
inline constexpr bool kSwappedCores = coreIndex<X>() < coreIndex<Y>();

/// query(x, poseX, y, poseY) run in Core's order (kSwappedCores), its answer read as one for (x, y).
template <class X, class Y, class Query>
auto inCoreOrder(const X& x, const Transform& poseX, const Y& y, const Transform& poseY, Query&& query) {
  if constexpr (kSwappedCores<X, Y>) {
    auto r = query(y, poseY, x, poseX);
    swapSides(r);
    return r;
  } else {
    return query(x, poseX, y, poseY);
  }
}

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
