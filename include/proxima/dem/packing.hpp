// Packing measures of the grain-packing study (Montanari thesis ch. 5, §5.3): grains in a box
// container under a lid. Void ratio e = (V_box − V_particles) / V_particles (Eq. 5.1) with the box
// volume taken under the lid, packing fraction φ = V_particles / V_box = 1 / (1 + e), coordination
// number Z = Σ_i C_i / N (Eq. 5.2, C_i = particle-particle contacts of particle i) and its
// distribution.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "proxima/dem/simulation.hpp"

namespace proxima::dem {

/// The container: an axis-aligned box (its floor is min.z, gravity along −z). The height of the
/// packing is the lowest free lid's plane when there is one, else max.z when the top is closed.
struct PackingBox {
  Vec3 min = Vec3::Zero(), max = Vec3::Zero();
  bool closedTop = false;
};

struct PackingMetrics {
  Real height = 0;            ///< lid height (or closed top), m
  bool lid = false;           ///< height comes from a free lid
  Real boxVolume = 0;         ///< footprint × (height − floor), m³
  Real particleVolume = 0;    ///< Σ particle volumes, m³
  Real voidRatio = 0;         ///< Eq. 5.1
  Real packingFraction = 0;   ///< V_particles / V_box
  /// Bulk packing fraction away from the walls (their ordering loosens the first layers): the
  /// volume of the particles whose centroid lies in the core (the box under the lid inset by
  /// `coreMargin` = 2 × the largest bounding radius on every side) over the core volume. NaN when
  /// the core is thinner than the margin in any direction (too few grains to mean anything). This is the figure to compare with packing fractions of large containers.
  Real coreFraction = 0;
  Real coreMargin = 0;
  /// Top of the highest particle (centroid + bounding radius), m. A lid above it by more than the
  /// largest bounding radius rests on nothing: the volumes then count the empty space under it.
  Real particleTop = 0;
  [[nodiscard]] bool lidAboveParticles() const { return lid && height > particleTop + coreMargin / 2; }
  Real coordinationNumber = 0;  ///< Eq. 5.2
  /// histogram[k] = number of particles touching exactly k other particles.
  std::vector<std::int64_t> coordinationHistogram;
};

/// Lid height: the plane of the lowest free lid whose normal points down; nullopt when none.
std::optional<Real> lidHeight(const Simulation& sim);

/// nullopt when the box has an open top and there is no lid (the packing has no defined volume).
std::optional<PackingMetrics> measurePacking(const Simulation& sim, const PackingBox& box);

}  // namespace proxima::dem
