// GJK distance between two convex bodies given by support mappings (Montanari 2017 Algorithm 5,
// with the printed `continue` read as terminate), with Signed Volumes or Johnson as sub-algorithm,
// warm start from a per-pair cache, and NaN-safe exits.
//
// The query runs in the local frame of body A: B's pose is expressed relative to A once, which keeps
// the CSO near the origin of coordinates even when the bodies sit far from the world origin.
#pragma once

#include <algorithm>
#include <cmath>
#include <concepts>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "proxima/core/status.hpp"
#include "proxima/core/tolerances.hpp"
#include "proxima/core/types.hpp"
#include "proxima/narrowphase/signed_volumes.hpp"
#include "proxima/narrowphase/signed_volumes_solver.hpp"
#include "proxima/shapes/convex.hpp"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace proxima {

struct GjkOptions {
  SubAlgorithm subAlgorithm = SubAlgorithm::SignedVolumes;
  SignMode signs = SignMode::Fast;
  bool johnsonBackup = true;  ///< only for SubAlgorithm::Johnson
  SupportMode supportMode = SupportMode::Auto;
  int maxIterations = tol::kGjkMaxIterations;
  Real relTolerance = tol::kGjkRelative;  ///< ε_rel² of Alg. 5 line 8
  Real absTolerance = tol::kGjkAbsolute;
  Real touchTolerance = tol::kGjkTouch;  ///< ε_tol of Alg. 5 line 13
  /// Smooth pairs (ellipsoid-ellipsoid, ellipsoid-sphere): finish with Newton's method on the
  /// support function once GJK's direction (nearly) separates the bodies (detail::newtonDistance),
  /// and certify an overlap from one support pair by the rolling balls
  /// (detail::rollingBallContainsOrigin); contact() also runs its overlap Newton. Off = plain GJK
  /// (and plain GJK-TD) to the end.
  bool smoothNewton = true;
  int maxRestarts = tol::kGjkMaxRestarts;  ///< restarts when GJK stalls with a weak certificate
  Real restartGap = tol::kGjkRestartGap;   ///< restart only if ||v|| - lower bound > restartGap * scale
  std::vector<Real>* normTrace = nullptr;  ///< if set, receives ||v_k|| after every iteration
  SubAlgorithmStats* stats = nullptr;      ///< if set, accumulates sub-algorithm call counts
};

/// A bool read back from raw bytes (a checkpoint) holds 0 or 1: any other byte is no bool value, and
/// using it would be undefined behaviour. (Its byte is read as an unsigned char.)
inline bool boolBytePlausible(const bool& b) {
  unsigned char c = 0;
  std::memcpy(&c, &b, 1);
  return c <= 1;
}

/// Per-pair warm-start data kept by the caller between queries (e.g. between DEM time steps).
struct GjkCache {
  // (First the fields every warm query reads, hints and key: ContactCache places them at the end of
  // its own per-query fields, so that a persisting contact's query reads whole lines only.)
  SupportHint hintA, hintB;
  /// Which shapes (A, B) filled it (pairKey()): the runtime entry points reset a cache reused for
  /// another pair or for the pair swapped, whose cached points would not lie on these shapes.
  std::uint64_t pairKey = 0;
  bool valid = false;
  /// Smooth pairs answered by the Newton finish: the cached simplex is the one support pair, and
  /// the free last slot holds Newton's normal (normalA()); the next query starts there. (Kept in
  /// existing storage: the DEM keeps a cache per pair and checkpoints it raw.)
  bool hasNormal = false;
  int size = 0;
  /// Support points of the last simplex in A's local frame, and in B's. (distance() runs two cores of
  /// different kinds in one order, the later kind first: for such a pair "A" is that shape, whichever
  /// order the caller gives; user guide, "Order of the two shapes".) (Zero, not left undefined:
  /// a copied fresh cache, as the benchmarks' assign() makes, then reads no indeterminate values; a
  /// cache is made once per pair, not per query.)
  Vec3 localA[4] = {Vec3::Zero(), Vec3::Zero(), Vec3::Zero(), Vec3::Zero()};
  Vec3 localB[4] = {Vec3::Zero(), Vec3::Zero(), Vec3::Zero(), Vec3::Zero()};
  [[nodiscard]] Vec3& normalA() { return localA[3]; }
  [[nodiscard]] const Vec3& normalA() const { return localA[3]; }
  void reset() { *this = GjkCache{}; }
  /// Fields in range (a cache filled by the code, not by hand or by a damaged checkpoint).
  [[nodiscard]] bool plausible() const {
    return size >= 0 && size <= 4 && boolBytePlausible(valid) && boolBytePlausible(hasNormal);
  }
};

/// Result of a distance query. All points and vectors are in the world frame.
struct DistanceResult {
  Status status = Status::InvalidInput;
  Real distance = std::numeric_limits<Real>::quiet_NaN();  ///< < 0 only for inflated shapes
  Vec3 witnessA = Vec3::Zero();                            ///< closest point on A (world)
  Vec3 witnessB = Vec3::Zero();                            ///< closest point on B (world)
  Vec3 normal = Vec3::Zero();                              ///< unit, from A to B; zero when the cores overlap
  int iterations = 0;                                      ///< GJK iterations plus Newton steps (newtonSteps)
  int restarts = 0;     ///< GJK restarts after a stall (curved shapes), see GjkOptions
  int newtonSteps = 0;  ///< Newton steps of the smooth-pair finish (0: GJK alone answered)
  /// Certified lower bound on `distance` (weak duality from the support points): the exact distance
  /// lies in [lowerBound, distance]. Equals distance to ~1e-15 for polytopes; 0 when overlapping.
  Real lowerBound = 0;
  int simplexSize = 0;            ///< |W| of the final simplex
  Vec3 simplexA[4], simplexB[4];  ///< support points on A and B of the final simplex (world)
  Real lambda[4] = {0, 0, 0, 0};  ///< barycentric coordinates of the final simplex
  std::string message;            ///< set for InvalidInput
};

namespace detail {

inline SimplexSolution runSubAlgorithm(const Vec3* y, int n, bool gjkOrder, const GjkOptions& o) {
  if (o.subAlgorithm == SubAlgorithm::Johnson)
    return johnson(std::span<const Vec3>(y, static_cast<std::size_t>(n)), gjkOrder, o.johnsonBackup, o.stats);
  const bool exact = o.signs == SignMode::Exact;
  return gjkOrder ? SvSolver<true>(y, exact, o.stats).solve(n) : SvSolver<false>(y, exact, o.stats).solve(n);
}

/// Shapes whose support mapping takes finitely many values (polytopes, and points, segments, triangles
/// and boxes): GJK on two of them terminates finitely, on the CSO's vertices. Every other shape
/// (quadrics, cylinders, cones, user shapes) counts as curved. (The private polytope view of the
/// runtime shapes adds itself, cores.hpp.)
template <class S>
struct PolyhedralSupport
    : std::bool_constant<std::is_same_v<S, Point> || std::is_same_v<S, Segment> || std::is_same_v<S, Triangle> ||
                         std::is_same_v<S, Tetrahedron> || std::is_same_v<S, Box> || std::is_same_v<S, Polytope>> {};
template <class SA, class SB>
inline constexpr bool kCurvedPair = !(PolyhedralSupport<SA>::value && PolyhedralSupport<SB>::value);

/// GJK's no-descent stall on a tetrahedron y[0..3] (curved pairs, gjkDistance): true if the origin lies
/// strictly inside it by exact signs of the Signed Volumes cofactors (Montanari 2017 §4.2), with
/// barycentrics |C_j| / sum |C_j| in `enclosed` (the cancelled cofactor is the tiny weight of the
/// vertex opposite the face the origin nearly touches). Out of line and cold: it runs only there.
[[gnu::noinline, gnu::cold]] inline bool tetrahedronEnclosesOriginExactly(const Vec3* y, SimplexSolution& enclosed) {
  for (int j = 0; j < 4; ++j)
    if (!y[j].allFinite()) return false;
  const TetraSigns ts = exactTetraSigns(y[0], y[1], y[2], y[3]);
  if (ts.det == 0) return false;
  for (int j = 0; j < 4; ++j)
    if (ts.cof[j] != ts.det) return false;
  const Real C[4] = {std::abs(det3(y[1], y[2], y[3])), std::abs(det3(y[0], y[2], y[3])),
                     std::abs(det3(y[0], y[1], y[3])), std::abs(det3(y[0], y[1], y[2]))};
  const Real sum = C[0] + C[1] + C[2] + C[3];
  enclosed.size = 4;
  enclosed.point.setZero();
  for (int j = 0; j < 4; ++j) {
    enclosed.ids[j] = j;
    enclosed.lambda[j] = sum > 0 ? C[j] / sum : 0.25;
    enclosed.point += enclosed.lambda[j] * y[j];
  }
  return true;
}

/// Shapes whose support function h(d) = max_x d·x is twice differentiable and that give its
/// Hessian as a quadratic form (Ellipsoid::supportHessianForm).
template <class S>
concept SmoothSupport = requires(const S& s, const Vec3& v) {
  { s.supportHessianForm(v, v, v, v) } -> std::convertible_to<Real>;
};
/// Pairs that take the Newton finish: both smooth, at least one curved (two points need no help).
template <class SA, class SB>
inline constexpr bool kNewtonPair =
    SmoothSupport<SA>&& SmoothSupport<SB> && !(std::is_same_v<SA, Point> && std::is_same_v<SB, Point>);

/// Smooth shapes that also give the radius of a ball rolling freely inside (Ellipsoid: the smallest
/// principal radius of curvature; Point: 0).
template <class S>
concept RollingSmooth = SmoothSupport<S> && requires(const S& s) {
  { s.rollingRadius() } -> std::convertible_to<Real>;
};
template <class SA, class SB>
inline constexpr bool kRollingPair = kNewtonPair<SA, SB> && RollingSmooth<SA> && RollingSmooth<SB>;

/// Overlap certificate of a rolling pair from one support pair (Blaschke's rolling theorem): a ball
/// of radius rA rolls freely inside A, likewise for B, so the Minkowski difference A - B' contains
/// the ball of radius r = rA + rB centred at w - r u, w = s_A(u) - s_B'(-u) its support point along
/// the unit u. If the origin lies inside that ball (with a margin for the rounding of w) the bodies
/// overlap for certain. Near-touching pairs fail it; pairs overlapping by more than ~r/2 along a
/// direction close to the optimal one pass at once.
template <class SA, class SB>
[[nodiscard]] inline bool rollingBallContainsOrigin(const SA& a, const SB& b, const Vec3& u, const Vec3& w,
                                                    Real scale) {
  const Real r = a.rollingRadius() + b.rollingRadius();
  const Real margin = 16 * tol::kEps * scale;
  return r > margin && (w - r * u).squaredNorm() < (r - margin) * (r - margin);
}

/// One Newton step of F(u) = h_A(u) + h_B'(-u) on the unit sphere at u (A's frame; pa, lb the support
/// points, w = s_A(u) - s_B'(-u) the gradient): tangent basis t1, t2, gradient (g1, g2) and the step
/// (d1, d2) solving the 2x2 system of the shapes' support Hessians minus `shift` (F gives the exact
/// Riemannian Hessian; B's Hessian is read in B's frame). False if that matrix is not positive definite.
struct SphereStep {
  Vec3 t1, t2;
  Real g1 = 0, g2 = 0, d1 = 0, d2 = 0;
  Real h11 = 0, h12 = 0, h22 = 0;  ///< the model's Hessian in (t1, t2): H_A + H_B' - shift
  Real a11 = 0, a12 = 0, a22 = 0;  ///< A's share, H_A (its support point's derivative along t1, t2)
  Real shift = 0;
};
template <class SA, class SB>
bool sphereNewtonStep(const SA& a, const SB& b, const Mat3& R, const Vec3& u, const Vec3& pa, const Vec3& lb,
                      const Vec3& w, Real shift, SphereStep& st) {
  st.t1 = u.unitOrthogonal(), st.t2 = u.cross(st.t1);
  st.g1 = st.t1.dot(w), st.g2 = st.t2.dot(w);
  const Vec3 ub = mulMatT(R, Vec3(-u)), b1 = mulMatT(R, st.t1), b2 = mulMatT(R, st.t2);
  st.a11 = a.supportHessianForm(u, pa, st.t1, st.t1);
  st.a22 = a.supportHessianForm(u, pa, st.t2, st.t2);
  st.a12 = a.supportHessianForm(u, pa, st.t1, st.t2);
  st.shift = shift;
  const Real h11 = st.h11 = st.a11 + b.supportHessianForm(ub, lb, b1, b1) - shift;
  const Real h22 = st.h22 = st.a22 + b.supportHessianForm(ub, lb, b2, b2) - shift;
  const Real h12 = st.h12 = st.a12 + b.supportHessianForm(ub, lb, b1, b2);
  const Real det = h11 * h22 - h12 * h12;
  if (!(h11 > 0 && det > 0)) return false;
  st.d1 = -(h22 * st.g1 - h12 * st.g2) / det, st.d2 = -(h11 * st.g2 - h12 * st.g1) / det;
  return true;
}

/// Newton finish of a separated smooth pair, in A's frame with B at x = R lb + t.
///
/// The distance of separated convex bodies is max over unit u of the separation along u, -F(u), with
/// F(u) = h_A(u) + h_B'(-u) (h the support functions, B' = B placed). F is convex and positively
/// homogeneous, its gradient is w(u) = s_A(u) - s_B'(-u) (the support pair, GJK's w for direction
/// -u), and on the unit sphere its Riemannian Hessian is P (H_A + H_B') P - F P, P = I - u u^T:
/// positive definite wherever F < 0, i.e. along any separating direction (and wherever the
/// curvature term outweighs a small F > 0). So from a GJK direction that (nearly) separates, damped
/// Newton steps (backtracking on F) converge quadratically to the optimum, where w is parallel to u,
/// whereas GJK converges only linearly on curved surfaces (~110 iterations for ellipsoids 1e-3
/// apart at machine precision, docs/benchmarks.md). GJK-TD's curved finish (gjk_td.hpp) applies the
/// same idea to the overlap, with finite-difference Hessians.
///
/// Certificate, as GJK's: ||w|| is a feasible distance (upper bound), -F(u) = -u·w a lower bound;
/// it stops when they agree to opt.relTolerance / opt.absTolerance with F < 0. False if it cannot
/// certify (its quadratic model predicts overlap, no descent, step cap): GJK then simply continues.
struct NewtonState {
  Vec3 u, pa, lb, w;  ///< direction A -> B (unit), support points (A's frame; B's own frame), pa - pb
  Vec3 normal;        ///< u refined by one more step computed at the end (no extra support call)
  Real lower = 0;     ///< -F(u)
  int steps = 0;
};

/// pairAlong(u, pa, lb) is GJK's support pair for direction -u: returns w = pa - (R lb + t).
template <class SA, class SB, class PairAlong>
bool newtonDistance(const SA& a, const SB& b, const Mat3& R, const GjkOptions& opt, NewtonState& s,
                    PairAlong&& pairAlong) {
  Real F = s.u.dot(s.w);
  int blindSteps = 0;
  for (int it = 0; it <= tol::kGjkNewtonIterations; ++it) {
    if (std::isnan(F)) return false;
    const Vec3 pb = s.pa - s.w;
    const Real upper = s.w.norm();
    const Real scale = std::sqrt(std::max(s.pa.squaredNorm(), pb.squaredNorm()));
    const Real gap = upper + F;  // upper - lower
    // Tangent basis, gradient and Hessian of F on the sphere.
    SphereStep st;
    if (!sphereNewtonStep(a, b, R, s.u, s.pa, s.lb, s.w, F, st)) return false;
    const Vec3 &t1 = st.t1, &t2 = st.t2;
    const Real g1 = st.g1, g2 = st.g2;
    Real d1 = st.d1, d2 = st.d2;
    // The quadratic model keeps more than half of the projections' overlap F > 0: most likely the
    // bodies overlap, which GJK certifies (Newton cannot).
    if (F > 0 && F + 0.5 * (g1 * d1 + g2 * d2) > 0.5 * F) return false;
    if (F < 0 && !(gap > opt.relTolerance * upper + opt.absTolerance * scale)) {
      // Certified. The step not taken still refines the normal (quadratically).
      s.lower = -F;
      s.normal = (s.u + d1 * t1 + d2 * t2).normalized();
      if (!(s.normal.dot(s.u) > 0.5)) s.normal = s.u;
      // Witnesses: the distance is quadratic in the angle to the optimum but the support points are
      // linear in it, so at u (certified to ~1e-15 in distance) they sat ~sqrt(1e-15 / curvature)
      // ~ 1e-8..1e-5 (relative) off the closest pair. The support pair at the refined normal is off
      // by the square of that; it is taken if it passes the same certificate (with the better of
      // the two lower bounds), i.e. its distance is as certified as u's (one more support pair,
      // skipped when the step would not change u).
      if (std::hypot(d1, d2) > 4 * tol::kEps) {
        Vec3 pa, lb;
        const Vec3 w = pairAlong(s.normal, pa, lb);
        const Real up = w.norm(), low = std::max(s.lower, -s.normal.dot(w));
        if (std::isfinite(up) && up - low <= opt.relTolerance * up + opt.absTolerance * scale)
          s.lower = low, s.u = s.normal, s.pa = pa, s.lb = lb, s.w = w;
      }
      return true;
    }
    if (it == tol::kGjkNewtonIterations) return false;
    const Real len = std::hypot(d1, d2);
    if (len > 0.5) d1 *= 0.5 / len, d2 *= 0.5 / len;  // trust region: at most ~0.5 rad per step
    // Near the optimum of a tiny distance F is flat to rounding while the step (from the gradient,
    // which is accurate) still matters for ||w||: a step whose predicted decrease is below F's
    // rounding is taken as is (the bounds stay valid at any u), at most twice in a row.
    const bool blind = -0.5 * (g1 * d1 + g2 * d2) <= 8 * tol::kEps * scale && blindSteps < 2;
    bool moved = false;
    for (int half = 0; half < 40 && !moved; ++half, d1 *= 0.5, d2 *= 0.5) {
      const Vec3 u = (s.u + d1 * t1 + d2 * t2).normalized();
      Vec3 pa, lb;
      const Vec3 w = pairAlong(u, pa, lb);
      const Real Fn = u.dot(w);
      if (Fn < F || (blind && Fn <= F + 8 * tol::kEps * scale))
        s.u = u, s.pa = pa, s.lb = lb, s.w = w, F = Fn, moved = true;
    }
    blindSteps = blind ? blindSteps + 1 : 0;
    ++s.steps;
    if (!moved) return false;  // rounding floor above the tolerance, or overlap: let GJK decide
  }
  return false;
}

/// Newton on the CSO support function for overlapping smooth pairs, with analytic Hessians and a
/// certificate, so that no polytope is needed (GJK-TD's finite-difference curved finish, gjk_td.hpp,
/// needs the polytope to certify its answer, and the polytope converges only linearly on curved
/// surfaces).
///
/// The depth of overlapping bodies is min over unit u of F(u) = h_A(u) + h_B'(-u), the CSO's
/// support function; its gradient is w(u) = s_A(u) - s_B'(-u) and its Hessian on the sphere is
/// P (H_A + H_B') P - F P (as in newtonDistance above, which minimises the same F for separated
/// pairs). Every tangential eigenvalue of H_A is a principal radius of curvature of A, so
/// at least A's rolling radius rA: the Hessian is positive definite wherever F < r = rA + rB.
///
/// Certificate (Blaschke's rolling theorem): a ball of radius rA rolls freely inside A, likewise for
/// B, so the CSO is (A° - B°) + ball(r) with A°, B° convex, and w - r u lies in A° - B°: the ball of
/// radius r centred at c = w - r u is inside the CSO. If the origin is inside that ball the bodies
/// overlap and the depth (distance from the origin to the CSO's boundary) is at least
/// L = r - |c|; it is at most F(u), the overlap along u. At the optimum w = F u, so L = F when
/// F < r: the bounds meet, and near it U - L ~ |gradient|^2 / (2 (r - F)). Accepted when
/// U - L <= kGjkRelative x scale, or <= relTol x scale when rounding stops the descent first. False
/// (the caller falls back to the expansion) when F leaves (0, r), or when the Hessian is not
/// positive definite, a step fails to descend or the step cap is reached before U - L <= relTol x scale.
struct OverlapNewtonState {
  Vec3 u, sa, lb, w;  ///< direction (A's frame, unit), support points (A's frame; B's own frame), w
  Vec3 n;             ///< the answer's normal (A's frame): u refined by the Newton step not taken
  Real F = 0;         ///< u·w, the overlap along u
  int steps = 0;
};

/// newtonOverlap runs it from s.u, s.w, s.sa, s.lb. classifyOnly: stop (true) as soon as the origin
/// is inside the rolling ball (rollingBallContainsOrigin): the overlap is then certain, which is all a
/// distance query needs (gjkDistance). It also gives up after 2 steps beyond the balls (GJK
/// certifies deep overlaps in a few iterations).
template <class SA, class SB, class CsoSupport>
bool newtonOverlap(const SA& a, const SB& b, const Mat3& R, Real relTol, OverlapNewtonState& s,
                   CsoSupport&& csoSupport, bool classifyOnly = false) {
  const Real r = a.rollingRadius() + b.rollingRadius();
  // Newton converges quadratically: it aims at GJK's own tolerance (depth to ~1e-14 x scale), and
  // settles for relTol (the expansion's contract) only when rounding stops it first.
  const Real tight = std::min(relTol, tol::kGjkRelative);
  // The Newton step not taken, applied to the normal and the witnesses of the answer. Run when
  // converged, and also when the answer is certified and rounding stops the descent first: the step
  // can no longer lower F, but it still turns the normal and moves the witnesses. A 0.005 ellipsoid
  // 1.5e-10 deep in a 0.9 one (the contact hunt's 20261127 1 1 2 0 132) stopped there with its
  // witnesses 1.1e-8 apart across the normal.
  auto finishStep = [&](const SphereStep& st, Real F, Real d1, Real d2) {
    const Vec3 &t1 = st.t1, &t2 = st.t2;
    const Real g1 = st.g1, g2 = st.g2;
    // Converged: the depth is F. The normal's error is the remaining step, ~sqrt(F error /
    // curvature), so the normal takes that step (as GJK's Newton finish does, gjk.hpp), and so do
    // the witnesses, to first order: each support point moves by its own Hessian times the step,
    // H_A d on A and -H_B d on B (both in the tangent plane), so that w = s_A - s_B becomes
    // w + (H_A + H_B) d = F (u + d) by the Newton equation (H_A + H_B - F) d = -g: parallel to the
    // stepped normal, with a residual of second order in d. With the pair along u, w_B - w_A left
    // the normal by the gradient g, which F's criterion (second order in g) leaves at up to ~1e-8
    // of the size (7e-8 for ellipsoids ~0.7 across: validation §22 E). The points move ~|g|
    // along their tangent planes, i.e. off the surfaces by ~curvature x |g|^2, rounding. (The
    // support pair along the stepped normal would do the same at the cost of one more support
    // call: 9 % of a settled ellipsoid bed's step.)
    s.n = (s.u + d1 * t1 + d2 * t2).normalized();
    // The exact Newton step x (shift F): the model's own when its shift min(F, r/2) is F (a
    // shallow overlap: no second solve), else solved again; H_A + H_B' >= r > F on the tangent
    // plane, so it is positive definite here. (If rounding says otherwise, the witnesses stay.)
    Real x1 = d1, x2 = d2;
    Vec3 n = s.n;
    if (st.shift != F) {
      const Real e11 = st.h11 + st.shift - F, e22 = st.h22 + st.shift - F, e12 = st.h12;
      const Real det = e11 * e22 - e12 * e12;
      if (!(e11 > 0 && det > 0)) return true;
      x1 = -(e22 * g1 - e12 * g2) / det, x2 = -(e11 * g2 - e12 * g1) / det;
      n = (s.u + x1 * t1 + x2 * t2).normalized();
    }
    // (H_A + H_B') x = -g + F x: the support points' moves along (t1, t2), A's and the rest B's
    const Real a1 = st.a11 * x1 + st.a12 * x2, a2 = st.a12 * x1 + st.a22 * x2;
    const Real b1 = -g1 + F * x1 - a1, b2 = -g2 + F * x2 - a2;
    const Vec3 moveA = a1 * t1 + a2 * t2, moveB = b1 * t1 + b2 * t2;
    if (n.allFinite() && moveA.allFinite() && moveB.allFinite()) {
      s.n = n;
      s.sa += moveA;
      s.lb -= mulMatT(R, moveB);  // (B's point, in B's frame, moves by -H_B' x)
      s.w += moveA + moveB;
    }
    return true;
  };
  s.F = s.u.dot(s.w);
  int blindSteps = 0, outsideSteps = 0;
  for (int it = 0; it <= tol::kOverlapNewtonIterations; ++it) {
    const Real F = s.F;
    s.n = s.u;
    if (!(F > 0)) return false;  // apart or touching along u: GJK decides
    // Beyond the rolling balls (F >= r) nothing can be certified yet: a cold start along the line of
    // centres often begins there. A few damped steps may bring F below r; a depth that is itself
    // beyond r is left to the expansion.
    if (F >= r && ++outsideSteps > (classifyOnly ? 2 : tol::kOverlapNewtonOutsideSteps)) return false;
    const Vec3 pb = s.sa - s.w;
    const Real scale = std::sqrt(std::max(s.sa.squaredNorm(), pb.squaredNorm()));
    const Real lower = r - (s.w - r * s.u).norm();
    if (classifyOnly && rollingBallContainsOrigin(a, b, s.u, s.w, scale)) return true;
    const bool certified = lower > 0 && F - lower <= relTol * scale;
    // Tangential curvature radii sum to at least r, so the shift min(F, r/2) keeps the model positive
    // definite beyond the balls too (a descent direction; the halving below keeps every step descending).
    SphereStep st;
    if (!sphereNewtonStep(a, b, R, s.u, s.sa, s.lb, s.w, std::min(F, 0.5 * r), st)) return certified;
    const Vec3 &t1 = st.t1, &t2 = st.t2;
    const Real g1 = st.g1, g2 = st.g2;
    Real d1 = st.d1, d2 = st.d2;
    if (lower > 0 && F - lower <= tight * scale) return finishStep(st, F, d1, d2);
    // Out of steps: a certified answer still takes its step (flat faces of two ellipsoids 0.08 deep,
    // hunt id 20261127 1 1 3 1 7, used all 24 and left the witnesses 3.4e-10 apart across the normal).
    if (it == tol::kOverlapNewtonIterations) return certified && finishStep(st, F, d1, d2);
    const Real d1Newton = d1, d2Newton = d2;
    const Real len = std::hypot(d1, d2);
    if (len > 0.5) d1 *= 0.5 / len, d2 *= 0.5 / len;  // trust region: at most ~0.5 rad per step
    // A step whose predicted decrease is below F's rounding is judged by the gradient (accurate)
    // rather than by F: taken if F does not rise beyond rounding, at most twice in a row.
    const bool blind = -0.5 * (g1 * d1 + g2 * d2) <= 8 * tol::kEps * scale && blindSteps < 2;
    bool moved = false;
    // Once certified, a step that does not descend at once means rounding: stop there.
    for (int half = 0; half < (certified ? 1 : 40) && !moved; ++half, d1 *= 0.5, d2 *= 0.5) {
      const Vec3 u = (s.u + d1 * t1 + d2 * t2).normalized();
      Vec3 sa, lb;
      const Vec3 w = csoSupport(u, sa, lb);
      const Real Fn = u.dot(w);
      if (Fn < F || (blind && Fn <= F + 8 * tol::kEps * scale))
        s.u = u, s.sa = sa, s.lb = lb, s.w = w, s.F = Fn, moved = true;
    }
    blindSteps = blind ? blindSteps + 1 : 0;
    ++s.steps;
    if (!moved) return certified && finishStep(st, F, d1Newton, d2Newton);
  }
  return false;
}

/// Set while gjkDistance asks the other order for a second opinion on an uncertified stall (the
/// second run does not ask again).
inline thread_local bool gjkSecondOpinionRunning = false;

/// A result of the query (B, A) read as one of (A, B): the witnesses and the simplex's support points
/// change places and the normal (A -> B) its sign (a zero normal stays +0).
inline void swapSides(DistanceResult& r) {
  std::swap(r.witnessA, r.witnessB);
  if (r.normal.squaredNorm() > 0) r.normal = -r.normal;
  for (int i = 0; i < 4; ++i) std::swap(r.simplexA[i], r.simplexB[i]);
}

/// Pairs that gjkDistance runs in B's frame instead of A's: an ellipsoid (A) against a long body
/// (B) that lies along the z axis of its frame: a segment (a capsule's core), a cylinder or a cone.
/// The distance of the ellipsoid to a long segment (10 .. 40 either side of its centre) is a short
/// vector across the segment's axis, and GJK converges to it on a flat sliver simplex (two support
/// points at each end of the segment, the ellipsoid's points ~1e-4 apart) whose sub-algorithm
/// resolves it only relative to the rounding of the CSO points across that axis. In the ellipsoid's
/// frame the axis is oblique: every coordinate of the segment's end points is ~25 and carries ~3e-15
/// of rounding in every direction, GJK's tetrahedra stop descending ~1e-10 above the distance (no
/// descent, three restarts that re-converge to the same floor), and a capsule's depth, its radius
/// minus that distance, came out up to ~4 tolerances (kEpaRelative x size) too shallow with the
/// ellipsoid first, never with the capsule first (PenetrationElongated.CapsuleAgainstEllipsoid*,
/// against an exact long-double oracle: 6 of 1 500 pairs at depths 1e-4 .. 0.1, 5 of 1 000 at
/// 1e-8 .. 1e-4 and 3 of 1 000 at 1e-13 .. 1e-10 beyond one tolerance, and 138 of the latter
/// "separated" against 11 with the capsule first). In the segment's frame the axis is z: the large
/// coordinates are along it, the coordinates across it are those of the ellipsoid (~1) and exact to
/// ~1e-16, and the same iterations reach the distance to ~1e-13 (2e-2 of a tolerance), as the
/// capsule-first order always did. The cause was the frame, not the ellipsoid first: the same
/// ellipsoid, given to GJK as a rotated support map in a frame whose z axis is the segment's, gave
/// the segment-first accuracy. (A bare segment given obliquely in its own frame gains little.)
/// A long cylinder or cone apart from the ellipsoid had the same floor in distance() (its support
/// points lie at its ends, 10 .. 40 away, oblique in the ellipsoid's frame): against an exact oracle
/// (PenetrationElongated.Ellipsoid{ApartFrom,NearlyTouching}LongCylinderOrCone*, 1 000 cylinders and
/// 1 000 cones each), with the ellipsoid first 5 and 10 pairs apart by 1e-4 .. 0.1 were beyond one
/// tolerance (up to 3.6), and at gaps of 1e-10 .. 1e-7 431 and 448 (up to 16.7; 27 answered
/// "overlapping"), none with the body first (at most 0.015 and 0.127). The ellipsoid first but given
/// in the body's frame (a scratch driver, 4 000 pairs per band) was as accurate as the body first
/// (0.019 and 0.23 at worst): the frame again. In B's frame no pair of either test is beyond one
/// tolerance, and the orders give the same distance. The contacts of these pairs (cores overlapping)
/// are answered by the expansion, in A's frame from GJK's simplex mapped back: their depths stay
/// within one tolerance in both orders, as before (validation.md §6). Polyhedral pairs end finitely
/// on the CSO's vertices and are not affected.
template <class SA, class SB>
inline constexpr bool kGjkInFrameOfB = std::is_same_v<SA, Ellipsoid> &&
                                       (std::is_same_v<SB, Segment> || std::is_same_v<SB, Cylinder> ||
                                        std::is_same_v<SB, Cone>);

}  // namespace detail

/// GJK on the cores (no radii). Both shapes model the support concept of convex.hpp.
template <class SA, class SB>
DistanceResult gjkDistance(const SA& a, const Transform& poseA, const SB& b, const Transform& poseB,
                           const GjkOptions& opt = {}, GjkCache* cache = nullptr) {
  if constexpr (detail::kGjkInFrameOfB<SA, SB>) {
    // B first (detail::kGjkInFrameOfB), mapped back to (A, B): the witnesses and the simplex's support
    // points change places and the normal (A -> B) its sign; the cache keeps the (A, B) layout the
    // caller and GJK-TD read (A's points in A's frame in localA), so it is swapped on the way in and
    // out. No Newton normal to carry: a segment, a cylinder or a cone has no smooth support (no
    // supportHessianForm), so these are no Newton pairs in either order, the query in B's frame
    // reads no normal from the cache and leaves hasNormal false, and GJK-TD seeds one only for
    // rolling pairs. (A smooth B would need normalA(), which shares localA[3], rotated into the
    // other body's frame and negated, not swapped: the static_assert keeps such a pair out.)
    static_assert(!detail::kNewtonPair<SA, SB> && !detail::kNewtonPair<SB, SA>);
    auto swapSides = [](GjkCache& c) {
      std::swap(c.hintA, c.hintB);
      for (int i = 0; i < 4; ++i) std::swap(c.localA[i], c.localB[i]);
    };
    if (cache) swapSides(*cache);
    DistanceResult r = gjkDistance(b, poseB, a, poseA, opt, cache);
    if (cache) swapSides(*cache);
    detail::swapSides(r);
    return r;
  }
  // B relative to A: x_A = R x_B + t.
  Mat3 R;
  Vec3 t;
  relativePose(poseA, poseB, R, t);

  SupportHint hintA{-1, opt.supportMode}, hintB{-1, opt.supportMode};
  if (cache && cache->valid) hintA.vertex = cache->hintA.vertex, hintB.vertex = cache->hintB.vertex;

  // Simplex, newest vertex first: CSO points y = pa - pb (A's frame), A's support points pa, and
  // B's support points lb in B's own frame exactly as returned (pb = R lb + t is recomputed
  // bit-identically when needed; caching lb instead of a back-transformed pb avoids drift).
  Vec3 y[4] = {Vec3::Zero(), Vec3::Zero(), Vec3::Zero(), Vec3::Zero()}, pa[4], lb[4];
  int n = 0;
  Vec3 v;
  DistanceResult out;

  // Fills `out`; every exit then returns `out` itself (named return value: no copy of the result).
  auto finish = [&](Status st, const SimplexSolution& sol) {
    out.status = st;
    Vec3 za = Vec3::Zero(), zb = Vec3::Zero();
    out.simplexSize = n;
    for (int i = 0; i < n; ++i) {
      const Real l = sol.lambda[i];
      const Vec3 pb = mulMat(R, lb[i]) + t;
      za += l * pa[i];
      zb += l * pb;
      out.lambda[i] = l;
      out.simplexA[i] = poseA.apply(pa[i]);
      out.simplexB[i] = poseA.apply(pb);
    }
    // Reported distance: the witness points' separation, a feasible (achieved) value. The search
    // direction v may be the plane projection p_O, which is more accurate in direction but is not
    // guaranteed to lie in the CSO.
    const Vec3 d = za - zb;  // A minus B
    const Real dist = st == Status::Overlapping ? 0.0 : d.norm();
    out.distance = dist;
    if (st == Status::Overlapping) {
      // za and zb coincide in exact arithmetic (the origin is in the simplex); report one common
      // point, the midpoint, instead of two points that differ only by the rounding of λ.
      za = 0.5 * (za + zb);
      zb = za;
    }
    out.witnessA = poseA.apply(za);
    out.witnessB = poseA.apply(zb);
    if (st != Status::Overlapping && dist > 0) {
      Vec3 nrm = -d / dist;
      // With a triangle simplex the normal of its plane is far more accurate than the direction of
      // v when the distance is tiny (v is a difference of O(1) points: ~1e-16 / d relative error).
      if (n == 3) {
        Vec3 f = (y[1] - y[0]).cross(y[2] - y[0]);
        const Real fn = f.norm();
        if (fn > 0 && std::isfinite(fn)) {
          f /= fn;
          if (f.dot(nrm) < 0) f = -f;
          if (f.dot(nrm) > 0.999) nrm = f;
        }
      }
      out.normal = poseA.rotate(nrm);
    }
    if (cache) {
      cache->valid = true;
      cache->size = n;
      for (int i = 0; i < n; ++i) cache->localA[i] = pa[i], cache->localB[i] = lb[i];
      cache->hintA = hintA;
      cache->hintB = hintB;
      cache->hasNormal = false;
    }
  };

  // w = s_A(-dir) - s_B(dir), all in A's frame.
  // (Forced inline: GCC kept it out of line, a call per iteration.)
  auto supportPair = [&](const Vec3& dir, Vec3& outA, Vec3& localB) __attribute__((always_inline)) -> Vec3 {
    outA = a.support(-dir, hintA);
    localB = b.support(mulMatT(R, dir), hintB);
    return outA - (mulMat(R, localB) + t);
  };

  // Reduce the simplex to the supporting set W and renumber W to positions 0..|W|-1 (the
  // sub-algorithms list W in increasing position order, so compaction in place is safe).
  auto keepOnly = [&](SimplexSolution& w) {
    for (int i = 0; i < w.size; ++i) {
      const int k = w.ids[i];
      if (k != i) y[i] = y[k], pa[i] = pa[k], lb[i] = lb[k];
      w.ids[i] = i;
    }
    n = w.size;
  };

  SimplexSolution sol;  // barycentrics of the current simplex (ids = positions in y)
  Vec3 dir;             // search direction: v, or a more accurate direction of v from the sub-algorithm
  // Smooth pairs: a certified Newton answer becomes a one-point simplex (the support pair), and its
  // normal goes to the cache for the next query.
  auto finishNewton = [&](const detail::NewtonState& ns, int gjkIterations, Real lowerGjk) {
    n = 1;
    y[0] = ns.w, pa[0] = ns.pa, lb[0] = ns.lb;
    sol.size = 1, sol.ids[0] = 0, sol.lambda[0] = 1, sol.point = ns.w, sol.hasDirection = false;
    out.iterations = gjkIterations + ns.steps;
    out.newtonSteps += ns.steps;
    finish(Status::Separated, sol);
    // (-u·w <= ||w||; clipped at the reported distance against a last-bit rounding excess)
    out.lowerBound = std::clamp<Real>(std::max(lowerGjk, ns.lower), 0, out.distance);
    out.normal = poseA.rotate(ns.normal);  // the Newton direction: accurate even when touching
    if (cache) cache->hasNormal = true, cache->normalA() = ns.normal;
  };
  // Smooth pairs with rolling balls: an overlap certified by the support pair (sa, sl) along u
  // (A -> B, unit), w = sa - sb (detail::rollingBallContainsOrigin). The answer is that single
  // support pair (distance 0), with both witnesses at a point common to both cores: the rolling
  // balls of A at sa (centre sa - rA u) and of B at sb (centre sb + rB u) have the Minkowski
  // difference of radius r = rA + rB centred at c = w - r u, which holds the origin; splitting -c
  // in the ratio rA : rB gives x = sa - rA u - (rA / r) c in A's ball and, equally, in B's. (The
  // midpoint of the support pair, used before, can lie outside both cores: a point core inside an
  // ellipsoid got a witness 0.2 away from the point.)
  [[maybe_unused]] auto finishRollingOverlap = [&](const Vec3& u, const Vec3& w, const Vec3& sa, const Vec3& sl,
                                                   int iterations) {
    n = 1;
    y[0] = w, pa[0] = sa, lb[0] = sl;
    sol.size = 1, sol.ids[0] = 0, sol.lambda[0] = 1, sol.point = w, sol.hasDirection = false;
    out.iterations = iterations;
    finish(Status::Overlapping, sol);
    if constexpr (detail::kRollingPair<SA, SB>) {
      const Real rA = a.rollingRadius(), r = rA + b.rollingRadius();
      if (r > 0) {
        const Vec3 c = w - r * u;
        out.witnessA = out.witnessB = poseA.apply(Vec3(sa - rA * u - (rA / r) * c));
      }
    }
    // The next query of the pair tests the ball along u first (warm start below).
    if (cache) cache->hasNormal = true, cache->normalA() = u;
  };
  // The same after testing the ball (GJK's own iterates).
  [[maybe_unused]] auto rollingOverlap = [&](const Vec3& u, const Vec3& w, const Vec3& sa, const Vec3& sl,
                                             int iterations) -> bool {
    if constexpr (detail::kRollingPair<SA, SB>) {
      if (!opt.smoothNewton) return false;
      const Real scale = std::sqrt(std::max(sa.squaredNorm(), (sa - w).squaredNorm()));
      if (!detail::rollingBallContainsOrigin(a, b, u, w, scale)) return false;
      finishRollingOverlap(u, w, sa, sl, iterations);
      return true;
    }
    return false;
  };
  // Newton's support pair along u (A -> B) is GJK's along -u.
  auto pairAlong = [&](const Vec3& u, Vec3& outA, Vec3& localB) { return supportPair(Vec3(-u), outA, localB); };
  // Overlapping along u (support pair w, sa, sl): Newton on the overlap (detail::newtonOverlap) until
  // the rolling ball certifies it, usually in 0-3 steps; false (GJK goes on) if it cannot.
  [[maybe_unused]] auto overlapByNewton = [&](const Vec3& u, const Vec3& w, const Vec3& sa, const Vec3& sl) -> bool {
    if constexpr (detail::kRollingPair<SA, SB>) {
      if (!opt.smoothNewton || !(u.dot(w) > 0)) return false;
      detail::OverlapNewtonState ns;
      ns.u = u, ns.w = w, ns.sa = sa, ns.lb = sl;
      const bool ok = detail::newtonOverlap(a, b, R, tol::kEpaRelative, ns, pairAlong, /*classifyOnly=*/true);
      if (ok) finishRollingOverlap(ns.u, ns.w, ns.sa, ns.lb, ns.steps);
      out.newtonSteps += ns.steps;
      return ok;
    }
    return false;
  };
  if constexpr (detail::kNewtonPair<SA, SB>) {
    // Warm start of a smooth pair: Newton straight from the previous normal (one support pair).
    if (opt.smoothNewton && cache && cache->valid && cache->hasNormal) {
      detail::NewtonState ns{cache->normalA(), Vec3::Zero(), Vec3::Zero(), Vec3::Zero(), Vec3::Zero(), 0, 0};
      ns.w = pairAlong(ns.u, ns.pa, ns.lb);
      if (detail::newtonDistance(a, b, R, opt, ns, pairAlong)) {
        finishNewton(ns, 0, -std::numeric_limits<Real>::infinity());
        return out;
      }
      out.newtonSteps += ns.steps;  // (a failed attempt's steps, not in `iterations`)
      if constexpr (detail::kRollingPair<SA, SB>) {
        if (overlapByNewton(ns.u, ns.w, ns.pa, ns.lb)) return out;
      }
    }
  }
  if (cache && cache->valid && cache->size > 0 && cache->size <= 4) {
    // Warm start: re-evaluate the cached simplex under the current poses (its points still lie on
    // the shapes) and take its point of minimum norm as the first direction.
    n = cache->size;
    for (int i = 0; i < n; ++i) {
      pa[i] = cache->localA[i];
      lb[i] = cache->localB[i];
      y[i] = pa[i] - (mulMat(R, lb[i]) + t);
    }
    sol = detail::runSubAlgorithm(y, n, false, opt);
    keepOnly(sol);
    v = sol.point;
    dir = sol.searchDirection();
    if (n == 4) {
      finish(Status::Overlapping, sol);
      return out;
    }
  } else {
    // Cold start: the CSO support point towards B's centre seen from A (usually near the origin).
    Vec3 d0 = -t;
    if (!(d0.squaredNorm() > 0)) d0 = -Vec3::UnitX();
    v = supportPair(d0, pa[0], lb[0]);
    if constexpr (detail::kRollingPair<SA, SB>) {
      if (overlapByNewton(Vec3(-d0.normalized()), v, Vec3(pa[0]), Vec3(lb[0]))) return out;
    }
    y[0] = v;
    n = 1;
    sol.size = 1;
    sol.ids[0] = 0;
    sol.lambda[0] = 1;
    sol.point = v;
    dir = v;
  }

  Real vv = v.squaredNorm();
  if (!std::isfinite(vv)) {
    out.message = "non-finite support point";
    finish(Status::Degenerate, sol);
    return out;
  }
  auto maxY2 = [&]() {
    Real m = 0;
    for (int i = 0; i < n; ++i) m = std::max(m, y[i].squaredNorm());
    return m;
  };
  Real ymax2 = maxY2();  // max ||y||^2 over the current simplex
  if (vv <= opt.touchTolerance * ymax2) {
    finish(Status::Overlapping, sol);
    return out;
  }

  // Best certified lower bound on the distance: every support point w along -v bounds the CSO by
  // the plane v·x >= v·w (weak duality), so d >= v·w / ||v||.
  Real lower = -std::numeric_limits<Real>::infinity();
  Vec3 lowerDir = Vec3::Zero();  // the direction whose support plane gave `lower` (the CSO on its + side)
  // On curved surfaces (quadrics, cones) GJK converges linearly and can stall in rounding with a
  // simplex whose vertices pair far-apart support points; restarting from the single support pair
  // along the current (now accurate) direction rebuilds a consistent simplex. The best simplex
  // seen is kept, so a restart can only improve the answer.
  struct Saved {
    Vec3 y[4], pa[4], lb[4];
    int n = 0;
    SimplexSolution sol;
    Real vv = std::numeric_limits<Real>::infinity();
    Real ownLower = -std::numeric_limits<Real>::infinity();  // support plane along its own direction
  } best;
  // The support plane along the current simplex's own direction (-inf until measured): ||v|| minus
  // it bounds both the distance's error and how far the CSO reaches past the plane normal to v,
  // i.e. the answer's consistency (its own gap).
  Real ownLower = -std::numeric_limits<Real>::infinity();
  int restarts = 0;
  Status exitStatus = Status::MaxIterations;
  // Curved pairs: ended by a stall (no progress in rounding), not by the progress test. (Set only
  // for them: the polyhedral instantiations stay as they were.)
  [[maybe_unused]] bool stall = false;
  auto stalled = [&](Real scale) {
    if (restarts >= opt.maxRestarts || !(std::sqrt(vv) - lower > opt.restartGap * scale)) return false;
    if (vv < best.vv) {
      for (int i = 0; i < n; ++i) best.y[i] = y[i], best.pa[i] = pa[i], best.lb[i] = lb[i];
      best.n = n, best.sol = sol, best.vv = vv, best.ownLower = ownLower;
    }
    ++restarts;
    v = supportPair(dir, pa[0], lb[0]);
    dir = v;
    y[0] = v;
    n = 1;
    sol.size = 1, sol.ids[0] = 0, sol.lambda[0] = 1, sol.point = v;
    vv = v.squaredNorm();
    ymax2 = vv;
    ownLower = -std::numeric_limits<Real>::infinity();
    return true;
  };

  // A stall's escape (curved pairs): the support along the current direction turned by
  // tol::kGjkEscapeTurn, four ways (±u, ±u', u and u' orthogonal to it). A direction that lies in a
  // flat face's plane to rounding ties every point of that face: a cylinder's cap plane ties its two
  // caps, 2 x half-length apart, and rounding picks either. A box touching a cylinder's rim, GJK
  // converging on chords of the rim (in the cap plane), got the far cap's point, which brings the
  // simplex no closer, and stalled "separated" at the chords' sagitta, ~1e-7 of the size, without a
  // certificate, restart after restart (validation §22 case A). A turned direction is no tie: its
  // support points are genuine, so their planes still bound the distance, and the first that brings
  // the simplex closer is taken as an iteration. Returns true if one did.
  [[maybe_unused]] int escapes = 0;
  auto escapeStall = [&]() -> bool {
    if constexpr (!detail::kCurvedPair<SA, SB>) {
      return false;
    } else {
      const Real dn = dir.norm();
      if (escapes >= tol::kGjkMaxEscapes || n >= 4 || !(dn > 0) || !std::isfinite(dn)) return false;
      ++escapes;
      const Vec3 u = dir.unitOrthogonal(), u2 = dir.cross(u) / dn;
      const Real turn = tol::kGjkEscapeTurn * dn;
      for (int q = 0; q < 4; ++q) {
        const Vec3 d = dir + (q < 2 ? (q == 0 ? turn : -turn) * u : (q == 2 ? turn : -turn) * u2);
        Vec3 sa, sl;
        const Vec3 w = supportPair(d, sa, sl);
        const Real lowerQ = d.dot(w) / d.norm();
        if (lowerQ > lower) lower = lowerQ, lowerDir = d;  // (a NaN leaves both)
        Vec3 ty[4], tpa[4], tlb[4];
        ty[0] = w, tpa[0] = sa, tlb[0] = sl;
        for (int i = 0; i < n; ++i) ty[i + 1] = y[i], tpa[i + 1] = pa[i], tlb[i + 1] = lb[i];
        SimplexSolution next = detail::runSubAlgorithm(ty, n + 1, false, opt);
        const Real nv = next.point.squaredNorm();
        if (!(nv < vv)) continue;
        for (int i = 0; i <= n; ++i) y[i] = ty[i], pa[i] = tpa[i], lb[i] = tlb[i];
        n = n + 1;
        keepOnly(next);
        sol = next;
        v = next.point;
        dir = next.searchDirection();
        vv = nv;
        ymax2 = maxY2();
        ownLower = -std::numeric_limits<Real>::infinity();
        if (opt.normTrace) opt.normTrace->push_back(std::sqrt(vv));
        return true;
      }
      return false;
    }
  };
  // After an escape: a tetrahedron or a touch ends the query as in the loop.
  auto escapedToContact = [&]() { return n == 4 || vv <= opt.touchTolerance * ymax2; };

  int newtonTries = 0;
  int tieGrowsLeft = tol::kGjkMaxTieGrows;
  for (int k = 1; k <= opt.maxIterations; ++k) {
    out.iterations = k;
    Vec3 sa, sl;
    const Vec3 w = supportPair(dir, sa, sl);      // w = s_A(-v) - s_B(v)
    const Real lowerK = dir.dot(w) / dir.norm();  // the plane dir·x >= dir·w bounds the CSO
    if constexpr (detail::kRollingPair<SA, SB>) {
      if (lowerK < 0 && rollingOverlap(Vec3(-dir.normalized()), w, sa, sl, k)) return out;
    }
    if (lowerK > lower) lower = lowerK, lowerDir = dir;  // (a NaN leaves both)
    ownLower = lowerK;
    const Real scale = std::sqrt(std::max(ymax2, w.squaredNorm()));
    if constexpr (detail::kNewtonPair<SA, SB>) {
      // Newton finishes (detail::newtonDistance), and also certifies GJK's own converged iterate
      // with a normal far more accurate than w's direction when the distance is tiny. First try once
      // the projections overlap by at most kGjkNewtonStart x scale (Newton gives up at once if its
      // model says the bodies overlap); once more when GJK has certified separation.
      if (opt.smoothNewton && newtonTries < 2 && lowerK > (newtonTries == 0 ? -tol::kGjkNewtonStart * scale : 0.0)) {
        ++newtonTries;
        detail::NewtonState ns{-dir.normalized(), sa, sl, w, Vec3::Zero(), 0, 0};
        if (detail::newtonDistance(a, b, R, opt, ns, pairAlong)) {  // certified: GJK's point not needed
          out.restarts = restarts;
          finishNewton(ns, k, lower);
          return out;
        }
        out.newtonSteps += ns.steps;  // (a failed attempt's steps, not in `iterations`)
      }
    }
    // Progress test (Alg. 5 line 8, divided by ||v||; the printed `continue` means terminate),
    // written so that a NaN terminates. v is always a genuine CSO point (cold or warm start), so
    // ||v|| is an upper bound and the test is valid from k = 1.
    const Real upper = std::sqrt(vv);
    const Real gap = upper - lowerK;
    if (!(gap > opt.relTolerance * upper + opt.absTolerance * scale)) {
      exitStatus = Status::Separated;
      // A NaN gap certifies nothing: S2D's direction p_O is exactly zero when the origin lies in the
      // plane of its triangle to rounding (an ellipsoid against a long cylinder overlapping by
      // 3.6e-7 ended "separated" at 1.5e-10 that way), and the support along it is arbitrary.
      if constexpr (detail::kCurvedPair<SA, SB>) stall = std::isnan(gap);
      break;
    }
    // w already in the simplex: no further progress possible.
    // (All four slots, masked by i < n: a loop over n mispredicts its exit; the slots beyond n hold
    // earlier points or zeros, never read unmasked.)
    bool dup = false;
#if defined(__SSE2__)
    // (x and y compared in one packed comparison: a scalar double == costs two flag tests each)
    {
      const __m128d wxy = _mm_loadu_pd(w.data()), wz = _mm_set_sd(w.z());
      int hits = 0;
      for (int i = 0; i < 4; ++i) {
        const int xy = _mm_movemask_pd(_mm_cmpeq_pd(_mm_loadu_pd(y[i].data()), wxy));
        const int z = _mm_movemask_pd(_mm_cmpeq_sd(_mm_set_sd(y[i].z()), wz)) & 1;
        hits |= ((xy == 3) & z) << i;
      }
      dup = (hits & ((1 << n) - 1)) != 0;
    }
#else
    for (int i = 0; i < 4; ++i)
      dup |= (i < n) & (y[i].x() == w.x()) & (y[i].y() == w.y()) & (y[i].z() == w.z());
#endif
    if (dup) {
      if (escapeStall()) {
        if (escapedToContact()) {
          finish(Status::Overlapping, sol);
          return out;
        }
        continue;
      }
      if (stalled(scale)) continue;
      exitStatus = Status::Separated;
      if constexpr (detail::kCurvedPair<SA, SB>) stall = true;
      break;
    }
    // τ = {w} ∪ W, newest first (n <= 3 here; all three slots move, which is cheaper than a loop
    // whose exit mispredicts).
    for (int i = 3; i > 0; --i) y[i] = y[i - 1], pa[i] = pa[i - 1], lb[i] = lb[i - 1];
    y[0] = w, pa[0] = sa, lb[0] = sl;
    ++n;
    SimplexSolution next = detail::runSubAlgorithm(y, n, true, opt);
    Real nv = next.point.squaredNorm();
    if (!(nv < vv)) {
      // The tailored search assumes the newest vertex supports ν (§3.2.2); in rounding that can fail
      // on nearly flat simplices (curved surfaces). Search every region before calling it a stall.
      const SimplexSolution full = detail::runSubAlgorithm(y, n, false, opt);
      const Real fv = full.point.squaredNorm();
      // (or a tie that keeps every vertex, below, which the tailored search missed; a NaN is neither)
      if (fv < vv || (full.size == n && next.size != n && fv <= vv * (1 + tol::kGjkTieGrowth))) next = full, nv = fv;
    }
    // A tie in rounding that grows the simplex (every vertex kept, the new one included) is progress
    // too: near a CSO vertex the norm of the nearest point is flat to second order, so a step of 1e-9
    // towards the right face leaves ||v||^2 the same to the last bits (either way) while v's
    // direction turns by 1e-8 (two segments crossing 1e-9 from their ends stalled on an edge, the
    // normal that far off). At most tol::kGjkMaxTieGrows per query, so GJK still ends.
    const bool tieGrows = next.size == n && tieGrowsLeft > 0 && nv <= vv * (1 + tol::kGjkTieGrowth);
    if (tieGrows && !(nv < vv)) --tieGrowsLeft;
    if (!(nv < vv) && !tieGrows) {
      if constexpr (detail::kCurvedPair<SA, SB>) {
        // No descent although w lies beyond the origin along -v: in exact arithmetic conv(W ∪ {w})
        // then holds a point closer than v, so the rounding of the volume forms decided. On a long
        // CSO turned obliquely to the axes (an ellipsoid against a long thin cone, cylinder or
        // segment, in the ellipsoid's frame) GJK's tetrahedron is a sliver tens long, ~1e-3 wide,
        // and the origin sits ~1e-12 from its face W: the cofactor of that face, a volume of
        // ~1e-13, comes from 3x3 determinants of coordinates ~25 whose rounding is ~1e-12
        // (Montanari 2017 §4.2, Fig. 4.6: -3.6e-12 for an exact 0 with coordinates of that size),
        // so its sign, and with it "origin inside", was lost and GJK stalled "separated" at ~1e-12
        // over an overlap of up to ~1e-4. (With the long body first its axis is a coordinate axis,
        // the cross-axis coordinates are small, and the same volumes are exact enough.) Exact
        // signs (the adaptive predicates §4.2 recommends, Shewchuk's) settle it: all four
        // cofactors of the sign of det M = the origin inside, an overlap as certain as GJK-TD's
        // exact enclosure tests. (Curved pairs only: polyhedral pairs end finitely on the CSO's
        // vertices, and this branch leaves their answers as they were.)
        SimplexSolution enclosed;
        if (n == 4 && detail::tetrahedronEnclosesOriginExactly(y, enclosed)) {
          out.restarts = restarts;
          finish(Status::Overlapping, enclosed);
          return out;
        }
      }
      // No descent (rounding): keep the previous simplex, which is the best answer available.
      for (int i = 0; i < n - 1; ++i) y[i] = y[i + 1], pa[i] = pa[i + 1], lb[i] = lb[i + 1];
      --n;
      if (std::isnan(nv)) {
        out.message = "sub-algorithm produced NaN";
        exitStatus = Status::Degenerate;
        break;
      }
      if (escapeStall()) {
        if (escapedToContact()) {
          finish(Status::Overlapping, sol);
          return out;
        }
        continue;
      }
      if (stalled(scale)) continue;
      exitStatus = Status::Separated;
      if constexpr (detail::kCurvedPair<SA, SB>) stall = true;
      break;
    }
    keepOnly(next);
    sol = next;
    v = next.point;
    dir = next.searchDirection();
    vv = nv;
    ownLower = -std::numeric_limits<Real>::infinity();
    if (opt.normTrace) opt.normTrace->push_back(std::sqrt(vv));
    if (n == 4) {
      finish(Status::Overlapping, sol);
      return out;
    }
    ymax2 = maxY2();
    if (vv <= opt.touchTolerance * ymax2) {
      finish(Status::Overlapping, sol);
      return out;
    }
  }
  // The simplex saved at a stall comes back if it is nearer; when the two norms agree to GJK's
  // tolerance, only if its own gap is no larger: near a CSO vertex the norm is flat to second order
  // while the direction moves to first order. Two segments crossing 1e-9 from their ends (the
  // contact hunt's 20261127 2 2 3 0 51) stalled on an edge whose direction was 9e-9 rad off (own
  // gap 1.1e-8); the restart ended on the right face with an own gap of 7e-18 and a norm 7e-18
  // larger in rounding, and the edge came back. (A nearer-by-more-than-tolerance saved simplex
  // still wins: on curved pairs its distance is the better one, by the exact-distance oracle.)
  const Real lastNorm = std::sqrt(vv), bestNorm = std::sqrt(best.vv);
  const bool bestNearer = bestNorm < lastNorm - (opt.relTolerance * lastNorm + opt.absTolerance * std::sqrt(maxY2()));
  if (best.vv < vv && (bestNearer || !(lastNorm - ownLower < bestNorm - best.ownLower))) {
    for (int i = 0; i < best.n; ++i) y[i] = best.y[i], pa[i] = best.pa[i], lb[i] = best.lb[i];
    n = best.n, sol = best.sol, vv = best.vv, ownLower = best.ownLower;
  }
  // A restart only happens after a stall, which is a legitimate end of GJK: running out of
  // iterations while trying to improve on it still leaves that answer.
  if (exitStatus == Status::MaxIterations && restarts > 0) {
    exitStatus = Status::Separated;
    if constexpr (detail::kCurvedPair<SA, SB>) stall = true;
  }
  // Curved pairs out of iterations whose distance the best support plane seen certifies (the
  // progress test with that plane instead of the last one): across two parallel flat faces (a
  // cylinder's cap on another's, a thin disc) each new direction's support is a rim point that
  // swings round the rim, so the last plane stays poor while an earlier one already bounds the
  // distance to the last bit. The iterations were not wasted: they sharpen v's direction, i.e.
  // the normal and witnesses; only the status changes (validation §22 C: 95 pairs of the contact
  // hunt ended "max_iterations" with lower bound = distance).
  if constexpr (detail::kCurvedPair<SA, SB>) {
    const Real upper = std::sqrt(vv);
    if (exitStatus == Status::MaxIterations &&
        upper - lower <= opt.relTolerance * upper + opt.absTolerance * std::sqrt(maxY2()))
      exitStatus = Status::Separated;
  }
  out.restarts = restarts;
  finish(exitStatus, sol);
  // "separated" promises distance > 0 with a proof. A stall is reported as a touch instead when
  //  - its witnesses meet to machine precision (the touch test of Alg. 5 line 13 on the reported
  //    distance): two identical flat bodies at one pose ended "separated" at distance 0 with a zero
  //    normal. (A few 1e-16, the rounding of B's pose relative to A's, stays "separated": the
  //    resolution the near-contact sweep holds GJK to.)
  //  - or the distance is tiny (1e-9 of the CSO's size) and the best support plane leaves the CSO
  //    clearly on both sides of the origin (lower bound below -1e-6 of that size; a separated box
  //    pair at 1e-9 ends near -1.5e-7 of it): with an elongated CSO (an ellipsoid and a long
  //    cylinder, cone or segment) GJK ended "separated" at 1e-15 .. 2e-13 with the cores overlapping
  //    by 0.01 .. 0.79 (lower bounds -1e-2 of the size), and contact() took the cores for apart.
  //    contact() now expands the polytope, which finds the depth.
  //  - or, for a curved pair (kCurvedPair), the distance is tiny (1e-8 of the CSO's size) and no
  //    support plane certified a positive lower bound: a stall is then GJK's rounding floor, not a
  //    proof. With a long CSO turned obliquely to the axes (an ellipsoid against a cone, cylinder
  //    or segment 20 .. 80 long), GJK's sliver simplices resolve the distance only to ~1e-9 of the
  //    size; most such stalls over a real overlap are now settled exactly in the no-descent branch
  //    above, the rest (0.4 % of ellipsoid-long body pairs overlapping by 1e-10 .. 1e-4, at up to
  //    1.9e-9 of the size) end here, and contact() expands. Polyhedral pairs end finitely on the
  //    CSO's vertices and keep the two rules above (a box pair separated by 1e-9 has no positive
  //    bound either: its v, a difference of O(1) points, points ~1e-7 rad astray).
  // (The first two found by bad-input hunts, 2026-11-27; the third by the sweep of
  // PenetrationElongated.EllipsoidAgainstLongThinBodiesShallowSweep, 2026-11-27.)
  if constexpr (detail::kCurvedPair<SA, SB>) {
    if (out.status == Status::Separated && stall && !(lower > 0) && n == 2) {
      // One more support plane for a stalled edge: the nearest point v of an edge is orthogonal to
      // it, but its rounded coordinates (~1e-16 of the CSO's size, absolute) tilt it out of that
      // plane by up to ~1e-16 x size / |v|, and on an edge L long (an ellipsoid against a long
      // segment or cylinder, L ~ 20 .. 80) the support plane along the tilted direction loses
      // ~L x tilt of its offset: pairs apart by up to ~1e-6 kept a lower bound <= 0. Along v with
      // the tilt projected out only a turn about the edge remains, which costs second order.
      const Vec3 e = y[1] - y[0];
      if (const Real ee = e.squaredNorm(); ee > 0) {
        const Vec3 across = sol.point - (sol.point.dot(e) / ee) * e;
        if (const Real len = across.norm(); len > 0 && std::isfinite(len)) {
          Vec3 sa, sl;
          const Real bound = across.dot(supportPair(across, sa, sl)) / len;
          if (bound > lower) lower = bound, lowerDir = across;  // (a NaN leaves it)
        }
      }
    }
  }
  if (out.status == Status::Separated) {
    const Real size2 = maxY2(), size = std::sqrt(size2);
    const bool touch = out.distance * out.distance <= opt.touchTolerance * size2;
    const bool unproven = lower < -1e-6 * size && !(out.distance > 1e-9 * size);
    const bool uncertified = detail::kCurvedPair<SA, SB> && stall && !(lower > 0) && !(out.distance > 1e-8 * size);
    if (touch || unproven || uncertified) {
      out.normal.setZero();  // (as for any overlap: zero when the cores touch or overlap)
      finish(Status::Overlapping, sol);
    }
  }
  // A separated answer within ~1e-12 of the support points' magnitude of touching: its normal, the
  // direction of the witnesses' difference (or of GJK's last triangle), is then a difference of
  // O(1) points at the rounding level and can point anywhere (its error is ~1e-16 x size /
  // distance), while the support plane that certified the lower bound is accurate. A sphere's centre
  // (a point core) within ~1e-16 of an ellipsoid's surface ended "separated" at 1e-16 with a normal
  // 36 degrees off, along which the cores overlap by 0.1 (GJK's simplex points lie ~1e-8 from the
  // origin, so the touch test above, scaled by them, did not apply); contact() gave the right depth
  // along that normal (a contact hunt, 2026-11-27). The certifying direction replaces the reported
  // one when its support plane is better by more than the rounding of the support points (one more
  // support pair, for such pairs only).
  if (out.status == Status::Separated && lower > 0 && lowerDir.squaredNorm() > 0) {
    Real psize2 = 0;
    for (int i = 0; i < n; ++i) psize2 = std::max(psize2, std::max(pa[i].squaredNorm(), (pa[i] - y[i]).squaredNorm()));
    const Real psize = std::sqrt(psize2);
    // (At such distances the witnesses stay consistent with the new normal to ~2e-12 x size.)
    if (!(out.distance > 1e-12 * psize)) {
      const Vec3 reported = poseA.rotateInverse(out.normal);
      Vec3 sa, sl;
      // (the plane along -reported, GJK's direction for that normal)
      const Real sepReported = -reported.dot(supportPair(Vec3(-reported), sa, sl));
      if (lower - sepReported > tol::kGjkRestartGap * psize) out.normal = poseA.rotate(Vec3(-lowerDir.normalized()));
    }
  }
  // (clipped at the reported distance: at convergence the two agree to the last bit or so)
  out.lowerBound = std::clamp<Real>(lower, 0, std::max<Real>(out.distance, 0));
  if constexpr (detail::kCurvedPair<SA, SB>) {
    // A second opinion on an uncertified stall: "separated" with no support plane that proves it. Its
    // distance is an upper bound only (a genuine point of the CSO), and the rules above keep such a
    // stall as "separated" once it exceeds 1e-8 of the CSO's size. The same query in the other
    // order runs in B's frame, where the rounding differs: a box against a cylinder 400 times its
    // size whose top rim it touches (exact distance in [-9.4e-15, 5.2e-14]) stalled box first at
    // 3.1e-5 (three restarts to the same floor: in the box's frame the rim's chords lie in the cap
    // plane only to rounding, so the cylinder's support along a chord's inward normal flipped
    // between its two caps, 600 apart) and contact() missed the contact; cylinder first, in the
    // plane's own frame, GJK certified 5.2e-14 (validation §22 case A). Both answers bound the
    // distance from above, so the other order's is taken when it proves separation, finds the
    // bodies touching or overlapping, or is smaller. Once per query at most (the second run does
    // not ask again), and only on such stalls: polyhedral pairs never reach it.
    // A stall that proves separation but leaves its distance uncertified (the best support plane
    // further below it than GJK's own tolerance) asks too: a cylinder against a capsule's core
    // 1.4e-9 away, face to face, stalled cylinder first at 1.4e-10 above the exact distance after
    // three restarts, while capsule first GJK certified it to the last bit (the contact hunt's
    // oracle failures, validation §22 A). Both distances are upper bounds and both planes lower
    // bounds: the smaller distance is taken, with the larger of the two bounds.
    const bool proven = out.status == Status::Separated && lower > 0;
    const bool loose =
        proven && !(out.distance - lower <= opt.relTolerance * out.distance + opt.absTolerance * std::sqrt(maxY2()));
    if (out.status == Status::Separated && stall && (!proven || loose) && !detail::gjkSecondOpinionRunning) {
      GjkOptions o = opt;
      o.normTrace = nullptr;
      detail::gjkSecondOpinionRunning = true;
      DistanceResult s = gjkDistance(b, poseB, a, poseA, o, nullptr);
      detail::gjkSecondOpinionRunning = false;
      const bool proves = s.status == Status::Separated && s.lowerBound > 0;
      const Real lowerBoth = std::max(out.lowerBound, s.lowerBound);
      // (a proven separation takes only a smaller distance)
      const bool smaller = s.status == Status::Separated && s.distance < out.distance;
      const bool take = smaller || (!proven && (s.status == Status::Overlapping || proves));
      if (take) {
        const int iterations = out.iterations + s.iterations, restartsBoth = out.restarts + s.restarts;
        const int newton = out.newtonSteps + s.newtonSteps;
        out = std::move(s);
        detail::swapSides(out);
        out.iterations = iterations, out.restarts = restartsBoth, out.newtonSteps = newton;
      }
      // (each bound is certified; at most the distance taken)
      if (proven && out.status == Status::Separated) out.lowerBound = std::min(lowerBoth, out.distance);
    }
  }
  return out;
}

}  // namespace proxima
