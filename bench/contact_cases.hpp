// Penetration benchmark cases (proxima_bench_contact): overlapping pairs with their exact depth
// and normal from the separating-axis oracle (tests/sat_oracle.hpp, long double).
//
// Kinds (A at the origin of a random frame, both bodies randomly rotated, fixed seeds):
//   icosphere   two icospheres (vertices on the unit sphere) with the distance benchmark's
//               "overlapping" rotations, B at x = 2 r_in - 0.1 (r_in = inradius): the inscribed
//               balls overlap by 0.1, so every pair overlaps by >= 0.1
//   box         two boxes with random half extents in [0.25, 0.5] (size ~1)
//   box25       A 25x larger than B (half extents in [6.25, 12.5] vs [0.25, 0.5])
//   polytope    hulls of 20 random points in [-0.5, 0.5]^3, a new pair of hulls for every pair
//   edge_edge, vertex_face, face_face
//               boxes placed so that the deepest features are two crossing edges, a vertex of B
//               in a face of A, or two parallel faces (Descantes-style comparison)
//   ellipsoid   two ellipsoids of semi-axes (1, 0.75, 0.5), randomly rotated, B pushed by the target
//               depth along a random u into the pose where both surfaces touch with normals ±u; the
//               exact depth is the target along u (see makeContactCell), no oracle needed
// Depth targets for box/box25/polytope: 1e-6, 1e-2 and 0.3 times the size of the smaller body
// (the size is 1 by construction): B is put along a random direction u with overlap `target`
// along u, then moved along the oracle normal until the oracle depth is the target (a few steps).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cases.hpp"
#include "peers.hpp"
#include "proxima/shapes/shape.hpp"

namespace pbench {

enum class ContactKind { Icosphere, Box, Box25, Polytope, EdgeEdge, VertexFace, FaceFace, Ellipsoid };

/// Name used in benchmark names and reports: icosphere, box, box25, polytope, edge_edge, ...
const char* kindName(ContactKind k);
/// True for the kinds whose depth target is a parameter (box, box25, polytope, ellipsoid).
bool kindHasDepthTargets(ContactKind k);
/// Relative depth targets of box, box25 and polytope cells.
inline const std::vector<double>& contactDepths() {
  static const std::vector<double> d{1e-6, 1e-2, 0.3};
  return d;
}
/// Depth label in benchmark names: 1e-6, 1e-2, 0.3 (icosphere cells: 0.1, the sphere overlap).
std::string depthLabel(double d);

/// One pair: shapes (may differ from pair to pair) and two poses, pose1 = one small time step
/// after pose0 (both bodies rotated and moved by a step much smaller than the depth).
struct ContactPair {
  proxima::Shape a, b;
  PosePair pose0, pose1;
  double scale = 1;  ///< largest distance from a body's origin to its vertices (error scale)
};

/// The oracle's answer for one pose pair.
struct OracleRef {
  bool checked = false;  ///< false when the cell is "time only" (oracle too slow)
  bool overlapping = false;
  double depth = 0;  ///< rounded from the long-double depth
  Vec3 normal = Vec3::Zero();
};

struct ContactCell {
  ContactKind kind{};
  int n = 0;              ///< icosphere vertices; 8 for boxes; 20 input points for polytopes
  double target = 0;      ///< relative depth target (icospheres: 0.1)
  std::vector<ContactPair> pairs;
  std::vector<OracleRef> ref0, ref1;  ///< oracle on pose0 / pose1 (ref1 only when needed)
  double oracleSeconds = 0;           ///< wall time of the oracle (both poses)
  double meanDepth = 0;               ///< mean oracle depth over pose0 (checked cells)
  double minDepth = 0, maxDepth = 0;  ///< ... and its range
  int overlapping = 0;                ///< pairs the oracle calls overlapping (pose0)
  double inradius = 0;                ///< icospheres: the inradius used for the placement
  int oracleValidated = 0;            ///< icospheres: pairs where the prefiltered oracle was compared
  int oracleMismatch = 0;             ///< ... with the plain oracle, and disagreed (expected 0)
  double oracleValidateSeconds = 0;

  [[nodiscard]] bool checked() const { return !ref0.empty() && ref0.front().checked; }
  [[nodiscard]] std::string name() const;  ///< "<kind>/<depth>/N:<n>"
  /// The pairs as the peer adapters take them (pose0 or pose1).
  [[nodiscard]] std::vector<PenPair> peerPairs(bool pose1 = false) const;
};

/// Largest icosphere size whose cell is checked against the oracle (larger: time only).
/// PROXIMA_BENCH_ORACLE_MAX_N overrides the default 642.
int oracleMaxN();
/// Icosphere cells: pairs on which the prefiltered oracle is compared with the plain one
/// (PROXIMA_BENCH_ORACLE_VALIDATE, default 20).
int oracleValidatePairs();

/// Builds a cell (poses, shapes, oracle on pose0 and on pose1 when withPose1). Deterministic.
/// Oracle runs on up to 2 threads.
ContactCell makeContactCell(ContactKind kind, int n, double target, bool withPose1);

/// Overlap of A and B along the unit direction n, computed like the oracle (long double brute
/// force over the world vertices): max_A a·n - min_B b·n. Used to accept a reported normal that
/// differs from the oracle's but is an equally deep (tied) axis.
double overlapAlong(const ContactPair& p, bool pose1, const Vec3& n);

}  // namespace pbench
