#include "peers.hpp"

#include <cmath>
#include <cstdio>
#include <map>
#include <stdexcept>
#include <utility>

#ifdef PROXIMA_HAVE_FCL
#include <fcl/config.h>
#include <fcl/geometry/shape/convex.h>
#include <fcl/geometry/shape/ellipsoid.h>
#include <fcl/narrowphase/distance.h>
#endif

#ifdef PROXIMA_HAVE_BULLET
#include <BulletCollision/CollisionShapes/btConvexHullShape.h>
#include <BulletCollision/CollisionShapes/btConvexInternalShape.h>
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

// ---------------------------------------------------------------------------------------------
#ifdef PROXIMA_HAVE_FCL
std::shared_ptr<fcl::CollisionGeometryd> fclShape(ShapeRef s) {
  static std::map<const void*, std::shared_ptr<fcl::CollisionGeometryd>> cache;
  const void* key = s.polytope ? static_cast<const void*>(&s.polytope->data()) : s.ellipsoid;
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  std::shared_ptr<fcl::CollisionGeometryd> g;
  if (s.polytope) {
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
  const void* key = s.polytope ? static_cast<const void*>(&s.polytope->data()) : s.ellipsoid;
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  std::shared_ptr<btConvexShape> g;
  if (s.polytope) {
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

class CcdRunner final : public PeerRunner {
 public:
  CcdRunner(bool mpr, ShapeRef a, ShapeRef b, const std::vector<PosePair>& poses) : mpr_(mpr) {
    CCD_INIT(&ccd_);
    ccd_.support1 = ccdSupport;
    ccd_.support2 = ccdSupport;
    ccd_.center1 = ccdCenter;
    ccd_.center2 = ccdCenter;
    ccd_.max_iterations = 1000;
    auto body = [](ShapeRef s, const Transform& t) {
      CcdBody c;
      if (s.polytope) c.vertices = &s.polytope->vertices();
      else c.radii = s.ellipsoid->radii;
      c.r = t.rotation;
      c.t = t.translation;
      return c;
    };
    bodies_.reserve(poses.size());
    for (const auto& p : poses) bodies_.emplace_back(body(a, p.a), body(b, p.b));
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
