// Private: the AVX2 form of the box-box relative pose and separating-axis search (box_box.hpp's
// relativePoseSearchAvx2). Lanes 0-2 of each 256-bit register hold a column or a row; lane 3 is never
// in a verdict (every mask is cut to 3 bits). No FMA: every lane's sums and products are those of
// relativePose and searchSse2, in the same order, so the bits are theirs.
#include "box_box.hpp"

#if defined(PROXIMA_BOX_SEARCH_AVX2)
#include <immintrin.h>

#include <bit>

namespace proxima::detail::boxsat {

bool cpuHasAvx2() {
  __builtin_cpu_init();  // (a no-op after start-up; needed if the first query runs in a static constructor)
  return __builtin_cpu_supports("avx2");
}

namespace {

// The pose's 12 numbers in order: the rotation's columns, then the translation (4-wide loads at
// columns 0-2 and at r_22 stay inside the Transform).
static_assert(sizeof(Transform) == 12 * sizeof(Real), "Transform: rotation then translation, no padding");

#define PROXIMA_AVX2_INLINE gnu::target("avx2"), gnu::always_inline

// (x, y, z) -> (y, z, x) and (z, x, y); lane 3 stays in place.
[[PROXIMA_AVX2_INLINE]] inline __m256d yzx(__m256d c) { return _mm256_permute4x64_pd(c, _MM_SHUFFLE(3, 0, 2, 1)); }
[[PROXIMA_AVX2_INLINE]] inline __m256d zxy(__m256d c) { return _mm256_permute4x64_pd(c, _MM_SHUFFLE(3, 1, 0, 2)); }
[[PROXIMA_AVX2_INLINE]] inline __m256d bcast(const Real* x) { return _mm256_broadcast_sd(x); }
[[PROXIMA_AVX2_INLINE]] inline __m256d add(__m256d x, __m256d y) { return _mm256_add_pd(x, y); }
[[PROXIMA_AVX2_INLINE]] inline __m256d sub(__m256d x, __m256d y) { return _mm256_sub_pd(x, y); }
[[PROXIMA_AVX2_INLINE]] inline __m256d mul(__m256d x, __m256d y) { return _mm256_mul_pd(x, y); }
[[PROXIMA_AVX2_INLINE]] inline __m256d vabs(__m256d x) { return _mm256_andnot_pd(_mm256_set1_pd(-0.0), x); }
// 3-bit masks of x > y and x < y (lanes 0-2; NaN compares false).
[[PROXIMA_AVX2_INLINE]] inline int gt(__m256d x, __m256d y) {
  return _mm256_movemask_pd(_mm256_cmp_pd(x, y, _CMP_GT_OQ)) & 7;
}
// The rows (lanes 0-2) of the 3 x 3 matrix with columns c0, c1, c2 (lanes 0-2).
[[PROXIMA_AVX2_INLINE]] inline void rowsOf(__m256d c0, __m256d c1, __m256d c2, __m256d& r0, __m256d& r1, __m256d& r2) {
  const __m256d lo = _mm256_unpacklo_pd(c0, c1);  // (c0_0, c1_0, c0_2, c1_2)
  const __m256d hi = _mm256_unpackhi_pd(c0, c1);  // (c0_1, c1_1, ., .)
  r0 = _mm256_blend_pd(lo, _mm256_permute4x64_pd(c2, _MM_SHUFFLE(3, 0, 0, 0)), 0x4);
  r1 = _mm256_blend_pd(hi, _mm256_permute4x64_pd(c2, _MM_SHUFFLE(3, 1, 1, 1)), 0x4);
  r2 = _mm256_blend_pd(_mm256_permute4x64_pd(lo, _MM_SHUFFLE(3, 2, 3, 2)), c2, 0x4);
}
// A Vec3 as lanes 0-2 (lane 3 zero) without reading past it.
[[PROXIMA_AVX2_INLINE]] inline __m256d load3(const Vec3& v) {
  return _mm256_insertf128_pd(_mm256_castpd128_pd256(_mm_loadu_pd(v.data())), _mm_load_sd(v.data() + 2), 1);
}
[[PROXIMA_AVX2_INLINE]] inline void store3(Real* p, __m256d v) {
  _mm_storeu_pd(p, _mm256_castpd256_pd128(v));
  _mm_store_sd(p + 2, _mm256_extractf128_pd(v, 1));
}

}  // namespace

[[gnu::target("avx2")]] void relativePoseSearchAvx2(const Transform& a, const Transform& b, const Vec3& ha,
                                                    const Vec3& hb, Mat3& r, Vec3& t, Search& s) {
  // relativePose: column j of r = A^T b_j = (A_0 B_0j + A_1 B_1j) + A_2 B_2j over A's rows A_m, and
  // t = (A_0 d_0 + A_1 d_1) + A_2 d_2 with d = p_B - p_A.
  const Real* pa = a.rotation.data();
  const Real* pb = b.rotation.data();
  __m256d A0, A1, A2;
  rowsOf(_mm256_loadu_pd(pa), _mm256_loadu_pd(pa + 3), _mm256_loadu_pd(pa + 6), A0, A1, A2);
  const __m256d c0 = add(add(mul(A0, bcast(pb)), mul(A1, bcast(pb + 1))), mul(A2, bcast(pb + 2)));
  const __m256d c1 = add(add(mul(A0, bcast(pb + 3)), mul(A1, bcast(pb + 4))), mul(A2, bcast(pb + 5)));
  const __m256d c2 = add(add(mul(A0, bcast(pb + 6)), mul(A1, bcast(pb + 7))), mul(A2, bcast(pb + 8)));
  const __m256d d = sub(_mm256_loadu_pd(pb + 8), _mm256_loadu_pd(pa + 8));  // (., d_x, d_y, d_z)
  const __m256d t0 = _mm256_permute4x64_pd(d, 0x55), t1 = _mm256_permute4x64_pd(d, 0xAA),
                t2 = _mm256_permute4x64_pd(d, 0xFF);
  const __m256d tv = add(add(mul(A0, t0), mul(A1, t1)), mul(A2, t2));
  // (column 0 and 1 4-wide: each one's lane 3 is overwritten by the next column)
  Real* rd = r.data();
  _mm256_storeu_pd(rd, c0);
  _mm256_storeu_pd(rd + 3, c1);
  store3(rd + 6, c2);
  store3(t.data(), tv);

  // Face overlaps (searchSse2's sums): A's faces ha_i + (hb0 |m_i0| + (hb1 |m_i1| + hb2 |m_i2|)) - |t_i|
  // over i; B's faces ((ha0 |m_0j| + ha1 |m_1j|) + ha2 |m_2j|) + hb_j - |(m_0j t0 + m_1j t1) + m_2j t2|
  // over j, from the rows R_k of r.
  const __m256d zero = _mm256_setzero_pd();
  const __m256d hav = load3(ha), hbv = load3(hb);
  const __m256d ha0 = bcast(&ha[0]), ha1 = bcast(&ha[1]), ha2 = bcast(&ha[2]);
  const __m256d hb0 = bcast(&hb[0]), hb1 = bcast(&hb[1]), hb2 = bcast(&hb[2]);
  const __m256d fA = sub(add(hav, add(mul(hb0, vabs(c0)), add(mul(hb1, vabs(c1)), mul(hb2, vabs(c2))))), vabs(tv));
  __m256d R0, R1, R2;
  rowsOf(c0, c1, c2, R0, R1, R2);
  // (t's components: tv = A_0 d_0 + ..., so its broadcasts are permutes of tv)
  const __m256d tx = _mm256_permute4x64_pd(tv, 0x00), ty = _mm256_permute4x64_pd(tv, 0x55),
                tz = _mm256_permute4x64_pd(tv, 0xAA);
  const __m256d fB = sub(add(add(add(mul(ha0, vabs(R0)), mul(ha1, vabs(R1))), mul(ha2, vabs(R2))), hbv),
                         vabs(add(add(mul(R0, tx), mul(R1, ty)), mul(R2, tz))));
  const int faceOk = gt(fA, zero) & gt(fB, zero);  // 7: every face overlap > 0 (NaN separates)
  // The first minimum among the six (A's faces first): the minimum, then the lowest index holding it
  // (the same as the scalar scan's strict <, with no NaN; NaN separates, and then nothing is read).
  const __m256d inf = _mm256_set1_pd(std::numeric_limits<Real>::infinity());
  __m256d m = _mm256_min_pd(_mm256_blend_pd(fA, inf, 0x8), _mm256_blend_pd(fB, inf, 0x8));
  m = _mm256_min_pd(m, _mm256_permute_pd(m, 0x5));
  m = _mm256_min_pd(m, _mm256_permute2f128_pd(m, m, 1));
  const unsigned eq = static_cast<unsigned>(_mm256_movemask_pd(_mm256_cmp_pd(fA, m, _CMP_EQ_OQ)) & 7) |
                      static_cast<unsigned>(_mm256_movemask_pd(_mm256_cmp_pd(fB, m, _CMP_EQ_OQ)) & 7) << 3;
  s.fi = std::countr_zero(eq | 64u);  // (6 only with a NaN overlap: separated, fi unread)
  s.faceBest = _mm256_cvtsd_f64(m);

  // Edge axes e_i x r_j, column j over i at once: with p = zxy(c_j) = (m_2j, m_0j, m_1j) and q =
  // yzx(c_j), |l_i1| = |p_i|, l_i2 = q_i; |l|² = p² + q²; ov = ((ha_i1 |p| + ha_i2 |q|) + rb_j) -
  // |q t_i2 - p t_i1|; B's radius rb_j from u_k = |r_m x r_j| ({m, j, k} = {0, 1, 2}).
  const __m256d p0 = zxy(c0), p1 = zxy(c1), p2 = zxy(c2), q0 = yzx(c0), q1 = yzx(c1), q2 = yzx(c2);
  const __m256d u0 = vabs(sub(mul(q1, p2), mul(p1, q2)));  // |c1 x c2|
  const __m256d u1 = vabs(sub(mul(q0, p2), mul(p0, q2)));  // |c0 x c2|
  const __m256d u2 = vabs(sub(mul(q0, p1), mul(p0, q1)));  // |c0 x c1|
  const __m256d haI1 = yzx(hav), haI2 = zxy(hav), tI1 = yzx(tv), tI2 = zxy(tv);
  const __m256d fb2 = mul(m, m), tiny = _mm256_set1_pd(1e-280);
  // Bits i -> 3i (the edge index e = 3i + j of column 0).
  static constexpr unsigned char kSpread[8] = {0, 1, 8, 9, 64, 65, 72, 73};
  __m256d o[3], len2[3];
  unsigned loose = 0;
  int bad = 0;
  const __m256d p[3] = {p0, p1, p2}, q[3] = {q0, q1, q2};
  const __m256d rb[3] = {add(mul(hb1, u2), mul(hb2, u1)), add(mul(hb0, u2), mul(hb2, u0)), add(mul(hb0, u1), mul(hb1, u0))};
  for (int j = 0; j < 3; ++j) {
    len2[j] = add(mul(p[j], p[j]), mul(q[j], q[j]));
    o[j] = sub(add(add(mul(haI1, vabs(p[j])), mul(haI2, vabs(q[j]))), rb[j]), vabs(sub(mul(q[j], tI2), mul(p[j], tI1))));
    const int axis = gt(len2[j], tiny);
    bad |= axis & ~gt(o[j], zero);
    loose |= static_cast<unsigned>(kSpread[axis & gt(mul(fb2, len2[j]), mul(o[j], o[j]))]) << j;
  }
  s.separated = faceOk != 7 || bad != 0;
  s.loose = loose;
  if (loose)
    for (int j = 0; j < 3; ++j) _mm256_storeu_pd(&s.eov[4 * j], o[j]), _mm256_storeu_pd(&s.elen2[4 * j], len2[j]);
}

}  // namespace proxima::detail::boxsat

#endif
