#include "peers.hpp"

#include <cmath>
#include <cstdio>
#include <map>
#include <stdexcept>
#include <utility>

#ifdef PROXIMA_HAVE_FCL
#include <fcl/config.h>
#include <fcl/geometry/shape/box.h>
#include <fcl/geometry/shape/convex.h>
#include <fcl/geometry/shape/ellipsoid.h>
#include <fcl/narrowphase/collision.h>
#include <fcl/narrowphase/distance.h>
#endif

#ifdef PROXIMA_HAVE_BULLET
#include <BulletCollision/CollisionShapes/btBoxShape.h>
#include <BulletCollision/CollisionShapes/btConvexHullShape.h>
#include <BulletCollision/CollisionShapes/btConvexInternalShape.h>
#include <BulletCollision/NarrowPhaseCollision/btGjkEpa2.h>
#include <BulletCollision/NarrowPhaseCollision/btGjkEpaPenetrationDepthSolver.h>
#include <BulletCollision/NarrowPhaseCollision/btGjkPairDetector.h>
#include <BulletCollision/NarrowPhaseCollision/btPointCollector.h>
#include <BulletCollision/NarrowPhaseCollision/btVoronoiSimplexSolver.h>
#include <LinearMath/btScalar.h>
#endif

#ifdef PROXIMA_HAVE_CCD
#include <ccd/ccd.h>
#endif

namespace pbench {

std::vector<PeerInfo> availablePeers() {
  std::vector<PeerInfo> p;
#ifdef PROXIMA_HAVE_FCL
  p.push_back({Peer::FclLibccd, "fcl_libccd", "FCL (GST_LIBCCD)", true});
  p.push_back({Peer::FclIndep, "fcl_indep", "FCL (GST_INDEP)", true});
#endif
#ifdef PROXIMA_HAVE_BULLET
  p.push_back({Peer::Bullet, "bullet", "Bullet btGjkPairDetector", true});
#endif
#ifdef PROXIMA_HAVE_CCD
  p.push_back({Peer::CcdGjk, "ccd_gjk", "libccd ccdGJKIntersect (boolean)", false});
  p.push_back({Peer::CcdMpr, "ccd_mpr", "libccd ccdMPRPenetration (boolean)", false});
#endif
  return p;
}

std::vector<std::string> peerDescriptions() {
  std::vector<std::string> d;
#ifdef PROXIMA_HAVE_FCL
  d.push_back(std::string("FCL ") + FCL_VERSION +
              ": fcl::distance on fcl::Convex<double> (hull vertices + triangles) / fcl::Ellipsoid<double>, "
              "default DistanceRequest (distance_tolerance 1e-6, no signed distance), solvers GST_LIBCCD and "
              "GST_INDEP");
#endif
#ifdef PROXIMA_HAVE_BULLET
  d.push_back("Bullet " + std::to_string(BT_BULLET_VERSION) +
#ifdef BT_USE_DOUBLE_PRECISION
              " (double precision)"
#else
              " (single precision)"
#endif
              ": btGjkPairDetector + btVoronoiSimplexSolver + btGjkEpaPenetrationDepthSolver on btConvexHullShape "
              "(margin 0) / a btConvexInternalShape ellipsoid with the exact support (margin 0); fresh detector "
              "per query (cold start)");
#endif
#ifdef PROXIMA_HAVE_CCD
  d.push_back(
      "libccd (double): ccdGJKIntersect and ccdMPRPenetration with brute-force support callbacks that apply the "
      "pose; max_iterations 1000, other settings CCD_INIT defaults. libccd has no distance query, so only the "
      "overlap classification is checked");
#endif
  return d;
}

namespace {

/// Cache key of a shape: the polytope's shared hull data, else the ellipsoid or box object.
[[maybe_unused]] const void* shapeKey(ShapeRef s) {
  if (s.polytope) return &s.polytope->data();
  if (s.box) return s.box;
  return s.ellipsoid;
}

// ---------------------------------------------------------------------------------------------
#ifdef PROXIMA_HAVE_FCL

std::shared_ptr<fcl::CollisionGeometryd> fclShape(ShapeRef s) {
  static std::map<const void*, std::shared_ptr<fcl::CollisionGeometryd>> cache;
  const void* key = shapeKey(s);
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  std::shared_ptr<fcl::CollisionGeometryd> g;
  if (s.box) {
    const Vec3 side = 2 * s.box->halfExtents;
    g = std::make_shared<fcl::Boxd>(side.x(), side.y(), side.z());
  } else if (s.polytope) {
    const auto& d = s.polytope->data();
    auto verts = std::make_shared<std::vector<fcl::Vector3d>>();
    for (const auto& v : d.vertices) verts->emplace_back(v.x(), v.y(), v.z());
    auto faces = std::make_shared<std::vector<int>>();
    for (const auto& t : d.triangles) faces->insert(faces->end(), {3, t[0], t[1], t[2]});
    g = std::make_shared<fcl::Convexd>(verts, static_cast<int>(d.triangles.size()), faces, false);
  } else {
    const auto& r = s.ellipsoid->radii;
    g = std::make_shared<fcl::Ellipsoidd>(r.x(), r.y(), r.z());
  }
  g->computeLocalAABB();
  cache.emplace(key, g);
  return g;
}

fcl::Transform3d fclPose(const Transform& t) {
  fcl::Transform3d f = fcl::Transform3d::Identity();
  f.linear() = t.rotation;
  f.translation() = t.translation;
  return f;
}

class FclRunner final : public PeerRunner {
 public:
  FclRunner(fcl::GJKSolverType solver, ShapeRef a, ShapeRef b, const std::vector<PosePair>& poses)
      : a_(fclShape(a)), b_(fclShape(b)) {
    req_.gjk_solver_type = solver;
    tf_.reserve(poses.size());
    for (const auto& p : poses) tf_.emplace_back(fclPose(p.a), fclPose(p.b));
  }
  PeerAnswer query(std::size_t i) override {
    fcl::DistanceResultd res;
    const double d = fcl::distance(a_.get(), tf_[i].first, b_.get(), tf_[i].second, req_, res);
    PeerAnswer out;
    out.distance = d;
    out.overlap = d <= 0;
    out.valid = std::isfinite(d);
    return out;
  }

 private:
  std::shared_ptr<fcl::CollisionGeometryd> a_, b_;
  std::vector<std::pair<fcl::Transform3d, fcl::Transform3d>> tf_;
  fcl::DistanceRequestd req_;
};
#endif

// ---------------------------------------------------------------------------------------------
#ifdef PROXIMA_HAVE_BULLET
/// Ellipsoid with the exact support mapping s(d) = D² d / ||D d||, margin 0.
class BtEllipsoid final : public btConvexInternalShape {
 public:
  explicit BtEllipsoid(const btVector3& radii) : r_(radii) {
    m_shapeType = CUSTOM_CONVEX_SHAPE_TYPE;
    setMargin(0);
  }
  btVector3 localGetSupportingVertexWithoutMargin(const btVector3& d) const override {
    const btVector3 dd = r_ * d;
    const btScalar n = dd.length();
    if (!(n > 0)) return btVector3(r_.x(), 0, 0);
    return r_ * dd / n;
  }
  void batchedUnitVectorGetSupportingVertexWithoutMargin(const btVector3* v, btVector3* out, int n) const override {
    for (int i = 0; i < n; ++i) out[i] = localGetSupportingVertexWithoutMargin(v[i]);
  }
  void getAabb(const btTransform& t, btVector3& mn, btVector3& mx) const override { getAabbSlow(t, mn, mx); }
  void calculateLocalInertia(btScalar, btVector3& inertia) const override { inertia.setZero(); }
  const char* getName() const override { return "ProximaBenchEllipsoid"; }

 private:
  btVector3 r_;
};

std::shared_ptr<btConvexShape> bulletShape(ShapeRef s) {
  static std::map<const void*, std::shared_ptr<btConvexShape>> cache;
  const void* key = shapeKey(s);
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  std::shared_ptr<btConvexShape> g;
  if (s.box) {
    const Vec3& h = s.box->halfExtents;
    auto b = std::make_shared<btBoxShape>(btVector3(btScalar(h.x()), btScalar(h.y()), btScalar(h.z())));
    // btBoxShape keeps its outer extents when the margin changes: margin 0 = the exact box.
    b->setMargin(0);
    g = b;
  } else if (s.polytope) {
    std::vector<btScalar> xyz;
    for (const auto& v : s.polytope->vertices()) xyz.insert(xyz.end(), {btScalar(v.x()), btScalar(v.y()), btScalar(v.z())});
    auto h = std::make_shared<btConvexHullShape>(xyz.data(), static_cast<int>(s.polytope->vertexCount()),
                                                 static_cast<int>(3 * sizeof(btScalar)));
    h->setMargin(0);
    g = h;
  } else {
    const auto& r = s.ellipsoid->radii;
    g = std::make_shared<BtEllipsoid>(btVector3(btScalar(r.x()), btScalar(r.y()), btScalar(r.z())));
  }
  cache.emplace(key, g);
  return g;
}

btTransform bulletPose(const Transform& t) {
  const auto& r = t.rotation;
  btMatrix3x3 m(btScalar(r(0, 0)), btScalar(r(0, 1)), btScalar(r(0, 2)), btScalar(r(1, 0)), btScalar(r(1, 1)),
                btScalar(r(1, 2)), btScalar(r(2, 0)), btScalar(r(2, 1)), btScalar(r(2, 2)));
  return btTransform(m, btVector3(btScalar(t.translation.x()), btScalar(t.translation.y()),
                                  btScalar(t.translation.z())));
}

class BulletRunner final : public PeerRunner {
 public:
  BulletRunner(ShapeRef a, ShapeRef b, const std::vector<PosePair>& poses) : a_(bulletShape(a)), b_(bulletShape(b)) {
    tf_.reserve(poses.size());
    for (const auto& p : poses) tf_.emplace_back(bulletPose(p.a), bulletPose(p.b));
  }
  PeerAnswer query(std::size_t i) override {
    // A fresh detector per query: cold start from Bullet's default axis (0,1,0); the simplex and
    // EPA solvers are reset by getClosestPoints.
    btGjkPairDetector det(a_.get(), b_.get(), &simplex_, &epa_);
    btGjkPairDetector::ClosestPointInput in;
    in.m_transformA = tf_[i].first;
    in.m_transformB = tf_[i].second;
    btPointCollector out;
    det.getClosestPoints(in, out, nullptr);
    PeerAnswer r;
    r.valid = out.m_hasResult && std::isfinite(double(out.m_distance));
    r.distance = double(out.m_distance);
    r.overlap = out.m_distance <= 0;
    return r;
  }

 private:
  std::shared_ptr<btConvexShape> a_, b_;
  std::vector<std::pair<btTransform, btTransform>> tf_;
  btVoronoiSimplexSolver simplex_;
  btGjkEpaPenetrationDepthSolver epa_;
};
#endif

// ---------------------------------------------------------------------------------------------
#ifdef PROXIMA_HAVE_CCD
struct CcdBody {
  const std::vector<Vec3>* vertices = nullptr;  // polytope (brute-force support), or
  bool box = false;                             // box with half extents `radii`, or
  Vec3 radii = Vec3::Zero();                    // ellipsoid radii
  Mat3 r = Mat3::Identity();
  Vec3 t = Vec3::Zero();
};

void ccdSupport(const void* obj, const ccd_vec3_t* dir, ccd_vec3_t* out) {
  const auto* b = static_cast<const CcdBody*>(obj);
  const Vec3 d = b->r.transpose() * Vec3(dir->v[0], dir->v[1], dir->v[2]);
  Vec3 s;
  if (b->vertices) {
    const auto& v = *b->vertices;
    std::size_t k = 0;
    double best = d.dot(v[0]);
    for (std::size_t i = 1; i < v.size(); ++i) {
      const double x = d.dot(v[i]);
      if (x > best) best = x, k = i;
    }
    s = v[k];
  } else if (b->box) {
    const Vec3& h = b->radii;
    s = Vec3(d.x() < 0 ? -h.x() : h.x(), d.y() < 0 ? -h.y() : h.y(), d.z() < 0 ? -h.z() : h.z());
  } else {
    const Vec3 dd = b->radii.cwiseProduct(d);
    const double n = dd.norm();
    s = n > 0 ? Vec3(b->radii.cwiseProduct(dd) / n) : Vec3(b->radii.x(), 0, 0);
  }
  const Vec3 w = b->r * s + b->t;
  out->v[0] = w.x(), out->v[1] = w.y(), out->v[2] = w.z();
}

void ccdCenter(const void* obj, ccd_vec3_t* c) {
  const auto* b = static_cast<const CcdBody*>(obj);
  c->v[0] = b->t.x(), c->v[1] = b->t.y(), c->v[2] = b->t.z();
}

CcdBody ccdBody(ShapeRef s, const Transform& t) {
  CcdBody c;
  if (s.polytope) c.vertices = &s.polytope->vertices();
  else if (s.box) c.box = true, c.radii = s.box->halfExtents;
  else c.radii = s.ellipsoid->radii;
  c.r = t.rotation;
  c.t = t.translation;
  return c;
}

class CcdRunner final : public PeerRunner {
 public:
  CcdRunner(bool mpr, ShapeRef a, ShapeRef b, const std::vector<PosePair>& poses) : mpr_(mpr) {
    CCD_INIT(&ccd_);
    ccd_.support1 = ccdSupport;
    ccd_.support2 = ccdSupport;
    ccd_.center1 = ccdCenter;
    ccd_.center2 = ccdCenter;
    ccd_.max_iterations = 1000;
    bodies_.reserve(poses.size());
    for (const auto& p : poses) bodies_.emplace_back(ccdBody(a, p.a), ccdBody(b, p.b));
  }
  PeerAnswer query(std::size_t i) override {
    PeerAnswer r;
    const auto& [a, b] = bodies_[i];
    if (mpr_) {
      ccd_real_t depth;
      ccd_vec3_t dir, pos;
      r.overlap = ccdMPRPenetration(&a, &b, &ccd_, &depth, &dir, &pos) == 0;
    } else {
      r.overlap = ccdGJKIntersect(&a, &b, &ccd_) != 0;
    }
    return r;
  }

 private:
  bool mpr_;
  ccd_t ccd_;
  std::vector<std::pair<CcdBody, CcdBody>> bodies_;
};
#endif

}  // namespace

std::unique_ptr<PeerRunner> makePeerRunner(Peer peer, ShapeRef a, ShapeRef b, const std::vector<PosePair>& poses) {
  switch (peer) {
#ifdef PROXIMA_HAVE_FCL
    case Peer::FclLibccd: return std::make_unique<FclRunner>(fcl::GST_LIBCCD, a, b, poses);
    case Peer::FclIndep: return std::make_unique<FclRunner>(fcl::GST_INDEP, a, b, poses);
#endif
#ifdef PROXIMA_HAVE_BULLET
    case Peer::Bullet: return std::make_unique<BulletRunner>(a, b, poses);
#endif
#ifdef PROXIMA_HAVE_CCD
    case Peer::CcdGjk: return std::make_unique<CcdRunner>(false, a, b, poses);
    case Peer::CcdMpr: return std::make_unique<CcdRunner>(true, a, b, poses);
#endif
    default: break;
  }
  throw std::invalid_argument("peer not compiled in");
}

}  // namespace pbench

// =============================================================================================
// Penetration queries. Every adapter converts shapes and poses once, up front, and returns the
// answer in proxima's conventions (depth >= 0, unit normal from A to B). The sign conventions of
// each peer were checked against the SAT oracle on overlapping pairs (proxima_bench_contact's
// `normal_flips` counter stays 0 for every peer in every cell).
namespace pbench {
namespace {

[[maybe_unused]] Vec3 unitOrNaN(const Vec3& v) {
  const double n = v.norm();
  return n > 0 && std::isfinite(n) ? Vec3(v / n) : Vec3::Constant(std::numeric_limits<double>::quiet_NaN());
}

// ---------------------------------------------------------------------------------------------
#ifdef PROXIMA_HAVE_CCD
/// libccd's own penetration calls on brute-force support callbacks (the same as the distance
/// benchmark's). ccdGJKPenetration is GJK + EPA; ccdMPRPenetration is Minkowski Portal
/// Refinement, which measures the overlap along the ray from the interior point (the centre
/// difference), not the minimum over directions. Both document "obj2 translated by depth along dir
/// separates the bodies", i.e. dir is A -> B.
class CcdPenRunner final : public PenetrationRunner {
 public:
  CcdPenRunner(bool mpr, const std::vector<PenPair>& pairs) : mpr_(mpr) {
    CCD_INIT(&ccd_);
    ccd_.support1 = ccdSupport;
    ccd_.support2 = ccdSupport;
    ccd_.center1 = ccdCenter;
    ccd_.center2 = ccdCenter;
    ccd_.max_iterations = 1000;
    bodies_.reserve(pairs.size());
    for (const auto& p : pairs) bodies_.emplace_back(ccdBody(p.a, p.poseA), ccdBody(p.b, p.poseB));
  }
  PenAnswer query(std::size_t i) override {
    const auto& [a, b] = bodies_[i];
    ccd_real_t depth = 0;
    ccd_vec3_t dir, pos;
    const int rc = mpr_ ? ccdMPRPenetration(&a, &b, &ccd_, &depth, &dir, &pos)
                        : ccdGJKPenetration(&a, &b, &ccd_, &depth, &dir, &pos);
    PenAnswer r;
    if (rc == -1) return r;  // "no intersection"
    if (rc != 0) {
      r.valid = false;  // -2: memory allocation failure
      return r;
    }
    r.overlap = true;
    r.depth = depth;
    r.normal = unitOrNaN(Vec3(dir.v[0], dir.v[1], dir.v[2]));
    return r;
  }

 private:
  bool mpr_;
  ccd_t ccd_;
  std::vector<std::pair<CcdBody, CcdBody>> bodies_;
};
#endif

// ---------------------------------------------------------------------------------------------
#ifdef PROXIMA_HAVE_FCL
struct FclPair {
  std::shared_ptr<fcl::CollisionGeometryd> a, b;
  fcl::Transform3d ta, tb;
};

std::vector<FclPair> fclPairs(const std::vector<PenPair>& pairs) {
  std::vector<FclPair> out;
  out.reserve(pairs.size());
  for (const auto& p : pairs) out.push_back({fclShape(p.a), fclShape(p.b), fclPose(p.poseA), fclPose(p.poseB)});
  return out;
}

/// fcl::collide with contacts: GST_INDEP runs FCL's own GJK + EPA on convex shapes; GST_LIBCCD runs
/// libccd's MPR (fcl/narrowphase/detail/convexity_based_algorithm/gjk_libccd-inl.h, GJKCollide).
/// Box-box pairs go to FCL's dedicated box-box routine with either solver.
class FclCollideRunner final : public PenetrationRunner {
 public:
  FclCollideRunner(fcl::GJKSolverType solver, const std::vector<PenPair>& pairs) : pairs_(fclPairs(pairs)) {
    req_.num_max_contacts = 1;
    req_.enable_contact = true;
    req_.gjk_solver_type = solver;
  }
  PenAnswer query(std::size_t i) override {
    const FclPair& p = pairs_[i];
    fcl::CollisionResultd res;
    fcl::collide(p.a.get(), p.ta, p.b.get(), p.tb, req_, res);
    PenAnswer r;
    if (!res.isCollision()) return r;
    r.overlap = true;
    if (res.numContacts() == 0) {
      r.valid = false;
      return r;
    }
    const auto& c = res.getContact(0);
    // Contact::normal points from o1 to o2 (fcl/narrowphase/contact.h). FCL 0.7.0's GST_INDEP path
    // stores the EPA depth negated (ShapeIntersectIndepImpl: `S depth = -epa.depth`) while its box-box
    // routine and the libccd path store it positive: the magnitude is the depth.
    r.depth = std::abs(c.penetration_depth);
    r.normal = unitOrNaN(c.normal);
    return r;
  }

 private:
  std::vector<FclPair> pairs_;
  fcl::CollisionRequestd req_;
};

/// fcl::distance with enable_signed_distance (GST_LIBCCD): libccd's GJK + EPA through FCL's
/// ccdGJKSignedDist, EPA tolerance = distance_tolerance (default 1e-6). FCL returns only the
/// distance and the two nearest points; the normal is the direction between them.
class FclSignedRunner final : public PenetrationRunner {
 public:
  explicit FclSignedRunner(const std::vector<PenPair>& pairs) : pairs_(fclPairs(pairs)) {
    req_.enable_signed_distance = true;
    req_.enable_nearest_points = true;
    req_.gjk_solver_type = fcl::GST_LIBCCD;
  }
  PenAnswer query(std::size_t i) override {
    const FclPair& p = pairs_[i];
    fcl::DistanceResultd res;
    const double d = fcl::distance(p.a.get(), p.ta, p.b.get(), p.tb, req_, res);
    PenAnswer r;
    if (!std::isfinite(d)) {
      r.valid = false;
      return r;
    }
    if (d > 0) return r;
    r.overlap = true;
    r.depth = -d;
    // For penetrating bodies, nearest_points[0] is A's point deepest inside B and [1] B's deepest
    // inside A: A's lies further along the A -> B normal.
    r.normal = unitOrNaN(Vec3(res.nearest_points[0] - res.nearest_points[1]));
    return r;
  }

 private:
  std::vector<FclPair> pairs_;
  fcl::DistanceRequestd req_;
};
#endif

// ---------------------------------------------------------------------------------------------
#ifdef PROXIMA_HAVE_BULLET
struct BtPair {
  std::shared_ptr<btConvexShape> a, b;
  btTransform ta, tb;
};

std::vector<BtPair> bulletPairs(const std::vector<PenPair>& pairs) {
  std::vector<BtPair> out;
  out.reserve(pairs.size());
  for (const auto& p : pairs) out.push_back({bulletShape(p.a), bulletShape(p.b), bulletPose(p.poseA), bulletPose(p.poseB)});
  return out;
}

Vec3 toVec(const btVector3& v) { return Vec3(double(v.x()), double(v.y()), double(v.z())); }

/// btGjkEpaSolver2::Penetration (Bullet's GJK + EPA), guess = centre difference as Bullet's own
/// btGjkEpaPenetrationDepthSolver passes it, shapes with margin 0.
class BulletEpaRunner final : public PenetrationRunner {
 public:
  explicit BulletEpaRunner(const std::vector<PenPair>& pairs) : pairs_(bulletPairs(pairs)) {}
  PenAnswer query(std::size_t i) override {
    const BtPair& p = pairs_[i];
    btGjkEpaSolver2::sResults res;
    const btVector3 guess = p.tb.getOrigin() - p.ta.getOrigin();
    const bool pen = btGjkEpaSolver2::Penetration(p.a.get(), p.ta, p.b.get(), p.tb, guess, res);
    PenAnswer r;
    if (!pen) {
      // Separated or GJK_Failed ("shapes are probably just touching"): no penetration reported.
      r.valid = res.status != btGjkEpaSolver2::sResults::EPA_Failed;
      return r;
    }
    r.overlap = true;
    r.depth = -double(res.distance);
    // Bullet 3.24 btGjkEpa2.cpp: EPA runs in A's local frame and sets witnesses[1] = wtrs0 * (w0 -
    // n depth) but normal = -n without rotating it, so sResults::normal is B -> A in A's *local*
    // frame (its own btGjkEpaPenetrationDepthSolver only uses the witnesses). Rotated to world,
    // negated to A -> B.
    r.normal = unitOrNaN(-toVec(p.ta.getBasis() * res.normal));
    return r;
  }

 private:
  std::vector<BtPair> pairs_;
};

/// btGjkPairDetector + btVoronoiSimplexSolver + btGjkEpaPenetrationDepthSolver: Bullet's default
/// convex-convex path (GJK, EPA when GJK finds the bodies overlapping), fresh detector per query.
class BulletGjkRunner final : public PenetrationRunner {
 public:
  explicit BulletGjkRunner(const std::vector<PenPair>& pairs) : pairs_(bulletPairs(pairs)) {}
  PenAnswer query(std::size_t i) override {
    const BtPair& p = pairs_[i];
    btGjkPairDetector det(p.a.get(), p.b.get(), &simplex_, &epa_);
    btGjkPairDetector::ClosestPointInput in;
    in.m_transformA = p.ta;
    in.m_transformB = p.tb;
    btPointCollector out;
    det.getClosestPoints(in, out, nullptr);
    PenAnswer r;
    if (!out.m_hasResult) {
      r.valid = false;
      return r;
    }
    if (!(out.m_distance < 0)) return r;
    r.overlap = true;
    r.depth = -double(out.m_distance);
    // m_normalOnBInWorld points from B towards A.
    r.normal = unitOrNaN(-toVec(out.m_normalOnBInWorld));
    return r;
  }

 private:
  std::vector<BtPair> pairs_;
  btVoronoiSimplexSolver simplex_;
  btGjkEpaPenetrationDepthSolver epa_;
};
#endif

}  // namespace

std::vector<PenPeerInfo> availablePenetrationPeers() {
  std::vector<PenPeerInfo> p;
#ifdef PROXIMA_HAVE_CCD
  p.push_back({PenPeer::CcdEpa, "ccd_epa", "libccd GJK+EPA"});
  p.push_back({PenPeer::CcdMpr, "ccd_mpr", "libccd MPR"});
#endif
#ifdef PROXIMA_HAVE_FCL
  p.push_back({PenPeer::FclIndepEpa, "fcl_indep_epa", "FCL collide indep"});
  p.push_back({PenPeer::FclLibccdSigned, "fcl_libccd_sd", "FCL libccd signed dist."});
  p.push_back({PenPeer::FclLibccdMpr, "fcl_libccd_mpr", "FCL collide libccd"});
#endif
#ifdef PROXIMA_HAVE_BULLET
  p.push_back({PenPeer::BulletEpa, "bullet_epa", "Bullet GjkEpa2"});
  p.push_back({PenPeer::BulletGjk, "bullet_gjk", "Bullet GjkPairDetector"});
#endif
  return p;
}

std::vector<std::string> penetrationPeerDescriptions() {
  std::vector<std::string> d;
#ifdef PROXIMA_HAVE_CCD
  d.push_back(
      "libccd (double): `ccd_epa` = ccdGJKPenetration (GJK + EPA), `ccd_mpr` = ccdMPRPenetration (MPR); brute-force "
      "support callbacks that apply the pose (analytic support for boxes); CCD_INIT defaults (epa_tolerance 1e-4, "
      "mpr_tolerance 1e-6) with max_iterations 1000; depth, dir (A -> B) and pos as returned");
#endif
#ifdef PROXIMA_HAVE_FCL
  d.push_back(std::string("FCL ") + FCL_VERSION +
              ": `fcl_indep_epa` = fcl::collide(CollisionRequest num_max_contacts 1, enable_contact, GST_INDEP): "
              "FCL's own GJK + EPA for convex meshes (fcl::Convex), its box-box routine for boxes (fcl::Box); depth = "
              "|penetration_depth| (FCL 0.7.0's GST_INDEP path returns it negated); "
              "`fcl_libccd_mpr` = the same call with GST_LIBCCD, which runs libccd's MPR for convex meshes (and the same "
              "box-box routine for boxes: in box cells the two collide columns are one algorithm); "
              "`fcl_libccd_sd` = fcl::distance with enable_signed_distance and enable_nearest_points, GST_LIBCCD "
              "(libccd GJK + EPA via FCL's ccdGJKSignedDist, tolerance 1e-6), normal = direction between the two "
              "nearest points. GST_INDEP has no signed distance in FCL 0.7 (it returns -1 when overlapping)");
#endif
#ifdef PROXIMA_HAVE_BULLET
  d.push_back("Bullet " + std::to_string(BT_BULLET_VERSION) +
#ifdef BT_USE_DOUBLE_PRECISION
              " (double precision)"
#else
              " (single precision)"
#endif
              ": `bullet_epa` = btGjkEpaSolver2::Penetration (guess = centre difference, margins on but 0); "
              "`bullet_gjk` = btGjkPairDetector + btVoronoiSimplexSolver + btGjkEpaPenetrationDepthSolver "
              "(fresh detector per query); btConvexHullShape (margin 0) for polytopes, btBoxShape (margin 0) for boxes");
#endif
  return d;
}

std::unique_ptr<PenetrationRunner> makePenetrationRunner(PenPeer peer, const std::vector<PenPair>& pairs) {
  switch (peer) {
#ifdef PROXIMA_HAVE_CCD
    case PenPeer::CcdEpa: return std::make_unique<CcdPenRunner>(false, pairs);
    case PenPeer::CcdMpr: return std::make_unique<CcdPenRunner>(true, pairs);
#endif
#ifdef PROXIMA_HAVE_FCL
    case PenPeer::FclIndepEpa: return std::make_unique<FclCollideRunner>(fcl::GST_INDEP, pairs);
    case PenPeer::FclLibccdMpr: return std::make_unique<FclCollideRunner>(fcl::GST_LIBCCD, pairs);
    case PenPeer::FclLibccdSigned: return std::make_unique<FclSignedRunner>(pairs);
#endif
#ifdef PROXIMA_HAVE_BULLET
    case PenPeer::BulletEpa: return std::make_unique<BulletEpaRunner>(pairs);
    case PenPeer::BulletGjk: return std::make_unique<BulletGjkRunner>(pairs);
#endif
    default: break;
  }
  throw std::invalid_argument("penetration peer not compiled in");
}

}  // namespace pbench
