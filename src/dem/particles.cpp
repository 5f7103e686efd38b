#include "proxima/dem/particles.hpp"

#include <Eigen/Eigenvalues>
#include <cmath>
#include <numbers>

namespace proxima::dem {

namespace {

// Vertices of a polyhedral core (with the shape's rounding radius), empty for curved cores.
void polyhedralCore(const Shape& s, std::vector<Vec3>& verts, Real& radius) {
  radius = s.inflate();
  std::visit(
      [&](const auto& g) {
        using G = std::decay_t<decltype(g)>;
        if constexpr (std::is_same_v<G, Point>) {
          verts = {g.p};
        } else if constexpr (std::is_same_v<G, Segment>) {
          verts = {g.a, g.b};
        } else if constexpr (std::is_same_v<G, Triangle>) {
          verts = {g.v[0], g.v[1], g.v[2]};
        } else if constexpr (std::is_same_v<G, Tetrahedron>) {
          verts = {g.v[0], g.v[1], g.v[2], g.v[3]};
        } else if constexpr (std::is_same_v<G, Sphere>) {
          verts = {Vec3::Zero()};
          radius += g.radius;
        } else if constexpr (std::is_same_v<G, Capsule>) {
          verts = {Vec3(0, 0, -g.halfLength), Vec3(0, 0, g.halfLength)};
          radius += g.radius;
        } else if constexpr (std::is_same_v<G, Box>) {
          const Vec3& h = g.halfExtents;
          for (int k = 0; k < 8; ++k)
            verts.emplace_back((k & 1) ? h.x() : -h.x(), (k & 2) ? h.y() : -h.y(), (k & 4) ? h.z() : -h.z());
        } else if constexpr (std::is_same_v<G, Polytope>) {
          verts = g.vertices();
        }
      },
      s.geometry());
}

}  // namespace

Result<ParticleShape> makeParticleShape(const std::string& name, const Shape& shape) {
  using R = Result<ParticleShape>;
  if (auto err = shape.validate()) return R::failure("shape '" + name + "': " + *err);
  auto mp = computeMassProperties(shape);
  if (!mp.ok()) return R::failure("shape '" + name + "': " + mp.message());
  const MassProperties& m = mp.value();
  if (!(m.volume > 0)) return R::failure("shape '" + name + "': has no volume");

  ParticleShape p;
  p.name = name;
  p.shape = shape;
  p.volume = m.volume;

  // Principal frame (body frame): x_body = Vᵀ (x_shape - c). Already-diagonal inertia tensors keep
  // their axes, so spheres, boxes, ellipsoids and capsules are not rotated.
  Mat3 I = m.inertia;
  Vec3 centroid = m.centroid;
  // Shapes symmetric under the reflections x -> -x and y -> -y (and, but for the cone, z -> -z) have
  // a diagonal inertia tensor and the centroid on the z axis, exactly. Inflated ones are integrated
  // numerically (~1e-4): their off-diagonal noise would rotate the body frame arbitrarily (an
  // inflated cube's moments are equal, so any frame diagonalises the noise). Use the exact form.
  const ShapeType t = shape.type();
  if (t == ShapeType::Sphere || t == ShapeType::Ellipsoid || t == ShapeType::Box || t == ShapeType::Capsule ||
      t == ShapeType::Cylinder || t == ShapeType::Cone) {
    I = Mat3(I.diagonal().asDiagonal());
    centroid.x() = 0, centroid.y() = 0;
    if (t != ShapeType::Cone) centroid.z() = 0;
  }
  const Real scale = I.diagonal().cwiseAbs().maxCoeff();
  Mat3 V = Mat3::Identity();
  Vec3 moments = I.diagonal();
  const Real off = std::max({std::abs(I(0, 1)), std::abs(I(0, 2)), std::abs(I(1, 2))});
  if (off > 1e-12 * scale) {
    Eigen::SelfAdjointEigenSolver<Mat3> eig(I);
    V = eig.eigenvectors();
    if (V.determinant() < 0) V.col(2) = -V.col(2);
    moments = eig.eigenvalues();
  }
  p.inertiaPerDensity = moments;
  const Vec3 c = centroid;
  p.local = Transform(Mat3(V.transpose()), Vec3(-(V.transpose() * c)));
  const Real size = std::cbrt(m.volume);
  p.localIsIdentity = off <= 1e-12 * scale && c.norm() <= 1e-14 * size;
  if (p.localIsIdentity) p.local = Transform();

  p.equivalentRadius = std::cbrt(3 * m.volume / (4 * std::numbers::pi));
  p.isSphere = shape.type() == ShapeType::Sphere;
  if (p.isSphere) p.sphereRadius = std::get<Sphere>(shape.geometry()).radius + shape.inflate();
  p.contactRadius = p.isSphere ? p.sphereRadius : p.equivalentRadius;

  std::vector<Vec3> verts;
  polyhedralCore(shape, verts, p.coreRadius);
  for (const Vec3& v : verts) p.bodyVertices.push_back(p.local.apply(v));

  // Bounding radius about the centroid: exact for polyhedral cores; closed forms for the rest.
  Real r = 0;
  if (!p.bodyVertices.empty()) {
    for (const Vec3& v : p.bodyVertices) r = std::max(r, v.norm());
    r += p.coreRadius;
  } else {
    std::visit(
        [&](const auto& g) {
          using G = std::decay_t<decltype(g)>;
          if constexpr (std::is_same_v<G, Ellipsoid>) {
            r = g.radii.maxCoeff() + c.norm();
          } else if constexpr (std::is_same_v<G, Cylinder>) {
            r = std::hypot(g.radius, g.halfLength) + c.norm();
          } else if constexpr (std::is_same_v<G, Cone>) {
            const Vec3 apex(0, 0, 0.5 * g.height);
            r = std::max((apex - c).norm(), std::hypot(g.radius, -0.5 * g.height - c.z()) + std::hypot(c.x(), c.y()));
          }
        },
        shape.geometry());
    r += shape.inflate();
  }
  p.boundingRadius = r;
  return p;
}

void Particles::reserve(std::size_t n) {
  id.reserve(n);
  position.reserve(n);
  orientation.reserve(n);
  velocity.reserve(n);
  angularVelocity.reserve(n);
  force.reserve(n);
  torque.reserve(n);
  mass.reserve(n);
  inertia.reserve(n);
  shape.reserve(n);
  material.reserve(n);
  fixed.reserve(n);
}

void Particles::add(std::int64_t pid, const ParticleShape& s, int shapeIndex, int materialIndex, Real density,
                    const Vec3& x, const Quat& q, const Vec3& v, const Vec3& w) {
  id.push_back(pid);
  position.push_back(x);
  orientation.push_back(q.normalized());
  velocity.push_back(v);
  angularVelocity.push_back(w);
  force.push_back(Vec3::Zero());
  torque.push_back(Vec3::Zero());
  mass.push_back(density * s.volume);
  inertia.push_back(density * s.inertiaPerDensity);
  shape.push_back(shapeIndex);
  material.push_back(materialIndex);
  fixed.push_back(0);
}

}  // namespace proxima::dem
