// DEM validation against theory: the Chung & Ooi (2011) particle-impact benchmarks 1-4, conservation
// laws, particles at rest on flat and inclined planes, and the packing fraction of a poured bed.
//
// Every expected value is computed here from the formulas in ../shared/docs/VALIDATION.md (Hertz
// theory, rigid-body impact limits, Coulomb friction on an incline); nothing is copied from the
// engine. Each test prints its measured figures on lines starting with "[dem-validation]" (they are
// quoted in docs/validation.md, DEM part); bench/validation/chung_ooi.cpp sweeps the same impacts over
// many angles and restitutions and writes CSV files for the plots.
//
// Run time: the default set takes ~4 s in Release. Environment switches:
//   PROXIMA_DEM_LONG=1                 the full-size pour (DemValidation.PourPackingFractionLong, 2000
//                                      spheres, 1-2 min on 2 cores)
#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <numbers>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "proxima/dem/simulation.hpp"

namespace proxima::dem {
namespace {

constexpr Real kPi = std::numbers::pi;

bool longRuns() {
  const char* e = std::getenv("PROXIMA_DEM_LONG");
  return e && *e && std::string(e) != "0";
}

template <class... A>
void report(const char* fmt, A... a) {
  std::printf("[dem-validation] ");
  std::printf(fmt, a...);
  std::printf("\n");
  std::fflush(stdout);
}

Material makeMaterial(const char* name, Real density, Real e, Real nu, Real restitution, Real friction) {
  Material m;
  m.name = name;
  m.density = density;
  m.youngsModulus = e;
  m.poissonRatio = nu;
  m.restitution = restitution;
  m.friction = friction;
  m.rollingFriction = 0;
  m.linearStiffness = 0;
  return m;
}

/// A "rigid" wall: the particle's material (so that the pair's restitution and friction, the means
/// of the two materials, are the particle's) with a Young's modulus of 1e20 Pa.
Material rigidVersionOf(const Material& m) {
  Material w = m;
  w.name = m.name + "-rigid-wall";
  w.youngsModulus = 1e20;
  return w;
}

Real sphereMass(const Material& m, Real r) { return m.density * 4.0 / 3.0 * kPi * r * r * r; }

/// Hertz theory of a normal elastic impact (VALIDATION.md).
struct HertzTheory {
  Real maxOverlap, maxForce, contactTime;
};
HertzTheory hertzTheory(Real mEff, Real rEff, Real eEff, Real v) {
  HertzTheory h{};
  h.maxOverlap = hertzMaxOverlap(mEff, rEff, eEff, v);
  h.maxForce = hertzForce(h.maxOverlap, rEff, eEff);
  h.contactTime = hertzContactTime(mEff, rEff, eEff, v);
  return h;
}

/// What one impact produced.
struct ImpactResult {
  Real maxForce = 0;                    ///< peak normal force
  Real maxOverlap = 0;                  ///< peak overlap
  Real contactTime = 0;                 ///< time with overlap > 0 (the opening interpolated between the last two steps)
  Vec3 velocity = Vec3::Zero();         ///< particle 0 after separation
  Vec3 angularVelocity = Vec3::Zero();  ///< particle 0 after separation
  bool separated = false;
};

/// Steps `sim` (set up, gravity off, not initialised) until its single contact opens again;
/// `overlap()` is the geometric overlap, used to interpolate the opening time.
template <class Overlap>
ImpactResult runImpact(Simulation& sim, Real dt, Overlap overlap) {
  sim.options().gravity.setZero();
  sim.options().timeStep = dt;
  ImpactResult r;
  if (!sim.initialize().ok()) return r;
  bool touched = false;
  Real last = 0;
  for (int s = 0; s < 100'000'000; ++s) {
    sim.step();
    const auto c = sim.contacts();
    const Real now = overlap();
    if (!c.empty()) {
      touched = true;
      r.maxForce = std::max(r.maxForce, c[0].force.dot(c[0].normal));
      r.maxOverlap = std::max(r.maxOverlap, c[0].depth);
      last = now;
    } else if (touched) {
      r.contactTime = sim.time() - dt + dt * last / (last - now);
      r.velocity = sim.particles().velocity[0];
      r.angularVelocity = sim.particles().angularVelocity[0];
      r.separated = true;
      break;
    }
  }
  return r;
}

/// Sphere (radius R, material m) hitting the plane z = 0 (normal +z) with velocity (vt, 0, -vn) from
/// just touching; the wall has `wall` material.
ImpactResult sphereWallImpact(const Material& m, const Material& wall, Real radius, Real vn, Real vt,
                              ContactModel model, Real dt) {
  Simulation sim;
  sim.setMaterials({m, wall}, model);
  const int k = sim.addShape(makeParticleShape("ball", Shape(Sphere{radius})).value());
  sim.addParticle(k, 0, Vec3(0, 0, radius), Quat::Identity(), Vec3(vt, 0, -vn));
  Wall w;
  w.name = "floor";
  w.kind = WallKind::Plane;
  w.origin = Vec3::Zero();
  w.normal = Vec3::UnitZ();
  w.material = 1;
  sim.addWall(w);
  return runImpact(sim, dt, [&] { return radius - sim.particles().position[0].z(); });
}

/// Two identical spheres (radius R) meeting head-on along x, each at speed v.
ImpactResult twoSphereImpact(const Material& m, Real radius, Real v, Real dt) {
  Simulation sim;
  sim.setMaterials({m}, ContactModel::HertzMindlin);
  const int k = sim.addShape(makeParticleShape("ball", Shape(Sphere{radius})).value());
  sim.addParticle(k, 0, Vec3(-radius, 0, 0), Quat::Identity(), Vec3(v, 0, 0));
  sim.addParticle(k, 0, Vec3(radius, 0, 0), Quat::Identity(), Vec3(-v, 0, 0));
  return runImpact(sim, dt,
                   [&] { return 2 * radius - (sim.particles().position[1] - sim.particles().position[0]).norm(); });
}

/// Runs the scope with one OpenMP thread (single-particle impacts are dominated by the cost of
/// parallel regions otherwise) and restores the previous setting.
struct SerialScope {
  int previous = omp_get_max_threads();
  SerialScope() { omp_set_num_threads(1); }
  ~SerialScope() { omp_set_num_threads(previous); }
  SerialScope(const SerialScope&) = delete;
  SerialScope& operator=(const SerialScope&) = delete;
};

Real rel(Real got, Real want) { return std::abs(got - want) / std::abs(want); }

// Materials of the benchmarks (restitution 1, frictionless unless a test says otherwise).
Material glass() { return makeMaterial("glass", 2800, 48e9, 0.20, 1.0, 0.0); }
Material limestone() { return makeMaterial("limestone", 2500, 20e9, 0.25, 1.0, 0.0); }
Material aluminiumAlloy() { return makeMaterial("aluminium alloy", 2699, 70e9, 0.30, 1.0, 0.0); }
Material magnesiumAlloy() { return makeMaterial("magnesium alloy", 1800, 40e9, 0.35, 1.0, 0.0); }
Material aluminiumOxide() { return makeMaterial("aluminium oxide", 4000, 380e9, 0.23, 1.0, 0.0); }
Material castIron() { return makeMaterial("cast iron", 7000, 100e9, 0.25, 1.0, 0.0); }

// ---------------------------------------------------------------------------------------------
// Chung & Ooi test 1: elastic normal impact of two identical spheres.

TEST(DemValidation, ChungOoi1TwoSpheresHertz) {
  const SerialScope serial;
  const Real radius = 0.010, v = 10.0;
  for (const Material& m : {glass(), limestone()}) {
    const Real mass = sphereMass(m, radius);
    const HertzTheory th = hertzTheory(mass / 2, radius / 2, effectiveModulus(m, m), 2 * v);
    const Real dt = th.contactTime / 4000;
    const ImpactResult r = twoSphereImpact(m, radius, v, dt);
    ASSERT_TRUE(r.separated) << m.name;
    const Real rebound = -r.velocity.x();
    report(
        "ChungOoi1 %s: Fmax %.6g N (theory %.6g, err %.2e), dmax %.6g m (theory %.6g, err %.2e), "
        "tc %.6g s (theory %.6g, err %.2e), rebound/impact %.8f, dt %.3g",
        m.name.c_str(), r.maxForce, th.maxForce, rel(r.maxForce, th.maxForce), r.maxOverlap, th.maxOverlap,
        rel(r.maxOverlap, th.maxOverlap), r.contactTime, th.contactTime, rel(r.contactTime, th.contactTime),
        rebound / v, dt);
    EXPECT_LT(rel(r.maxForce, th.maxForce), 0.02) << m.name;
    EXPECT_LT(rel(r.maxOverlap, th.maxOverlap), 0.02) << m.name;
    EXPECT_LT(rel(r.contactTime, th.contactTime), 0.02) << m.name;
    EXPECT_LT(std::abs(rebound / v - 1), 1e-4) << m.name;
    EXPECT_LT(std::abs(r.velocity.y()) + std::abs(r.velocity.z()), 1e-12 * v) << m.name;
  }
}

// ---------------------------------------------------------------------------------------------
// Chung & Ooi test 2: elastic normal impact of a sphere with a rigid wall.

TEST(DemValidation, ChungOoi2SphereRigidWallHertz) {
  const SerialScope serial;
  const Real radius = 0.10, v = 0.2;
  for (const Material& m : {aluminiumAlloy(), magnesiumAlloy()}) {
    const Material wall = rigidVersionOf(m);
    const HertzTheory th = hertzTheory(sphereMass(m, radius), radius, effectiveModulus(m, wall), v);
    const Real dt = th.contactTime / 4000;
    const ImpactResult r = sphereWallImpact(m, wall, radius, v, 0, ContactModel::HertzMindlin, dt);
    ASSERT_TRUE(r.separated) << m.name;
    const Real rebound = r.velocity.z();
    report(
        "ChungOoi2 %s: Fmax %.6g N (theory %.6g, err %.2e), dmax %.6g m (theory %.6g, err %.2e), "
        "tc %.6g s (theory %.6g, err %.2e), rebound/impact %.8f, dt %.3g",
        m.name.c_str(), r.maxForce, th.maxForce, rel(r.maxForce, th.maxForce), r.maxOverlap, th.maxOverlap,
        rel(r.maxOverlap, th.maxOverlap), r.contactTime, th.contactTime, rel(r.contactTime, th.contactTime),
        rebound / v, dt);
    EXPECT_LT(rel(r.maxForce, th.maxForce), 0.02) << m.name;
    EXPECT_LT(rel(r.maxOverlap, th.maxOverlap), 0.02) << m.name;
    EXPECT_LT(rel(r.contactTime, th.contactTime), 0.02) << m.name;
    EXPECT_LT(std::abs(rebound / v - 1), 1e-4) << m.name;
  }
}

// ---------------------------------------------------------------------------------------------
// Chung & Ooi test 3: normal impact with restitution e, sphere on a rigid wall; the rebound speed
// ratio equals e, at 0.39, 3.9 and 39 m/s; Hertz-Mindlin and the linear spring-dashpot.

TEST(DemValidation, ChungOoi3RestitutionHertzAndLinear) {
  const SerialScope serial;
  const Real radius = 0.0025;
  int runs = 0;
  Real worst = 0, worstFixed = 0;
  for (Material m : {aluminiumOxide(), castIron()}) {
    for (const Real e : {0.2, 0.4, 0.6, 0.8, 1.0}) {
      m.restitution = e;
      const Material wall = rigidVersionOf(m);
      const Real mass = sphereMass(m, radius), eEff = effectiveModulus(m, wall);
      for (const Real v : {0.39, 3.9, 39.0}) {
        const Real dt = hertzTheory(mass, radius, eEff, v).contactTime / 1000;
        const ImpactResult r = sphereWallImpact(m, wall, radius, v, 0, ContactModel::HertzMindlin, dt);
        ASSERT_TRUE(r.separated);
        const Real out = r.velocity.z() / v;
        worst = std::max(worst, rel(out, e));
        ++runs;
        report("ChungOoi3 hertz %s e=%.1f v=%.2f: rebound/impact %.6f (err %.2e)", m.name.c_str(), e, v, out,
               rel(out, e));
        EXPECT_LT(rel(out, e), 0.01) << m.name << " e " << e << " v " << v;
      }
      // The same three speeds with one fixed time step (tc(39 m/s) / 200, what a simulation would use
      // for the fastest impact): the restitution does not drift with the number of steps per contact.
      const Real fixedDt = hertzTheory(mass, radius, eEff, 39.0).contactTime / 200;
      for (const Real v : {0.39, 3.9, 39.0}) {
        const ImpactResult r = sphereWallImpact(m, wall, radius, v, 0, ContactModel::HertzMindlin, fixedDt);
        ASSERT_TRUE(r.separated);
        const Real out = r.velocity.z() / v;
        worstFixed = std::max(worstFixed, rel(out, e));
        EXPECT_LT(rel(out, e), 0.01) << m.name << " e " << e << " v " << v << " fixed dt";
      }
      // Linear spring-dashpot: k_n = (0.4/3) E* R (the engine's default); period π sqrt(m/k).
      const Real kn = 0.4 / 3 * eEff * radius;
      const Real dt = kPi * std::sqrt(mass / kn) / 1000;
      const ImpactResult r = sphereWallImpact(m, wall, radius, 3.9, 0, ContactModel::LinearSpringDashpot, dt);
      ASSERT_TRUE(r.separated);
      const Real out = r.velocity.z() / 3.9;
      report("ChungOoi3 linear %s e=%.1f v=3.90: rebound/impact %.6f (err %.2e)", m.name.c_str(), e, out, rel(out, e));
      EXPECT_LT(rel(out, e), 0.01) << "linear " << m.name << " e " << e;
    }
  }
  report(
      "ChungOoi3 hertz: %d runs (dt = tc/1000 of each speed), worst relative error %.2e; one dt = tc(39 m/s)/200 "
      "for 0.39, 3.9 and 39 m/s: worst relative error %.2e",
      runs, worst, worstFixed);
}

// ---------------------------------------------------------------------------------------------
// Chung & Ooi test 4: oblique impact, |v| = 3.9 m/s, aluminium oxide, μ = 0.092, e = 0.98.

struct ObliqueResult {
  Real angleDeg = 0;
  Real tangentialRestitution = 0;  ///< centre: v_t' / v_t
  Real contactRestitution = 0;     ///< contact point: (v_t' − ω R) / v_t
  Real spin = 0;                   ///< |ω| after the impact
  Real rigidTangentialRestitution = 0, rigidSpin = 0;
  Real angularMomentumCheck = 0;  ///< ω / (5 (1 − e_t) v_t / (2R)) − 1, see the sticking test
};

ObliqueResult obliqueImpact(Real angleDeg, Real stepsPerContact = 2000) {
  const Real radius = 0.0025, speed = 3.9, mu = 0.092, e = 0.98;
  Material m = aluminiumOxide();
  m.restitution = e;
  m.friction = mu;
  const Material wall = rigidVersionOf(m);
  const Real theta = angleDeg * kPi / 180;
  const Real vn = speed * std::cos(theta), vt = speed * std::sin(theta);
  const Real dt =
      hertzTheory(sphereMass(m, radius), radius, effectiveModulus(m, wall), vn).contactTime / stepsPerContact;
  const ImpactResult r = sphereWallImpact(m, wall, radius, vn, vt, ContactModel::HertzMindlin, dt);
  EXPECT_TRUE(r.separated);
  ObliqueResult o;
  o.angleDeg = angleDeg;
  o.tangentialRestitution = r.velocity.x() / vt;
  // The sphere moves along +x over the plane z = 0: friction spins it about +y.
  o.contactRestitution = (r.velocity.x() - r.angularVelocity.y() * radius) / vt;
  o.spin = r.angularVelocity.norm();
  o.angularMomentumCheck = o.spin / (2.5 * (1 - o.tangentialRestitution) * vt / radius) - 1;
  // Rigid-body limits: sticking (rolling at separation) below tan θ = 3.5 μ (1 + e), sliding above.
  if (std::tan(theta) <= 3.5 * mu * (1 + e)) {
    o.rigidTangentialRestitution = 5.0 / 7.0;
    o.rigidSpin = 5.0 / 7.0 * vt / radius;
  } else {
    o.rigidTangentialRestitution = 1 - mu * (1 + e) / std::tan(theta);
    o.rigidSpin = 5 * mu * (1 + e) * vn / (2 * radius);
  }
  return o;
}

// Two identical ellipsoids meeting head-on along a principal axis (the contact normal passes
// through both centres): the rebound speed ratio is the restitution (the Hertz damping mapping does
// not depend on the curvature radius the engine takes for the pair), nothing turns or drifts
// sideways, and with e = 1 the kinetic energy comes back. The overlap of these pairs is answered by
// GJK-TD's Newton with the rolling-ball certificate (no polytope), so this checks that path through
// the contact law end to end.
TEST(DemValidation, EllipsoidsHeadOnRestitution) {
  const SerialScope serial;
  const Vec3 radii(0.0025, 0.00175, 0.00125);
  Material m = aluminiumOxide();
  const Real mass = m.density * 4.0 / 3.0 * kPi * radii.prod();
  int runs = 0;
  Real worst = 0;
  for (const int axis : {0, 2}) {  // along the long axis (tips) and the short axis (flat sides)
    for (const Real e : {0.5, 1.0}) {
      m.restitution = e;
      for (const Real v : {0.39, 3.9}) {
        Simulation sim;
        sim.setMaterials({m}, ContactModel::HertzMindlin);
        const ParticleShape ps = makeParticleShape("grain", Shape(Ellipsoid{radii})).value();
        const int k = sim.addShape(ps);
        const Real half = radii[axis];
        // Orientation (body -> world) that turns the ellipsoid's axis `axis` onto world x: the shape
        // -> world rotation M (z onto x: a quarter turn about y) composed with the inverse of the
        // shape -> principal-frame rotation the engine chose.
        const Mat3 M = axis == 0 ? Mat3::Identity() : Mat3(Eigen::AngleAxis<Real>(kPi / 2, Vec3::UnitY()));
        const Quat q(Mat3(M * ps.local.rotation.transpose()));
        sim.addParticle(k, 0, Vec3(-half, 0, 0), q, Vec3(v, 0, 0));
        sim.addParticle(k, 0, Vec3(half, 0, 0), q, Vec3(-v, 0, 0));
        // Time step: Hertz contact time of the smaller curvature radius at the contact (longest), / 1000.
        const Real rMin = radii.minCoeff() * radii.minCoeff() / radii.maxCoeff();
        const Real dt = hertzContactTime(0.5 * mass, rMin, effectiveModulus(m, m), 2 * v) / 1000;
        const ImpactResult r = runImpact(
            sim, dt, [&] { return 2 * half - (sim.particles().position[1] - sim.particles().position[0]).norm(); });
        ASSERT_TRUE(r.separated) << "axis " << axis << " e " << e << " v " << v;
        const Real out = -r.velocity.x() / v;
        worst = std::max(worst, rel(out, e));
        ++runs;
        report("EllipsoidsHeadOn axis %d e=%.1f v=%.2f: rebound/impact %.6f (err %.2e), contact %.3g s", axis, e, v,
               out, rel(out, e), r.contactTime);
        EXPECT_LT(rel(out, e), 0.01) << "axis " << axis << " e " << e << " v " << v;
        EXPECT_LT(r.velocity.tail<2>().norm(), 1e-9 * v) << "axis " << axis;
        EXPECT_LT(r.angularVelocity.norm() * radii.maxCoeff(), 1e-9 * v) << "axis " << axis;
        // Momentum: the two bodies leave with opposite velocities.
        EXPECT_LT((sim.particles().velocity[0] + sim.particles().velocity[1]).norm(), 1e-12 * v);
      }
    }
  }
  report("EllipsoidsHeadOn: %d impacts, worst restitution error %.2e", runs, worst);
}

TEST(DemValidation, ChungOoi4ObliqueImpactSlidingRegime) {
  const SerialScope serial;
  const Real transition = std::atan(3.5 * 0.092 * 1.98) * 180 / kPi;
  report("ChungOoi4 rigid stick/slide transition at %.2f deg", transition);
  EXPECT_NEAR(transition, 32.5, 0.1);
  for (const Real a : {45.0, 60.0, 80.0}) {
    const ObliqueResult o = obliqueImpact(a);
    report("ChungOoi4 %.0f deg: e_t %.5f (rigid %.5f, err %.2e), spin %.2f rad/s (rigid %.2f, err %.2e)", a,
           o.tangentialRestitution, o.rigidTangentialRestitution,
           rel(o.tangentialRestitution, o.rigidTangentialRestitution), o.spin, o.rigidSpin, rel(o.spin, o.rigidSpin));
    EXPECT_LT(rel(o.tangentialRestitution, o.rigidTangentialRestitution), 0.02) << a;
    EXPECT_LT(rel(o.spin, o.rigidSpin), 0.02) << a;
  }
}

// Below the transition the rigid limits (e_t = 5/7, ω = (5/7) v_t / R: the contact point stops) do
// not hold for a compliant contact: with Mindlin's tangential stiffness k_t = 8 G* a the contact
// point oscillates tangentially (frequency ratio to the normal oscillation √(3.5 k_t/k_n) ≈ 1.75 for
// ν = 0.23) and leaves the wall still moving forwards (full stick, 5°) or moving backwards (partial
// slip, 10°-30°: the tangential-velocity reversal of Maw, Barber & Fawcett 1976; the low-angle
// departures from the rigid limit are also what Chung & Ooi's test-4 figures show).
// Measured deviations from the rigid limits (converged in dt to 1e-4): e_t −1.7% to −13% and spin
// +4% to +32% at 10°-25°; e_t +32% and spin −81% at 5°.
// Asserted: (a) those deviations stay within ±15% (e_t) and ±35% (spin) at 10°-25°; (b) the
// contact-point restitution is > 0.5 at 5° and < 0 at 15°-25°; (c) the angular momentum about the
// contact point is conserved (normal force through the centre, friction at the contact):
// ω = 5 (1 − e_t) v_t / (2R) within 1% at every angle (the lever arm is R − δ/2, δ/R ≤ 3e-3);
// (d) the 20° result changes by < 1e-3 when dt goes from tc/2000 to tc/8000.
TEST(DemValidation, ChungOoi4ObliqueImpactStickingRegime) {
  const SerialScope serial;
  for (const Real a : {5.0, 10.0, 15.0, 20.0, 25.0, 30.0}) {
    const ObliqueResult o = obliqueImpact(a);
    report(
        "ChungOoi4 %.0f deg: e_t %.5f (rigid %.5f, dev %+.3f), spin %.2f rad/s (rigid %.2f, dev %+.3f), "
        "contact-point e_t %+.4f, angular momentum check %+.1e",
        a, o.tangentialRestitution, o.rigidTangentialRestitution,
        o.tangentialRestitution / o.rigidTangentialRestitution - 1, o.spin, o.rigidSpin, o.spin / o.rigidSpin - 1,
        o.contactRestitution, o.angularMomentumCheck);
    EXPECT_LT(std::abs(o.angularMomentumCheck), 0.01) << a;
    if (a >= 10 && a <= 25) {
      EXPECT_LT(rel(o.tangentialRestitution, o.rigidTangentialRestitution), 0.15) << a;
      EXPECT_LT(rel(o.spin, o.rigidSpin), 0.35) << a;
    }
    if (a == 5) {
      EXPECT_GT(o.contactRestitution, 0.5);
    }
    if (a >= 15 && a <= 25) {
      EXPECT_LT(o.contactRestitution, 0);
    }
  }
  const ObliqueResult coarse = obliqueImpact(20, 2000), fine = obliqueImpact(20, 8000);
  report("ChungOoi4 20 deg, dt tc/2000 vs tc/8000: e_t %.6f vs %.6f, spin %.3f vs %.3f", coarse.tangentialRestitution,
         fine.tangentialRestitution, coarse.spin, fine.spin);
  EXPECT_LT(rel(coarse.tangentialRestitution, fine.tangentialRestitution), 1e-3);
  EXPECT_LT(rel(coarse.spin, fine.spin), 1e-3);
}

// ---------------------------------------------------------------------------------------------
// Conservation laws.

/// Elastic energy stored in a Hertz contact: ∫ (4/3) E* √R* δ^{3/2} dδ = (8/15) E* √R* δ^{5/2}.
Real hertzEnergy(Real eEff, Real rEff, Real depth) {
  return 8.0 / 15.0 * eEff * std::sqrt(rEff) * std::pow(depth, 2.5);
}

struct EnergyRun {
  Real worst = 0;  ///< max |E(t) - E(0)| / E(0) over all steps
  Real dt = 0, contactTime = 0;
  int collisions = 0, wallCollisions = 0;
};

/// 20 spheres in a closed box of six plane walls (same material), e = 1, μ = 0, no gravity; time
/// step tc / stepsPerContact where tc is the Hertz contact time of two spheres meeting at the largest
/// possible initial relative speed (the shortest contact); runs `steps` steps. E = kinetic +
/// the elastic energy of every contact.
EnergyRun elasticBox(Real stepsPerContact, int steps) {
  const Real radius = 0.01, half = 0.04, speed = 2.0;
  const Material m = makeMaterial("elastic", 2500, 1e7, 0.3, 1.0, 0.0);
  const Real mass = sphereMass(m, radius), eEff = effectiveModulus(m, m);
  EnergyRun run;
  run.contactTime = hertzTheory(mass / 2, radius / 2, eEff, 2 * speed * std::sqrt(3.0)).contactTime;
  run.dt = run.contactTime / stepsPerContact;
  Simulation sim;
  sim.setMaterials({m}, ContactModel::HertzMindlin);
  const int k = sim.addShape(makeParticleShape("ball", Shape(Sphere{radius})).value());
  std::mt19937_64 rng(2011);
  std::uniform_real_distribution<Real> u(-speed, speed);
  int n = 0;
  for (int a = -1; a <= 1 && n < 20; ++a)
    for (int b = -1; b <= 1 && n < 20; ++b)
      for (int c = -1; c <= 1 && n < 20; ++c, ++n)
        sim.addParticle(k, 0, Vec3(a, b, c) * 0.025, Quat::Identity(), Vec3(u(rng), u(rng), u(rng)));
  for (int axis = 0; axis < 3; ++axis)
    for (const Real sgn : {-1.0, 1.0}) {
      Wall w;
      w.kind = WallKind::Plane;
      w.material = 0;
      w.origin = Vec3::Zero();
      w.origin[axis] = sgn * half;
      w.normal = Vec3::Zero();
      w.normal[axis] = -sgn;
      sim.addWall(w);
    }
  sim.options().gravity.setZero();
  sim.options().timeStep = run.dt;
  EXPECT_TRUE(sim.initialize().ok());
  std::vector<std::pair<int, int>> previous, current;
  auto totalEnergy = [&] {
    Real e = sim.stats().kineticEnergy;
    current.clear();
    for (const ContactInfo& c : sim.contacts()) {
      e += hertzEnergy(eEff, c.j >= 0 ? radius / 2 : radius, c.depth);
      current.emplace_back(c.i, c.j);
    }
    return e;
  };
  const Real e0 = totalEnergy();
  previous = current;
  for (int s = 0; s < steps; ++s) {
    sim.step();
    run.worst = std::max(run.worst, std::abs(totalEnergy() - e0) / e0);
    for (const auto& c : current)
      if (std::find(previous.begin(), previous.end(), c) == previous.end())
        ++(c.second >= 0 ? run.collisions : run.wallCollisions);
    previous = current;
  }
  return run;
}

TEST(DemValidation, EnergyConservedInElasticFrictionlessBox) {
  const SerialScope serial;
  // Velocity Verlet conserves a shadow energy: the error of E during a contact is O((ω dt)²) of
  // the contact's energy, so 1e-6 of the total needs ~800 steps per contact (tc/50 gives ~1e-4,
  // tc/200 ~1e-5). The same physical time at twice the step checks the second order.
  const EnergyRun fine = elasticBox(800, 10000);
  const EnergyRun coarse = elasticBox(400, 5000);
  report(
      "Energy: 20 spheres, e = 1, mu = 0, box of 6 planes; dt = tc/800 = %.3g s (tc %.3g s): 1e4 steps, %d "
      "sphere-sphere and %d wall collisions, max |dE|/E %.2e; dt = tc/400: max |dE|/E %.2e (ratio %.2f)",
      fine.dt, fine.contactTime, fine.collisions, fine.wallCollisions, fine.worst, coarse.worst,
      coarse.worst / fine.worst);
  EXPECT_GE(fine.collisions, 20);
  EXPECT_GE(fine.wallCollisions, 20);
  EXPECT_LT(fine.worst, 1e-6);
  EXPECT_GT(coarse.worst / fine.worst, 3.0);  // second order: 4
  EXPECT_LT(coarse.worst / fine.worst, 5.5);
}

TEST(DemValidation, MomentumAndAngularMomentumConservedInFreeFlight) {
  const SerialScope serial;
  // 20 spheres with friction (μ = 0.5, e = 0.7) in free space, no walls, no gravity: a cluster that
  // converges, collides and spins, with a net drift and a net rotation (so that p and L are not 0).
  const Real radius = 0.01;
  const Material m = makeMaterial("frictional", 2500, 1e7, 0.3, 0.7, 0.5);
  const Real mass = sphereMass(m, radius);
  const Real tc = hertzTheory(mass / 2, radius / 2, effectiveModulus(m, m), 3.0).contactTime;
  Simulation sim;
  sim.setMaterials({m}, ContactModel::HertzMindlin);
  const int k = sim.addShape(makeParticleShape("ball", Shape(Sphere{radius})).value());
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<Real> u(-1, 1);
  int n = 0;
  for (int a = -1; a <= 1 && n < 20; ++a)
    for (int b = -1; b <= 1 && n < 20; ++b)
      for (int c = -1; c <= 1 && n < 20; ++c, ++n) {
        const Vec3 x = Vec3(a, b, c) * 0.025 + 0.002 * Vec3(u(rng), u(rng), u(rng));
        const Vec3 v = -20.0 * x + Vec3(0.3, -0.2, 0.1) + Vec3(0, 0, 8).cross(x) + 0.5 * Vec3(u(rng), u(rng), u(rng));
        sim.addParticle(k, 0, x, Quat::Identity(), v, 50.0 * Vec3(u(rng), u(rng), u(rng)));
      }
  sim.options().gravity.setZero();
  sim.options().timeStep = tc / 50;
  ASSERT_TRUE(sim.initialize().ok());
  auto momentum = [&] {
    const Particles& p = sim.particles();
    Vec3 lin = Vec3::Zero(), ang = Vec3::Zero();
    Real linScale = 0, angScale = 0;
    for (std::size_t i = 0; i < p.size(); ++i) {
      lin += p.mass[i] * p.velocity[i];
      const Vec3 wb = p.orientation[i].conjugate() * p.angularVelocity[i];
      const Vec3 spin = p.orientation[i] * Vec3(p.inertia[i].cwiseProduct(wb));
      ang += p.position[i].cross(p.mass[i] * p.velocity[i]) + spin;
      linScale += p.mass[i] * p.velocity[i].norm();
      angScale += p.position[i].cross(p.mass[i] * p.velocity[i]).norm() + spin.norm();
    }
    return std::tuple{lin, ang, linScale, angScale};
  };
  const auto [p0, l0, ps, ls] = momentum();
  Real worstP = 0, worstL = 0;
  std::int64_t contactSteps = 0;
  Real maxTorque = 0;
  for (int s = 0; s < 10000; ++s) {
    sim.step();
    contactSteps += sim.stats().contacts;
    for (std::size_t i = 0; i < sim.particles().size(); ++i)
      maxTorque = std::max(maxTorque, sim.particles().torque[i].norm());
    if (s % 10 == 9) {
      const auto [p1, l1, ps1, ls1] = momentum();
      worstP = std::max(worstP, (p1 - p0).norm() / p0.norm());
      worstL = std::max(worstL, (l1 - l0).norm() / l0.norm());
    }
  }
  report(
      "Momentum: 20 frictional spheres, 1e4 steps, dt = tc/50 = %.3g s, %lld contact-steps, |p0| %.3g (sum |m v| "
      "%.3g), |L0| %.3g (sum %.3g), max |dp|/|p0| %.2e, max |dL|/|L0| %.2e, max torque %.3g N m",
      tc / 50, static_cast<long long>(contactSteps), p0.norm(), ps, l0.norm(), ls, worstP, worstL, maxTorque);
  EXPECT_GT(contactSteps, 1000);
  EXPECT_GT(maxTorque, 0);  // friction acted
  EXPECT_LT(worstP, 1e-12);
  EXPECT_LT(worstL, 1e-10);
}

// ---------------------------------------------------------------------------------------------
// Resting contacts: a cube and a sphere on a plane under gravity stay put.

struct RestResult {
  Real drift = 0;          ///< horizontal displacement between the end of settling and the end
  Real rotation = 0;       ///< rotation angle between the end of settling and the end
  Real totalRotation = 0;  ///< rotation angle between the start and the end
  Real tilt = 0;           ///< final angle between the body axis nearest the vertical and the vertical
  Real maxSpeedLast = 0;   ///< over the last 1e4 steps
  Real maxSpinLast = 0;
  Real overlap = 0, theoryOverlap = 0;
};

/// A body of `shape` above the plane z = 0 (same material: E = 1e7 Pa, ν = 0.3, e = 0.5, μ = 0.5),
/// released at rest with its centre at `x0`, 1e5 steps of 1e-5 s; "settled" after 2e4 steps (0.2 s).
/// `points`: contacts sharing the weight at rest (1 for a sphere, 4 for a cube face: the engine gives
/// each vertex of a polyhedral face its own Hertz contact, so each carries a quarter of the weight).
RestResult restOnPlane(const Shape& shape, const Vec3& x0, const Quat& q, Real contactRadius, Real halfHeight,
                       int points = 1) {
  const Material m = makeMaterial("soft", 2500, 1e7, 0.3, 0.5, 0.5);
  Simulation sim;
  sim.setMaterials({m}, ContactModel::HertzMindlin);
  const int k = sim.addShape(makeParticleShape("body", shape).value());
  sim.addParticle(k, 0, x0, q);
  sim.addWall(Wall{});  // (the default wall: the plane z = 0, material 0)
  sim.options().timeStep = 1e-5;
  EXPECT_TRUE(sim.initialize().ok());
  const int settle = 20000, total = 100000;
  Vec3 xs = Vec3::Zero();
  Quat qs = q;
  RestResult r;
  auto angle = [](const Quat& a, const Quat& b) {
    const Quat d = a.conjugate() * b;
    return 2 * std::atan2(d.vec().norm(), std::abs(d.w()));
  };
  for (int s = 1; s <= total; ++s) {
    sim.step();
    const Particles& p = sim.particles();
    if (s == settle) {
      xs = p.position[0];
      qs = p.orientation[0];
    }
    if (s > total - 10000) {
      r.maxSpeedLast = std::max(r.maxSpeedLast, p.velocity[0].norm());
      r.maxSpinLast = std::max(r.maxSpinLast, p.angularVelocity[0].norm());
    }
  }
  const Particles& p = sim.particles();
  r.drift = (p.position[0] - xs).head<2>().norm();
  r.rotation = angle(qs, p.orientation[0]);
  r.totalRotation = angle(q, p.orientation[0]);
  const Mat3 rot = p.orientation[0].toRotationMatrix();
  const Real up = rot.row(2).cwiseAbs().maxCoeff();  // |cos| of the body axis nearest the vertical
  r.tilt = std::atan2(std::sqrt(std::max<Real>(0, 1 - up * up)), up);
  r.overlap = halfHeight - p.position[0].z();
  // Static Hertz overlap under the weight: m g = (4/3) E* √R δ^{3/2}.
  const Real weight = p.mass[0] * 9.81;
  r.theoryOverlap = hertzStaticOverlap(weight / points, contactRadius, effectiveModulus(m, m));
  return r;
}

TEST(DemValidation, CubeAndSphereRestOnAPlane) {
  const SerialScope serial;
  const Real h = 0.005;  // 1 cm cube, 1 cm sphere
  const Shape cube(Box{Vec3(h, h, h)});
  const Real req = std::cbrt(3 * 8 * h * h * h / (4 * kPi));  // the engine's Hertz radius for non-spheres
  {
    // Face down, just touching (turned about z so that nothing is aligned with the axes).
    const Quat q(Eigen::AngleAxis<Real>(0.3, Vec3::UnitZ()));
    const RestResult r = restOnPlane(cube, Vec3(0.0123, -0.0071, h), q, req, h, 4);
    report(
        "Rest cube (just touching): drift %.2e m (%.2e of size), rotation %.2e rad (since start %.2e), max speed "
        "last 1e4 steps %.2e m/s, max spin %.2e rad/s, overlap %.4g m (Hertz %.4g)",
        r.drift, r.drift / (2 * h), r.rotation, r.totalRotation, r.maxSpeedLast, r.maxSpinLast, r.overlap,
        r.theoryOverlap);
    // Asked for: drift < 1e-6 of the size, rotation < 1e-6 rad, speed < 1e-5 m/s. Measured: 0, 9e-17
    // rad, 1.5e-14 m/s; asserted with margin for round-off: 1e-10 of the size, 1e-12 rad, 1e-10 m/s.
    EXPECT_LT(r.drift, 1e-10 * 2 * h);
    EXPECT_LT(r.totalRotation, 1e-12);
    EXPECT_LT(r.maxSpeedLast, 1e-10);
    EXPECT_LT(rel(r.overlap, r.theoryOverlap), 0.01);
  }
  {
    const RestResult r = restOnPlane(Shape(Sphere{h}), Vec3(0.0123, -0.0071, h), Quat::Identity(), h, h);
    report(
        "Rest sphere: drift %.2e m (%.2e of size), rotation %.2e rad, max speed last 1e4 steps %.2e m/s, max spin "
        "%.2e rad/s, overlap %.4g m (Hertz %.4g)",
        r.drift, r.drift / (2 * h), r.totalRotation, r.maxSpeedLast, r.maxSpinLast, r.overlap, r.theoryOverlap);
    EXPECT_LT(r.drift, 1e-10 * 2 * h);
    EXPECT_LT(r.totalRotation, 1e-12);
    EXPECT_LT(r.maxSpeedLast, 1e-10);
    EXPECT_LT(rel(r.overlap, r.theoryOverlap), 0.01);
  }
}

// A cube dropped on a corner must come to rest face down. Regression test: when a face on a plane
// was one Hertz force from the deepest vertex applied at the depth-weighted centre, the response
// was not the gradient of a potential and the cube wobbled for ever (KE constant at 1.2e-7 J) and
// kept spinning (no twisting friction). Now every penetrating vertex is its own contact.
TEST(DemValidation, CubeDroppedTiltedComesToRest) {
  const SerialScope serial;
  const Real h = 0.005;
  const Shape cube(Box{Vec3(h, h, h)});
  const Real req = std::cbrt(3 * 8 * h * h * h / (4 * kPi));
  {
    // Dropped from 1 mm with a 5 degree tilt about a skew axis: lands on a corner, rocks, settles
    // face down.
    const Quat q(Eigen::AngleAxis<Real>(5 * kPi / 180, Vec3(1, 2, 0).normalized()));
    Real lowest = 0;
    for (int c = 0; c < 8; ++c)
      lowest = std::min(lowest, (q * Vec3((c & 1) ? h : -h, (c & 2) ? h : -h, (c & 4) ? h : -h)).z());
    const RestResult r = restOnPlane(cube, Vec3(0.0123, -0.0071, 0.001 - lowest), q, req, h, 4);
    report(
        "Rest cube (dropped, tilted 5 deg): final tilt %.2e rad, drift after 0.2 s %.2e m (%.2e of size), rotation "
        "after 0.2 s %.2e rad, max speed last 1e4 steps %.2e m/s, max spin %.2e rad/s, overlap %.4g m (Hertz %.4g)",
        r.tilt, r.drift, r.drift / (2 * h), r.rotation, r.maxSpeedLast, r.maxSpinLast, r.overlap, r.theoryOverlap);
    EXPECT_LT(r.tilt, 1e-6);
    EXPECT_LT(r.drift, 1e-6 * 2 * h);
    EXPECT_LT(r.rotation, 1e-6);
    EXPECT_LT(r.maxSpeedLast, 1e-5);
    EXPECT_LT(rel(r.overlap, r.theoryOverlap), 0.01);
  }
}

// A cube spinning on its face. With the weight spread uniformly over the face (side a), Coulomb
// friction brakes it with a torque μ m g × 0.3826 a (the mean distance from the centre of a square),
// so ω = 2 rad/s stops after a ω / (6 × 0.3826 μ g) = 1.8 ms; four corner contacts stop it sooner.
TEST(DemValidation, CubeSpinningOnItsFaceStops) {
  const SerialScope serial;
  const Real h = 0.005, mu = 0.5, g = 9.81, w0 = 2.0;
  const Material m = makeMaterial("soft", 2500, 1e7, 0.3, 0.5, mu);
  Simulation sim;
  sim.setMaterials({m}, ContactModel::HertzMindlin);
  const int k = sim.addShape(makeParticleShape("cube", Shape(Box{Vec3(h, h, h)})).value());
  sim.addParticle(k, 0, Vec3(0, 0, h), Quat::Identity(), Vec3::Zero(), Vec3(0, 0, w0));
  sim.addWall(Wall{});  // (the default wall: the plane z = 0, material 0)
  sim.options().timeStep = 1e-5;
  ASSERT_TRUE(sim.initialize().ok());
  const Real tStop = 2 * h * w0 / (6 * 0.3826 * mu * g);
  sim.run(static_cast<std::int64_t>(std::lround(10 * tStop / 1e-5)));
  const Real wz = sim.particles().angularVelocity[0].z();
  report("Spinning cube: spin after %.4f s (10 x the uniform-pressure stopping time) %.4f rad/s (start %.1f)",
         sim.time(), wz, w0);
  EXPECT_LT(std::abs(wz), 1e-3 * w0);
}

// ---------------------------------------------------------------------------------------------
// Friction on a slope: a body on a plane tilted by θ about x (gravity vertical).

struct InclineResult {
  std::vector<Real> t, s, v;  ///< every 1e-3 s: time, displacement and velocity along the slope (downhill +)
};

/// `shape` (contact radius from the engine's rule) resting on a plane through the origin whose normal is
/// the z axis turned by θ about x, started just touching (face down for the cube), released at rest.
InclineResult onIncline(const Shape& shape, Real halfHeight, Real thetaDeg, Real mu, Real seconds, Real muR = 0) {
  Material m = makeMaterial("soft", 2500, 1e7, 0.3, 0.5, mu);
  m.rollingFriction = muR;
  const Real theta = thetaDeg * kPi / 180;
  const Quat q(Eigen::AngleAxis<Real>(theta, Vec3::UnitX()));
  const Vec3 n = q * Vec3::UnitZ();
  const Vec3 down = q * Vec3(0, -1, 0);  // downhill direction in the plane (gravity is -z)
  Simulation sim;
  sim.setMaterials({m}, ContactModel::HertzMindlin);
  const int k = sim.addShape(makeParticleShape("body", shape).value());
  sim.addParticle(k, 0, halfHeight * n, q);
  Wall w;
  w.kind = WallKind::Plane;
  w.material = 0;
  w.normal = n;
  sim.addWall(w);
  sim.options().timeStep = 1e-5;
  EXPECT_TRUE(sim.initialize().ok());
  EXPECT_GT(-down.z(), 0);
  InclineResult r;
  const auto steps = static_cast<int>(std::lround(seconds / 1e-5));
  const Vec3 x0 = sim.particles().position[0];
  for (int s = 1; s <= steps; ++s) {
    sim.step();
    if (s % 100 == 0) {
      r.t.push_back(sim.time());
      r.s.push_back((sim.particles().position[0] - x0).dot(down));
      r.v.push_back(sim.particles().velocity[0].dot(down));
    }
  }
  return r;
}

/// Mean acceleration along the slope from the velocity between fraction `from` of the run and its end.
Real slopeAcceleration(const InclineResult& r, Real from) {
  const auto i1 = static_cast<std::size_t>(from * static_cast<Real>(r.t.size()));
  return (r.v.back() - r.v[i1]) / (r.t.back() - r.t[i1]);
}

// A cube on an incline sticks below atan μ and slides above it at g (sin θ - μ cos θ). Regression
// test: with one force per face (see CubeDroppedTiltedComesToRest) the cube rocked and crept down
// at 20 deg and slid 7% too fast at 35 deg.
TEST(DemValidation, CubeOnInclineSticksBelowAndSlidesAboveTheFrictionAngle) {
  const SerialScope serial;
  const Real mu = 0.5, g = 9.81, h = 0.005;
  const Shape cube(Box{Vec3(h, h, h)});
  report("Incline: friction angle atan(mu) = %.2f deg", std::atan(mu) * 180 / kPi);
  {
    // 20 deg: sticks. Displacement along the slope between t = 0.1 s and 0.3 s.
    const InclineResult r = onIncline(cube, h, 20, mu, 0.3);
    const std::size_t i1 = r.t.size() / 3;  // t = 0.1 s
    const Real creep = std::abs(r.s.back() - r.s[i1]);
    Real vmax = 0;
    for (std::size_t i = i1; i < r.v.size(); ++i) vmax = std::max(vmax, std::abs(r.v[i]));
    report(
        "Incline cube 20 deg: slip while settling %.3e m (t < 0.1 s), displacement 0.1-0.3 s %.3e m, max |v| "
        "after 0.1 s %.2e m/s",
        r.s[i1], creep, vmax);
    EXPECT_LT(creep, 1e-6);
    EXPECT_LT(vmax, 1e-5);
  }
  {
    // 35 deg: slides. Acceleration from the velocity between t = 0.05 s and 0.15 s.
    const Real theta = 35 * kPi / 180;
    const Real expected = g * (std::sin(theta) - mu * std::cos(theta));
    const Real a = slopeAcceleration(onIncline(cube, h, 35, mu, 0.15), 1.0 / 3.0);
    report("Incline cube 35 deg: acceleration %.5f m/s^2 (g(sin - mu cos) %.5f, err %.2e)", a, expected,
           rel(a, expected));
    EXPECT_LT(rel(a, expected), 0.02);
  }
}

// The same slope with a sphere (analytic contact, no face): Coulomb sliding and rolling without
// slip. A sphere rolls without slipping if μ >= (2/7) tan θ, with a = (5/7) g sin θ; otherwise it
// slides with a = g (sin θ − μ cos θ) and spins up at α = 5 μ g cos θ / (2 R).
TEST(DemValidation, SphereOnInclineRollsOrSlides) {
  const SerialScope serial;
  const Real g = 9.81, radius = 0.005, theta = 35 * kPi / 180;
  const Shape ball(Sphere{radius});
  {
    const Real mu = 0.1;  // < (2/7) tan 35° = 0.200: slides
    const Real expected = g * (std::sin(theta) - mu * std::cos(theta));
    const Real a = slopeAcceleration(onIncline(ball, radius, 35, mu, 0.15), 1.0 / 3.0);
    report("Incline sphere 35 deg mu 0.1 (slides): acceleration %.5f m/s^2 (g(sin - mu cos) %.5f, err %.2e)", a,
           expected, rel(a, expected));
    EXPECT_LT(rel(a, expected), 0.02);
  }
  {
    const Real mu = 0.5;  // rolls
    const Real expected = 5.0 / 7.0 * g * std::sin(theta);
    const Real a = slopeAcceleration(onIncline(ball, radius, 35, mu, 0.15), 1.0 / 3.0);
    report("Incline sphere 35 deg mu 0.5 (rolls): acceleration %.5f m/s^2 ((5/7) g sin %.5f, err %.2e)", a, expected,
           rel(a, expected));
    EXPECT_LT(rel(a, expected), 0.02);
  }
}

// A sphere launched sliding (v0, no spin) on a flat plane: decelerates at μ g until it rolls at
// (5/7) v0, after t = 2 v0 / (7 μ g).
TEST(DemValidation, SlidingSphereStartsRolling) {
  const SerialScope serial;
  const Real g = 9.81, radius = 0.005, mu = 0.3, v0 = 1.0;
  const Material m = makeMaterial("soft", 2500, 1e7, 0.3, 0.5, mu);
  Simulation sim;
  sim.setMaterials({m}, ContactModel::HertzMindlin);
  const int k = sim.addShape(makeParticleShape("ball", Shape(Sphere{radius})).value());
  // Start at the static overlap so that the normal force is established from the first step.
  const Real mass = sphereMass(m, radius);
  const Real overlap = hertzStaticOverlap(mass * g, radius, effectiveModulus(m, m));
  sim.addParticle(k, 0, Vec3(0, 0, radius - overlap), Quat::Identity(), Vec3(v0, 0, 0));
  sim.addWall(Wall{});  // (the default wall: the plane z = 0, material 0)
  sim.options().timeStep = 1e-5;
  ASSERT_TRUE(sim.initialize().ok());
  const Real tRoll = 2 * v0 / (7 * mu * g);
  std::vector<Real> t, v, slip;
  while (sim.time() < 2 * tRoll) {
    sim.run(10);
    const Particles& p = sim.particles();
    t.push_back(sim.time());
    v.push_back(p.velocity[0].x());
    slip.push_back(p.velocity[0].x() - p.angularVelocity[0].y() * radius);  // contact-point speed
  }
  // Deceleration over the middle half of the sliding phase; rolling time where the slip first drops
  // below 1% of v0; final speed.
  std::size_t a = 0, b = 0, roll = t.size();
  for (std::size_t i = 0; i < t.size(); ++i) {
    if (t[i] <= 0.25 * tRoll) a = i;
    if (t[i] <= 0.75 * tRoll) b = i;
    if (roll == t.size() && slip[i] < 0.01 * v0) roll = i;
  }
  ASSERT_LT(roll, t.size());
  const Real decel = -(v[b] - v[a]) / (t[b] - t[a]);
  report(
      "Sliding sphere mu 0.3, v0 1 m/s: deceleration %.5f m/s^2 (mu g %.5f, err %.2e), rolling after %.5f s "
      "(2 v0/(7 mu g) %.5f), final speed %.5f m/s (5/7 v0 %.5f, err %.2e), final slip %.2e m/s",
      decel, mu * g, rel(decel, mu * g), t[roll], tRoll, v.back(), 5.0 / 7.0 * v0, rel(v.back(), 5.0 / 7.0 * v0),
      slip.back());
  EXPECT_LT(rel(decel, mu * g), 0.02);
  EXPECT_LT(rel(t[roll], tRoll), 0.03);
  EXPECT_LT(rel(v.back(), 5.0 / 7.0 * v0), 0.01);
  EXPECT_LT(std::abs(slip.back()), 1e-3 * v0);
}

// Rolling resistance (Ai et al. 2011 model C, rollingTorque): a sphere rolling on a plane at v0
// decelerates at (5/7) μ_r g, so it stops after v0² / (2 (5/7) μ_r g) and stays; on a slope it is
// held while tan θ < μ_r (its weight's moment about the contact, m g R sin θ, against the limit
// μ_r R m g cos θ) and rolls above at (5/7) g (sin θ − μ_r cos θ). Regression test: the constant
// torque used before never stopped the sphere (it rolled on at 4.25e-5 m/s) and let it creep down a
// 3° slope at ~1e-4 m/s.
TEST(DemValidation, RollingResistanceStopsASphereAndHoldsItOnASlope) {
  const SerialScope serial;
  const Real g = 9.81, radius = 0.005, muR = 0.1, v0 = 0.2;
  const Shape ball(Sphere{radius});
  {
    Material m = makeMaterial("soft", 2500, 1e7, 0.3, 0.5, 0.5);
    m.rollingFriction = muR;
    Simulation sim;
    sim.setMaterials({m}, ContactModel::HertzMindlin);
    const int k = sim.addShape(makeParticleShape("ball", ball).value());
    const Real overlap = hertzStaticOverlap(sphereMass(m, radius) * g, radius, effectiveModulus(m, m));
    sim.addParticle(k, 0, Vec3(0, 0, radius - overlap), Quat::Identity(), Vec3(v0, 0, 0),
                    Vec3(0, v0 / (radius - overlap), 0));  // rolling without slip
    sim.addWall(Wall{});  // (the default wall: the plane z = 0, material 0)
    sim.options().timeStep = 1e-5;
    ASSERT_TRUE(sim.initialize().ok());
    const Real a = 5.0 / 7.0 * muR * g, distance = v0 * v0 / (2 * a), stop = v0 / a;
    // (After the stop the sphere rocks on its rolling spring, period 2π √(I_r / k_r) = 0.04 s, damped
    // at η_r = 0.3: ~1e-3 of its amplitude is left 0.15 s later.)
    sim.run(static_cast<int>(std::lround((stop + 0.2) / 1e-5)));
    const Particles& p = sim.particles();
    const Real travelled = p.position[0].x(), speed = p.velocity[0].norm(),
               spin = p.angularVelocity[0].norm() * radius;
    sim.run(20000);  // 0.2 s more at rest
    const Real drift = std::abs(p.position[0].x() - travelled);
    report(
        "Rolling resistance mu_r 0.1, v0 0.2 m/s: stopped after %.5f m (v0^2/(2 (5/7) mu_r g) %.5f, err %.2e); "
        "0.2 s after the stopping time |v| %.2e m/s, |w| R %.2e m/s; then %.2e m in 0.2 s",
        travelled, distance, rel(travelled, distance), speed, spin, drift);
    EXPECT_LT(rel(travelled, distance), 0.01);
    EXPECT_LT(speed, 1e-6);
    EXPECT_LT(spin, 1e-6);
    EXPECT_LT(drift, 1e-8);
  }
  {
    // 3° (tan 0.052 < μ_r): held. Released at rest, it rolls onto its rolling spring (~1.3e-5 m) and
    // rocks there while the dashpot damps it: displacement along the slope between 0.3 and 0.5 s.
    const InclineResult r = onIncline(ball, radius, 3, 0.5, 0.5, muR);
    const std::size_t i1 = 3 * r.t.size() / 5;
    const Real creep = std::abs(r.s.back() - r.s[i1]);
    Real vmax = 0;
    for (std::size_t i = i1; i < r.v.size(); ++i) vmax = std::max(vmax, std::abs(r.v[i]));
    report("Rolling resistance mu_r 0.1 on 3 deg: moved %.3e m until 0.3 s, %.3e m from 0.3 to 0.5 s, max |v| after "
           "0.3 s %.2e m/s",
           r.s[i1], creep, vmax);
    EXPECT_LT(creep, 1e-7);
    EXPECT_LT(vmax, 1e-6);
  }
  {
    // 10° (tan 0.176 > μ_r): rolls.
    const Real theta = 10 * kPi / 180;
    const Real expected = 5.0 / 7.0 * g * (std::sin(theta) - muR * std::cos(theta));
    const Real a = slopeAcceleration(onIncline(ball, radius, 10, 0.5, 0.15, muR), 1.0 / 3.0);
    report("Rolling resistance mu_r 0.1 on 10 deg: acceleration %.5f m/s^2 ((5/7) g (sin - mu_r cos) %.5f, err %.2e)",
           a, expected, rel(a, expected));
    EXPECT_LT(rel(a, expected), 0.02);
  }
}

// ---------------------------------------------------------------------------------------------
// Pour: spheres rained into a box settle to a random packing.

struct PourResult {
  int particles = 0, bulkParticles = 0;
  Real packing = 0, seconds = 0, kineticPerParticle = 0, bedHeight = 0;
  Real meanOverlap = 0, maxOverlap = 0, coordination = 0;  ///< at the end (overlaps over d)
};

/// Packing fraction of spheres (all radius r) inside the box [lo, hi], from a regular grid of
/// sample points with spacing r/25 (cell-centred).
Real packingFraction(const std::vector<Vec3>& centres, Real r, const Vec3& lo, const Vec3& hi) {
  const Real h = r / 25;
  const Vec3 ext = hi - lo;
  const int nx = static_cast<int>(std::lround(ext.x() / h)), ny = static_cast<int>(std::lround(ext.y() / h)),
            nz = static_cast<int>(std::lround(ext.z() / h));
  const Vec3 step(ext.x() / nx, ext.y() / ny, ext.z() / nz);
  std::int64_t inside = 0;
  // Per z-slice, the spheres that cut it; per row, the x-intervals.
  std::vector<std::pair<Real, Real>> intervals;
  for (int kz = 0; kz < nz; ++kz) {
    const Real z = lo.z() + (kz + 0.5) * step.z();
    for (int ky = 0; ky < ny; ++ky) {
      const Real y = lo.y() + (ky + 0.5) * step.y();
      intervals.clear();
      for (const Vec3& c : centres) {
        const Real d2 = r * r - (z - c.z()) * (z - c.z()) - (y - c.y()) * (y - c.y());
        if (d2 <= 0) continue;
        const Real hw = std::sqrt(d2);
        intervals.emplace_back(c.x() - hw, c.x() + hw);
      }
      for (int kx = 0; kx < nx; ++kx) {
        const Real x = lo.x() + (kx + 0.5) * step.x();
        for (const auto& [a, b] : intervals)
          if (x > a && x < b) {
            ++inside;
            break;
          }
      }
    }
  }
  return static_cast<Real>(inside) / (static_cast<Real>(nx) * ny * nz);
}

PourResult pour(int count, Real boxWidth, std::uint64_t seed) {
  const Real radius = 0.005, d = 2 * radius;
  const Material m = makeMaterial("grain", 2500, 1e6, 0.3, 0.5, 0.5);
  Simulation sim;
  sim.setMaterials({m}, ContactModel::HertzMindlin);
  const int k = sim.addShape(makeParticleShape("ball", Shape(Sphere{radius})).value());
  // Random non-overlapping positions in a column at solid fraction ~0.2, random velocities.
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<Real> u(0, 1);
  const Real columnHeight = count * (4.0 / 3.0 * kPi * radius * radius * radius) / (boxWidth * boxWidth * 0.2);
  std::vector<Vec3> placed;
  while (static_cast<int>(placed.size()) < count) {
    const Vec3 x(radius + (boxWidth - d) * u(rng), radius + (boxWidth - d) * u(rng), d + columnHeight * u(rng));
    bool ok = true;
    for (const Vec3& y : placed)
      if ((x - y).squaredNorm() < d * d * 1.0201) {
        ok = false;
        break;
      }
    if (!ok) continue;
    placed.push_back(x);
    sim.addParticle(k, 0, x, Quat::Identity(), Vec3(u(rng) - 0.5, u(rng) - 0.5, u(rng) - 0.5));
  }
  for (int axis = 0; axis < 3; ++axis)
    for (int side = 0; side < (axis == 2 ? 1 : 2); ++side) {
      Wall w;
      w.kind = WallKind::Plane;
      w.material = 0;
      w.origin = Vec3::Zero();
      w.origin[axis] = side ? boxWidth : 0;
      w.normal = Vec3::Zero();
      w.normal[axis] = side ? -1 : 1;
      sim.addWall(w);
    }
  // dt: 1/25 of the Hertz contact time at 3 m/s (about the fall speed) between two grains.
  const Real mass = sphereMass(m, radius);
  const Real dt = hertzTheory(mass / 2, radius / 2, effectiveModulus(m, m), 3.0).contactTime / 25;
  sim.options().timeStep = dt;
  EXPECT_TRUE(sim.initialize().ok());
  // Settle until the mean kinetic energy per grain is below 1e-6 of m g d (and at least the free-fall
  // time of the column).
  const Real fallTime = std::sqrt(2 * (columnHeight + d) / 9.81);
  PourResult r;
  r.particles = count;
  const Real threshold = 1e-6 * mass * 9.81 * d;
  for (;;) {
    sim.run(200);
    const Stats st = sim.stats();
    r.kineticPerParticle = st.kineticEnergy / count;
    if (sim.time() > fallTime && r.kineticPerParticle < threshold) break;
    if (sim.time() > 10) break;
  }
  r.seconds = sim.time();
  const Stats st = sim.stats();
  r.meanOverlap = st.meanOverlap / d;
  r.maxOverlap = st.maxOverlap / d;
  r.coordination = st.coordinationNumber;
  // Bulk region: 2.5 d from the side walls and the floor, 2.5 d below the free surface (the 95th
  // percentile of the centre heights, plus a radius).
  std::vector<Real> z;
  for (const Vec3& x : sim.particles().position) z.push_back(x.z());
  std::sort(z.begin(), z.end());
  r.bedHeight = z[static_cast<std::size_t>(0.95 * (z.size() - 1))] + radius;
  const Vec3 lo(2.5 * d, 2.5 * d, 2.5 * d), hi(boxWidth - 2.5 * d, boxWidth - 2.5 * d, r.bedHeight - 2.5 * d);
  if (!(hi.z() > lo.z() + d)) return r;
  for (const Vec3& x : sim.particles().position)
    if ((x.array() > lo.array()).all() && (x.array() < hi.array()).all()) ++r.bulkParticles;
  r.packing = packingFraction(sim.particles().position, radius, lo, hi);
  return r;
}

TEST(DemValidation, PackingFractionOfAnFccLattice) {
  // The measuring tool itself: touching spheres on an FCC lattice fill π/√18 = 0.74048 of space; a
  // box of whole unit cells (lattice constant 2√2 r) inside the lattice, offset from the lattice.
  const Real r = 0.005, a = 2 * std::sqrt(2.0) * r;
  std::vector<Vec3> centres;
  const Vec3 basis[4] = {Vec3(0, 0, 0), Vec3(0.5, 0.5, 0), Vec3(0.5, 0, 0.5), Vec3(0, 0.5, 0.5)};
  for (int i = -1; i <= 4; ++i)
    for (int j = -1; j <= 4; ++j)
      for (int k = -1; k <= 4; ++k)
        for (const Vec3& b : basis) centres.push_back(a * (Vec3(i, j, k) + b));
  const Vec3 lo = Vec3::Constant(0.37 * a);
  const Real phi = packingFraction(centres, r, lo, lo + Vec3::Constant(3 * a));
  report("Packing fraction tool: FCC %.5f (exact %.5f)", phi, kPi / std::sqrt(18.0));
  EXPECT_NEAR(phi, kPi / std::sqrt(18.0), 2e-3);
}

TEST(DemValidation, PourPackingFractionQuick) {
  const PourResult r = pour(400, 0.08, 42);
  report(
      "Pour (quick): %d spheres d = 1 cm in a 8 d x 8 d box, settled after %.2f s (KE/grain %.2e J), bed height "
      "%.4f m, overlap mean %.2e d max %.2e d, coordination %.2f, %d centres in the bulk box, packing fraction %.4f",
      r.particles, r.seconds, r.kineticPerParticle, r.bedHeight, r.meanOverlap, r.maxOverlap, r.coordination,
      r.bulkParticles, r.packing);
  EXPECT_GT(r.packing, 0.50);
  EXPECT_LT(r.packing, 0.68);
}

TEST(DemValidation, PourPackingFractionLong) {
  if (!longRuns()) GTEST_SKIP() << "set PROXIMA_DEM_LONG=1 for the 2000-sphere pour (1-2 min)";
  const PourResult r = pour(2000, 0.12, 42);
  report(
      "Pour (long): %d spheres d = 1 cm in a 12 d x 12 d box, settled after %.2f s (KE/grain %.2e J), bed height "
      "%.4f m, overlap mean %.2e d max %.2e d, coordination %.2f, %d centres in the bulk box, packing fraction %.4f",
      r.particles, r.seconds, r.kineticPerParticle, r.bedHeight, r.meanOverlap, r.maxOverlap, r.coordination,
      r.bulkParticles, r.packing);
  EXPECT_GT(r.bulkParticles, 150);
  EXPECT_GT(r.packing, 0.56);
  EXPECT_LT(r.packing, 0.64);
}

}  // namespace
}  // namespace proxima::dem
