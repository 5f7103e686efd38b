// Penetration of overlapping convex bodies: depth, contact normal (A -> B), witness points, contact
// point and a contact manifold.
//
// GJK-TD (Descantes et al. 2019 §3, Algorithm 3): start from GJK's final simplex (blown up to a
// tetrahedron when GJK ends on 1-3 points), repeatedly expand the face of the polytope closest to
// the origin by the CSO support point along its normal, until that point lies on the face; read the
// barycentrics of the origin's projection with area ratios (digest note (d)) and the witness points
// from them. Visibility tests use the exact orient3d predicate, so the polytope stays exactly convex
// and contained in the CSO: the closest face's plane distance is a certified lower bound on the
// depth and its support value an upper bound (digest note (g)). With polytopes the expansion ends
// exactly (no support point strictly beyond the face); curved shapes stop at tol::kEpaRelative.
#pragma once

#include <limits>
#include <optional>
#include <string>

#include "proxima/core/tolerances.hpp"
#include "proxima/narrowphase/gjk.hpp"
#include "proxima/shapes/shape.hpp"

namespace proxima {

/// Which penetration algorithm `contact()` runs.
enum class PenetrationMethod {
  GjkTd,    ///< GJK + tetrahedron expansion (default; any support-mapped shapes)
  Nezami,   ///< revised fast common plane, Descantes Algorithm 2 (polyhedra only)
  Cundall,  ///< revised Cundall common plane, Descantes Algorithm 1 (polyhedra only)
};
std::string_view toString(PenetrationMethod m);

/// One point of a contact manifold (world frame): the midpoint between the two surfaces and the
/// local depth (>= 0) measured along the contact normal.
struct ContactPoint {
  Vec3 point = Vec3::Zero();
  Real depth = 0;
};

/// Result of a contact query. Extends the distance result: `distance` is the signed distance
/// (negative = -depth), `normal` the unit normal from A to B (the direction in which B must move
/// to separate, or the closest-point direction when apart), witnesses on both surfaces.
struct ContactResult : DistanceResult {
  Real depth = 0;                    ///< max(0, -distance)
  Vec3 contactPoint = Vec3::Zero();  ///< midpoint of the witness points (world)
  int expansions = 0;                ///< GJK-TD face expansions (or common-plane iterations)
  int polytopeVertices = 0;          ///< vertices of the final expanded polytope (GJK-TD)
  int contactCount = 0;              ///< manifold size (0 when separated)
  ContactPoint contacts[4];          ///< manifold: face-face / edge-face clipping, else 1 point
  PenetrationMethod method = PenetrationMethod::GjkTd;
};

struct PenetrationOptions {
  GjkOptions gjk;
  PenetrationMethod method = PenetrationMethod::GjkTd;
  int maxExpansions = tol::kEpaMaxExpansions;
  /// Expansion stops when the support value along the closest face's normal exceeds the face's
  /// plane distance by at most relTolerance x scale (curved shapes; polytopes end exactly first).
  Real relTolerance = tol::kEpaRelative;
  bool manifold = true;  ///< build the multi-point manifold (else 1 point: the contact point)
  /// Skip the per-call checks of shapes, poses, options and cache: the caller guarantees valid shapes,
  /// finite poses with orthonormal rotations, valid options and one cache per ordered pair (the DEM
  /// engine validates its shapes and options once, checks every pose once per step instead of once
  /// per pair, and gives each listed pair its own cache).
  bool trustedInput = false;
  /// Polyhedral pairs in a persisting face contact take the lean warm start (gjk_td.hpp): the same
  /// certificate and result bits as the general warm start without building the expanding polytope.
  /// Off only to compare the two (tests).
  bool leanWarmFace = true;
  /// Two overlapping boxes: the separating-axis test over their 15 candidate axes gives the depth
  /// directly (box_box.hpp); pairs it cannot settle, and separated pairs, take GJK / GJK-TD.
  bool boxBoxSat = true;
  /// Report the final face's support points (simplexA/B, lambda) of a polytope answer in the world
  /// frame. The DEM, which reads only depth, normal, contact point and manifold, turns it off (six
  /// point transforms per contact); then simplexSize is 0 for those answers.
  bool reportSimplex = true;
};

/// Per-pair warm-start data across time steps: GJK's simplex plus the previous contact normal and
/// the previous closest face's support points, all kept in each body's own frame. (For two shapes of
/// different kinds, A and B in the order contact() runs them, the later kind first: GjkCache.)
/// Laid out for the DEM, which keeps one per pair in a bed far larger than the processor's caches:
/// aligned to a cache line, with everything a persisting contact's warm query reads and writes (the
/// face, apex, manifold memo, support memos, hints and key) in the first kHotBytes, six lines; GJK's
/// simplex and the ring, which only cold, separated or expanding queries read, after them. (The hot fields
/// had straddled six or seven lines: one line more fetched from memory per touching pair and step.)
struct alignas(64) ContactCache {
  bool hasFace = false;
  int faceSize = 0;
  /// Polytope vertices supporting the last result's normal on A and -normal on B (-1: unknown); the
  /// contact manifold starts its face search there instead of searching again.
  int supportVertexA = -1, supportVertexB = -1;
  Vec3 normalLocalA = Vec3::Zero();
  Vec3 faceA[3], faceB[3];                          ///< support points in A's and B's local frames
  Vec3 apexA = Vec3::Zero(), apexB = Vec3::Zero();  ///< with the face: the vertex pair deepest along -normal
  /// The manifold's last face search: the directions it searched (each body's frame) and, when it
  /// found no face on two polytopes, the best alignment of any face of each body with them (else 2).
  /// While both directions stay closer to these than the alignments' gap to the face threshold, no
  /// face can align (a unit normal's alignment changes by at most the direction's change): the
  /// manifold of a persisting vertex or edge contact (about half of a polyhedral bed's) skips its
  /// search and leaves the memo as it is.
  struct ManifoldMemo {
    Vec3 directionA = Vec3::Zero(), directionB = Vec3::Zero();
    Real alignA = 2, alignB = 2;  ///< > 1: nothing remembered
    /// When a body's search found its best triangle around a support vertex: that vertex and
    /// triangle, and the radius about the body's direction above within which the same triangle
    /// stays the best aligned of those around the vertex (their alignments' gap, halved); the next
    /// search from the same vertex along a direction that close takes it without comparing the
    /// others. radius 0: none. (16-bit indices and a float radius, to keep the hot part's lines.)
    struct FaceMemo {
      std::uint16_t vertex = 0, triangle = 0;
      float radius = 0;
    } faceA, faceB;
  } manifold;
  /// The lean warm face's last support search on each body along its face normal (SupportMemo):
  /// while the normal stays close, only the vertices that can still be the highest are evaluated.
  SupportMemo memoA, memoB;
  /// (its hints and key come first: the end of the hot part)
  GjkCache gjk;
  /// Bytes from the start that a persisting contact's warm query touches (up to gjk's simplex).
  static constexpr std::size_t kHotBytes = 384;
  /// With the face, when the last answer came from an expanded polytope of two polyhedral cores: the
  /// polytope's vertices around the face (the far vertices of its three neighbour faces, then, for
  /// bodies of more than 32 vertices, of their neighbours; support points in each body's frame,
  /// ringSize of them). A warm query whose first step does not accept a face, or whose warm
  /// tetrahedron's closest face is a side, inserts a ring point that lies beyond the closest face
  /// instead of searching for a support point, so the faces around the old answer come back without
  /// a support search on both bodies each (deep contacts, whose warm tetrahedron's side faces are
  /// closer than its base). Any pair of body points is a point of A - B: stale entries cost time,
  /// never correctness.
  static constexpr int kRing = tol::kEpaRingPoints;
  int ringSize = 0;
  Vec3 ringA[kRing], ringB[kRing];
  /// (Every point zero, so that a fresh cache's bytes, which checkpoints store, are determined.)
  ContactCache() {
    for (int i = 0; i < 3; ++i) faceA[i].setZero(), faceB[i].setZero();
    for (int i = 0; i < kRing; ++i) ringA[i].setZero(), ringB[i].setZero();
  }
  void reset() { *this = ContactCache{}; }
  [[nodiscard]] bool plausible() const {
    return gjk.plausible() && boolBytePlausible(hasFace) && faceSize >= 0 && faceSize <= 3 &&
           memoA.count <= SupportMemo::kMaxCandidates && memoB.count <= SupportMemo::kMaxCandidates && ringSize >= 0 &&
           ringSize <= kRing;
  }
};
static_assert(sizeof(ContactCache) % 64 == 0);

/// nullopt when the options are usable (the method and the GJK enumerations in range, counts >= 1,
/// finite tolerances >= 0); otherwise the field and what is wrong. contact() checks it unless
/// trustedInput; the DEM once at initialize().
std::optional<std::string> validateOptions(const PenetrationOptions& options);

/// Runtime entry point: validates the input, handles radii (cores apart: depth = radii - core
/// distance, no expansion; cores overlapping: expand the cores, add the radii), dispatches the
/// method, and builds the manifold.
ContactResult contact(const Shape& a, const Transform& poseA, const Shape& b, const Transform& poseB,
                      const PenetrationOptions& options = {}, ContactCache* cache = nullptr);

struct ContactInput {
  const Shape* a = nullptr;
  Transform poseA;
  const Shape* b = nullptr;
  Transform poseB;
  PenetrationOptions options;
};
ContactResult contact(const ContactInput& input, ContactCache* cache = nullptr);

}  // namespace proxima
