// The grain-packing study (Montanari thesis ch. 5): the rock generator and resolution levels,
// vertex reduction, geometric deposition, packing measures (Eq. 5.1, 5.2), non-convex mesh warning,
// and determinism of a whole packing run across thread counts.
#include <gtest/gtest.h>
#include <omp.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <numbers>

#include <Eigen/Eigenvalues>

#include "proxima/dem/builder.hpp"
#include "proxima/dem/packing.hpp"
#include "proxima/io/scenario_yaml.hpp"
#include "proxima/io/shape_json.hpp"
#include "proxima/shapes/rock.hpp"
#include "proxima/shapes/shape.hpp"

using namespace proxima;

namespace {

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

/// Largest distance from a vertex of `a` to the hull of `b` (outside only), by the hull's planes.
Real excursion(const Polytope& a, const Polytope& b) {
  const auto& d = b.data();
  Real worst = 0;
  for (const Vec3& v : a.vertices()) {
    Real out = -1e300;
    for (std::size_t t = 0; t < d.triangles.size(); ++t)
      if (d.triangleNormals[t].squaredNorm() > 0)
        out = std::max(out, d.triangleNormals[t].dot(v - d.vertices[static_cast<std::size_t>(d.triangles[t][0])]));
    worst = std::max(worst, out);
  }
  return worst;
}

/// Extents of the vertex cloud along the principal axes of the solid's inertia, sorted descending.
Vec3 principalExtents(const Polytope& p) {
  const auto mp = computeMassProperties(Shape(p)).value();
  Eigen::SelfAdjointEigenSolver<Mat3> es(mp.inertia);
  Vec3 ext;
  for (int k = 0; k < 3; ++k) {
    const Vec3 axis = es.eigenvectors().col(k);
    Real lo = 1e300, hi = -1e300;
    for (const Vec3& v : p.vertices()) lo = std::min(lo, axis.dot(v)), hi = std::max(hi, axis.dot(v));
    ext[k] = hi - lo;
  }
  std::sort(ext.data(), ext.data() + 3, std::greater<>());
  return ext;
}

}  // namespace

TEST(Rock, VolumeEquivalentRadiusVertexCountAndDeterminism) {
  for (std::uint64_t seed : {1u, 2u, 99u})
    for (int n : {8, 24, 78, 160, 600}) {
      RockParams p;
      p.vertices = n;
      p.seed = seed;
      p.radius = 2.5e-4;
      auto r = makeRock(p);
      ASSERT_TRUE(r.ok()) << r.message();
      const auto mp = computeMassProperties(Shape(r.value())).value();
      EXPECT_NEAR(std::cbrt(mp.volume * 3 / (4 * std::numbers::pi)), 2.5e-4, 1e-12 * 2.5e-4) << n;
      EXPECT_LE(mp.centroid.norm(), 1e-12 * 2.5e-4) << "centred on its centroid";
      EXPECT_LE(r.value().vertexCount(), n);
      EXPECT_GE(r.value().vertexCount(), (8 * n) / 10) << "most samples are hull vertices (n = " << n << ")";
      auto again = makeRock(p);
      ASSERT_EQ(again.value().vertices().size(), r.value().vertices().size());
      for (std::size_t i = 0; i < r.value().vertices().size(); ++i)
        EXPECT_EQ(again.value().vertices()[i], r.value().vertices()[i]) << "same seed, same rock";
    }
  RockParams a, b;
  b.seed = a.seed + 1;
  EXPECT_GT(excursion(makeRock(a).value(), makeRock(b).value()), 1e-3) << "another seed is another rock";
}

TEST(Rock, ElongationAndFlatnessShapeTheGrain) {
  RockParams p;
  p.vertices = 400;
  p.roughness = 0;  // the bare ellipsoid: extents in the ratio 1 : elongation : elongation × flatness
  p.elongation = 0.6;
  p.flatness = 0.5;
  const Vec3 e = principalExtents(makeRock(p).value());
  EXPECT_NEAR(e[1] / e[0], 0.6, 0.02);
  EXPECT_NEAR(e[2] / e[1], 0.5, 0.02);
  p.roughness = 0.15;  // rough grains keep the trend
  const Vec3 r = principalExtents(makeRock(p).value());
  EXPECT_NEAR(r[1] / r[0], 0.6, 0.15);
  EXPECT_NEAR(r[2] / r[1], 0.5, 0.15);
}

TEST(Rock, ResolutionLevelsConvergeToTheSameGrain) {
  // Coarse, medium and fine meshes of one grain: each finer level is closer to a very fine mesh.
  RockParams p;
  p.seed = 5;
  p.vertices = 4000;
  const Polytope ref = makeRock(p).value();
  Real previous = 1e300;
  for (const char* level : {"coarse", "medium", "fine"}) {
    p.vertices = *resolutionVertices(level);
    const Polytope g = makeRock(p).value();
    // Hausdorff-like gap: how far the reference sticks out of the coarser hull (the coarse hull is
    // inside the parent surface up to the volume rescaling).
    const Real gap = excursion(ref, g);
    EXPECT_LT(gap, previous) << level;
    EXPECT_LT(gap, 0.25) << level;
    previous = gap;
  }
  EXPECT_LT(previous, 0.06) << "fine mesh within 6% of the radius";
  EXPECT_FALSE(resolutionVertices("ultra").has_value());
}

TEST(Rock, BadParametersAreNamed) {
  auto bad = [](RockParams p, const std::string& field) {
    auto r = makeRock(p);
    ASSERT_FALSE(r.ok());
    EXPECT_TRUE(contains(r.message(), field)) << r.message();
  };
  RockParams p;
  p.vertices = 3;
  bad(p, "vertices");
  p = {};
  p.elongation = 0;
  bad(p, "elongation");
  p = {};
  p.flatness = 1.5;
  bad(p, "flatness");
  p = {};
  p.roughness = -0.1;
  bad(p, "roughness");
  p = {};
  p.radius = std::nan("");
  bad(p, "radius");
  // Through the JSON shape contract.
  auto j = io::parseShape(nlohmann::json::parse(R"({"type": "rock", "resolution": "superfine"})"), "a", "");
  ASSERT_FALSE(j.ok());
  EXPECT_TRUE(contains(j.message(), "a.resolution")) << j.message();
  j = io::parseShape(nlohmann::json::parse(R"({"type": "rock", "vertices": 20.5})"), "a", "");
  ASSERT_FALSE(j.ok());
  EXPECT_TRUE(contains(j.message(), "a.vertices")) << j.message();
  j = io::parseShape(nlohmann::json::parse(R"({"type": "rock", "flatness": 2})"), "a", "");
  ASSERT_FALSE(j.ok());
  EXPECT_TRUE(contains(j.message(), "a.flatness")) << j.message();
}

TEST(ReduceVertices, FarthestPointSubsetOfTheHull) {
  RockParams p;
  p.vertices = 300;
  const Polytope fine = makeRock(p).value();
  auto coarse = reduceVertices(fine, 30);
  ASSERT_TRUE(coarse.ok()) << coarse.message();
  EXPECT_LE(coarse.value().vertexCount(), 30);
  EXPECT_GE(coarse.value().vertexCount(), 25);
  // Every kept vertex is a vertex of the original, so the coarse grain lies inside the fine one.
  for (const Vec3& v : coarse.value().vertices()) {
    bool found = false;
    for (const Vec3& w : fine.vertices()) found = found || v == w;
    EXPECT_TRUE(found);
  }
  EXPECT_LE(excursion(coarse.value(), fine), 1e-12);
  // Spread out: the coarse hull keeps most of the volume.
  const Real v1 = computeMassProperties(Shape(fine)).value().volume;
  const Real v2 = computeMassProperties(Shape(coarse.value())).value().volume;
  EXPECT_GT(v2 / v1, 0.8);
  EXPECT_LT(v2 / v1, 1.0);
  EXPECT_EQ(reduceVertices(fine, 1000).value().vertexCount(), fine.vertexCount()) << "no-op when already coarse";
  EXPECT_FALSE(reduceVertices(fine, 3).ok());
}

TEST(MeshGrain, NonConvexMeshWarnsAndUsesTheHull) {
  // A cube with one face pushed in (a dent): its hull is the full cube.
  const auto dir = std::filesystem::temp_directory_path() / "proxima_test_packing";
  std::filesystem::create_directories(dir);
  const auto file = dir / "dented.obj";
  {
    std::ofstream o(file);
    o << "v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nv 0 0 1\nv 1 0 1\nv 1 1 1\nv 0 1 1\nv 0.5 0.5 0.6\n"
         "f 1 3 2\nf 1 4 3\nf 1 2 6\nf 1 6 5\nf 2 3 7\nf 2 7 6\nf 3 4 8\nf 3 8 7\nf 4 1 5\nf 4 5 8\n"
         "f 5 6 9\nf 6 7 9\nf 7 8 9\nf 8 5 9\n";
  }
  testing::internal::CaptureStderr();
  auto s = io::parseShape(nlohmann::json{{"type", "mesh"}, {"file", file.string()}}, "a", "");
  const std::string err = testing::internal::GetCapturedStderr();
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_TRUE(contains(err, "not convex")) << err;
  EXPECT_TRUE(contains(err, "dented.obj")) << err;
  EXPECT_TRUE(contains(err, "1 of 9 vertices")) << err;
  EXPECT_TRUE(contains(err, "15.4% larger")) << err;  // mesh = cube − pyramid of height 0.4 = 1 − 0.4/3; 1/0.8667 = +15.4%
  EXPECT_NEAR(computeMassProperties(s.value().shape).value().volume, 1.0, 1e-12);
  // A convex mesh: no warning; max_vertices makes a coarser grain.
  const auto cube = dir / "cube.obj";
  {
    std::ofstream o(cube);
    o << "v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nv 0 0 1\nv 1 0 1\nv 1 1 1\nv 0 1 1\n"
         "f 1 3 2\nf 1 4 3\nf 1 2 6\nf 1 6 5\nf 2 3 7\nf 2 7 6\nf 3 4 8\nf 3 8 7\nf 4 1 5\nf 4 5 8\nf 5 6 7\nf 5 7 8\n";
  }
  testing::internal::CaptureStderr();
  auto c = io::parseShape(nlohmann::json{{"type", "mesh"}, {"file", cube.string()}, {"max_vertices", 4}}, "a", "");
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
  ASSERT_TRUE(c.ok()) << c.message();
  EXPECT_EQ(std::get<Polytope>(c.value().shape.geometry()).vertexCount(), 4);
}

namespace {

std::string packingScenario(const std::string& shape, int count, const std::string& method, int threads = 0) {
  return "materials:\n"
         "  - {name: sand, density: 2650, youngs_modulus: 5.0e6, restitution: 0.3, friction: 0.5}\n"
         "templates:\n"
         "  - {name: grain, shape: " + shape + ",\n"
         "     size: {distribution: table, sizes: [1.42, 1.0, 0.7], fractions: [0.07, 0.76, 0.17]}}\n"
         "particles:\n"
         "  - {template: grain, method: " + method + ", count: " + std::to_string(count) +
         ", region: {min: [0, 0, 0], max: [0.02, 0.02, 0.1]}, seed: 3}\n"
         "walls:\n"
         "  - {type: box, name: box, min: [0, 0, 0], max: [0.02, 0.02, 0.2], open_top: true}\n"
         "  - {type: lid, name: lid, height: above_particles, gap: 0.001, mass: 0.002}\n"
         "threads: " + std::to_string(threads) + "\n"
         "time: {duration: 0.1}\n";
}

struct Run {
  dem::Scenario sc;
  dem::Simulation sim;
};

std::unique_ptr<Run> buildRun(const std::string& text) {
  auto r = std::make_unique<Run>();
  auto parsed = io::parseScenario(text, "<test>", "");
  EXPECT_TRUE(parsed.ok()) << parsed.message();
  r->sc = std::move(parsed).value();
  auto built = dem::buildSimulation(r->sc, r->sim);
  EXPECT_TRUE(built.ok()) << built.message();
  return r;
}

/// Bounding-sphere packing fraction of the particles inside [0,0,0]-[0.02,0.02,top].
Real boundingFraction(const dem::Simulation& sim) {
  Real vol = 0, top = 0;
  for (std::size_t i = 0; i < sim.particles().size(); ++i) {
    const Real r = sim.shapes()[static_cast<std::size_t>(sim.particles().shape[i])].boundingRadius;
    vol += 4.0 / 3.0 * std::numbers::pi * r * r * r;
    top = std::max(top, sim.particles().position[i].z() + r);
  }
  return vol / (0.02 * 0.02 * top);
}

}  // namespace

TEST(Deposition, NoOverlapDenserThanRandomAndDeterministic) {
  const std::string rock = "{type: rock, resolution: coarse, radius: 0.001, seed: 4}";
  auto dep = buildRun(packingScenario(rock, 300, "deposition"));
  auto rnd = buildRun(packingScenario(rock, 300, "random"));
  const auto& p = dep->sim.particles();
  ASSERT_EQ(p.size(), 300u);
  for (std::size_t i = 0; i < p.size(); ++i) {
    const Real ri = dep->sim.shapes()[static_cast<std::size_t>(p.shape[i])].boundingRadius;
    EXPECT_GE(p.position[i].z() - ri, -1e-12);
    EXPECT_GE(p.position[i].x() - ri, -1e-12);
    EXPECT_LE(p.position[i].y() + ri, 0.02 + 1e-12);
    for (std::size_t j = i + 1; j < p.size(); ++j) {
      const Real rj = dep->sim.shapes()[static_cast<std::size_t>(p.shape[j])].boundingRadius;
      EXPECT_GE((p.position[i] - p.position[j]).norm(), ri + rj - 1e-12) << i << " " << j;
    }
  }
  // Dropped spheres rest on something: a dense bed, far denser than random sequential addition.
  EXPECT_GT(boundingFraction(dep->sim), 0.35);
  EXPECT_GT(boundingFraction(dep->sim), 1.5 * boundingFraction(rnd->sim));
  // Grains replace their bounding spheres: no initial contact.
  EXPECT_EQ(dep->sim.stats().contacts, 0);
  auto again = buildRun(packingScenario(rock, 300, "deposition"));
  for (std::size_t i = 0; i < p.size(); ++i) EXPECT_EQ(again->sim.particles().position[i], p.position[i]);
  // The lid sits above the highest bounding sphere.
  Real top = 0;
  for (std::size_t i = 0; i < p.size(); ++i)
    top = std::max(top, p.position[i].z() + dep->sim.shapes()[static_cast<std::size_t>(p.shape[i])].boundingRadius);
  EXPECT_NEAR(*dem::lidHeight(dep->sim), top + 0.001, 1e-15);
  // Too many for the region: the count placed is reported.
  testing::internal::CaptureStderr();
  auto full = buildRun(packingScenario("{type: sphere, radius: 0.002}", 5000, "deposition"));
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_LT(full->sim.particles().size(), 5000u);
  EXPECT_TRUE(contains(err, "only " + std::to_string(full->sim.particles().size()) + " of 5000")) << err;
}

TEST(PackingMetrics, VoidRatioAndCoordinationAnalytic) {
  // Three unit-density cubes of side 0.01 in a row, the middle one overlapping both neighbours,
  // under a lid at z = 0.02 in a 0.05 × 0.04 box: V_box = 4e-5, V_p = 3e-6, e = 37/3.
  dem::Simulation sim;
  sim.setMaterials({dem::Material{"m", 1000, 1e7, 0.3, 0.5, 0.5, 0, 0}}, dem::ContactModel::HertzMindlin);
  const int cube = sim.addShape(dem::makeParticleShape("cube", Shape(Box{Vec3::Constant(0.005)})).value());
  sim.addParticle(cube, 0, Vec3(0.010, 0.02, 0.005));
  sim.addParticle(cube, 0, Vec3(0.0199, 0.02, 0.005));
  sim.addParticle(cube, 0, Vec3(0.0298, 0.02, 0.005));
  dem::Wall lid;
  lid.name = "lid";
  lid.origin = Vec3(0, 0, 0.02);
  lid.normal = -Vec3::UnitZ();
  lid.mass = 1;
  sim.addWall(lid);
  sim.options().gravity = Vec3::Zero();
  sim.options().timeStep = 1e-6;
  ASSERT_TRUE(sim.initialize().ok());
  const dem::PackingBox box{Vec3(0, 0, 0), Vec3(0.05, 0.04, 0.03), false};
  auto m = dem::measurePacking(sim, box);
  ASSERT_TRUE(m.has_value());
  EXPECT_TRUE(m->lid);
  EXPECT_DOUBLE_EQ(m->height, 0.02);
  EXPECT_NEAR(m->boxVolume, 4e-5, 1e-18);
  EXPECT_NEAR(m->particleVolume, 3e-6, 1e-18);
  EXPECT_NEAR(m->voidRatio, 37.0 / 3.0, 1e-9);
  EXPECT_NEAR(m->packingFraction, 3.0 / 40.0, 1e-12);
  EXPECT_NEAR(m->packingFraction, 1 / (1 + m->voidRatio), 1e-12) << "φ = 1/(1+e)";
  EXPECT_NEAR(m->coordinationNumber, 4.0 / 3.0, 1e-12);  // 2 contacts × 2 / 3 particles (Eq. 5.2)
  ASSERT_EQ(m->coordinationHistogram.size(), 3u);
  EXPECT_EQ(m->coordinationHistogram[0], 0);
  EXPECT_EQ(m->coordinationHistogram[1], 2);
  EXPECT_EQ(m->coordinationHistogram[2], 1);
  EXPECT_TRUE(std::isnan(m->coreFraction)) << "the core of this thin bed is empty";
  EXPECT_NEAR(m->particleTop, 0.005 + 0.005 * std::sqrt(3.0), 1e-15);
  EXPECT_FALSE(m->lidAboveParticles()) << "0.02 is within a bounding radius of the top grain";
  // Core packing fraction: a 0.08 × 0.06 box, lid at 0.06, cubes lifted to z = 0.02; margin
  // g = 2 × 0.005√3 on every side.
  sim.walls()[0].origin.z() = 0.06;
  for (auto& x : sim.particles().position) x.z() = 0.02;
  const dem::PackingBox wide{Vec3(0, 0, 0), Vec3(0.08, 0.06, 0.1), false};
  m = dem::measurePacking(sim, wide);
  const Real g = 2 * 0.005 * std::sqrt(3.0);
  EXPECT_DOUBLE_EQ(m->coreMargin, g);
  // Cubes at x = 0.0199 and 0.0298 have centroids inside [g, 0.08 − g]; the one at x = 0.01 does not.
  EXPECT_NEAR(m->coreFraction, 2e-6 / ((0.08 - 2 * g) * (0.06 - 2 * g) * (0.06 - 2 * g)), 1e-12);
  EXPECT_TRUE(std::isnan(dem::measurePacking(sim, box)->coreFraction)) << "0.05 − 2g < g: too thin a core";
  EXPECT_TRUE(m->lidAboveParticles()) << "lid at 0.06, grains reach 0.0287: it rests on nothing (the run warns)";
  // Without a lid: a closed box gives its top, an open one no packing volume.
  sim.walls()[0].mass = 0;
  EXPECT_FALSE(dem::measurePacking(sim, box).has_value());
  auto closed = dem::measurePacking(sim, dem::PackingBox{box.min, box.max, true});
  ASSERT_TRUE(closed.has_value());
  EXPECT_NEAR(closed->boxVolume, 6e-5, 1e-18);
}

TEST(PackingRun, LidSettlesGrainsAndTheRunIsIdenticalOnOneAndTwoThreads) {
  // A short whole packing run (deposition, lid, rock grains with a size table), on 1 and 2 threads.
  const std::string rock = "{type: rock, resolution: coarse, radius: 0.001, seed: 4}";
  std::uint64_t hash[2];
  Real e0 = 0, e1 = 0;
  for (int t = 1; t <= 2; ++t) {
    auto r = buildRun(packingScenario(rock, 100, "deposition", t));
    r->sim.options().parallelThreshold = 0;
    const auto before = dem::measurePacking(r->sim, *r->sc.container);
    ASSERT_TRUE(before.has_value());
    r->sim.run(2000);
    hash[t - 1] = r->sim.stateHash();
    const auto after = dem::measurePacking(r->sim, *r->sc.container);
    e0 = before->voidRatio, e1 = after->voidRatio;
    EXPECT_GT(after->coordinationNumber, 0) << "grains in contact";
    EXPECT_LT(after->height, before->height) << "the lid came down";
  }
  omp_set_num_threads(omp_get_num_procs());
  EXPECT_EQ(hash[0], hash[1]);
  EXPECT_LT(e1, e0);
}

TEST(PackingExamples, LoadBuildPlaceEveryGrainAndReportPacking) {
  int n = 0;
  for (const auto& entry : std::filesystem::directory_iterator(std::string(PROXIMA_SOURCE_DIR) + "/examples/packing")) {
    if (entry.path().extension() != ".yaml") continue;
    ++n;
    auto sc = io::loadScenario(entry.path().string());
    ASSERT_TRUE(sc.ok()) << sc.message();
    ASSERT_TRUE(sc.value().container.has_value()) << entry.path();
    dem::Simulation sim;
    testing::internal::CaptureStderr();
    auto r = dem::buildSimulation(sc.value(), sim);
    const std::string err = testing::internal::GetCapturedStderr();
    ASSERT_TRUE(r.ok()) << r.message();
    EXPECT_EQ(err, "") << entry.path() << ": every grain fits";
    EXPECT_EQ(static_cast<std::int64_t>(sim.particles().size()), sc.value().insertions[0].count) << entry.path();
    const auto m = dem::measurePacking(sim, *sc.value().container);
    ASSERT_TRUE(m.has_value());
    EXPECT_TRUE(m->lid);
    EXPECT_GT(m->voidRatio, 0.5) << "deposited bounding spheres leave room to settle";
    EXPECT_EQ(sim.stats().contacts, 0) << entry.path() << ": no initial overlap";
  }
  EXPECT_EQ(n, 13);
}
