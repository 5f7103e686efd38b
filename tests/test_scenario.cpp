// YAML scenarios (io/scenario_yaml) and the scenario builder (dem/builder): the parsed model, error
// messages with file, line and field path, shape scaling, and particle insertion.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <memory>
#include <numbers>
#include <string>
#include <vector>

#include "proxima/dem/builder.hpp"
#include "proxima/io/scenario_yaml.hpp"

using namespace proxima;

namespace {

const std::string kMeshes = std::string(PROXIMA_SOURCE_DIR) + "/examples/meshes";
const std::string kScenarios = std::string(PROXIMA_SOURCE_DIR) + "/examples/scenarios";

dem::Scenario parseOk(const std::string& text, const std::string& baseDir = kMeshes) {
  auto r = io::parseScenario(text, "s.yaml", baseDir);
  EXPECT_TRUE(r.ok()) << r.message();
  return r.ok() ? r.value() : dem::Scenario{};
}

/// Parses text that must fail; returns the message.
std::string parseError(const std::string& text) {
  auto r = io::parseScenario(text, "s.yaml", kMeshes);
  EXPECT_FALSE(r.ok()) << "parsed although invalid:\n" << text;
  return r.ok() ? std::string() : r.message();
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// A minimal valid scenario; lines are numbered for the error tests (line k is kMinimal[k-1]).
const std::vector<std::string> kMinimal = {
    "materials:",                                                                           // 1
    "  - {name: glass, density: 2500, youngs_modulus: 1.0e7}",                              // 2
    "templates:",                                                                           // 3
    "  - {name: grain, shape: {type: sphere, radius: 0.001}, material: glass}",             // 4
    "particles:",                                                                           // 5
    "  - {template: grain, count: 10, region: {min: [0, 0, 0], max: [0.01, 0.01, 0.01]}}",  // 6
    "time: {duration: 0.1}",                                                                // 7
};

/// kMinimal with line `line` (1-based) replaced (empty replacement: line removed) and `extra` appended.
std::string variant(int line, const std::string& replacement, const std::string& extra = "") {
  std::string out;
  for (int i = 1; i <= static_cast<int>(kMinimal.size()); ++i) {
    const std::string& l = i == line ? replacement : kMinimal[static_cast<std::size_t>(i - 1)];
    if (!l.empty()) out += l + "\n";
  }
  return out + extra;
}

void expectError(const std::string& text, const std::string& linePrefix, const std::vector<std::string>& parts) {
  const std::string msg = parseError(text);
  EXPECT_EQ(msg.rfind(linePrefix, 0), 0u) << "message does not start with '" << linePrefix << "': " << msg;
  for (const auto& p : parts) EXPECT_TRUE(contains(msg, p)) << "'" << p << "' missing from: " << msg;
}

const char* kFull = R"(
materials:
  - name: glass
    density: 2500
    youngs_modulus: 1.0e7
    poisson_ratio: 0.25
    restitution: 0.6
    friction: 0.4
    rolling_friction: 0.01
    rolling_damping: 0.2
  - {name: steel, density: 7800, youngs_modulus: 2.0e8, stiffness: 1000}
contact_model: linear
interactions:
  - materials: [glass, steel]
    restitution: 0.4
    friction: 0.3
  - {materials: [steel, steel], rolling_friction: 0.02}
templates:
  - name: fixed
    shape: {type: sphere, radius: 0.001}
    material: glass
    size: 2.0
  - name: uni
    shape: {type: box, half_extents: [0.001, 0.002, 0.003], inflate: 0.0001}
    material: steel
    size: {distribution: uniform, min: 0.8, max: 1.2}
  - name: logn
    shape: {type: polytope, points: [[0,0,0],[0.001,0,0],[0,0.001,0],[0,0,0.001]]}
    material: glass
    size: {distribution: lognormal, median: 1.0, sigma: 0.2, min: 0.5, max: 2.0}
  - name: tab
    shape: {type: mesh, file: octahedron.obj}
    material: glass
    size: {distribution: table, sizes: [0.5, 1.0, 2.0], fractions: [2, 5, 3]}
  - name: plain
    shape: {type: ellipsoid, radii: [0.001, 0.002, 0.001]}
    material: glass
particles:
  - template: fixed
    count: 100
    region: {min: [0, 0, 0], max: [0.1, 0.1, 0.1]}
    velocity: [0, 0, -1]
    velocity_jitter: 0.1
    random_orientation: false
    seed: 42
  - {template: uni, method: lattice, volume_fraction: 0.3, region: {min: [0, 0, 0.1], max: [0.1, 0.1, 0.2]}}
walls:
  - {type: plane, name: floor, point: [0, 0, 0], normal: [0, 0, 2], material: glass, velocity: [0.1, 0, 0]}
  - {type: box, name: container, min: [-1, -2, -3], max: [1, 2, 3], open_top: true, material: steel}
  - {type: box, name: closed, min: [0, 0, 0], max: [1, 1, 1], material: glass}
  - {type: mesh, name: funnel, file: cube.stl, scale: 2.0, offset: [0, 0, 1], material: steel}
  - {type: lid, name: lid, height: 0.5, mass: 0.1, material: glass}
  - {type: lid, name: lid2, height: above_particles, gap: 0.01, mass: 0.2, material: steel}
gravity: [0, 0, -10]
time:
  duration: 2.5
  step: 1.0e-6
  safety: 0.1
  force_step: true
  impact_speed: 3
neighbours: {skin: 0.0002}
conservative_bound: false
stop: {kinetic_energy: 1.0e-9, min_time: 0.5}
threads: 4
output:
  directory: out/run1
  frame_interval: 0.01
  csv_interval: 0.001
  checkpoint_interval: 0.5
  vtk: false
)";

}  // namespace

// ---------------------------------------------------------------------------------------------
// Parser

TEST(ScenarioYaml, FullScenarioFields) {
  const dem::Scenario sc = parseOk(kFull);
  EXPECT_EQ(sc.sourceFile, "s.yaml");
  ASSERT_EQ(sc.materials.size(), 2u);
  EXPECT_EQ(sc.materials[0].name, "glass");
  EXPECT_DOUBLE_EQ(sc.materials[0].density, 2500);
  EXPECT_DOUBLE_EQ(sc.materials[0].youngsModulus, 1e7);
  EXPECT_DOUBLE_EQ(sc.materials[0].poissonRatio, 0.25);
  EXPECT_DOUBLE_EQ(sc.materials[0].restitution, 0.6);
  EXPECT_DOUBLE_EQ(sc.materials[0].friction, 0.4);
  EXPECT_DOUBLE_EQ(sc.materials[0].rollingFriction, 0.01);
  EXPECT_DOUBLE_EQ(sc.materials[0].rollingDamping, 0.2);
  EXPECT_DOUBLE_EQ(sc.materials[1].rollingDamping, 0.3) << "default: Ai et al.'s 0.3";
  EXPECT_DOUBLE_EQ(sc.materials[1].poissonRatio, 0.3) << "default";
  EXPECT_DOUBLE_EQ(sc.materials[1].restitution, 0.5) << "default";
  EXPECT_DOUBLE_EQ(sc.materials[1].linearStiffness, 1000);
  EXPECT_EQ(sc.model, dem::ContactModel::LinearSpringDashpot);

  ASSERT_EQ(sc.overrides.size(), 2u);
  EXPECT_EQ(sc.overrides[0].a, 0);
  EXPECT_EQ(sc.overrides[0].b, 1);
  EXPECT_DOUBLE_EQ(sc.overrides[0].restitution, 0.4);
  EXPECT_DOUBLE_EQ(sc.overrides[0].friction, 0.3);
  EXPECT_DOUBLE_EQ(sc.overrides[0].rollingFriction, 0.005) << "absent: mean of the two materials";
  EXPECT_EQ(sc.overrides[1].a, 1);
  EXPECT_EQ(sc.overrides[1].b, 1);
  EXPECT_DOUBLE_EQ(sc.overrides[1].rollingFriction, 0.02);
  EXPECT_DOUBLE_EQ(sc.overrides[1].restitution, 0.5);

  ASSERT_EQ(sc.templates.size(), 5u);
  using K = dem::SizeDistribution::Kind;
  EXPECT_EQ(sc.templates[0].name, "fixed");
  EXPECT_EQ(sc.templates[0].shape.type(), ShapeType::Sphere);
  EXPECT_EQ(sc.templates[0].size.kind, K::Fixed);
  EXPECT_DOUBLE_EQ(sc.templates[0].size.min, 2.0);
  EXPECT_EQ(sc.templates[1].shape.type(), ShapeType::Box);
  EXPECT_DOUBLE_EQ(sc.templates[1].shape.inflate(), 1e-4);
  EXPECT_EQ(sc.templates[1].material, 1);
  EXPECT_EQ(sc.templates[1].size.kind, K::Uniform);
  EXPECT_DOUBLE_EQ(sc.templates[1].size.min, 0.8);
  EXPECT_DOUBLE_EQ(sc.templates[1].size.max, 1.2);
  EXPECT_EQ(sc.templates[2].shape.type(), ShapeType::Polytope);
  EXPECT_EQ(sc.templates[2].size.kind, K::LogNormal);
  EXPECT_DOUBLE_EQ(sc.templates[2].size.median, 1.0);
  EXPECT_DOUBLE_EQ(sc.templates[2].size.sigma, 0.2);
  EXPECT_DOUBLE_EQ(sc.templates[2].size.min, 0.5);
  EXPECT_DOUBLE_EQ(sc.templates[2].size.max, 2.0);
  EXPECT_EQ(sc.templates[3].shape.type(), ShapeType::Polytope) << "mesh -> hull, path relative to baseDir";
  EXPECT_EQ(sc.templates[3].size.kind, K::Table);
  ASSERT_EQ(sc.templates[3].size.sizes.size(), 3u);
  EXPECT_DOUBLE_EQ(sc.templates[3].size.sizes[2], 2.0);
  ASSERT_EQ(sc.templates[3].size.fractions.size(), 3u);
  EXPECT_DOUBLE_EQ(sc.templates[3].size.fractions[0], 0.2) << "normalised";
  EXPECT_DOUBLE_EQ(sc.templates[3].size.fractions[1], 0.5);
  EXPECT_DOUBLE_EQ(sc.templates[3].size.fractions[2], 0.3);
  EXPECT_EQ(sc.templates[4].size.kind, K::Fixed);
  EXPECT_DOUBLE_EQ(sc.templates[4].size.min, 1.0);

  ASSERT_EQ(sc.insertions.size(), 2u);
  const auto& b0 = sc.insertions[0];
  EXPECT_EQ(b0.templateIndex, 0);
  EXPECT_EQ(b0.method, dem::InsertionSpec::Method::Random);
  EXPECT_EQ(b0.count, 100);
  EXPECT_EQ(b0.region.max, Vec3(0.1, 0.1, 0.1));
  EXPECT_EQ(b0.velocity, Vec3(0, 0, -1));
  EXPECT_DOUBLE_EQ(b0.velocityJitter, 0.1);
  EXPECT_FALSE(b0.randomOrientation);
  EXPECT_EQ(b0.seed, 42u);
  const auto& b1 = sc.insertions[1];
  EXPECT_EQ(b1.templateIndex, 1);
  EXPECT_EQ(b1.method, dem::InsertionSpec::Method::Lattice);
  EXPECT_EQ(b1.count, 0);
  EXPECT_DOUBLE_EQ(b1.volumeFraction, 0.3);
  EXPECT_TRUE(b1.randomOrientation) << "default";
  EXPECT_EQ(b1.seed, 1u) << "default";

  // floor + 5 (open box) + 6 (closed box) + mesh + 2 lids
  ASSERT_EQ(sc.walls.size(), 1u + 5u + 6u + 1u + 2u);
  const auto& floor = sc.walls[0];
  EXPECT_EQ(floor.name, "floor");
  EXPECT_EQ(floor.kind, dem::WallKind::Plane);
  EXPECT_EQ(floor.normal, Vec3(0, 0, 1)) << "normalised";
  EXPECT_EQ(floor.velocity, Vec3(0.1, 0, 0));
  const char* faces[5] = {"xmin", "xmax", "ymin", "ymax", "zmin"};
  const Vec3 lo(-1, -2, -3), hi(1, 2, 3), centre = 0.5 * (lo + hi);
  for (int f = 0; f < 5; ++f) {
    const auto& w = sc.walls[static_cast<std::size_t>(1 + f)];
    EXPECT_EQ(w.name, std::string("container.") + faces[f]);
    EXPECT_EQ(w.material, 1);
    EXPECT_DOUBLE_EQ(w.normal.norm(), 1);
    EXPECT_GT((centre - w.origin).dot(w.normal), 0) << w.name << " faces inwards";
    EXPECT_DOUBLE_EQ(std::abs((centre - w.origin).dot(w.normal)), 0.5 * (hi - lo)[f / 2]) << w.name;
  }
  EXPECT_EQ(sc.walls[6].name, "closed.xmin");
  EXPECT_EQ(sc.walls[11].name, "closed.zmax");
  EXPECT_EQ(sc.walls[11].normal, Vec3(0, 0, -1));
  EXPECT_EQ(sc.walls[11].origin.z(), 1);
  const auto& mesh = sc.walls[12];
  EXPECT_EQ(mesh.kind, dem::WallKind::Mesh);
  EXPECT_EQ(mesh.origin, Vec3(0, 0, 1));
  EXPECT_EQ(mesh.vertices.size(), 8u);
  EXPECT_EQ(mesh.triangles.size(), 12u);
  for (const Vec3& v : mesh.vertices) EXPECT_DOUBLE_EQ(v.cwiseAbs().maxCoeff(), 1.0) << "unit cube scaled by 2";
  const auto& lid = sc.walls[13];
  EXPECT_TRUE(lid.isLid());
  EXPECT_EQ(lid.normal, Vec3(0, 0, -1));
  EXPECT_DOUBLE_EQ(lid.origin.z(), 0.5);
  EXPECT_DOUBLE_EQ(lid.mass, 0.1);
  const auto& lid2 = sc.walls[14];
  EXPECT_TRUE(lid2.isLid());
  EXPECT_TRUE(lid2.aboveParticles) << "above_particles: placed by the builder";
  EXPECT_DOUBLE_EQ(lid2.gap, 0.01);
  EXPECT_FALSE(lid.aboveParticles);

  EXPECT_EQ(sc.gravity, Vec3(0, 0, -10));
  EXPECT_DOUBLE_EQ(sc.duration, 2.5);
  EXPECT_DOUBLE_EQ(sc.timeStep, 1e-6);
  EXPECT_DOUBLE_EQ(sc.safetyFactor, 0.1);
  EXPECT_TRUE(sc.forceTimeStep);
  EXPECT_DOUBLE_EQ(sc.characteristicSpeed, 3);
  EXPECT_DOUBLE_EQ(sc.skin, 2e-4);
  EXPECT_FALSE(sc.conservativeBound);
  EXPECT_DOUBLE_EQ(sc.stopKineticEnergy, 1e-9);
  EXPECT_DOUBLE_EQ(sc.stopMinTime, 0.5);
  EXPECT_EQ(sc.threads, 4);
  EXPECT_EQ(sc.output.directory, "out/run1");
  EXPECT_DOUBLE_EQ(sc.output.frameInterval, 0.01);
  EXPECT_DOUBLE_EQ(sc.output.csvInterval, 0.001);
  EXPECT_DOUBLE_EQ(sc.output.checkpointInterval, 0.5);
  EXPECT_FALSE(sc.output.vtk);
}

TEST(ScenarioYaml, MinimalDefaults) {
  const dem::Scenario sc = parseOk(variant(0, ""));
  EXPECT_EQ(sc.model, dem::ContactModel::HertzMindlin);
  EXPECT_EQ(sc.gravity, Vec3(0, 0, -9.81));
  EXPECT_EQ(sc.timeStep, 0) << "auto";
  EXPECT_DOUBLE_EQ(sc.safetyFactor, 0.2);
  EXPECT_TRUE(sc.conservativeBound);
  EXPECT_TRUE(sc.walls.empty());
  EXPECT_EQ(sc.output.directory, "proxima-out");
  EXPECT_TRUE(sc.output.vtk);
  EXPECT_EQ(sc.insertions[0].method, dem::InsertionSpec::Method::Random);
  EXPECT_EQ(sc.templates[0].material, 0);
  // explicit "auto"
  EXPECT_EQ(parseOk(variant(7, "time: {duration: 0.1, step: auto}")).timeStep, 0);
}

TEST(ScenarioYaml, ErrorsNameLineAndField) {
  expectError(variant(0, "", "colour: blue\n"), "s.yaml:8: colour:", {"unknown key", "materials"});
  expectError(variant(2, "  - {name: glass, densty: 2500, youngs_modulus: 1.0e7}"),
              "s.yaml:2: materials[0].densty:", {"unknown key", "density"});
  const std::string noMaterials = variant(1, "").substr(variant(1, "").find("templates"));
  expectError(noMaterials, "s.yaml:1: materials:", {"missing"});
  expectError(variant(6, "  - {template: grain, count: ten, region: {min: [0, 0, 0], max: [0.01, 0.01, 0.01]}}"),
              "s.yaml:6: particles[0].count:", {"expected a number", "\"ten\""});
  expectError(variant(6, "  - {template: grain, count: 10, region: {min: [0, 0, 0], max: [0.01, 0.01]}}"),
              "s.yaml:6: particles[0].region.max:", {"exactly 3 numbers", "got 2"});
  expectError(variant(6, "  - {template: grain, count: 10, region: {min: [0, 0, 0], max: [0.01, x, 0.01]}}"),
              "s.yaml:6: particles[0].region.max[1]:", {"expected a number"});
  expectError(variant(6, "  - {template: grain, count: 10, region: {min: [0, 0, -1e61], max: [0.01, 0.01, 0.01]}}"),
              "s.yaml:6: particles[0].region.min[2]:", {"beyond 1e60"});
  expectError(variant(4, "  - {name: grain, shape: {type: sphere, radius: 0.001}, material: steel}"),
              "s.yaml:4: templates[0].material:", {"unknown material \"steel\" (known: glass)"});
  expectError(
      variant(6, "  - {template: grain, count: 10, volume_fraction: 0.2, region: {min: [0, 0, 0], max: [1, 1, 1]}}"),
      "s.yaml:6: particles[0].volume_fraction:", {"either count or volume_fraction"});
  expectError(variant(6, "  - {template: grain, region: {min: [0, 0, 0], max: [1, 1, 1]}}"),
              "s.yaml:6: particles[0]:", {"count or volume_fraction"});
  expectError(variant(2, "  - {name: glass, density: -5, youngs_modulus: 1.0e7}"),
              "s.yaml:2: materials[0].density:", {"must be > 0", "-5"});
  expectError(variant(2, "  - {name: glass, density: 2500, youngs_modulus: 1.0e7, restitution: 0}"),
              "s.yaml:2: materials[0].restitution:", {"(0, 1]", "got 0"});
  expectError(variant(2, "  - {name: glass, density: 2500, youngs_modulus: 1.0e7, restitution: 1.5}"),
              "s.yaml:2: materials[0].restitution:", {"(0, 1]", "1.5"});
  expectError(variant(2, "  - {name: glass, density: 2500, youngs_modulus: 1.0e7, rolling_damping: 2}"),
              "s.yaml:2: materials[0].rolling_damping:", {"[0, 1]", "got 2"});
  expectError(variant(2, "  - {name: glass, density: \"2500\", youngs_modulus: 1.0e7}"),
              "s.yaml:2: materials[0].density:", {"expected a number", "string"});
  expectError(variant(5, "particles: x: y"), "s.yaml:5:", {"YAML syntax error"});
  expectError(variant(2, "  - {name: glass, density: 2500, youngs_modulus: 1.0e7"), "s.yaml:", {"YAML syntax error"});
  expectError(variant(4, "  - {name: grain, shape: {type: sphere, radius: 0.001, position: [0, 0, 0]}}"),
              "s.yaml:4: templates[0].shape.position:", {"not allowed"});
  expectError(variant(4, "  - {name: grain, shape: {type: blob}}"),
              "s.yaml:4: templates[0].shape.type:", {"unknown shape type"});
  expectError(variant(4, "  - {name: grain, shape: {type: triangle, points: [[0,0,0],[1,0,0],[0,1,0]]}}"),
              "s.yaml:4: templates[0].shape:", {"volume"});
  expectError(variant(4, "  - {name: grain, shape: {type: sphere, radius: 0.001}, size: {distribution: gauss}}"),
              "s.yaml:4: templates[0].size.distribution:", {"uniform, lognormal or table"});
  expectError(variant(4,
                      "  - {name: grain, shape: {type: sphere, radius: 0.001}, "
                      "size: {distribution: table, sizes: [1, 2], fractions: [1]}}"),
              "s.yaml:4: templates[0].size.fractions:", {"one fraction per size"});
  expectError(variant(6, "  - {template: gravel, count: 10, region: {min: [0, 0, 0], max: [1, 1, 1]}}"),
              "s.yaml:6: particles[0].template:", {"unknown template \"gravel\" (known: grain)"});
  expectError(variant(6, "  - {template: grain, count: 10, region: {min: [0, 0, 0], max: [1, 0, 1]}}"),
              "s.yaml:6: particles[0].region.max:", {"greater than min", "y"});
  expectError(variant(7, "time: {step: 1e-5}"), "s.yaml:7: time.duration:", {"missing"});
  expectError(variant(7, "time: {duration: 1, step: fast}"), "s.yaml:7: time.step:", {"auto"});
  expectError(variant(0, "", "walls: [{type: plane, point: [0, 0, 0], normal: [0, 0, 0]}]\n"),
              "s.yaml:8: walls[0].normal:", {"zero"});
  expectError(variant(0, "", "walls: [{type: lid, height: 0.1}]\n"), "s.yaml:8: walls[0].mass:", {"missing"});
  expectError(variant(0, "", "walls: [{type: mesh, file: nope.stl}]\n"), "s.yaml:8: walls[0].file:", {"nope.stl"});
  expectError(variant(0, "", "walls: [{type: cylinder}]\n"), "s.yaml:8: walls[0].type:", {"plane, box, mesh or lid"});
  expectError(variant(0, "", "threads: -1\n"), "s.yaml:8: threads:", {">= 0"});
  expectError(variant(0, "", "gravity: [0, 0, .nan]\n"), "s.yaml:8: gravity[2]:", {"finite"});
  expectError(variant(0, "", "materials: []\n"), "s.yaml:8: materials:", {"duplicate key"});
  expectError("materials: []\n", "s.yaml:1: materials:", {"at least one"});
  expectError("", "s.yaml:", {"empty"});
  expectError("[1, 2]", "s.yaml:1:", {"expected a map"});
  // Review 2026-11-26: a string-tagged number, a stiffness the Hertz law would not use, a second
  // document, a tab.
  expectError(variant(2, "  - {name: glass, density: !!str 2500, youngs_modulus: 1.0e7}"), "s.yaml:2: materials[0].density:",
              {"expected a number"});
  expectError(variant(2, "  - {name: glass, density: 2500, youngs_modulus: 1.0e7, stiffness: 1.0e9}"),
              "s.yaml: materials[0].stiffness:", {"contact_model: linear"});
  EXPECT_TRUE(parseOk(variant(2, "  - {name: glass, density: 2500, youngs_modulus: 1.0e7, stiffness: 1.0e9}",
                              "contact_model: linear\n"))
                  .materials[0]
                  .linearStiffness == 1e9);
  expectError(variant(0, "", "---\nfoo: 1\n"), "s.yaml:", {"2 YAML documents"});
  expectError(variant(7, "time:\n\tduration: 0.1"), "s.yaml:", {"tab characters"});
}

// A one-template scenario (s.yaml) whose template has the given `size:` (line 6).
static Result<dem::Scenario> sizedScene(const std::string& size) {
  return io::parseScenario(
      "materials:\n  - {name: m, density: 2500, youngs_modulus: 1.0e7, restitution: 0.5, friction: 0.5}\n"
      "templates:\n  - name: b\n    shape: {type: sphere, radius: 0.001}\n"
      "    size: " + size + "\n"
      "particles:\n  - {template: b, count: 2, region: {min: [0, 0, 0], max: [0.01, 0.01, 0.01]}}\n"
      "time: {duration: 0.01}\n",
      "s.yaml", "");
}

// Review 2026-11-27: 10 000 nested brackets read "YAML syntax error: bad file" (yaml-cpp's depth
// guard), and size fractions of 1e308 overflowed their sum (every particle got the last size).
TEST(ScenarioYaml, DeepNestingAndOverflowingFractionsAreNamed) {
  auto deep = io::parseScenario("materials: " + std::string(2000, '[') + std::string(2000, ']') + "\n", "s.yaml", "");
  ASSERT_FALSE(deep.ok());
  EXPECT_NE(deep.message().find("s.yaml:1: YAML: lists or maps nested deeper than"), std::string::npos)
      << deep.message();
  auto huge = sizedScene("{distribution: table, sizes: [1, 2], fractions: [1e308, 1e308]}");
  ASSERT_FALSE(huge.ok());
  EXPECT_NE(huge.message().find("templates[0].size.fractions: sum beyond the range"), std::string::npos)
      << huge.message();
  // A number below the smallest double is named as such (it was "must be > 0 (got 0)").
  auto tiny = io::parseScenario(
      "materials:\n  - {name: m, density: 1e-999, youngs_modulus: 1.0e7, restitution: 0.5, friction: 0.5}\n", "s.yaml",
      "");
  ASSERT_FALSE(tiny.ok());
  EXPECT_NE(tiny.message().find("materials[0].density: the number 1e-999 is too small"), std::string::npos)
      << tiny.message();
}

// A log-normal sigma whose draws leave the range of a number is named at its line (it read
// "templates[0].size: size factor must be finite and > 0 (got 0)" from the builder, with no line);
// a bound on the side it overflows makes the same sigma valid.
TEST(ScenarioYaml, TooManyMaterialsAreNamed) {
  std::string text = "materials:\n";
  for (int i = 0; i <= dem::kMaxMaterials; ++i)
    text += "  - {name: m" + std::to_string(i) + ", density: 2500, youngs_modulus: 1.0e7}\n";
  text += "templates: [{name: b, shape: {type: sphere, radius: 0.001}, material: m0}]\n"
          "particles: [{template: b, count: 1, region: {min: [0, 0, 0], max: [0.01, 0.01, 0.01]}}]\n"
          "time: {duration: 0.001}\n";
  auto r = io::parseScenario(text, "s.yaml", "");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.message().find("s.yaml:2: materials: 1001 materials; at most 1000"), std::string::npos) << r.message();
}

TEST(ScenarioYaml, LogNormalSigmaBeyondNumbersIsNamed) {
  auto scene = sizedScene;
  auto huge = scene("{distribution: lognormal, median: 0.25, sigma: 1e300}");
  ASSERT_FALSE(huge.ok());
  EXPECT_NE(huge.message().find("s.yaml:6: templates[0].size.sigma: 1e+300 draws sizes beyond the largest number"),
            std::string::npos)
      << huge.message();
  auto low = scene("{distribution: lognormal, median: 0.25, sigma: 100, max: 2}");
  ASSERT_FALSE(low.ok());
  EXPECT_NE(low.message().find("templates[0].size.sigma: 100 draws sizes below the smallest number"), std::string::npos)
      << low.message();
  EXPECT_TRUE(scene("{distribution: lognormal, median: 0.25, sigma: 100, min: 0.1, max: 2}").ok());
  EXPECT_TRUE(scene("{distribution: lognormal, median: 0.25, sigma: 0.3}").ok());
  // min == max is one size, as for a uniform distribution; max < min is refused by name.
  EXPECT_TRUE(scene("{distribution: lognormal, median: 0.25, sigma: 0.3, min: 0.5, max: 0.5}").ok());
  EXPECT_TRUE(scene("{distribution: uniform, min: 0.5, max: 0.5}").ok());
  auto inverted = scene("{distribution: lognormal, median: 0.25, sigma: 0.3, min: 0.5, max: 0.4}");
  ASSERT_FALSE(inverted.ok());
  EXPECT_NE(inverted.message().find("templates[0].size.max: must be >= min (0.5), got 0.4"), std::string::npos)
      << inverted.message();
}

TEST(ScenarioYaml, ShapeErrorsPointAtTheirLine) {
  const std::string text = variant(4, R"(  - name: grain
    material: glass
    shape:
      type: sphere
      radius: -1)");
  // lines: 4 name, 5 material, 6 shape, 7 type, 8 radius
  expectError(text, "s.yaml:8: templates[0].shape.radius:", {">= 0"});
}

TEST(ScenarioYaml, LoadFromFileResolvesMeshesAndNamesTheFile) {
  const auto dir = std::filesystem::temp_directory_path() / "proxima_test_scenario";
  std::filesystem::create_directories(dir);
  std::filesystem::copy_file(kMeshes + "/octahedron.obj", dir / "oct.obj",
                             std::filesystem::copy_options::overwrite_existing);
  const std::string path = (dir / "scene.yaml").string();
  {
    std::ofstream out(path);
    out << variant(4, "  - {name: grain, shape: {type: mesh, file: oct.obj, inflate: 0.0001}, size: 0.001}");
  }
  auto r = io::loadScenario(path);
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_EQ(r.value().templates[0].shape.type(), ShapeType::Polytope);
  EXPECT_EQ(r.value().sourceFile, path);
  {
    std::ofstream out(path);
    out << variant(4, "  - {name: grain, shape: {type: mesh, file: missing.obj}}");
  }
  auto bad = io::loadScenario(path);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.message().rfind(path + ":4: templates[0].shape.file:", 0), 0u) << bad.message();
  auto none = io::loadScenario((dir / "absent.yaml").string());
  ASSERT_FALSE(none.ok());
  EXPECT_TRUE(contains(none.message(), "absent.yaml")) << none.message();
  std::filesystem::remove_all(dir);
}

// ---------------------------------------------------------------------------------------------
// scaledShape

TEST(BuilderScaledShape, VolumeScalesWithTheCube) {
  const Real s = 2.5;
  auto hull = Polytope::fromPoints(std::vector<Vec3>{{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}, {1, 1, 1}});
  ASSERT_TRUE(hull.ok());
  const std::vector<std::pair<Shape, Real>> shapes = {
      {Shape(Point{Vec3(1, 2, 3)}, 0.5), 1e-9},
      {Shape(Segment{Vec3(0, 0, 0), Vec3(1, 0, 0)}, 0.3), 1e-9},
      {Shape(Triangle{{Vec3(0, 0, 0), Vec3(1, 0, 0), Vec3(0, 1, 0)}}, 0.2), 1e-3},
      {Shape(Tetrahedron{{Vec3(0, 0, 0), Vec3(1, 0, 0), Vec3(0, 1, 0), Vec3(0, 0, 1)}}), 1e-9},
      {Shape(Sphere{0.7}), 1e-9},
      {Shape(Ellipsoid{Vec3(1, 2, 3)}), 1e-9},
      {Shape(Box{Vec3(1, 2, 3)}), 1e-9},
      {Shape(Capsule{0.5, 1.0}), 1e-9},
      {Shape(Cylinder{0.5, 1.0}), 1e-9},
      {Shape(Cone{0.5, 2.0}), 1e-9},
      {Shape(hull.value()), 1e-9},
      {Shape(hull.value(), 0.05), 1e-9},
  };
  std::vector<bool> seen(11, false);
  for (const auto& [shape, tol] : shapes) {
    seen[static_cast<std::size_t>(shape.type())] = true;
    auto scaled = dem::scaledShape(shape, s);
    ASSERT_TRUE(scaled.ok()) << scaled.message();
    EXPECT_EQ(scaled.value().type(), shape.type());
    EXPECT_DOUBLE_EQ(scaled.value().inflate(), s * shape.inflate());
    auto m1 = computeMassProperties(shape);
    auto m2 = computeMassProperties(scaled.value());
    ASSERT_TRUE(m1.ok() && m2.ok()) << toString(shape.type());
    EXPECT_NEAR(m2.value().volume / m1.value().volume, s * s * s, tol * s * s * s) << toString(shape.type());
    EXPECT_LE((m2.value().centroid - s * m1.value().centroid).norm(), 1e-4 * s * std::cbrt(m1.value().volume))
        << toString(shape.type());
  }
  for (std::size_t t = 0; t < seen.size(); ++t) EXPECT_TRUE(seen[t]) << "shape type " << t << " not tested";
  EXPECT_FALSE(dem::scaledShape(Shape(Sphere{1}), 0).ok());
  EXPECT_FALSE(dem::scaledShape(Shape(Sphere{1}), -1).ok());
  EXPECT_FALSE(dem::scaledShape(Shape(Sphere{1}), std::nan("")).ok());
  EXPECT_FALSE(dem::scaledShape(Shape(Sphere{1}), INFINITY).ok());
}

// ---------------------------------------------------------------------------------------------
// Builder

namespace {

std::string spheres(const std::string& particleBlock, const std::string& extra = "") {
  return "materials:\n"
         "  - {name: glass, density: 2500, youngs_modulus: 1.0e7}\n"
         "templates:\n"
         "  - {name: grain, shape: {type: sphere, radius: 0.001}, material: glass}\n"
         "  - {name: rock, shape: {type: box, half_extents: [0.001, 0.0015, 0.002]},\n"
         "     size: {distribution: uniform, min: 0.5, max: 1.5}}\n"
         "particles:\n" +
         particleBlock + "time: {duration: 0.1}\n" + extra;
}

struct Built {
  dem::Scenario scenario;
  dem::Simulation sim;
  Result<bool> result = Result<bool>::failure("not built");
};

std::unique_ptr<Built> build(const std::string& text) {
  auto b = std::make_unique<Built>();
  b->scenario = parseOk(text);
  b->result = dem::buildSimulation(b->scenario, b->sim);
  return b;
}

/// Brute force: bounding spheres pairwise disjoint and inside the box [lo, hi].
void expectNoOverlapInside(const dem::Simulation& sim, const Vec3& lo, const Vec3& hi) {
  const auto& p = sim.particles();
  int overlaps = 0, outside = 0;
  for (std::size_t i = 0; i < p.size(); ++i) {
    const Real ri = sim.shapes()[static_cast<std::size_t>(p.shape[i])].boundingRadius;
    if (((p.position[i].array() - ri) < lo.array() - 1e-12).any() ||
        ((p.position[i].array() + ri) > hi.array() + 1e-12).any())
      ++outside;
    for (std::size_t j = i + 1; j < p.size(); ++j) {
      const Real rj = sim.shapes()[static_cast<std::size_t>(p.shape[j])].boundingRadius;
      if ((p.position[i] - p.position[j]).norm() < ri + rj - 1e-12) ++overlaps;
    }
  }
  EXPECT_EQ(overlaps, 0);
  EXPECT_EQ(outside, 0);
}

}  // namespace

TEST(Builder, RandomInsertionDoesNotOverlapAndIsDeterministic) {
  const std::string text = spheres(
      "  - {template: grain, count: 400, region: {min: [0, 0, 0], max: [0.03, 0.03, 0.03]}, seed: 7,\n"
      "     velocity: [0, 0, -0.5], velocity_jitter: 0.1}\n"
      "  - {template: rock, count: 60, region: {min: [0, 0, 0.03], max: [0.03, 0.03, 0.08]}, seed: 8}\n",
      "walls: [{type: box, name: bin, min: [0, 0, 0], max: [0.03, 0.03, 0.08], open_top: true}]\n");
  auto a = build(text);
  ASSERT_TRUE(a->result.ok()) << a->result.message();
  const auto& p = a->sim.particles();
  ASSERT_EQ(p.size(), 460u);
  for (std::size_t i = 0; i < p.size(); ++i) EXPECT_EQ(p.id[i], static_cast<std::int64_t>(i));
  expectNoOverlapInside(a->sim, Vec3(0, 0, 0), Vec3(0.03, 0.03, 0.08));
  for (std::size_t i = 0; i < 400; ++i) {
    EXPECT_LE((p.velocity[i] - Vec3(0, 0, -0.5)).norm(), 0.1 + 1e-12);
    EXPECT_GE(p.position[i].z(), 0.001 - 1e-12);
    EXPECT_LE(p.position[i].z(), 0.029 + 1e-12);
  }
  EXPECT_LE(a->sim.shapes().size(), 1u + 111u) << "uniform sizes share 1 % quanta";
  EXPECT_EQ(a->sim.walls().size(), 5u);
  EXPECT_GT(a->sim.options().timeStep, 0);

  auto b = build(text);
  ASSERT_TRUE(b->result.ok());
  ASSERT_EQ(b->sim.particles().size(), p.size());
  for (std::size_t i = 0; i < p.size(); ++i) {
    EXPECT_EQ(b->sim.particles().position[i], p.position[i]);
    EXPECT_EQ(b->sim.particles().orientation[i].coeffs(), p.orientation[i].coeffs());
    EXPECT_EQ(b->sim.particles().velocity[i], p.velocity[i]);
  }
  // A different seed gives a different packing.
  std::string other = text;
  other.replace(other.find("seed: 7"), 7, "seed: 9");
  auto c = build(other);
  ASSERT_TRUE(c->result.ok());
  EXPECT_NE(c->sim.particles().position[0], p.position[0]);
}

TEST(Builder, LatticeSpacingAndOrientation) {
  auto b =
      build(spheres("  - {template: grain, method: lattice, count: 30, random_orientation: false,\n"
                    "     region: {min: [0, 0, 0], max: [0.01, 0.01, 0.01]}}\n"));
  ASSERT_TRUE(b->result.ok()) << b->result.message();
  const auto& p = b->sim.particles();
  ASSERT_EQ(p.size(), 30u);
  const Real r = 0.001, a = 2 * r * 1.01;
  // floor((0.01 - 0.002) / a) + 1 = 4 sites per axis, filled x fastest, then y, then z
  EXPECT_TRUE(p.position[0].isApprox(Vec3(r, r, r), 1e-12));
  EXPECT_NEAR(p.position[1].x() - p.position[0].x(), a, 1e-15);
  EXPECT_NEAR(p.position[4].y() - p.position[0].y(), a, 1e-15);
  EXPECT_NEAR(p.position[16].z() - p.position[0].z(), a, 1e-15);
  EXPECT_TRUE(p.position[29].isApprox(Vec3(r + a, r + 3 * a, r + a), 1e-12));
  for (std::size_t i = 0; i < p.size(); ++i) EXPECT_EQ(p.orientation[i].coeffs(), Quat::Identity().coeffs());
  expectNoOverlapInside(b->sim, Vec3::Zero(), Vec3::Constant(0.01));
}

TEST(Builder, VolumeFractionCount) {
  auto b = build(
      spheres("  - {template: grain, volume_fraction: 0.1, region: {min: [0, 0, 0], max: [0.02, 0.02, 0.02]}}\n"));
  ASSERT_TRUE(b->result.ok()) << b->result.message();
  const Real v = 4.0 / 3.0 * std::numbers::pi * 1e-9;
  EXPECT_EQ(b->sim.particles().size(), static_cast<std::size_t>(std::llround(0.1 * 8e-6 / v)));
  // With a size distribution: E[s³] of U(0.5, 1.5) = (1.5⁴ - 0.5⁴) / 4
  auto c = build(
      spheres("  - {template: rock, volume_fraction: 0.05, region: {min: [0, 0, 0], max: [0.04, 0.04, 0.04]}}\n"));
  ASSERT_TRUE(c->result.ok()) << c->result.message();
  const Real vBox = 8 * 0.001 * 0.0015 * 0.002, meanCube = (std::pow(1.5, 4) - std::pow(0.5, 4)) / 4;
  EXPECT_EQ(c->sim.particles().size(), static_cast<std::size_t>(std::llround(0.05 * 6.4e-5 / (vBox * meanCube))));
}

TEST(Builder, TooManyParticlesPlacesWhatFits) {
  testing::internal::CaptureStderr();
  auto b = build(spheres("  - {template: grain, count: 1000, region: {min: [0, 0, 0], max: [0.01, 0.01, 0.01]}}\n"));
  const std::string err = testing::internal::GetCapturedStderr();
  ASSERT_TRUE(b->result.ok()) << b->result.message();
  const std::size_t n = b->sim.particles().size();
  EXPECT_GT(n, 50u);
  EXPECT_LT(n, 1000u);
  EXPECT_TRUE(contains(err, "particles[0]: only " + std::to_string(n) + " of 1000")) << err;
  expectNoOverlapInside(b->sim, Vec3::Zero(), Vec3::Constant(0.01));

  testing::internal::CaptureStderr();
  auto l = build(spheres(
      "  - {template: grain, method: lattice, count: 1000, region: {min: [0, 0, 0], max: [0.01, 0.01, 0.01]}}\n"));
  const std::string lerr = testing::internal::GetCapturedStderr();
  ASSERT_TRUE(l->result.ok()) << l->result.message();
  EXPECT_EQ(l->sim.particles().size(), 64u);
  EXPECT_TRUE(contains(lerr, "only 64 of 1000")) << lerr;

  // Nothing fits at all: an error, not an empty run.
  testing::internal::CaptureStderr();
  auto none = build(spheres("  - {template: grain, count: 5, region: {min: [0, 0, 0], max: [0.001, 0.01, 0.01]}}\n"));
  testing::internal::GetCapturedStderr();
  ASSERT_FALSE(none->result.ok());
  EXPECT_TRUE(contains(none->result.message(), "no particles")) << none->result.message();

  // A region wholly behind a wall: the advice names the wall instead of "enlarge the region".
  testing::internal::CaptureStderr();
  auto behind = build(spheres("  - {template: grain, count: 5, region: {min: [0, 0, 0], max: [0.01, 0.01, 0.01]}}\n",
                              "walls: [{type: plane, name: floor, point: [0, 0, 0.02], normal: [0, 0, 1]}]\n"));
  const std::string berr = testing::internal::GetCapturedStderr();
  ASSERT_FALSE(behind->result.ok());
  EXPECT_TRUE(contains(berr, "entirely outside wall 'floor'")) << berr;
}

TEST(Builder, ParticlesAvoidWalls) {
  auto b = build(spheres("  - {template: grain, count: 200, region: {min: [0, 0, 0], max: [0.02, 0.02, 0.02]}}\n",
                         "walls:\n"
                         "  - {type: plane, name: slope, point: [0, 0, 0.01], normal: [1, 0, 1]}\n"
                         "  - {type: mesh, name: cube, file: cube.stl, scale: 0.0018, offset: [0.01, 0.01, 0.014]}\n"));
  ASSERT_TRUE(b->result.ok()) << b->result.message();
  const auto& p = b->sim.particles();
  const Vec3 n = Vec3(1, 0, 1).normalized();
  for (std::size_t i = 0; i < p.size(); ++i) {
    EXPECT_GE((p.position[i] - Vec3(0, 0, 0.01)).dot(n), 0.001 - 1e-12);
    // outside the cube of half-width 0.0009 around (0.01, 0.01, 0.014) by at least r
    const Vec3 d = (p.position[i] - Vec3(0.01, 0.01, 0.014)).cwiseAbs() - Vec3::Constant(0.0009);
    EXPECT_GE(d.cwiseMax(0.0).norm() + std::min(d.maxCoeff(), 0.0), 0.001 - 1e-9) << i;
  }
}

TEST(Builder, LidAboveParticles) {
  auto b = build(spheres("  - {template: grain, count: 50, region: {min: [0, 0, 0], max: [0.02, 0.02, 0.02]}}\n",
                         "walls: [{type: lid, name: lid, height: above_particles, gap: 0.002, mass: 0.01}]\n"));
  ASSERT_TRUE(b->result.ok()) << b->result.message();
  Real top = -1;
  for (const Vec3& x : b->sim.particles().position) top = std::max(top, x.z() + 0.001);
  ASSERT_EQ(b->sim.walls().size(), 1u);
  EXPECT_TRUE(b->sim.walls()[0].isLid());
  EXPECT_NEAR(b->sim.walls()[0].origin.z(), top + 0.002, 1e-15);
}

TEST(Builder, ExplicitTimeStepCheckedAgainstTheStableLimit) {
  const std::string block = "  - {template: grain, count: 20, region: {min: [0, 0, 0], max: [0.01, 0.01, 0.01]}}\n";
  auto autoStep = build(spheres(block));
  ASSERT_TRUE(autoStep->result.ok()) << autoStep->result.message();
  const Real dt = autoStep->sim.options().timeStep;
  EXPECT_GT(dt, 0);

  std::string text = spheres(block);
  text.replace(text.find("time: {duration: 0.1}"), 21, "time: {duration: 0.1, step: 1.0}");
  auto refused = build(text);
  ASSERT_FALSE(refused->result.ok());
  const std::string& msg = refused->result.message();
  EXPECT_EQ(msg.rfind("s.yaml: time.step: 1.0e+00 s exceeds the stable limit ", 0), 0u) << msg;
  EXPECT_TRUE(contains(msg, "time.force_step: true")) << msg;

  text.replace(text.find("step: 1.0}"), 10, "step: 1.0, force_step: true}");
  auto forced = build(text);
  ASSERT_TRUE(forced->result.ok()) << forced->result.message();
  EXPECT_EQ(forced->sim.options().timeStep, 1.0);

  std::string small = spheres(block);
  small.replace(small.find("time: {duration: 0.1}"), 21, "time: {duration: 0.1, step: 1.0e-9}");
  auto ok = build(small);
  ASSERT_TRUE(ok->result.ok()) << ok->result.message();
  EXPECT_EQ(ok->sim.options().timeStep, 1e-9);
  EXPECT_NEAR(dt / 0.2, autoStep->sim.stableTimeStep(std::max(0.1, std::sqrt(2 * 9.81 * 0.01))), 1e-12 * dt)
      << "auto = safety × the limit at the free-fall speed over the region height";
}

// A wall moving at a prescribed velocity sets the impact speed: the automatic step keeps it from
// crossing a grain's radius in one step, and an explicit step that lets it is refused (a mesh piston
// at 1 km/s passed through a bed in one step and the run ended "done", 2026-11-27).
TEST(Builder, MovingWallsLimitTheTimeStep) {
  const std::string block = "  - {template: grain, count: 20, region: {min: [0, 0, 0], max: [0.01, 0.01, 0.01]}}\n";
  auto still = build(spheres(block));
  ASSERT_TRUE(still->result.ok()) << still->result.message();
  const std::string wall = "walls:\n  - {type: plane, point: [0, 0, 0.03], normal: [0, 0, -1], velocity: [0, 0, -1000]}\n";
  auto piston = build(spheres(block, wall));
  ASSERT_TRUE(piston->result.ok()) << piston->result.message();
  const Real dt = piston->sim.options().timeStep;
  EXPECT_LT(dt, still->sim.options().timeStep);
  EXPECT_LE(1000 * dt, 0.001 * (1 + 1e-12)) << "the wall may not cross a grain's radius (1 mm) in a step";
  std::string text = spheres(block, wall);
  text.replace(text.find("time: {duration: 0.1}"), 21, "time: {duration: 0.1, step: 1.0e-5}");
  auto refused = build(text);
  ASSERT_FALSE(refused->result.ok());
  EXPECT_TRUE(contains(refused->result.message(), "exceeds the stable limit")) << refused->result.message();
}

// A gravity whose norm overflows (1e155 and more) gave a NaN impact speed, and the run started with
// the zero-gravity step and blew up. The step now follows the fall speed, as it did for 1e154 (whose
// run `proxima run` then refuses up front: more than 1e10 steps).
TEST(Builder, HugeGravityGivesATinyStep) {
  const std::string block = "  - {template: grain, count: 5, region: {min: [0, 0, 0], max: [0.01, 0.01, 0.01]}}\n";
  for (const char* g : {"[0, 0, -1e154]", "[0, 0, -1e300]", "[1e300, 1e300, 1e300]"}) {
    auto b = build(spheres(block, std::string("gravity: ") + g + "\n"));
    ASSERT_TRUE(b->result.ok()) << g << ": " << b->result.message();
    const Real dt = b->sim.options().timeStep;
    EXPECT_TRUE(dt > 0 && dt < 1e-70) << g << ": " << dt;
  }
}

TEST(Builder, SizeTableSharesShapes) {
  auto b = build(
      "materials: [{name: glass, density: 2500, youngs_modulus: 1.0e7}]\n"
      "templates:\n"
      "  - {name: t, shape: {type: tetrahedron, points: [[0,0,0],[0.002,0,0],[0,0.002,0],[0,0,0.002]]},\n"
      "     size: {distribution: table, sizes: [0.5, 1.0, 2.0], fractions: [0.2, 0.5, 0.3]}}\n"
      "  - {name: l, shape: {type: sphere, radius: 0.0005},\n"
      "     size: {distribution: lognormal, median: 1.0, sigma: 0.3, min: 0.6, max: 1.5}}\n"
      "particles:\n"
      "  - {template: t, count: 200, region: {min: [0, 0, 0], max: [0.05, 0.05, 0.05]}}\n"
      "  - {template: l, count: 200, region: {min: [0, 0, 0.05], max: [0.05, 0.05, 0.1]}}\n"
      "time: {duration: 0.1}\n");
  ASSERT_TRUE(b->result.ok()) << b->result.message();
  ASSERT_EQ(b->sim.particles().size(), 400u);
  int t = 0;
  std::vector<int> perSize(3, 0);
  for (const auto& s : b->sim.shapes()) t += s.name == "t";
  EXPECT_EQ(t, 3) << "one shape per table size";
  const Real v1 = 0.002 * 0.002 * 0.002 / 6;
  for (std::size_t i = 0; i < 200; ++i) {
    const Real v = b->sim.shapes()[static_cast<std::size_t>(b->sim.particles().shape[i])].volume;
    for (int k = 0; k < 3; ++k)
      if (std::abs(v - v1 * std::pow(0.5 * (1 << k), 3)) < 1e-6 * v) ++perSize[static_cast<std::size_t>(k)];
  }
  EXPECT_EQ(perSize[0] + perSize[1] + perSize[2], 200);
  EXPECT_GT(perSize[1], perSize[0]) << "fractions 0.2 / 0.5 / 0.3";
  // log-normal sizes clipped to [0.6, 1.5] (quantised to 1 %)
  for (std::size_t i = 200; i < 400; ++i) {
    const Real r = b->sim.shapes()[static_cast<std::size_t>(b->sim.particles().shape[i])].boundingRadius;
    EXPECT_GE(r, 0.0005 * 0.6 / 1.006);
    EXPECT_LE(r, 0.0005 * 1.5 * 1.006);
  }
  expectNoOverlapInside(b->sim, Vec3::Zero(), Vec3(0.05, 0.05, 0.1));
}

// A log-normal window of one size (min == max) is that size for every grain, as a uniform one is:
// one shape, no redraws.
TEST(Builder, LogNormalOfOneSizeGivesThatSize) {
  for (const char* size : {"{distribution: lognormal, median: 1.0, sigma: 0.3, min: 1.25, max: 1.25}",
                           "{distribution: uniform, min: 1.25, max: 1.25}"}) {
    auto b = build(std::string("materials: [{name: glass, density: 2500, youngs_modulus: 1.0e7}]\n"
                               "templates:\n"
                               "  - {name: l, shape: {type: sphere, radius: 0.0005}, size: ") +
                   size +
                   "}\n"
                   "particles:\n"
                   "  - {template: l, count: 50, region: {min: [0, 0, 0], max: [0.05, 0.05, 0.05]}}\n"
                   "time: {duration: 0.1}\n");
    ASSERT_TRUE(b->result.ok()) << size << ": " << b->result.message();
    ASSERT_EQ(b->sim.particles().size(), 50u);
    EXPECT_EQ(b->sim.shapes().size(), 1u) << size;
    for (const auto& s : b->sim.shapes()) EXPECT_NEAR(s.boundingRadius, 0.0005 * 1.25, 0.0005 * 0.006) << size;
  }
}

TEST(Builder, ExampleScenariosLoadAndBuild) {
  int n = 0;
  for (const auto& entry : std::filesystem::directory_iterator(kScenarios)) {
    if (entry.path().extension() != ".yaml") continue;
    ++n;
    auto sc = io::loadScenario(entry.path().string());
    ASSERT_TRUE(sc.ok()) << sc.message();
    dem::Simulation sim;
    auto r = dem::buildSimulation(sc.value(), sim);
    ASSERT_TRUE(r.ok()) << r.message();
    EXPECT_GT(sim.particles().size(), 0u) << entry.path();
  }
  EXPECT_GE(n, 4);
}

TEST(Builder, BuildingIntoAUsedSimulationIsRefused) {
  // Used to append a second copy of the scene (twice the particles, overlapping pairwise).
  auto b = build(spheres("  - {template: grain, count: 10, region: {min: [0, 0, 0], max: [0.05, 0.05, 0.05]}}\n"));
  ASSERT_TRUE(b->result.ok()) << b->result.message();
  const std::size_t n = b->sim.particles().size();
  auto again = dem::buildSimulation(b->scenario, b->sim);
  ASSERT_FALSE(again.ok());
  EXPECT_NE(again.message().find("freshly constructed Simulation"), std::string::npos) << again.message();
  EXPECT_EQ(b->sim.particles().size(), n);
}
