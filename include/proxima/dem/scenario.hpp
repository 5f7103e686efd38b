// The scenario model: everything a run needs, as plain data. io/scenario_yaml fills it from a YAML
// file (with file/field error messages); dem::buildSimulation turns it into a Simulation.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "proxima/core/status.hpp"
#include "proxima/dem/material.hpp"
#include "proxima/dem/packing.hpp"
#include "proxima/dem/walls.hpp"
#include "proxima/shapes/shape.hpp"

namespace proxima::dem {

/// Size distribution of a template: each particle's shape is the template scaled by a factor s.
struct SizeDistribution {
  enum class Kind { Fixed, Uniform, LogNormal, Table } kind = Kind::Fixed;
  Real min = 1, max = 1;          ///< Uniform: s in [min, max]
  Real median = 1, sigma = 0;     ///< LogNormal: ln s ~ N(ln median, sigma²), clipped to [min, max] if set
  std::vector<Real> sizes;        ///< Table: scale factors ...
  std::vector<Real> fractions;    ///< ... and their fractions (by number; normalised)
};

struct ParticleTemplate {
  std::string name;
  Shape shape;                    ///< unit-size geometry (scaled per particle by the size factor)
  int material = 0;
  SizeDistribution size;
};

struct InsertionRegion {
  Vec3 min = Vec3::Zero(), max = Vec3::Zero();  ///< axis-aligned box
};

/// One block of particle creation.
struct InsertionSpec {
  int templateIndex = 0;
  /// Random: random sequential addition. Lattice: simple cubic. Deposition: geometric deposition of
  /// the bounding spheres (each dropped at the lowest of several random spots, see builder.cpp).
  enum class Method { Lattice, Random, Deposition } method = Method::Random;
  std::int64_t count = 0;          ///< number of particles (0 = use volumeFraction)
  Real volumeFraction = 0;         ///< particle volume / region volume, used when count == 0
  InsertionRegion region;
  Vec3 velocity = Vec3::Zero();
  Real velocityJitter = 0;         ///< random velocity component magnitude (m/s), seeded
  bool randomOrientation = true;
  std::uint64_t seed = 1;
};

struct OutputSpec {
  std::string directory = "proxima-out";
  Real frameInterval = 0;          ///< simulated time between VTK frames (0 = 20 frames per run)
  Real csvInterval = 0;            ///< simulated time between CSV rows (0 = 200 rows per run)
  Real checkpointInterval = 0;     ///< simulated time between checkpoints (0 = at the end only)
  bool vtk = true;
};

struct Scenario {
  std::string sourceFile;          ///< for messages
  /// The document as compact JSON (set by the YAML reader): `proxima run --resume` compares it with
  /// the checkpoint's, so that a changed scenario is not resumed as if it were the same run.
  std::string canonical;
  std::vector<Material> materials;
  ContactModel model = ContactModel::HertzMindlin;
  struct PairOverride {
    int a = 0, b = 0;
    Real restitution = 0.5, friction = 0.5, rollingFriction = 0;
  };
  std::vector<PairOverride> overrides;
  std::vector<ParticleTemplate> templates;
  std::vector<InsertionSpec> insertions;
  std::vector<Wall> walls;
  /// The container of a packing study (the first `box` wall): with a lid (or a closed top) the run
  /// reports void ratio, packing fraction and lid height (dem/packing.hpp).
  std::optional<PackingBox> container;
  Vec3 gravity{0, 0, -9.81};
  Real duration = 1;
  Real timeStep = 0;               ///< 0 = automatic (safety × stable limit)
  Real safetyFactor = 0.2;         ///< of the stable limit, for the automatic time step
  bool forceTimeStep = false;      ///< run even if timeStep exceeds the stable limit
  Real characteristicSpeed = 0;    ///< impact speed for the Hertz time estimate (0 = from gravity and box)
  Real skin = 0;                   ///< Verlet skin (0 = 0.1 × mean particle diameter)
  bool conservativeBound = true;   ///< Montanari Eq. 3.14 narrow-phase skipping
  Real stopKineticEnergy = 0;      ///< stop early when KE per particle falls below this (0 = off), after minTime
  Real stopMinTime = 0;
  int threads = 0;                 ///< 0 = OpenMP default
  OutputSpec output;
};

}  // namespace proxima::dem
