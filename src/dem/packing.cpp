// Packing measures (see packing.hpp; Montanari thesis Eq. 5.1 and 5.2).
#include "proxima/dem/packing.hpp"

#include <algorithm>
#include <limits>

namespace proxima::dem {

std::optional<Real> lidHeight(const Simulation& sim) {
  std::optional<Real> h;
  for (const Wall& w : sim.walls())
    if (w.isLid() && w.normal.z() < -0.5) h = h ? std::min(*h, w.origin.z()) : w.origin.z();
  return h;
}

std::optional<PackingMetrics> measurePacking(const Simulation& sim, const PackingBox& box) {
  PackingMetrics m;
  if (auto h = lidHeight(sim)) {
    m.height = *h;
    m.lid = true;
  } else if (box.closedTop) {
    m.height = box.max.z();
  } else {
    return std::nullopt;
  }
  const Real footprint = (box.max.x() - box.min.x()) * (box.max.y() - box.min.y());
  m.boxVolume = footprint * std::max<Real>(0, m.height - box.min.z());
  m.particleVolume = sim.particleVolume();
  m.voidRatio = m.particleVolume > 0 ? (m.boxVolume - m.particleVolume) / m.particleVolume : 0;
  m.packingFraction = m.boxVolume > 0 ? m.particleVolume / m.boxVolume : 0;

  const std::size_t n = sim.particles().size();
  const auto& P = sim.particles();
  Real rmax = 0;
  m.particleTop = -std::numeric_limits<Real>::infinity();
  for (std::size_t i = 0; i < n; ++i) {
    const Real r = sim.shapes()[static_cast<std::size_t>(P.shape[i])].boundingRadius;
    rmax = std::max(rmax, r);
    m.particleTop = std::max(m.particleTop, P.position[i].z() + r);
  }
  m.coreMargin = 2 * rmax;
  const Vec3 lo = box.min + Vec3::Constant(m.coreMargin);
  const Vec3 hi = Vec3(box.max.x(), box.max.y(), m.height) - Vec3::Constant(m.coreMargin);
  Real inCore = 0;
  for (std::size_t i = 0; i < n; ++i)
    if ((P.position[i].array() >= lo.array()).all() && (P.position[i].array() <= hi.array()).all())
      inCore += sim.shapes()[static_cast<std::size_t>(P.shape[i])].volume;
  // A core thinner than the margin (about one grain diameter) holds too few centroids to mean anything.
  m.coreFraction = ((hi - lo).array() >= m.coreMargin).all() ? inCore / (hi - lo).prod()
                                                              : std::numeric_limits<Real>::quiet_NaN();
  std::vector<int> perParticle(n, 0);
  std::int64_t pairs = 0;
  for (const ContactInfo& c : sim.contacts())
    if (c.j >= 0) {
      ++perParticle[static_cast<std::size_t>(c.i)], ++perParticle[static_cast<std::size_t>(c.j)];
      ++pairs;
    }
  m.coordinationNumber = n ? 2.0 * static_cast<Real>(pairs) / static_cast<Real>(n) : 0;
  const int kmax = n ? *std::max_element(perParticle.begin(), perParticle.end()) : 0;
  m.coordinationHistogram.assign(static_cast<std::size_t>(kmax) + 1, 0);
  for (int k : perParticle) ++m.coordinationHistogram[static_cast<std::size_t>(k)];
  return m;
}

}  // namespace proxima::dem
