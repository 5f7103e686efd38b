#include "proxima/dem/material.hpp"

#include <cmath>
#include <map>
#include <mutex>
#include <numbers>

namespace proxima::dem {

std::string tooManyMaterials(std::size_t count) {
  return std::to_string(count) + " materials; at most " + std::to_string(kMaxMaterials) +
         " (the contact table holds a law for every pair of materials)";
}

std::string_view toString(ContactModel m) {
  return m == ContactModel::LinearSpringDashpot ? "linear" : "hertz_mindlin";
}

namespace {

// Rebound speed of the dimensionless damped contact x'' = -max(0, x^p + c x^q x'), x(0) = 0, x'(0) = 1.
// Linear spring-dashpot: (p, q) = (1, 0); Hertz with Tsuji-type damping: (3/2, 1/4). The force is
// clamped at 0 as in the engine (no cohesion), so the particles separate when it vanishes.
Real reboundSpeed(Real c, Real p, Real q) {
  auto accel = [&](Real x, Real v) {
    const Real xp = x > 0 ? x : 0;
    const Real f = std::pow(xp, p) + c * std::pow(xp, q) * v;
    return f > 0 ? -f : 0.0;
  };
  const Real h = 2e-4;
  Real x = 0, v = 1;
  for (int n = 0; n < 10'000'000; ++n) {
    // classical RK4
    const Real k1x = v, k1v = accel(x, v);
    const Real k2x = v + 0.5 * h * k1v, k2v = accel(x + 0.5 * h * k1x, v + 0.5 * h * k1v);
    const Real k3x = v + 0.5 * h * k2v, k3v = accel(x + 0.5 * h * k2x, v + 0.5 * h * k2v);
    const Real k4x = v + h * k3v, k4v = accel(x + h * k3x, v + h * k3v);
    const Real xn = x + h / 6 * (k1x + 2 * k2x + 2 * k3x + k4x);
    const Real vn = v + h / 6 * (k1v + 2 * k2v + 2 * k3v + k4v);
    if (vn < 0 && accel(xn, vn) == 0.0) return -vn;  // force vanished: free flight from here on
    if (xn <= 0) return -vn;                          // overlap closed
    x = xn;
    v = vn;
  }
  return 0;
}

Real solveDamping(Real e, Real p, Real q) {
  if (!(e < 1)) return 0;
  static std::mutex mutex;
  static std::map<std::tuple<Real, Real, Real>, Real> cache;
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (auto it = cache.find({e, p, q}); it != cache.end()) return it->second;
  }
  Real lo = 0, hi = 1;
  while (reboundSpeed(hi, p, q) > e && hi < 1e6) hi *= 2;
  for (int it = 0; it < 60 && hi - lo > 1e-12 * hi; ++it) {
    const Real mid = 0.5 * (lo + hi);
    (reboundSpeed(mid, p, q) > e ? lo : hi) = mid;
  }
  const Real c = 0.5 * (lo + hi);
  std::lock_guard<std::mutex> lock(mutex);
  cache[{e, p, q}] = c;
  return c;
}

}  // namespace

Real hertzDampingFor(Real restitution) { return solveDamping(restitution, 1.5, 0.25); }
Real hertzRestitutionFor(Real alpha) { return reboundSpeed(alpha, 1.5, 0.25); }
Real linearDampingRatioFor(Real restitution) { return 0.5 * solveDamping(restitution, 1.0, 0.0); }

Real effectiveModulus(const Material& a, const Material& b) {
  return 1 / ((1 - a.poissonRatio * a.poissonRatio) / a.youngsModulus +
              (1 - b.poissonRatio * b.poissonRatio) / b.youngsModulus);
}

Real hertzMaxOverlap(Real mEff, Real rEff, Real eEff, Real speed) {
  return std::pow(15 * mEff * speed * speed / (16 * eEff * std::sqrt(rEff)), 0.4);
}

Real hertzStaticOverlap(Real force, Real rEff, Real eEff) {
  return std::pow(force / (4.0 / 3.0 * eEff * std::sqrt(rEff)), 2.0 / 3.0);
}

Real rayleighTime(const Material& m, Real radius) {
  return std::numbers::pi * radius * std::sqrt(m.density / m.shearModulus()) / (0.1631 * m.poissonRatio + 0.8766);
}

Real hertzContactTime(Real mEff, Real rEff, Real eEff, Real speed) {
  return 2.868 * std::pow(mEff * mEff / (rEff * eEff * eEff * speed), 0.2);
}

ContactTable::ContactTable(const std::vector<Material>& materials, ContactModel model)
    : n_(static_cast<int>(materials.size())), model_(model) {
  laws_.resize(static_cast<std::size_t>(n_ * n_));
  for (int a = 0; a < n_; ++a)
    for (int b = 0; b < n_; ++b) {
      const Material& ma = materials[static_cast<std::size_t>(a)];
      const Material& mb = materials[static_cast<std::size_t>(b)];
      PairLaw& l = laws_[static_cast<std::size_t>(a * n_ + b)];
      l.model = model;
      l.effectiveModulus = effectiveModulus(ma, mb);
      l.effectiveShearModulus =
          1 / ((2 - ma.poissonRatio) / ma.shearModulus() + (2 - mb.poissonRatio) / mb.shearModulus());
      l.linearStiffness = 0.5 * (ma.linearStiffness + mb.linearStiffness);
      l.rollingDamping = 0.5 * (ma.rollingDamping + mb.rollingDamping);
      l.hertzK = 4.0 / 3.0 * l.effectiveModulus;
      l.sqrtHertzK = std::sqrt(l.hertzK);
      l.mindlinK = 8 * l.effectiveShearModulus;
      l.sqrtMindlinK = std::sqrt(l.mindlinK);
    }
  for (int a = 0; a < n_; ++a)
    for (int b = 0; b < n_; ++b) {
      const Material& ma = materials[static_cast<std::size_t>(a)];
      const Material& mb = materials[static_cast<std::size_t>(b)];
      override(a, b, 0.5 * (ma.restitution + mb.restitution), 0.5 * (ma.friction + mb.friction),
               0.5 * (ma.rollingFriction + mb.rollingFriction));
    }
}

void ContactTable::override(int a, int b, Real restitution, Real friction, Real rollingFriction) {
  for (auto [x, y] : {std::pair{a, b}, std::pair{b, a}}) {
    PairLaw& l = laws_[static_cast<std::size_t>(x * n_ + y)];
    l.restitution = restitution;
    l.friction = friction;
    l.rollingFriction = rollingFriction;
    l.dampingCoefficient = model_ == ContactModel::HertzMindlin ? hertzDampingFor(restitution)
                                                                : 2 * linearDampingRatioFor(restitution);
  }
}

}  // namespace proxima::dem
