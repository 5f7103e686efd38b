// Walls: infinite planes (box containers are six or five planes), triangle meshes from STL/OBJ,
// walls moving with a prescribed velocity, and a free rigid lid (a plane with a mass that moves
// only along its normal under gravity and the particles' reactions).
#pragma once

#include <array>
#include <string>
#include <vector>

#include "proxima/core/types.hpp"

namespace proxima::dem {

enum class WallKind { Plane, Mesh };

struct Wall {
  std::string name;
  WallKind kind = WallKind::Plane;
  int material = 0;
  /// Plane: a point on the plane and the unit normal pointing into the domain (towards particles).
  /// Mesh: `origin` is the offset applied to the mesh vertices (moves with the wall).
  Vec3 origin = Vec3::Zero();
  Vec3 normal = Vec3::UnitZ();
  Vec3 velocity = Vec3::Zero();  ///< prescribed translation velocity (ignored for a free lid)
  /// Free lid: mass > 0 makes the plane a rigid body moving along its normal only, under gravity
  /// and the contact reactions. 0 = prescribed motion.
  Real mass = 0;
  /// Scenario placement of a lid: when true, buildSimulation puts the plane at
  /// (highest particle bounding-sphere top + gap) after creating the particles; `origin` is ignored.
  bool aboveParticles = false;
  Real gap = 0;
  /// Mesh triangles in the mesh's own frame (world = vertex + origin). One-sided contact is not
  /// assumed: a particle touching a triangle from either side is pushed away from it.
  std::vector<Vec3> vertices;
  std::vector<std::array<int, 3>> triangles;

  [[nodiscard]] bool isLid() const { return kind == WallKind::Plane && mass > 0; }
};

}  // namespace proxima::dem
