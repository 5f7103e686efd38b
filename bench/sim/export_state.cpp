// Exports the state of a scenario (optionally restored from a checkpoint) as JSON, for handing the
// SAME initial state to a peer code (bench/peers/yade/packing.py, protocol in bench/peers/README.md,
// "Packing scene").
// Usage: proxima_export_state SCENE.yaml [--checkpoint CKPT] --out STATE.json
//
// The scenario is built exactly as `proxima run` builds it (io::loadScenario + dem::buildSimulation,
// so the particles, their shapes and the lid placement are the run's); with --checkpoint, the dynamic
// state saved by `proxima run` (DIR/checkpoint.bin) or proxima_bench_dem --settled is loaded on top.
//
// JSON (SI units, world frame):
//   source: {scenario, checkpoint, time, step}
//   time_step, gravity [x,y,z], skin (the Verlet skin of the run), conservative_bound
//   materials: [{name, density, youngs_modulus, poisson_ratio, restitution, friction, rolling_friction}]
//   shapes: [{name, vertices (hull vertex count), volume, bounding_radius, equivalent_radius, core_radius}]
//   particles: [{id, shape, material, mass, volume, inertia (principal, body frame), position (centroid),
//                orientation [w,x,y,z] (body -> world), velocity, angular_velocity,
//                vertices: world vertices of the convex hull = orientation * bodyVertices + position}]
//   walls: [{name, kind: plane|mesh, material, origin, normal (into the domain), velocity, mass,
//            lid (mass > 0: a free lid moving along its normal), lid_speed (along the normal),
//            mesh only: vertices (world), triangles}]
//   container: {min, max, closed_top} (the scenario's first box wall) or null
//   stats: {contacts, wall_contacts, coordination_number, max_speed, mean_overlap, max_overlap,
//           kinetic_energy}
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>

#include "proxima/dem/builder.hpp"
#include "proxima/io/scenario_yaml.hpp"

using namespace proxima;
using json = nlohmann::json;

namespace {

json vec(const Vec3& v) { return json::array({v.x(), v.y(), v.z()}); }

}  // namespace

int main(int argc, char** argv) {
  std::string scene, checkpoint, out;
  for (int a = 1; a < argc; ++a) {
    const std::string arg = argv[a];
    auto next = [&]() -> std::string {
      if (a + 1 >= argc) {
        std::cerr << arg << " needs a value\n";
        std::exit(2);
      }
      return argv[++a];
    };
    if (arg == "--checkpoint") checkpoint = next();
    else if (arg == "--out") out = next();
    else if (arg == "-h" || arg == "--help") {
      std::cout << "usage: proxima_export_state SCENE.yaml [--checkpoint CKPT] --out STATE.json\n";
      return 0;
    } else if (!arg.empty() && arg[0] == '-') {
      std::cerr << "unknown option " << arg << '\n';
      return 2;
    } else scene = arg;
  }
  if (scene.empty() || out.empty()) {
    std::cerr << "usage: proxima_export_state SCENE.yaml [--checkpoint CKPT] --out STATE.json\n";
    return 2;
  }
  auto sc = io::loadScenario(scene);
  if (!sc.ok()) {
    std::cerr << sc.message() << '\n';
    return 2;
  }
  sc.value().output.vtk = false;
  sc.value().threads = 1;
  dem::Simulation sim;
  if (auto r = dem::buildSimulation(sc.value(), sim); !r.ok()) {
    std::cerr << r.message() << '\n';
    return 2;
  }
  if (!checkpoint.empty()) {
    std::ifstream in(checkpoint, std::ios::binary);
    if (!in) {
      std::cerr << checkpoint << ": cannot open\n";
      return 1;
    }
    if (auto r = sim.loadState(in); !r.ok()) {
      std::cerr << checkpoint << ": " << r.message() << '\n';
      return 1;
    }
  }

  json doc;
  doc["source"] = {{"scenario", scene},
                   {"checkpoint", checkpoint.empty() ? json(nullptr) : json(checkpoint)},
                   {"time", sim.time()},
                   {"step", sim.stepCount()}};
  doc["time_step"] = sim.options().timeStep;
  doc["gravity"] = vec(sim.options().gravity);
  // The Verlet skin initialize() uses: options().skin, or 0.1 x the mean bounding diameter when 0
  // (src/dem/simulation.cpp).
  Real skin = sim.options().skin;
  if (!(skin > 0) && sim.particles().size() > 0) {
    Real sum = 0;
    for (std::size_t i = 0; i < sim.particles().size(); ++i)
      sum += 2 * sim.shapes()[static_cast<std::size_t>(sim.particles().shape[i])].boundingRadius;
    skin = 0.1 * sum / static_cast<Real>(sim.particles().size());
  }
  doc["skin"] = skin;
  doc["conservative_bound"] = sim.options().conservativeBound;

  json mats = json::array();
  for (const dem::Material& m : sim.materials())
    mats.push_back({{"name", m.name},
                    {"density", m.density},
                    {"youngs_modulus", m.youngsModulus},
                    {"poisson_ratio", m.poissonRatio},
                    {"restitution", m.restitution},
                    {"friction", m.friction},
                    {"rolling_friction", m.rollingFriction}});
  doc["materials"] = std::move(mats);

  json shapes = json::array();
  for (const dem::ParticleShape& s : sim.shapes())
    shapes.push_back({{"name", s.name},
                      {"vertices", s.bodyVertices.size()},
                      {"volume", s.volume},
                      {"bounding_radius", s.boundingRadius},
                      {"equivalent_radius", s.equivalentRadius},
                      {"core_radius", s.coreRadius}});
  doc["shapes"] = std::move(shapes);

  const dem::Particles& p = sim.particles();
  json parts = json::array();
  std::size_t curved = 0;
  for (std::size_t i = 0; i < p.size(); ++i) {
    const dem::ParticleShape& s = sim.shapes()[static_cast<std::size_t>(p.shape[i])];
    if (s.bodyVertices.empty()) ++curved;
    json verts = json::array();
    for (const Vec3& v : s.bodyVertices) verts.push_back(vec(p.orientation[i] * v + p.position[i]));
    const Quat& q = p.orientation[i];
    parts.push_back({{"id", p.id[i]},
                     {"shape", p.shape[i]},
                     {"material", p.material[i]},
                     {"mass", p.mass[i]},
                     {"volume", s.volume},
                     {"inertia", vec(p.inertia[i])},
                     {"position", vec(p.position[i])},
                     {"orientation", json::array({q.w(), q.x(), q.y(), q.z()})},
                     {"velocity", vec(p.velocity[i])},
                     {"angular_velocity", vec(p.angularVelocity[i])},
                     {"fixed", p.fixed[i] != 0},
                     {"vertices", std::move(verts)}});
  }
  doc["particles"] = std::move(parts);
  if (curved > 0)
    std::cerr << "warning: " << curved << " particles have no polyhedral core (curved shapes): no vertices exported\n";

  json walls = json::array();
  for (std::size_t w = 0; w < sim.walls().size(); ++w) {
    const dem::Wall& wall = sim.walls()[w];
    json j = {{"name", wall.name},
              {"kind", wall.kind == dem::WallKind::Plane ? "plane" : "mesh"},
              {"material", wall.material},
              {"origin", vec(wall.origin)},
              {"normal", vec(wall.normal)},
              {"velocity", vec(wall.velocity)},
              {"mass", wall.mass},
              {"lid", wall.isLid()},
              {"lid_speed", sim.lidSpeed(static_cast<int>(w))}};
    if (wall.kind == dem::WallKind::Mesh) {
      json mv = json::array(), mt = json::array();
      for (const Vec3& v : wall.vertices) mv.push_back(vec(v + wall.origin));
      for (const auto& t : wall.triangles) mt.push_back(json::array({t[0], t[1], t[2]}));
      j["vertices"] = std::move(mv);
      j["triangles"] = std::move(mt);
    }
    walls.push_back(std::move(j));
  }
  doc["walls"] = std::move(walls);

  if (sc.value().container)
    doc["container"] = {{"min", vec(sc.value().container->min)},
                        {"max", vec(sc.value().container->max)},
                        {"closed_top", sc.value().container->closedTop}};
  else
    doc["container"] = nullptr;

  const dem::Stats st = sim.stats();
  doc["stats"] = {{"contacts", st.contacts},
                  {"wall_contacts", st.wallContacts},
                  {"coordination_number", st.coordinationNumber},
                  {"max_speed", st.maxSpeed},
                  {"mean_overlap", st.meanOverlap},
                  {"max_overlap", st.maxOverlap},
                  {"kinetic_energy", st.kineticEnergy}};

  std::ofstream f(out);
  if (!f) {
    std::cerr << out << ": cannot write\n";
    return 1;
  }
  f << doc.dump() << '\n';
  if (!f) {
    std::cerr << out << ": write failed\n";
    return 1;
  }
  std::cerr << "wrote " << out << ": " << p.size() << " particles, " << sim.walls().size() << " walls, t = " << sim.time()
            << " s\n";
  return 0;
}
