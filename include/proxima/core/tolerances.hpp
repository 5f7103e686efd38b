// Every numerical tolerance of the geometry layer lives here, with its reason.
#pragma once

#include <limits>

#include "proxima/core/types.hpp"

namespace proxima::tol {

/// Unit roundoff of double (2^-53 ≈ 1.1e-16); the thesis's "machine precision" (Montanari §4.2).
inline constexpr Real kEps = std::numeric_limits<Real>::epsilon() * 0.5;

/// GJK relative progress test (Montanari Alg. 5 line 8, van den Bergen Eq. 2.18):
/// stop when ||v||^2 - v·w <= kGjkRelative * ||v||^2, i.e. the upper and lower distance bounds agree
/// to ~1e-14 relative. The thesis writes ε_rel^2; we store the squared value directly.
inline constexpr Real kGjkRelative = 64.0 * kEps;  // ≈ 7e-15

/// GJK absolute progress test: ||v||^2 - v·w <= kGjkAbsolute * ||v|| * scale, where scale is the
/// largest |y| in the simplex. Needed when ||v|| is close to the rounding level of the CSO
/// coordinates (touching bodies): there the relative test cannot be met. Bounds the distance error
/// by ~kGjkAbsolute * scale, i.e. a few ulps of the coordinates.
inline constexpr Real kGjkAbsolute = 16.0 * kEps;  // ≈ 1.8e-15

/// GJK contact test (Montanari Alg. 5 line 13, van den Bergen Eq. 2.17):
/// ||v||^2 <= kGjkTouch * max||y||^2 ⇒ the origin is on the CSO to machine precision (distance 0).
/// Written as a square: ||v|| <= 4 ulps of the coordinate magnitude.
inline constexpr Real kGjkTouch = (4.0 * kEps) * (4.0 * kEps);

/// GJK restarts after a stall (curved surfaces converge linearly and can stall in rounding with a
/// simplex that pairs far-apart support points): only while the certified gap ||v|| - lower bound
/// exceeds kGjkRestartGap x scale, and at most kGjkMaxRestarts times.
inline constexpr Real kGjkRestartGap = 256.0 * kEps;
inline constexpr int kGjkMaxRestarts = 3;

/// A curved pair's GJK stall is first met by support points along the current direction turned by
/// kGjkEscapeTurn (relative) four ways, before any restart (gjkDistance): a tie in the support
/// (a cylinder's two caps along a direction in the cap plane) that rounding resolves to the far
/// point leaves GJK no closer point; a turned direction picks the near one. At most kGjkMaxEscapes per query.
inline constexpr Real kGjkEscapeTurn = 1e-6;
inline constexpr int kGjkMaxEscapes = 16;

/// GJK takes a step whose new simplex keeps every vertex and whose ||v||^2 is no more than
/// kGjkTieGrowth (relative) above the last one as progress: near a CSO vertex the norm is flat to
/// second order while the direction turns to first order (gjkDistance). At most kGjkMaxTieGrows per
/// query, so GJK still ends.
inline constexpr Real kGjkTieGrowth = 8.0 * kEps;
inline constexpr int kGjkMaxTieGrows = 4;

/// Iteration cap of GJK. Polytopes converge in far fewer (finite termination); smooth shapes
/// converge linearly and need at most ~100 iterations to reach the relative test above.
inline constexpr int kGjkMaxIterations = 128;

/// Smooth pairs (both shapes provide the Hessian of their support function, e.g. ellipsoids): once
/// GJK's direction (nearly) separates the bodies, Newton's method on the unit sphere finishes the
/// distance (quadratic instead of GJK's linear convergence), with at most this many steps before
/// falling back to GJK. It typically needs 2-5.
inline constexpr int kGjkNewtonIterations = 24;
/// ... and it starts as soon as GJK's direction separates the bodies' projections or leaves them
/// overlapping by at most kGjkNewtonStart x scale (scale = largest |CSO point| seen).
inline constexpr Real kGjkNewtonStart = 0.05;

/// GJK-TD expansion (Descantes 2019 Alg. 3): stop when the support value along the closest face's
/// normal exceeds the face's plane distance by <= kEpaRelative x scale (scale = largest |vertex| of
/// the expanded polytope). Polytopes normally end earlier and exactly (no support point strictly
/// beyond the face by the exact orient3d predicate); this bounds curved shapes, whose polytope
/// only approaches the surface.
inline constexpr Real kEpaRelative = 1e-12;

/// Cap on GJK-TD expansions (reported as MaxIterations, never silent). Polytopes need a handful
/// (4 in Descantes' Fig. 9); the cap and the capacity below bound curved shapes.
inline constexpr int kEpaMaxExpansions = 250;
/// Curved shapes: the expansion first stops at kEpaCurvedStart x scale, then Newton's method on
/// the support function finishes (at most kEpaNewtonIterations steps, finite differences with
/// direction step kEpaNewtonStep, backtracking) until the predicted decrease of the overlap is
/// below kEpaNewtonDecrease x scale, i.e. the rounding of the overlap itself. Where the optimum is
/// not smooth (flat caps, apexes, polytope facets) the expansion resumes at kEpaRelative.
inline constexpr Real kEpaCurvedStart = 1e-6;
inline constexpr int kEpaNewtonIterations = 16;
inline constexpr Real kEpaNewtonStep = 1e-7;
inline constexpr Real kEpaNewtonDecrease = 4.0 * kEps;

/// Smooth overlapping pairs (ellipsoids, a sphere's point core against an ellipsoid): analytic
/// Newton on the CSO support function, certified by the rolling-ball bound (gjk.hpp,
/// detail::newtonOverlap) to kGjkRelative (kEpaRelative at the rounding floor), before any polytope
/// is built; at most this many steps (it typically needs 0-3 warm, 3-6 cold), else the expansion
/// path answers.
inline constexpr int kOverlapNewtonIterations = 24;
/// ... of which at most this many with the overlap still beyond the rolling balls (uncertifiable).
inline constexpr int kOverlapNewtonOutsideSteps = 6;

/// Points a warm GJK-TD query may insert from its pair cache's ring (ContactCache::kRing).
inline constexpr int kEpaRingPoints = 9;
/// Vertex capacity of the expanded polytope (fixed arrays: no allocation per query): the start, the
/// expansions and the ring.
inline constexpr int kEpaMaxVertices = kEpaMaxExpansions + 8 + kEpaRingPoints;

/// Revised common-plane methods (Descantes 2019 Alg. 1-2), feature extraction:
/// adjacent hull triangles whose unit normals differ by less than this form one face (Qhull's
/// fanned facets are coplanar to roundoff, ~1e-16; distinct facets of real grains differ far more);
inline constexpr Real kCommonPlaneCoplanarNormal = 1e-12;
/// a triangle whose area is below this fraction of its longest edge squared is a sliver with no
/// usable normal (it belongs to no face);
inline constexpr Real kCommonPlaneSliverArea = 1e-14;
/// edge pairs with sin(angle) below this are parallel: they span no facet of A - B of their own.
inline constexpr Real kCommonPlaneParallelSin = 1e-12;

/// Polytope construction: points closer than kHullMergeRelative x extent are merged before Qhull
/// (near-duplicates make it emit non-convex facets); a cloud within kHullFlatRelative x extent of a
/// plane (line) is treated as flat (a needle).
inline constexpr Real kHullMergeRelative = 1e-12;
inline constexpr Real kHullFlatRelative = 128.0 * kEps;

/// A pose's rotation must satisfy |RᵀR - I| < kRotationOrthonormality (input validation).
inline constexpr Real kRotationOrthonormality = 1e-9;

/// Hill-climbing over polytope adjacency is used by default from this vertex count on. Below it
/// the brute-force scan (4-wide with AVX2 where the CPU has it) is as fast or faster: measured with
/// proxima_bench on icospheres, cold queries at N = 42 take 1.38 µs brute force vs 1.65 µs climbing,
/// and at N = 162 climbing wins (0.35 vs 0.61 µs distant, equal close, 0.25 vs 0.34 µs warm).
inline constexpr int kHillClimbMinVertices = 64;

/// Window of a remembered brute-force support search (SupportMemo), relative to the polytope's
/// radius: the vertices whose height along the searched direction lies within it of the maximum are
/// the candidates; the next direction may turn by up to about half the gap to the highest vertex
/// outside, over the radius (so at least ~0.005), before the scan is needed again. On the settled
/// polyhedra10k bed (instruction_profile.py, 10 steps; scratch builds that read the window from the
/// environment) 0.05 / 0.01 / 0.001 gave 4 957 / 4 929 / 4 917 instructions per narrow-phase call
/// (more candidates to compare at a wider window) with no new scan in the steady steps at any of
/// them; the narrower window expires sooner in a moving flow.
inline constexpr Real kSupportMemoWindow = 0.01;

/// Supported magnitudes of sizes and coordinates (input validation). The queries square and
/// multiply squared lengths: at 1e78 a box-ellipsoid distance came out 2e78 instead of 1e78 and
/// the contact query `degenerate`; below 1e-75 depths of 2e-100 read 0. Non-zero sizes and
/// extents must lie in [kMinMagnitude, kMaxMagnitude], coordinates within ±kMaxMagnitude.
inline constexpr Real kMaxMagnitude = 1e60;
inline constexpr Real kMinMagnitude = 1e-60;

}  // namespace proxima::tol
