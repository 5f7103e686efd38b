// Signed Volumes (Montanari 2017 §3.1-3.2) and Johnson's sub-algorithm (§2.5.2).
#include "proxima/narrowphase/signed_volumes.hpp"

#include <cmath>
#include <limits>

#include "proxima/core/predicates.hpp"
#include "proxima/narrowphase/signed_volumes_solver.hpp"

namespace proxima {

SimplexSolution signedVolumes(std::span<const Vec3> simplex, SignMode mode, SubAlgorithmStats* stats) {
  detail::SvSolver<false> s(simplex.data(), mode == SignMode::Exact, stats);
  return s.solve(static_cast<int>(simplex.size()));
}

SimplexSolution signedVolumesGjk(std::span<const Vec3> simplex, SignMode mode, SubAlgorithmStats* stats) {
  detail::SvSolver<true> s(simplex.data(), mode == SignMode::Exact, stats);
  return s.solve(static_cast<int>(simplex.size()));
}

// Johnson's sub-algorithm: Δ_j({y_j}) = 1; Δ_j(X ∪ {y_j}) = Σ_{i∈X} Δ_i(X) (y_i·y_k - y_i·y_j) with
// k a fixed element of X (Eq. 2.23); X is the answer when Δ_i(X) > 0 for i in X and
// Δ_j(X ∪ {y_j}) <= 0 for j outside (Eq. 2.19, 2.25); λ_i = Δ_i(X) / Σ Δ(X).
SimplexSolution johnson(std::span<const Vec3> simplex, bool gjkMode, bool backup, SubAlgorithmStats* stats) {
  const int n = static_cast<int>(simplex.size());
  const Vec3* y = simplex.data();
  Real dot[4][4];
  for (int i = 0; i < n; ++i)
    for (int j = i; j < n; ++j) dot[i][j] = dot[j][i] = y[i].dot(y[j]);
  const int full = (1 << n) - 1;
  Real delta[16][4] = {};
  for (int i = 0; i < n; ++i) delta[1 << i][i] = 1;
  // Subsets in increasing cardinality so that Δ(X) is known before Δ(X ∪ {j}).
  for (int card = 1; card < n; ++card)
    for (int X = 1; X <= full; ++X) {
      if (__builtin_popcount(static_cast<unsigned>(X)) != card) continue;
      const int k = __builtin_ctz(static_cast<unsigned>(X));
      for (int j = 0; j < n; ++j) {
        if (X & (1 << j)) continue;
        Real s = 0;
        for (int i = 0; i < n; ++i)
          if (X & (1 << i)) s += delta[X][i] * (dot[i][k] - dot[i][j]);
        delta[X | (1 << j)][j] = s;
      }
    }
  auto make = [&](int X) {
    SimplexSolution r;
    r.point = Vec3::Zero();
    Real sum = 0;
    for (int i = 0; i < n; ++i)
      if (X & (1 << i)) sum += delta[X][i];
    for (int i = 0; i < n; ++i)
      if (X & (1 << i)) {
        r.ids[r.size] = i;
        r.lambda[r.size] = delta[X][i] / sum;
        r.point += r.lambda[r.size] * y[i];
        ++r.size;
      }
    return r;
  };
  auto positive = [&](int X) {
    for (int i = 0; i < n; ++i)
      if ((X & (1 << i)) && !(delta[X][i] > 0)) return false;
    return true;
  };
  for (int card = 1; card <= n; ++card)
    for (int X = 1; X <= full; ++X) {
      if (__builtin_popcount(static_cast<unsigned>(X)) != card) continue;
      if (gjkMode && !(X & 1)) continue;
      if (stats) ++stats->johnsonSubsets;
      if (!positive(X)) continue;
      bool optimal = true;
      for (int j = 0; j < n && optimal; ++j)
        if (!(X & (1 << j)) && delta[X | (1 << j)][j] > 0) optimal = false;
      if (optimal) return make(X);
    }
  if (stats) ++stats->johnsonBackups;
  SimplexSolution best;
  best.size = 1;
  best.ids[0] = 0;
  best.lambda[0] = 1;
  best.point = y[0];
  if (!backup) return best;  // without Backup, Johnson has no answer: return the newest vertex
  Real bestNorm = detail::kSvInf;
  for (int X = 1; X <= full; ++X) {
    if (gjkMode && !(X & 1)) continue;
    if (!positive(X)) continue;
    const SimplexSolution r = make(X);
    const Real nn = r.point.squaredNorm();
    if (nn < bestNorm) bestNorm = nn, best = r;
  }
  return best;
}

}  // namespace proxima
