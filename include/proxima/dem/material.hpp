// Materials and per-material-pair contact parameters, and the contact laws' constants derived from
// them (effective moduli, damping calibrated to the requested restitution, critical time step).
#pragma once

#include <cmath>
#include <string>
#include <vector>

#include "proxima/core/types.hpp"

namespace proxima::dem {

enum class ContactModel {
  LinearSpringDashpot,  ///< F_n = k_n δ + γ_n v_n, damping from e (Tsuji's linear formula, exact here)
  HertzMindlin,         ///< Hertz normal, Mindlin tangential with history; damping fitted for Hertz
};
std::string_view toString(ContactModel m);

/// The most materials a simulation takes: the contact table holds a law for every ordered pair
/// (~100 bytes each, ~0.1 GB at this count), and the time-step estimate builds one more.
constexpr int kMaxMaterials = 1000;
/// The refusal of `count` materials (> kMaxMaterials), for the scenario reader, builder and engine.
std::string tooManyMaterials(std::size_t count);

struct Material {
  std::string name;
  Real density = 2500;        ///< kg/m^3
  Real youngsModulus = 1e7;   ///< Pa
  Real poissonRatio = 0.3;
  Real restitution = 0.5;     ///< normal coefficient of restitution (0, 1]
  Real friction = 0.5;        ///< Coulomb sliding friction μ
  Real rollingFriction = 0;   ///< dimensionless rolling resistance μ_r (0 = off)
  Real linearStiffness = 0;   ///< linear model only: k_n in N/m (0 = from E and the radii, see laws)
  /// Damping ratio η_r of the rolling dashpot (Ai et al. 2011 model C; their recommended 0.3).
  Real rollingDamping = 0.3;
  [[nodiscard]] Real shearModulus() const { return youngsModulus / (2 * (1 + poissonRatio)); }
};

/// Constants of one material pair, precomputed once (ContactTable).
struct PairLaw {
  ContactModel model = ContactModel::HertzMindlin;
  Real effectiveModulus = 0;      ///< E* = 1 / ((1-ν1²)/E1 + (1-ν2²)/E2)
  Real effectiveShearModulus = 0; ///< G* = 1 / ((2-ν1)/G1 + (2-ν2)/G2)
  Real restitution = 0.5;
  Real friction = 0.5;
  Real rollingFriction = 0;
  Real rollingDamping = 0.3;      ///< η_r, the mean of the two materials
  Real linearStiffness = 0;       ///< linear model: k_n (0 = derive from E* and R*)
  /// Hertz: α(e) of the dimensionless damped Hertz oscillator x'' = -x^{3/2} - α x^{1/4} x'
  /// whose rebound speed is e (hertzDampingFor). Linear: ζ = -ln e / sqrt(π² + ln² e).
  Real dampingCoefficient = 0;
  // Precomputed for the hot loop: (4/3) E*, its square root, 8 G*, its square root.
  Real hertzK = 0, sqrtHertzK = 0, mindlinK = 0, sqrtMindlinK = 0;
};

/// Material pair table; combining rules: E*, G* from both materials; e, μ, μ_r the mean of the two
/// materials unless overridden for the pair.
class ContactTable {
 public:
  ContactTable() = default;
  ContactTable(const std::vector<Material>& materials, ContactModel model);
  void override(int a, int b, Real restitution, Real friction, Real rollingFriction);
  [[nodiscard]] const PairLaw& law(int a, int b) const { return laws_[static_cast<std::size_t>(a * n_ + b)]; }
  [[nodiscard]] int materialCount() const { return n_; }

 private:
  int n_ = 0;
  std::vector<PairLaw> laws_;
  ContactModel model_ = ContactModel::HertzMindlin;
};

/// α such that the dimensionless Hertz oscillator with nonlinear damping α x^{1/4} x' (Tsuji et al.
/// 1992 form; with the normal force clamped at 0 as the engine does) rebounds with speed e. Because the
/// equation is dimensionless, the restitution is then independent of mass, radius, modulus and impact
/// speed. Solved by bisection on an RK4 integration; exact to ~1e-9 in e.
Real hertzDampingFor(Real restitution);
/// Restitution the dimensionless damped Hertz oscillator gives for α (the inverse of the above).
Real hertzRestitutionFor(Real alpha);
/// Linear spring-dashpot damping ratio ζ for restitution e: ζ = -ln e / sqrt(π² + ln² e).
Real linearDampingRatioFor(Real restitution);

/// Effective modulus of two materials in contact: E* = 1 / ((1-ν1²)/E1 + (1-ν2²)/E2).
Real effectiveModulus(const Material& a, const Material& b);
/// Maximum overlap of an elastic Hertz impact at speed v: δmax = (15 m* v² / (16 E* √R*))^{2/5}.
Real hertzMaxOverlap(Real mEff, Real rEff, Real eEff, Real speed);
/// Hertz normal force at overlap δ: F = (4/3) E* √R* δ^{3/2}.
inline Real hertzForce(Real overlap, Real rEff, Real eEff) {
  return 4.0 / 3.0 * eEff * std::sqrt(rEff) * std::pow(overlap, 1.5);
}
/// Static Hertz overlap under a normal force F (the inverse of hertzForce): δ = (F / ((4/3) E* √R*))^{2/3}.
Real hertzStaticOverlap(Real force, Real rEff, Real eEff);
/// Normal stiffness of the linear law: the pair's k_n, or by default the Hertz secant stiffness at an
/// overlap of 1% of R*: (4/3) E* √(R* · 0.01 R*) = (0.4/3) E* R*.
inline Real linearNormalStiffness(const PairLaw& law, Real rEff) {
  return law.linearStiffness > 0 ? law.linearStiffness : 0.4 / 3 * law.effectiveModulus * rEff;
}

/// Rayleigh wave time for a sphere of radius R: π R sqrt(ρ/G) / (0.1631 ν + 0.8766).
Real rayleighTime(const Material& m, Real radius);
/// Hertz contact duration of two bodies (effective mass m*, radius R*, modulus E*) meeting at speed v:
/// t_c = 2.868 (m*² / (R* E*² v))^{1/5}.
Real hertzContactTime(Real mEff, Real rEff, Real eEff, Real speed);

}  // namespace proxima::dem
