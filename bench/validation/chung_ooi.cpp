// Chung & Ooi (2011) particle-impact benchmarks 1-4, swept over materials, restitutions, impact
// speeds and angles; writes CSV files for bench/validation/plot_chung_ooi.py and the validation report
// (docs/validation.md, DEM part). The pass/fail checks of the same cases are in
// tests/test_dem_validation.cpp.
//
//   proxima_chung_ooi [output directory]      (default: the current directory)
//
// Files written:
//   hertz_normal.csv             tests 1 and 2: peak force, peak overlap, contact time vs Hertz theory
//   force_time.csv               tests 1 and 2: normal force history
//   restitution_in_vs_out.csv    test 3: rebound/impact speed ratio vs the input restitution
//   oblique.csv                  test 4: tangential restitution and spin vs impact angle, rigid limits
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <numbers>
#include <string>
#include <vector>

#include "proxima/dem/simulation.hpp"

using namespace proxima;
using namespace proxima::dem;

namespace {

constexpr Real kPi = std::numbers::pi;

Material material(const char* name, Real density, Real youngs, Real nu) {
  Material m;
  m.name = name;
  m.density = density;
  m.youngsModulus = youngs;
  m.poissonRatio = nu;
  m.restitution = 1.0;
  m.friction = 0.0;
  m.rollingFriction = 0;
  m.linearStiffness = 0;
  return m;
}

// The wall: the particle's material (so that the pair's e and μ, the means of the two materials,
// are the particle's) with E = 1e20 Pa.
Material rigidWall(const Material& m) {
  Material w = m;
  w.name = m.name + "-wall";
  w.youngsModulus = 1e20;
  return w;
}

Real sphereMass(const Material& m, Real r) { return m.density * 4.0 / 3.0 * kPi * r * r * r; }

struct Hertz {
  Real maxOverlap, maxForce, contactTime;
};
Hertz hertz(Real mEff, Real rEff, Real eEff, Real v) {
  Hertz h{};
  h.maxOverlap = hertzMaxOverlap(mEff, rEff, eEff, v);
  h.maxForce = hertzForce(h.maxOverlap, rEff, eEff);
  h.contactTime = hertzContactTime(mEff, rEff, eEff, v);
  return h;
}

struct Impact {
  Real maxForce = 0, maxOverlap = 0, contactTime = 0;
  Vec3 velocity = Vec3::Zero(), angularVelocity = Vec3::Zero();  // particle 0 after separation
  std::vector<std::pair<Real, Real>> history;                    // (t, normal force)
  bool separated = false;
};

// Steps `sim` (set up, not initialised) until the single contact opens again. `overlap` returns the
// current geometric overlap, for interpolating the separation time.
template <class Overlap>
Impact runImpact(Simulation& sim, Real dt, bool keepHistory, Overlap overlap) {
  Impact r;
  sim.options().gravity.setZero();
  sim.options().timeStep = dt;
  sim.options().threads = 1;
  if (!sim.initialize().ok()) return r;
  bool touched = false;
  Real last = 0;
  for (long s = 0; s < 100'000'000L; ++s) {
    sim.step();
    const auto c = sim.contacts();
    const Real now = overlap();
    if (!c.empty()) {
      touched = true;
      const Real fn = c[0].force.dot(c[0].normal);
      r.maxForce = std::max(r.maxForce, fn);
      r.maxOverlap = std::max(r.maxOverlap, c[0].depth);
      if (keepHistory) r.history.emplace_back(sim.time(), fn);
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

// Sphere on the plane z = 0 with velocity (vt, 0, -vn), starting just touching.
Impact sphereWall(const Material& m, Real radius, Real vn, Real vt, ContactModel model, Real dt, bool history = false) {
  Simulation sim;
  sim.setMaterials({m, rigidWall(m)}, model);
  const int k = sim.addShape(makeParticleShape("ball", Shape(Sphere{radius})).value());
  sim.addParticle(k, 0, Vec3(0, 0, radius), Quat::Identity(), Vec3(vt, 0, -vn));
  Wall w;
  w.name = "floor";
  w.material = 1;
  sim.addWall(w);
  return runImpact(sim, dt, history, [&] { return radius - sim.particles().position[0].z(); });
}

// Two identical spheres meeting head-on along x, each at speed v.
Impact twoSpheres(const Material& m, Real radius, Real v, Real dt, bool history = false) {
  Simulation sim;
  sim.setMaterials({m}, ContactModel::HertzMindlin);
  const int k = sim.addShape(makeParticleShape("ball", Shape(Sphere{radius})).value());
  sim.addParticle(k, 0, Vec3(-radius, 0, 0), Quat::Identity(), Vec3(v, 0, 0));
  sim.addParticle(k, 0, Vec3(radius, 0, 0), Quat::Identity(), Vec3(-v, 0, 0));
  return runImpact(sim, dt, history,
                   [&] { return 2 * radius - (sim.particles().position[1] - sim.particles().position[0]).norm(); });
}

FILE* openCsv(const std::filesystem::path& dir, const char* name, const char* header) {
  const std::filesystem::path p = dir / name;
  FILE* f = std::fopen(p.c_str(), "w");
  if (!f) {
    std::fprintf(stderr, "cannot write %s\n", p.c_str());
    std::exit(1);
  }
  std::fprintf(f, "%s\n", header);
  std::printf("writing %s\n", p.c_str());
  return f;
}

}  // namespace

int main(int argc, char** argv) {
  const std::filesystem::path dir = argc > 1 ? argv[1] : ".";
  std::filesystem::create_directories(dir);

  // ---- Tests 1 and 2: elastic normal impacts, Hertz theory ----
  {
    FILE* f = openCsv(dir, "hertz_normal.csv",
                      "test,material,radius,impact_speed,fmax_dem,fmax_theory,dmax_dem,dmax_theory,tc_dem,tc_theory,"
                      "rebound_ratio,dt");
    FILE* h = openCsv(dir, "force_time.csv", "test,material,t,force,t_over_tc,force_over_fmax");
    struct Case {
      int test;
      Material m;
    };
    const Case cases[] = {{1, material("glass", 2800, 48e9, 0.20)},
                          {1, material("limestone", 2500, 20e9, 0.25)},
                          {2, material("aluminium alloy", 2699, 70e9, 0.30)},
                          {2, material("magnesium alloy", 1800, 40e9, 0.35)}};
    for (const Case& c : cases) {
      const bool pair = c.test == 1;
      const Real radius = pair ? 0.010 : 0.10, v = pair ? 10.0 : 0.2;
      const Real mass = sphereMass(c.m, radius);
      const Hertz th = pair ? hertz(mass / 2, radius / 2, effectiveModulus(c.m, c.m), 2 * v)
                            : hertz(mass, radius, effectiveModulus(c.m, rigidWall(c.m)), v);
      const Real dt = th.contactTime / 4000;
      const Impact r = pair ? twoSpheres(c.m, radius, v, dt, true)
                            : sphereWall(c.m, radius, v, 0, ContactModel::HertzMindlin, dt, true);
      const Real rebound = pair ? -r.velocity.x() / v : r.velocity.z() / v;
      std::fprintf(f, "%d,%s,%g,%g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.12f,%.6g\n", c.test, c.m.name.c_str(), radius, v,
                   r.maxForce, th.maxForce, r.maxOverlap, th.maxOverlap, r.contactTime, th.contactTime, rebound, dt);
      for (std::size_t k = 0; k < r.history.size(); k += 20)
        std::fprintf(h, "%d,%s,%.9g,%.9g,%.6f,%.6f\n", c.test, c.m.name.c_str(), r.history[k].first,
                     r.history[k].second, r.history[k].first / th.contactTime, r.history[k].second / th.maxForce);
    }
    std::fclose(f);
    std::fclose(h);
  }

  // ---- Test 3: restitution, sphere on a rigid wall ----
  {
    FILE* f = openCsv(dir, "restitution_in_vs_out.csv", "material,model,impact_speed,e_in,e_out,rel_error");
    const Real radius = 0.0025;
    for (Material m : {material("aluminium oxide", 4000, 380e9, 0.23), material("cast iron", 7000, 100e9, 0.25)}) {
      const Real mass = sphereMass(m, radius), eEff = effectiveModulus(m, rigidWall(m));
      for (int i = 1; i <= 20; ++i) {
        const Real e = 0.05 * i;
        m.restitution = e;
        for (const Real v : {0.39, 3.9, 39.0}) {
          const Impact r =
              sphereWall(m, radius, v, 0, ContactModel::HertzMindlin, hertz(mass, radius, eEff, v).contactTime / 1000);
          const Real out = r.velocity.z() / v;
          std::fprintf(f, "%s,hertz_mindlin,%g,%.2f,%.8f,%.3e\n", m.name.c_str(), v, e, out, std::abs(out - e) / e);
        }
        const Real kn = 0.4 / 3 * eEff * radius;  // the engine's default linear stiffness
        const Impact r =
            sphereWall(m, radius, 3.9, 0, ContactModel::LinearSpringDashpot, kPi * std::sqrt(mass / kn) / 1000);
        const Real out = r.velocity.z() / 3.9;
        std::fprintf(f, "%s,linear,3.9,%.2f,%.8f,%.3e\n", m.name.c_str(), e, out, std::abs(out - e) / e);
      }
    }
    std::fclose(f);
  }

  // ---- Test 4: oblique impact, aluminium oxide, |v| = 3.9 m/s, μ = 0.092, e = 0.98 ----
  {
    FILE* f = openCsv(dir, "oblique.csv",
                      "model,angle_deg,vn,vt,et_dem,et_rigid,spin_dem,spin_rigid,contact_point_et_dem,"
                      "psi1,psi2_dem,regime_rigid");
    const Real radius = 0.0025, speed = 3.9, mu = 0.092, e = 0.98;
    Material m = material("aluminium oxide", 4000, 380e9, 0.23);
    m.restitution = e;
    m.friction = mu;
    const Real mass = sphereMass(m, radius), eEff = effectiveModulus(m, rigidWall(m));
    for (const ContactModel model : {ContactModel::HertzMindlin, ContactModel::LinearSpringDashpot}) {
      for (int a = 1; a <= 89; ++a) {
        const Real theta = a * kPi / 180;
        const Real vn = speed * std::cos(theta), vt = speed * std::sin(theta);
        const Real kn = 0.4 / 3 * eEff * radius;
        const Real dt = model == ContactModel::HertzMindlin ? hertz(mass, radius, eEff, vn).contactTime / 2000
                                                            : kPi * std::sqrt(mass / kn) / 2000;
        const Impact r = sphereWall(m, radius, vn, vt, model, dt);
        const Real et = r.velocity.x() / vt;
        const Real spin = r.angularVelocity.y();  // +y for a sphere moving along +x over z = 0
        const Real etc = (r.velocity.x() - spin * radius) / vt;
        const bool sticks = std::tan(theta) <= 3.5 * mu * (1 + e);
        const Real etRigid = sticks ? 5.0 / 7.0 : 1 - mu * (1 + e) / std::tan(theta);
        const Real spinRigid = sticks ? 5.0 / 7.0 * vt / radius : 5 * mu * (1 + e) * vn / (2 * radius);
        // Normalised incidence and recoil angles of the contact point (Maw et al.; Thornton's ψ):
        // ψ1 = 2 v_t / (μ (1 + e) v_n), ψ2 = 2 (v_t' − ω R) / (μ (1 + e) v_n).
        const Real psi1 = 2 * vt / (mu * (1 + e) * vn);
        const Real psi2 = 2 * (r.velocity.x() - spin * radius) / (mu * (1 + e) * vn);
        std::fprintf(f, "%s,%d,%.6f,%.6f,%.8f,%.8f,%.6f,%.6f,%.8f,%.6f,%.6f,%s\n",
                     model == ContactModel::HertzMindlin ? "hertz_mindlin" : "linear", a, vn, vt, et, etRigid, spin,
                     spinRigid, etc, psi1, psi2, sticks ? "stick" : "slide");
      }
    }
    std::fclose(f);
  }
  return 0;
}
