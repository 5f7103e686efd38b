// Point-simplex distance sub-algorithms: Signed Volumes (Montanari 2017 §3.1, Algorithms 1-4) and
// Johnson's sub-algorithm (Gilbert, Johnson & Keerthi 1988; thesis §2.5.2, Eqs. 2.20-2.25).
//
// Both return the point of minimum norm ν(τ) of the simplex τ = conv{y_0..y_{n-1}} (n <= 4) as a
// convex combination of the smallest supporting subset W with barycentric coordinates λ > 0.
#pragma once

#include <span>

#include "proxima/core/types.hpp"

namespace proxima {

/// Sign evaluation of the volume forms: plain double, or exact (filtered, GMP fallback; §4.2).
enum class SignMode { Fast, Exact };

/// Which sub-algorithm GJK uses.
enum class SubAlgorithm { SignedVolumes, Johnson };

/// Only the first `size` entries of ids and lambda are meaningful (the rest are left uninitialised:
/// this struct is created in the innermost loop of GJK).
struct SimplexSolution {
  int size = 0;   ///< |W|
  int ids[4];     ///< indices of W's vertices in the input simplex
  Real lambda[4];
  Vec3 point;     ///< ν(τ) = Σ λ_i y_i
  /// A more accurate direction of ν when available (interior of a triangle: the plane projection
  /// p_O); GJK searches along it. Only meaningful when hasDirection.
  Vec3 direction = Vec3::Zero();
  bool hasDirection = false;
  [[nodiscard]] const Vec3& searchDirection() const { return hasDirection ? direction : point; }
};

/// Counters of the recursive calls (tests check the thesis's call paths, e.g. Fig. 4.6).
struct SubAlgorithmStats {
  int s3d = 0, s2d = 0, s1d = 0;
  int johnsonSubsets = 0;   ///< subsets whose optimality test Johnson evaluated
  int johnsonBackups = 0;   ///< times Johnson's Backup procedure was needed
};

/// Standalone Signed Volumes: searches every face of the simplex (2^(m+1)-1 regions).
SimplexSolution signedVolumes(std::span<const Vec3> simplex, SignMode mode = SignMode::Fast,
                              SubAlgorithmStats* stats = nullptr);

/// GJK-tailored Signed Volumes (§3.2.2-3.2.3): y[0] is the newest vertex and must support ν, so
/// only the 2^m regions containing it are inspected; edge results are memoised within a call
/// (the notWids optimisation) so no region is inspected twice.
SimplexSolution signedVolumesGjk(std::span<const Vec3> simplex, SignMode mode = SignMode::Fast,
                                 SubAlgorithmStats* stats = nullptr);

/// Johnson's sub-algorithm, bottom-up over the subsets by Cramer's rule with recursive cofactors
/// (Eqs. 2.22-2.25). gjkMode: only subsets containing y[0]. backup: if no subset passes the
/// optimality test, fall back to the valid subset of least norm (Gilbert et al.'s Backup).
SimplexSolution johnson(std::span<const Vec3> simplex, bool gjkMode, bool backup = true,
                        SubAlgorithmStats* stats = nullptr);

/// CompareSigns (Montanari Eq. 3.4): 1 iff a and b are both > 0 or both < 0; zero and NaN give 0.
/// (Bitwise on the comparisons: the outcome is data-dependent, and short-circuit branches mispredict.)
inline bool compareSigns(Real a, Real b) { return ((a > 0) & (b > 0)) | ((a < 0) & (b < 0)); }

}  // namespace proxima
