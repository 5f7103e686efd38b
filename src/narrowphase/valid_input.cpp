// Private: the AVX2 + FMA form of the per-call pose check (valid_input.hpp's posesAreValid).
#include "valid_input.hpp"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define PROXIMA_HAVE_AVX2_CHECK 1
#endif

namespace proxima::detail {

#if defined(PROXIMA_HAVE_AVX2_CHECK)

bool cpuHasAvx2Fma() {
  __builtin_cpu_init();  // (a no-op after start-up; needed if the first query runs in a static constructor)
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}

namespace {

// The pose's 12 numbers in order: the rotation's columns, then the translation. Each 4-wide load
// below stays inside the Transform (plain loads: masked ones cost ~2 ns more per query on this
// project's AMD machines).
static_assert(sizeof(Transform) == 12 * sizeof(Real), "Transform: rotation then translation, no padding");

// (x, y, z) -> (y, z, x) and (z, x, y); lane 3 stays in place.
[[gnu::target("avx2,fma"), gnu::always_inline]] inline __m256d yzx(__m256d c) {
  return _mm256_permute4x64_pd(c, _MM_SHUFFLE(3, 0, 2, 1));
}
[[gnu::target("avx2,fma"), gnu::always_inline]] inline __m256d zxy(__m256d c) {
  return _mm256_permute4x64_pd(c, _MM_SHUFFLE(3, 1, 0, 2));
}

// Bit mask (lanes 0-2) of the pose's passing checks: 0x7 when valid.
[[gnu::target("avx2,fma"), gnu::always_inline]] inline int poseMask(const Transform& pose) {
  const Real* r = pose.rotation.data();  // column-major: columns c_k = (r_0k, r_1k, r_2k), then t
  // Lanes 0-2 hold the columns; lane 3 holds the next number (r_01, r_02, t_x) and is never in a verdict.
  const __m256d c0 = _mm256_loadu_pd(r), c1 = _mm256_loadu_pd(r + 3), c2 = _mm256_loadu_pd(r + 6);
  const __m256d p0 = yzx(c0), p1 = yzx(c1), p2 = yzx(c2);
  // (RRᵀ)_ii = Σ_k r_ik² and (RRᵀ)_{i,i+1} = Σ_k r_ik r_{i+1,k}: lane i of Σ_k c_k c_k and Σ_k c_k yzx(c_k).
  const __m256d diag = _mm256_fmadd_pd(c2, c2, _mm256_fmadd_pd(c1, c1, _mm256_mul_pd(c0, c0)));
  const __m256d off = _mm256_fmadd_pd(c2, p2, _mm256_fmadd_pd(c1, p1, _mm256_mul_pd(c0, p0)));
  const __m256d sign = _mm256_set1_pd(-0.0), tol = _mm256_set1_pd(tol::kRotationOrthonormality);
  const __m256d eDiag = _mm256_andnot_pd(sign, _mm256_sub_pd(diag, _mm256_set1_pd(1)));
  const __m256d eOff = _mm256_andnot_pd(sign, off);
  int mask = _mm256_movemask_pd(_mm256_cmp_pd(eDiag, tol, _CMP_LT_OQ)) &
             _mm256_movemask_pd(_mm256_cmp_pd(eOff, tol, _CMP_LT_OQ));
  // det = c0 · (c1 x c2), c1 x c2 = yzx(c1) zxy(c2) - zxy(c1) yzx(c2); lane 3 is dropped before the sum.
  const __m256d cross = _mm256_fmsub_pd(p1, zxy(c2), _mm256_mul_pd(zxy(c1), p2));
  const __m256d t = _mm256_blend_pd(_mm256_mul_pd(c0, cross), _mm256_setzero_pd(), 0x8);
  const __m128d s = _mm_add_pd(_mm256_castpd256_pd128(t), _mm256_extractf128_pd(t, 1));  // (t0 + t2, t1 + 0)
  const __m128d det = _mm_add_sd(s, _mm_unpackhi_pd(s, s));
  mask &= _mm_comigt_sd(det, _mm_setzero_pd()) ? 0x7 : 0;
  // (r_22, t_x, t_y, t_z): lanes 1-3.
  const __m256d x = _mm256_andnot_pd(sign, _mm256_loadu_pd(r + 8));
  mask &= _mm256_movemask_pd(_mm256_cmp_pd(x, _mm256_set1_pd(tol::kMaxMagnitude), _CMP_LE_OQ)) >> 1;
  return mask & 0x7;
}

}  // namespace

[[gnu::target("avx2,fma")]] bool posesAreValidAvx2(const Transform& a, const Transform& b) {
  return (poseMask(a) & poseMask(b)) == 0x7;
}

#else

bool cpuHasAvx2Fma() { return false; }
bool posesAreValidAvx2(const Transform& a, const Transform& b) { return poseIsValid(a) && poseIsValid(b); }

#endif

}  // namespace proxima::detail
