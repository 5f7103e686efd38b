// Scalar and linear-algebra aliases used across proxima. Everything is double precision:
// the distance core aims at machine-precision accuracy (Montanari 2017, §4.2).
#pragma once

#include <Eigen/Core>
#include <Eigen/Geometry>

namespace proxima {

using Real = double;
using Vec3 = Eigen::Matrix<Real, 3, 1>;
using Vec2 = Eigen::Matrix<Real, 2, 1>;
using Mat3 = Eigen::Matrix<Real, 3, 3>;
using Quat = Eigen::Quaternion<Real>;

/// m * v and mᵀ * v written out: Eigen's generic fixed-size product is not always inlined at -O2,
/// and these sit in GJK's support loop. Forced inline: GCC kept them out of line in the large
/// GJK-TD and manifold functions (a call per transformed point).
[[gnu::always_inline]] inline Vec3 mulMat(const Mat3& m, const Vec3& v) {
  return {m(0, 0) * v.x() + m(0, 1) * v.y() + m(0, 2) * v.z(), m(1, 0) * v.x() + m(1, 1) * v.y() + m(1, 2) * v.z(),
          m(2, 0) * v.x() + m(2, 1) * v.y() + m(2, 2) * v.z()};
}
[[gnu::always_inline]] inline Vec3 mulMatT(const Mat3& m, const Vec3& v) {
  return {m(0, 0) * v.x() + m(1, 0) * v.y() + m(2, 0) * v.z(), m(0, 1) * v.x() + m(1, 1) * v.y() + m(2, 1) * v.z(),
          m(0, 2) * v.x() + m(1, 2) * v.y() + m(2, 2) * v.z()};
}

/// Rigid transform x_world = R * x_local + p. Quaternion stored as well as the matrix so that
/// both composition and the hot-loop rotation (matrix form, 9 mul) are cheap.
struct Transform {
  Mat3 rotation = Mat3::Identity();
  Vec3 translation = Vec3::Zero();

  Transform() = default;
  Transform(const Quat& q, const Vec3& p) : rotation(q.normalized().toRotationMatrix()), translation(p) {}
  Transform(const Mat3& r, const Vec3& p) : rotation(r), translation(p) {}

  static Transform identity() { return {}; }
  static Transform translate(const Vec3& p) { return Transform(Mat3::Identity(), p); }

  /// Local point -> world point.
  [[nodiscard, gnu::always_inline]] Vec3 apply(const Vec3& x) const { return mulMat(rotation, x) + translation; }
  /// Local direction -> world direction.
  [[nodiscard, gnu::always_inline]] Vec3 rotate(const Vec3& d) const { return mulMat(rotation, d); }
  /// World direction -> local direction.
  [[nodiscard, gnu::always_inline]] Vec3 rotateInverse(const Vec3& d) const { return mulMatT(rotation, d); }
  /// World point -> local point.
  [[nodiscard, gnu::always_inline]] Vec3 applyInverse(const Vec3& x) const {
    return mulMatT(rotation, Vec3(x - translation));
  }
  [[nodiscard]] Transform operator*(const Transform& o) const {
    return Transform(Mat3(rotation * o.rotation), Vec3(rotation * o.translation + translation));
  }
  [[nodiscard]] Transform inverse() const {
    Mat3 rt = rotation.transpose();
    return Transform(rt, Vec3(-(rt * translation)));
  }
};

/// True when every component is finite (no NaN, no Inf).
inline bool allFinite(const Vec3& v) { return v.allFinite(); }

}  // namespace proxima
