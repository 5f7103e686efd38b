// Peer libraries (FCL, Bullet, libccd) behind one small interface, so that the benchmark and the
// accuracy check run them on exactly the same shapes and poses as proxima. Every peer that the
// build found is compiled in (PROXIMA_HAVE_FCL / PROXIMA_HAVE_BULLET / PROXIMA_HAVE_CCD); the
// others are simply absent from availablePeers().
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

/// A shape as handed to a peer: a polytope (hull vertices + triangles) or an ellipsoid.
struct ShapeRef {
  const proxima::Polytope* polytope = nullptr;
  const proxima::Ellipsoid* ellipsoid = nullptr;
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

}  // namespace pbench
