// Peer libraries (FCL, Bullet, libccd) behind small interfaces, so that the benchmarks and the
// accuracy check run them on exactly the same shapes and poses as proxima: distance / intersection
// queries (PeerRunner) and penetration queries (PenetrationRunner, proxima_bench_contact). Every
// peer that the build found is compiled in (PROXIMA_HAVE_FCL / PROXIMA_HAVE_BULLET /
// PROXIMA_HAVE_CCD); the others are simply absent from availablePeers() /
// availablePenetrationPeers().
#pragma once

#include <cstddef>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "cases.hpp"
#include "proxima/shapes/convex.hpp"

namespace pbench {

enum class Peer { FclLibccd, FclIndep, Bullet, CcdGjk, CcdMpr };

struct PeerInfo {
  Peer id;
  const char* key;     ///< column key in benchmark names: fcl_libccd, fcl_indep, bullet, ccd_gjk, ccd_mpr
  const char* label;   ///< human-readable
  bool distance;       ///< false: boolean intersection test only (libccd has no distance query)
};

/// Peers compiled into this binary, in a fixed order.
std::vector<PeerInfo> availablePeers();
/// One line per compiled-in peer: name, version, precision and the settings used.
std::vector<std::string> peerDescriptions();

/// A shape as handed to a peer: a polytope (hull vertices + triangles), an ellipsoid or a box
/// (each peer's native box type).
struct ShapeRef {
  const proxima::Polytope* polytope = nullptr;
  const proxima::Ellipsoid* ellipsoid = nullptr;
  const proxima::Box* box = nullptr;
};

struct PeerAnswer {
  bool valid = true;     ///< false: the peer reported no result (counted as a failure)
  bool overlap = false;  ///< the peer says the bodies touch or overlap
  double distance = std::numeric_limits<double>::quiet_NaN();  ///< NaN for boolean-only peers
};

/// Runs one peer on a fixed list of pose pairs; poses are converted to the peer's own transform
/// type once, up front (the peer applies the transform inside every query).
class PeerRunner {
 public:
  virtual ~PeerRunner() = default;
  virtual PeerAnswer query(std::size_t i) = 0;
};

/// Shapes are converted once per (peer, shape) and cached for the life of the process.
std::unique_ptr<PeerRunner> makePeerRunner(Peer peer, ShapeRef a, ShapeRef b, const std::vector<PosePair>& poses);

// ---- Penetration queries (proxima_bench_contact) -------------------------------------------------

enum class PenPeer { CcdEpa, CcdMpr, FclIndepEpa, FclLibccdMpr, FclLibccdSigned, BulletEpa, BulletGjk };

struct PenPeerInfo {
  PenPeer id;
  const char* key;    ///< column key in benchmark names: ccd_epa, ccd_mpr, fcl_indep_epa, ...
  const char* label;  ///< human-readable
};

/// Penetration peers compiled into this binary, in a fixed order.
std::vector<PenPeerInfo> availablePenetrationPeers();
/// One line per compiled-in penetration peer: the call made, the settings, and how depth and
/// normal are read from its answer.
std::vector<std::string> penetrationPeerDescriptions();

/// One pair of a penetration cell: the two shapes (may differ from pair to pair) and their poses.
struct PenPair {
  ShapeRef a, b;
  Transform poseA, poseB;
};

/// A peer's penetration answer in proxima's conventions: depth >= 0 when overlapping, normal the
/// unit vector from A to B (the direction in which B must move to separate).
struct PenAnswer {
  bool valid = true;     ///< false: the peer reported an error or no result
  bool overlap = false;  ///< the peer says the bodies overlap
  double depth = std::numeric_limits<double>::quiet_NaN();
  Vec3 normal = Vec3::Constant(std::numeric_limits<double>::quiet_NaN());
};

class PenetrationRunner {
 public:
  virtual ~PenetrationRunner() = default;
  /// May throw (FCL does on some configurations); the harness counts that as a failure.
  virtual PenAnswer query(std::size_t i) = 0;
};

/// Shapes and poses are converted to the peer's own types once, up front.
std::unique_ptr<PenetrationRunner> makePenetrationRunner(PenPeer peer, const std::vector<PenPair>& pairs);

}  // namespace pbench
