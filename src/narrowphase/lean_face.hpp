// Private: GJK-TD's lean warm tetrahedron (gjk_td.hpp) in vector lanes.
//
// A persisting polyhedral face contact (every DEM step of a resting pair) re-evaluates the cached
// face (0, 1, 2) and apex 3 as a tetrahedron: B's points mapped to A's frame, each face's cross
// product and orient3d filter terms, whether the origin lies strictly below all four faces, each
// face's plane and barycentrics, and, once accepted, the answer's witnesses. Written point by point
// and face by face, this was most of the lean path's arithmetic; here four points or four faces are
// the four lanes of one vector (AVX2 where the processor has it, else two SSE2 halves), with the
// scalar helpers' operations in the same order per lane (mulMat, faceCross, faceOrient,
// faceNormalise, faceBarycentrics): the same bits as one by one. (Settled polyhedra10k bed:
// 4 853 -> 4 324 instructions per narrow-phase call, instruction_profile.py.)
#pragma once

#include "proxima/core/types.hpp"

namespace proxima::detail {

/// Lane k is face k of the tetrahedron: F0 = (0, i1, i2) the base, F1 = (0, 3, i1), F2 = (i1, 3, i2),
/// F3 = (i2, 3, 0), with (i1, i2) = (1, 2), or (2, 1) when the apex lies above the base's (0, 1, 2)
/// normal, as buildTetrahedron orders them.
struct LeanFaces {
  alignas(32) Real cross[3][4];     ///< (y[v1] - y[v0]) x (y[v2] - y[v0]) as faceCross rounds it
  alignas(32) Real crossAbs[3][4];  ///< faceCross's orient3d filter magnitude terms
  alignas(32) Real n[3][4];         ///< faceNormalise's unit normal (lanes with planeValid set)
  alignas(32) Real d[4];            ///< faceNormalise's plane distance
  alignas(32) Real cy[4];           ///< cross · y[v0]
  alignas(32) Real c2[4];           ///< |cross|²
  alignas(32) Real lambda[3][4];    ///< faceBarycentrics of the origin's projection on each face
  alignas(32) Real height[4];       ///< lane i: the base's normal · y[i] (vertex i, not face i)
  int v[4][3];                      ///< each face's vertex indices into y
  unsigned planeValid = 0;          ///< bit k: faceNormalise succeeded (|cross| > 0 and finite)
  unsigned wellShaped = 0;          ///< bit k: |crossAbs|² <= 1e4 |cross|²
  /// orient3d(face, origin) < 0 for every face, i.e. the origin strictly inside: 1 certain (the
  /// filter decided all four), 0 certainly not (a face's filter says the origin is on or above it),
  /// -1 undecided by the filter (a face needs the exact predicate).
  int originInside = -1;

  [[nodiscard, gnu::always_inline]] Vec3 crossOf(int k) const { return {cross[0][k], cross[1][k], cross[2][k]}; }
  [[nodiscard, gnu::always_inline]] Vec3 crossAbsOf(int k) const { return {crossAbs[0][k], crossAbs[1][k], crossAbs[2][k]}; }
  [[nodiscard, gnu::always_inline]] Vec3 normalOf(int k) const { return {n[0][k], n[1][k], n[2][k]}; }
};

/// The tetrahedron of a cached face and apex: pa[i] A's points (A's frame), lb[i] B's (B's frame),
/// i = 0..3 (3: the apex); R, t: B's pose in A's frame. Writes B's points in A's frame
/// bA[i] = mulMat(R, lb[i]) + t, the CSO points y[i] = pa[i] - bA[i] and scale2 = max |y[i]|²
/// (as the caller's loop over the points rounds them). Returns the sign of orient3d(y0, y1, y2, y3)
/// (faceCross and faceOrient on the base: 0 when the base has no area or the apex lies in its plane);
/// when it is not 0, f holds the faces, with (i1, i2) = (2, 1) when it is positive.
int leanTetrahedron(const Mat3& R, const Vec3& t, const Vec3* pa, const Vec3* lb, Vec3* y, Vec3* bA, Real& scale2,
                    LeanFaces& f);

/// GJK-TD's face answer (gjk_td.hpp answerOnFace) for the lean path: on the face (pa[face[i]] -
/// bA[face[i]], i = 0..2) with barycentrics lam, A's point za = Σ lam_i pa and B's zb = Σ lam_i bA
/// (A's frame); with A's pose (Ra, ta): the normal Ra nLocal, the witnesses Ra za + ta and
/// Ra zb + ta, and their midpoint. The scalar form's bits.
void leanFaceAnswer(const Mat3& Ra, const Vec3& ta, const Vec3& nLocal, const Vec3* pa, const Vec3* bA, const int* face,
                    const Real* lam, Vec3& normal, Vec3& witnessA, Vec3& witnessB, Vec3& midpoint);

}  // namespace proxima::detail
