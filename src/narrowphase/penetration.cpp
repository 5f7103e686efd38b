#include "proxima/narrowphase/penetration.hpp"

#include <cmath>
#include <optional>
#include <type_traits>
#include <variant>

#include "cores.hpp"
#include "gjk_td.hpp"
#include "manifold.hpp"
#include "pair_cache.hpp"
#include "proxima/narrowphase/common_plane.hpp"
#include "proxima/narrowphase/distance.hpp"
#include "valid_input.hpp"

namespace proxima {

std::string_view toString(PenetrationMethod m) {
  switch (m) {
    case PenetrationMethod::GjkTd:
      return "gjk-td";
    case PenetrationMethod::Nezami:
      return "nezami";
    case PenetrationMethod::Cundall:
      return "cundall";
  }
  return "unknown";
}

namespace detail {
ExpandingPolytope& scratchPolytope() {
  thread_local ExpandingPolytope p;
  return p;
}
}  // namespace detail

std::optional<std::string> validateOptions(const PenetrationOptions& options) {
  if (detail::optionsAreValid(options)) return std::nullopt;
  if (static_cast<unsigned>(options.method) > static_cast<unsigned>(PenetrationMethod::Cundall))
    return "options.method: unknown value " + std::to_string(static_cast<int>(options.method));
  if (options.maxExpansions < 1)
    return "options.maxExpansions must be >= 1 (got " + std::to_string(options.maxExpansions) + ")";
  if (!(options.relTolerance >= 0) || !std::isfinite(options.relTolerance))
    return std::string("options.relTolerance must be finite and >= 0");
  if (auto m = validateOptions(options.gjk)) return "gjk." + *m;
  return std::nullopt;
}

namespace {

ContactResult invalid(std::string message, PenetrationMethod method = PenetrationMethod::GjkTd) {
  ContactResult r;
  r.status = Status::InvalidInput;
  r.message = std::move(message);
  r.method = method;  // (the method asked for, also when the input is refused)
  return r;
}

// Cores apart or overlapping: move the witnesses out to the surfaces and add the radii
// (ARCHITECTURE.md "A shape is a core plus a radius"; the issue: no expansion when the cores are apart).
void addRadii(ContactResult& r, Real ra, Real rb) {
  if (ra == 0 && rb == 0) return;
  if (r.status != Status::Separated && r.status != Status::Overlapping && r.status != Status::MaxIterations) return;
  detail::offsetByRadii(r, ra, rb);
}

// Descantes' common-plane methods work on the vertices, faces and edges of two polyhedra.
ContactResult commonPlaneContact(const Shape& a, const Transform& poseA, const Shape& b, const Transform& poseB,
                                 PenetrationMethod method) {
  auto fa = polyhedronFeatures(a, poseA);
  if (!fa) return invalid("a: " + fa.message(), method);
  auto fb = polyhedronFeatures(b, poseB);
  if (!fb) return invalid("b: " + fb.message(), method);
  ContactResult r = method == PenetrationMethod::Nezami ? revisedNezami(fa.value(), fb.value())
                                                        : revisedCundall(fa.value(), fb.value());
  r.method = method;
  return r;
}

// The input's first problem as an InvalidInput result, or nullopt when there is none (contact()'s
// quick verdict was too strict: it then answers as for valid input).
std::optional<ContactResult> refusal(const Shape& a, const Transform& poseA, const Shape& b, const Transform& poseB,
                                     const PenetrationOptions& options) {
  if (auto m = a.validate()) return invalid("a: " + *m, options.method);
  if (auto m = b.validate()) return invalid("b: " + *m, options.method);
  if (auto m = validatePose(poseA)) return invalid("a: " + *m, options.method);
  if (auto m = validatePose(poseB)) return invalid("b: " + *m, options.method);
  if (auto m = validateOptions(options)) {
    const bool known = static_cast<unsigned>(options.method) <= static_cast<unsigned>(PenetrationMethod::Cundall);
    return invalid(*m, known ? options.method : PenetrationMethod::GjkTd);
  }
  return std::nullopt;
}

// contact() for checked input. Every exit returns the one named result r, so it is built in the
// caller's slot: with the refusals' returns in the same function GCC moved the ~700-byte result
// into place on every query (a store-forwarding stall, ~7 % of a box pair's query).
ContactResult checkedContact(const Shape& a, const Transform& poseA, const Shape& b, const Transform& poseB,
                             const PenetrationOptions& options, ContactCache* cache) {
  // GJK-TD always works with a cache (the caller's, or when none is given this thread's scratch one,
  // which gjkTd resets to the cold state before reading it): the manifold reads from it the
  // vertices that support the normal.
  thread_local ContactCache scratch;
  ContactCache& cc = cache ? *cache : scratch;
  // (A trusted caller keeps one cache per pair, as the DEM does: the check cost ~4 % of a polyhedral
  // bed's step.)
  if (cache && !options.trustedInput) detail::bindCacheToPair(cc, cc.gjk.pairKey, a, b);
  const bool gjkTd = options.method == PenetrationMethod::GjkTd;
  // (initialised from prvalues: no copy of the ~700-byte result)
  // (Two boxes, the separating-axis case, go straight to their instantiation: a box is its own core.)
  // (Two polytopes, a polyhedral DEM bed's every pair, likewise: without the dispatch over every
  // pair of cores and the two core variants it builds.)
  const Box* boxA = std::get_if<Box>(&a.geometry());
  const Box* boxB = std::get_if<Box>(&b.geometry());
  const Polytope* polyA = std::get_if<Polytope>(&a.geometry());
  const Polytope* polyB = std::get_if<Polytope>(&b.geometry());
  bool swapped = false;
  auto query = [&](const auto& p, const Transform& pp, const auto& q, const Transform& pq) {
    return detail::gjkTd(p, pp, q, pq, options, cc, !cache);
  };
  auto anyCores = [&](const auto& x, const auto& y) {
    // (Core's order of the types, cores.hpp: then cc holds the pair the other way round)
    swapped = detail::kSwappedCores<std::decay_t<decltype(x)>, std::decay_t<decltype(y)>>;
    return detail::inCoreOrder(x, poseA, y, poseB, query);
  };
  ContactResult r = !gjkTd           ? commonPlaneContact(a, poseA, b, poseB, options.method)
                    : polyA && polyB ? detail::gjkTd(detail::PolytopeRef{polyA}, poseA, detail::PolytopeRef{polyB},
                                                     poseB, options, cc, !cache)
                    : boxA && boxB   ? detail::gjkTd(*boxA, poseA, *boxB, poseB, options, cc, !cache)
                                     : std::visit(anyCores, detail::coreOf(a), detail::coreOf(b));
  if (gjkTd) addRadii(r, a.totalRadius(), b.totalRadius());
  if (r.status == Status::InvalidInput || r.status == Status::Degenerate) return r;
  r.depth = r.distance < 0 ? -r.distance : 0;
  r.contactPoint = 0.5 * (r.witnessA + r.witnessB);
  r.contactCount = 0;
  if (r.distance <= 0) {
    if (options.manifold) {
      // (the vertices supporting the normal on a and on b, from the cache in GJK-TD's order)
      const int va = swapped ? cc.supportVertexB : cc.supportVertexA;
      const int vb = swapped ? cc.supportVertexA : cc.supportVertexB;
      detail::buildManifold(a, poseA, b, poseB, r, gjkTd ? va : -1, gjkTd ? vb : -1,
                            gjkTd && cache ? &cc.manifold : nullptr);
    } else {
      detail::singlePointManifold(r);
    }
  }
  return r;
}

}  // namespace

ContactResult contact(const Shape& a, const Transform& poseA, const Shape& b, const Transform& poseB,
                      const PenetrationOptions& options, ContactCache* cache) {
  // The verdicts first (a few comparisons for valid input); the messages only for invalid input.
  if (!options.trustedInput && !(a.quickValid() && b.quickValid() && detail::posesAreValid(poseA, poseB) &&
                                 detail::optionsAreValid(options))) [[unlikely]] {
    if (auto refused = refusal(a, poseA, b, poseB, options)) return std::move(*refused);
  }
  return checkedContact(a, poseA, b, poseB, options, cache);
}

ContactResult contact(const ContactInput& in, ContactCache* cache) {
  if (!in.a) return invalid("a: no shape given");
  if (!in.b) return invalid("b: no shape given");
  return contact(*in.a, in.poseA, *in.b, in.poseB, in.options, cache);
}

}  // namespace proxima
