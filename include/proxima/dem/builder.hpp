// Turns a Scenario (plain data, see scenario.hpp) into a ready Simulation: materials, particle
// shapes (templates scaled by their size distributions), particle insertion (lattice or random
// non-overlapping), walls, gravity, and the time step (automatic or checked against the stable limit).
#pragma once

#include <cstdint>
#include <functional>

#include "proxima/dem/scenario.hpp"
#include "proxima/dem/simulation.hpp"

namespace proxima::dem {

/// Shape scaled by a factor s about its own frame origin (every shape type; polytopes re-hulled).
Result<Shape> scaledShape(const Shape& shape, Real s);

/// Called now and then while particles are inserted (block index, placed so far, asked for), so that
/// a caller can show progress on large insertions.
using InsertionProgress = std::function<void(std::size_t block, std::int64_t placed, std::int64_t count)>;

/// Fills `sim` (which must be fresh) from the scenario and calls sim.initialize(). Errors name the
/// scenario file and the field ("particles[1].count: only 812 of 1000 particles fit ...").
Result<bool> buildSimulation(const Scenario& scenario, Simulation& sim, const InsertionProgress& progress = {});

}  // namespace proxima::dem
