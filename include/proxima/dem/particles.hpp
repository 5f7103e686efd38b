// Particle storage (structure of arrays) and particle shapes in their principal body frame.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "proxima/core/status.hpp"
#include "proxima/shapes/shape.hpp"

namespace proxima::dem {

/// A particle shape as the simulator uses it. The body frame is the principal frame: its origin
/// is the centroid and its axes the principal axes of inertia. `local` places the user's shape in
/// that frame (identity for shapes that are already centred and aligned, e.g. spheres, boxes).
struct ParticleShape {
  std::string name;            ///< template name (for messages and output)
  Shape shape;                 ///< geometry in the user's frame
  Transform local;             ///< shape frame -> body (principal) frame
  bool localIsIdentity = true;
  Real volume = 0;
  Vec3 inertiaPerDensity = Vec3::Zero();  ///< principal moments per unit density
  Real boundingRadius = 0;     ///< max distance from the centroid to a point of the shape
  Real equivalentRadius = 0;   ///< radius of the sphere of equal volume
  /// Radius used by Hertz laws: the sphere's radius for spheres, else the equivalent radius (a
  /// documented choice: faceted grains have no curvature at faces, and volume-equivalent radii keep
  /// the stiffness scale of the same-volume sphere).
  Real contactRadius = 0;
  bool isSphere = false;       ///< plain sphere (analytic contacts)
  Real sphereRadius = 0;
  /// Vertices of the core polytope in the body frame (empty for curved shapes); used by wall
  /// contacts to find all touching vertices, and by output for the geometry.
  std::vector<Vec3> bodyVertices;
  Real coreRadius = 0;         ///< rounding radius around bodyVertices (sphero-polyhedra)
};

/// Builds a ParticleShape: mass properties, principal frame, radii. Errors name the template.
Result<ParticleShape> makeParticleShape(const std::string& name, const Shape& shape);

/// Structure of arrays. All vectors have size(); indices are stable between neighbour rebuilds.
struct Particles {
  std::vector<std::int64_t> id;
  std::vector<Vec3> position;         ///< centroid, world
  std::vector<Quat> orientation;      ///< body -> world, unit
  std::vector<Vec3> velocity;         ///< world
  std::vector<Vec3> angularVelocity;  ///< world
  std::vector<Vec3> force;            ///< world, accumulated per step (contacts only)
  std::vector<Vec3> torque;           ///< world, about the centroid
  std::vector<Real> mass;
  std::vector<Vec3> inertia;          ///< principal moments (body frame)
  std::vector<int> shape;             ///< index into the shape library
  std::vector<int> material;          ///< index into the materials
  std::vector<std::uint8_t> fixed;    ///< 1 = not integrated (velocity prescribed)

  [[nodiscard]] std::size_t size() const { return position.size(); }
  void reserve(std::size_t n);
  /// Appends a particle at rest. Mass and inertia from the shape and the density.
  void add(std::int64_t pid, const ParticleShape& s, int shapeIndex, int materialIndex, Real density,
           const Vec3& x, const Quat& q, const Vec3& v = Vec3::Zero(), const Vec3& w = Vec3::Zero());
};

}  // namespace proxima::dem
