// Turns a Scenario (plain data, see scenario.hpp) into a ready Simulation: materials, particle
// shapes (templates scaled by their size distributions), particle insertion (lattice or random
// non-overlapping), walls, gravity, and the time step (automatic or checked against the stable limit).
#pragma once

#include "proxima/dem/scenario.hpp"
#include "proxima/dem/simulation.hpp"

namespace proxima::dem {

/// Shape scaled by a factor s about its own frame origin (every shape type; polytopes re-hulled).
Result<Shape> scaledShape(const Shape& shape, Real s);

/// Fills `sim` (which must be fresh) from the scenario and calls sim.initialize(). Errors name the
/// scenario file and the field ("particles[1].count: only 812 of 1000 particles fit ...").
Result<bool> buildSimulation(const Scenario& scenario, Simulation& sim);

}  // namespace proxima::dem
