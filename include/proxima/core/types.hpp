// Scalar and linear-algebra aliases used across proxima. Everything is double precision:
// the distance core aims at machine-precision accuracy (Montanari 2017, §4.2).
#pragma once

#include <Eigen/Core>
#include <Eigen/Geometry>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

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

/// B's pose relative to A: r = Aᵀ B (columns: B's axes in A's frame) and t = Aᵀ (p_B - p_A), every
/// entry (x0 y0 + x1 y1) + x2 y2 as Eigen's product and mulMatT form it (same bits). With SSE2 the
/// first two entries of each column are made and stored as one pair: the readers (mulMat, the box
/// test) load them as pairs, and the nine scalar stores of Eigen's product made each such load wait
/// on a store forward (perf: ~6 % of a box-box query, ~1 % of a polyhedral DEM step).
/// r must not be a's or b's rotation itself (row 2 reads A and B after the pair stores). The same
/// bits need the library's flags: compiled with FMA contraction (-march=native) the sums round
/// differently, as every inline product here does.
[[gnu::always_inline]] inline void relativePose(const Transform& a, const Transform& b, Mat3& r, Vec3& t) {
  const Mat3& A = a.rotation;
  const Mat3& B = b.rotation;
  const Vec3 d = b.translation - a.translation;
#if defined(__SSE2__)
  // Rows of A's first two columns: (A(k, 0), A(k, 1)), k = 0, 1, 2.
  const __m128d r0 = _mm_set_pd(A(0, 1), A(0, 0)), r1 = _mm_set_pd(A(1, 1), A(1, 0)), r2 = _mm_set_pd(A(2, 1), A(2, 0));
  auto head = [&](Real x, Real y, Real z) {
    return _mm_add_pd(_mm_add_pd(_mm_mul_pd(r0, _mm_set1_pd(x)), _mm_mul_pd(r1, _mm_set1_pd(y))),
                      _mm_mul_pd(r2, _mm_set1_pd(z)));
  };
  for (int j = 0; j < 3; ++j) {
    _mm_storeu_pd(&r(0, j), head(B(0, j), B(1, j), B(2, j)));
    r(2, j) = A(0, 2) * B(0, j) + A(1, 2) * B(1, j) + A(2, 2) * B(2, j);
  }
  _mm_storeu_pd(&t[0], head(d.x(), d.y(), d.z()));
  t[2] = A(0, 2) * d.x() + A(1, 2) * d.y() + A(2, 2) * d.z();
#else
  r = A.transpose() * B;
  t = mulMatT(A, d);
#endif
}

/// True when every component is finite (no NaN, no Inf).
inline bool allFinite(const Vec3& v) { return v.allFinite(); }

}  // namespace proxima
