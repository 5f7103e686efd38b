#include "proxima/dem/simulation.hpp"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <istream>
#include <memory>
#include <numbers>
#include <optional>
#include <ostream>
#include <sstream>
#include <stdexcept>
#include <streambuf>
#include <type_traits>
#include <unordered_map>

namespace proxima::dem {

namespace {

// sin(y)/y and cos(y) from y². Below y² = 1e-4 (every rotation of a DEM step in practice) the
// truncated Taylor series are exact to double precision (next terms < 1e-20) and avoid sincos; the
// reciprocals are constants because a division by 6 is not compiled into a multiplication.
inline void sincAndCos(Real y2, Real& sinc, Real& c) {
  if (y2 < 1e-4) {
    constexpr Real k6 = 1.0 / 6, k20 = 1.0 / 20, k42 = 1.0 / 42, k12 = 1.0 / 12, k30 = 1.0 / 30, k56 = 1.0 / 56;
    sinc = 1 - y2 * k6 * (1 - y2 * k20 * (1 - y2 * k42));
    c = 1 - 0.5 * y2 * (1 - y2 * k12 * (1 - y2 * k30 * (1 - y2 * k56)));
  } else {
    const Real y = std::sqrt(y2);
    sinc = std::sin(y) / y;
    c = std::cos(y);
  }
}

// Tangential spring with history (tangentialForce and the sphere kernel): the history rotated into
// the current tangent plane keeping its length (springWithSlip, springWithSlipAlong), then
// springStep: incremented by vt dt; force -kt s - gt vt, Coulomb-limited to `limit` with the spring
// reset so that spring + damping equal the limit on slip. Updates `shear`, returns the tangential
// force.
inline Vec3 springStep(Vec3& shear, Vec3 s, const Vec3& vt, Real kt, Real gt, Real limit, Real dt) {
  s += vt * dt;
  Vec3 ft = -kt * s - gt * vt;
  const Real ft2 = ft.squaredNorm();
  if (ft2 > limit * limit) {
    ft *= limit / std::sqrt(ft2);
    s = kt > 0 ? Vec3(-(ft + gt * vt) / kt) : Vec3::Zero();
  }
  shear = s;
  return ft;
}

// A spring's history rotated with the contact frame: projected on the plane of the unit normal n,
// keeping its length (zero when nothing is left). (The tangential and the rolling springs.)
inline Vec3 intoPlane(Vec3 s, const Vec3& n) {
  const Real len2 = s.squaredNorm();
  if (len2 > 0) {
    s -= s.dot(n) * n;
    const Real proj2 = s.squaredNorm();
    if (proj2 > 0) s *= std::sqrt(len2 / proj2);
  }
  return s;
}

// The history projected on the plane of the unit normal n.
inline Vec3 springWithSlip(Vec3& shear, const Vec3& n, const Vec3& vt, Real kt, Real gt, Real limit, Real dt) {
  return springStep(shear, intoPlane(shear, n), vt, kt, gt, limit, dt);
}

// The sphere kernel's form: the projection written with the unnormalised centre line d
// (|d|² = d2) instead of n = d/|d|: s - (s·d/d2) d, rescaled by √(|s|² d2 / (|s|² d2 - (s·d)²)) to
// keep its length (zero when nothing is left). The same projection, but its division and square
// root no longer wait for |d| and n (a square root and a division of their own), so the two chains
// overlap.
inline Vec3 springWithSlipAlong(Vec3& shear, const Vec3& d, Real d2, const Vec3& vt, Real kt, Real gt, Real limit,
                                Real dt) {
  Vec3 s = shear;
  const Real len2 = s.squaredNorm();
  if (len2 > 0) {
    const Real sd = s.dot(d);
    const Real full = len2 * d2, proj = full - sd * sd;
    s = proj > 0 ? Vec3((s - (sd / d2) * d) * std::sqrt(full / proj)) : Vec3::Zero();
  }
  return springStep(shear, s, vt, kt, gt, limit, dt);
}

// A product of unit quaternions has |q|² = 1 + O(1e-16): one Newton step of 1/√ about 1,
// (3 - |q|²)/2, renormalises it to O(1e-32) without a square root or a division.
inline void renormalise(Quat& q) { q.coeffs() *= 0.5 * (3 - q.coeffs().squaredNorm()); }

// Torque-free rigid-body rotation over h by the symplectic splitting of Dullweber, Leimkuhler &
// McLachlan (J. Chem. Phys. 107, 1997): the free-rotor Hamiltonian Σ L_k²/(2 I_k) is split into one
// term per principal axis; each sub-flow is an exact rotation about that body axis by θ = t L_k/I_k,
// applied to the orientation (q ← q ∘ R_k(θ)) and, inversely, to the body angular momentum
// (L_b ← R_k(-θ) L_b), so the world angular momentum R L_b is kept exactly. Symmetric composition
// 1(h/2) 2(h/2) 3(h) 2(h/2) 1(h/2): second order, time-reversible, energy error bounded; the
// quaternion is renormalised after the composition.
//
// One sub-flow about body axis K (a compile-time constant: with a runtime axis the loop kept q and L
// in memory and cost ~9 % of a polyhedra step). q ∘ (cos θ/2, sin θ/2 e_K) is written out with only
// its non-zero terms.
template <int K>
inline void freeRotorAxis(Quat& q, Vec3& lb, const Vec3& inverseInertia, Real t) {
  const Real theta = t * lb[K] * inverseInertia[K];
  if (theta == 0) return;
  // The momentum turns by θ with cos θ = 1 - 2 sin² θ/2 and sin θ = 2 sin θ/2 cos θ/2.
  const Real y = 0.5 * theta;
  Real sinc = 0, ch = 0;
  sincAndCos(y * y, sinc, ch);
  const Real sh = y * sinc;
  constexpr int A = (K + 1) % 3, B = (K + 2) % 3;
  // (w, v) ∘ (ch, sh e_K) = (w ch - sh v_K, w sh e_K + ch v + sh v × e_K); (v × e_K)_A = v_B,
  // (v × e_K)_B = -v_A.
  const Real w = q.w(), vk = q.coeffs()[K], va = q.coeffs()[A], vb = q.coeffs()[B];
  q.w() = w * ch - sh * vk;
  q.coeffs()[K] = w * sh + ch * vk;
  q.coeffs()[A] = ch * va + sh * vb;
  q.coeffs()[B] = ch * vb - sh * va;
  const Real c = 1 - 2 * sh * sh, sn = 2 * sh * ch;
  const Real la = lb[A], lbb = lb[B];
  lb[A] = c * la + sn * lbb;
  lb[B] = -sn * la + c * lbb;
}

// The moments' reciprocals (0 for a zero moment: no rotation about that axis), once per step, so
// that the chain of sub-flows, each waiting on the last one's momentum, multiplies instead of
// dividing.
inline Vec3 inverseMoments(const Vec3& inertia) {
  Vec3 inv;
  for (int k = 0; k < 3; ++k) inv[k] = inertia[k] > 0 ? 1 / inertia[k] : 0;
  return inv;
}

// The symmetric composition 1(h/2) 2(h/2) 3(h) 2(h/2) 1(h/2): flow(axis, t) applies the sub-flow
// about body axis `axis` (a std::integral_constant) for a time t.
template <class Flow>
inline void rotorComposition(Flow&& flow, Real h) {
  flow(std::integral_constant<int, 0>{}, 0.5 * h);
  flow(std::integral_constant<int, 1>{}, 0.5 * h);
  flow(std::integral_constant<int, 2>{}, h);
  flow(std::integral_constant<int, 1>{}, 0.5 * h);
  flow(std::integral_constant<int, 0>{}, 0.5 * h);
}

// One body's free rotor; the quaternion is renormalised once after the five unit-quaternion
// products (each adds O(1e-16) to |q|², so one Newton step still brings it to O(1e-32)).
void freeRotor(Quat& q, Vec3& lb, const Vec3& inertia, Real h) {
  const Vec3 inv = inverseMoments(inertia);
  rotorComposition([&](auto axis, Real t) { freeRotorAxis<decltype(axis)::value>(q, lb, inv, t); }, h);
  renormalise(q);
}

// Two bodies' free rotors, their sub-flows alternating: each sub-flow waits on the last one's
// momentum, so one body's chain alone leaves the core idle; the other's fills the waits. The same
// operations per body as freeRotor (same bits).
void freeRotorTwo(Quat& q0, Vec3& l0, const Vec3& inertia0, Quat& q1, Vec3& l1, const Vec3& inertia1, Real h) {
  const Vec3 inv0 = inverseMoments(inertia0), inv1 = inverseMoments(inertia1);
  rotorComposition(
      [&](auto axis, Real t) {
        freeRotorAxis<decltype(axis)::value>(q0, l0, inv0, t);
        freeRotorAxis<decltype(axis)::value>(q1, l1, inv1, t);
      },
      h);
  renormalise(q0), renormalise(q1);
}

// Equal principal moments: every axis is principal and the rotation needs no splitting.
inline bool isotropic(const Vec3& inertia) { return inertia.x() == inertia.y() && inertia.y() == inertia.z(); }

inline Real reducedMass(Real a, Real b, bool fixedA, bool fixedB) {
  if (fixedA && fixedB) return 0.5 * (a + b);
  if (fixedA) return b;
  if (fixedB) return a;
  return a * b / (a + b);
}

constexpr std::uint64_t kFnvOffset = 1469598103934665603ULL;
void fnv(std::uint64_t& h, const void* data, std::size_t n) {
  const auto* p = static_cast<const unsigned char*>(data);
  for (std::size_t k = 0; k < n; ++k) {
    h ^= p[k];
    h *= 1099511628211ULL;
  }
}
template <class T>
void fnvVec(std::uint64_t& h, const std::vector<T>& v) {
  if (!v.empty()) fnv(h, v.data(), v.size() * sizeof(T));
}

// Binary checkpoint helpers: sizes then raw bytes (the element types are plain aggregates of
// doubles and integers; the checkpoint is read back only by the same build).
template <class T, class A>
void writeVec(std::ostream& out, const std::vector<T, A>& v) {
  const std::uint64_t n = v.size();
  out.write(reinterpret_cast<const char*>(&n), sizeof n);
  if (n) out.write(reinterpret_cast<const char*>(v.data()), static_cast<std::streamsize>(n * sizeof(T)));
}
// A checkpoint stream with the number of payload bytes left: a stated length must fit in it (a
// damaged length fails here instead of allocating terabytes), and nothing may be left at the end.
struct Reader {
  std::istream& in;
  std::uint64_t left;
  bool take(void* dst, std::uint64_t n) {
    if (n > left) return false;
    in.read(static_cast<char*>(dst), static_cast<std::streamsize>(n));
    left -= n;
    return static_cast<bool>(in);
  }
};
template <class T, class A>
bool readVec(Reader& r, std::vector<T, A>& v) {
  std::uint64_t n = 0;
  if (!r.take(&n, sizeof n) || n > r.left / sizeof(T)) return false;
  v.resize(n);
  return n == 0 || r.take(v.data(), n * sizeof(T));
}
template <class T>
void writePod(std::ostream& out, const T& x) {
  out.write(reinterpret_cast<const char*>(&x), sizeof x);
}
template <class T>
bool readPod(Reader& r, T& x) {
  return r.take(&x, sizeof x);
}

constexpr char kMagic[8] = {'P', 'X', 'D', 'E', 'M', 'C', 'K', '5'};  // 5: rolling springs
// Trailer of a checkpoint: 64-bit FNV-1a of everything before it, then this tag. A flipped byte in
// the middle of a checkpoint would otherwise resume silently into a different run. (Checkpoints
// without the trailer, written before it existed, load unverified.)
constexpr char kSumTag[8] = {'P', 'X', 'S', 'U', 'M', '0', '0', '1'};

std::uint64_t fnv1a(const char* p, std::size_t n) {
  std::uint64_t h = kFnvOffset;
  fnv(h, p, n);
  return h;
}

// An output buffer that hashes (FNV-1a) every byte on its way to the target stream: saveState
// writes the checksum trailer without holding the payload in memory (it did: a checkpoint of a
// polyhedra10k bed added its 40 MB to the run's memory peak at every write).
class HashingBuffer : public std::streambuf {
 public:
  explicit HashingBuffer(std::ostream& target) : target_(target) { setp(buf_, buf_ + sizeof buf_); }
  std::uint64_t hash() const { return h_; }
  /// Passes the buffered bytes on (also called by the stream's flush); false once the target failed.
  bool drain() {
    const std::ptrdiff_t n = pptr() - pbase();
    if (n > 0) {
      fnv(h_, pbase(), static_cast<std::size_t>(n));
      target_.write(pbase(), n);
    }
    setp(buf_, buf_ + sizeof buf_);
    return static_cast<bool>(target_);
  }

 protected:
  int_type overflow(int_type c) override {
    if (!drain()) return traits_type::eof();
    if (!traits_type::eq_int_type(c, traits_type::eof())) {
      *pptr() = traits_type::to_char_type(c);
      pbump(1);
    }
    return traits_type::not_eof(c);
  }
  int sync() override { return drain() ? 0 : -1; }

 private:
  std::ostream& target_;
  std::uint64_t h_ = kFnvOffset;
  char buf_[1 << 16];
};

// Conservative AABB-vs-AABB test.
inline bool boxesOverlap(const Vec3& ca, Real ha, const Vec3& lo, const Vec3& hi) {
  return ca.x() + ha >= lo.x() && ca.x() - ha <= hi.x() && ca.y() + ha >= lo.y() && ca.y() - ha <= hi.y() &&
         ca.z() + ha >= lo.z() && ca.z() - ha <= hi.z();
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Set-up

void Simulation::requireSetUp(const char* what) const {
  if (initialized_)
    throw std::logic_error(std::string("proxima::dem::Simulation::") + what +
                           " after initialize(): the set-up is fixed once the simulation has started "
                           "(add every material, shape, particle and wall first)");
}

void Simulation::requireInitialized(const char* what) const {
  if (!initialized_)
    throw std::logic_error(std::string("proxima::dem::Simulation::") + what +
                           " before a successful initialize() (or loadState())");
}

std::optional<std::string> Simulation::steppingOptionsProblem() const {
  if (!(options_.timeStep > 0) || !std::isfinite(options_.timeStep))
    return "time step must be > 0 (got " + std::to_string(options_.timeStep) + ")";
  if (auto m = validateOptions(options_.narrowPhase)) return "narrow phase " + *m;
  return std::nullopt;
}

void Simulation::setMaterials(std::vector<Material> materials, ContactModel model) {
  requireSetUp("setMaterials");
  materials_ = std::move(materials);
  model_ = model;
}

void Simulation::overridePair(int a, int b, Real e, Real mu, Real muR) {
  requireSetUp("overridePair");
  overrides_.push_back({a, b, e, mu, muR});
}

int Simulation::addShape(ParticleShape s) {
  requireSetUp("addShape");
  shapes_.push_back(std::move(s));
  return static_cast<int>(shapes_.size()) - 1;
}

int Simulation::addParticle(int shape, int material, const Vec3& x, const Quat& q, const Vec3& v, const Vec3& w) {
  requireSetUp("addParticle");
  const Real density = material >= 0 && material < static_cast<int>(materials_.size())
                           ? materials_[static_cast<std::size_t>(material)].density
                           : 0;
  static const ParticleShape kNone;
  const ParticleShape& s =
      shape >= 0 && shape < static_cast<int>(shapes_.size()) ? shapes_[static_cast<std::size_t>(shape)] : kNone;
  particles_.add(static_cast<std::int64_t>(particles_.size()), s, shape, material, density, x, q, v, w);
  return static_cast<int>(particles_.size()) - 1;
}

int Simulation::addWall(Wall w) {
  requireSetUp("addWall");
  if (w.kind == WallKind::Plane && w.normal.norm() > 0) w.normal.normalize();
  walls_.push_back(std::move(w));
  return static_cast<int>(walls_.size()) - 1;
}

Real Simulation::stableTimeStep(Real impactSpeed) const { return timeStepLimits(impactSpeed).undamped; }
Real Simulation::dampedTimeStep(Real impactSpeed) const { return timeStepLimits(impactSpeed).damped; }

ContactTable Simulation::pairTable() const {
  ContactTable table(materials_, model_);
  const int nm = static_cast<int>(materials_.size());
  for (const Override& o : overrides_)
    if (o.a >= 0 && o.a < nm && o.b >= 0 && o.b < nm) table.override(o.a, o.b, o.e, o.mu, o.muR);
  return table;
}

Simulation::TimeStepLimits Simulation::timeStepLimits(Real impactSpeed) const {
  if (materials_.empty() || materials_.size() > static_cast<std::size_t>(kMaxMaterials)) return {0, 0};
  // With the pair overrides, as the run will use them: a restitution set for a pair damps its
  // contacts as much as one set on the material (the overrides were left out until 2026-11-27, and
  // an interaction with e = 0.001 then got the e = 0.5 step and blew up).
  const ContactTable table = pairTable();
  const Real v = impactSpeed > 0 ? impactSpeed : 1.0;
  TimeStepLimits limits{std::numeric_limits<Real>::infinity(), std::numeric_limits<Real>::infinity()};
  // One estimate per distinct (shape, material) present, against an identical particle and
  // against each wall material.
  std::vector<std::pair<int, int>> kinds;
  for (std::size_t i = 0; i < particles_.size(); ++i) kinds.emplace_back(particles_.shape[i], particles_.material[i]);
  std::sort(kinds.begin(), kinds.end());
  kinds.erase(std::unique(kinds.begin(), kinds.end()), kinds.end());
  for (auto [si, mi] : kinds) {
    if (si < 0 || si >= static_cast<int>(shapes_.size()) || mi < 0 || mi >= static_cast<int>(materials_.size()))
      continue;
    const ParticleShape& s = shapes_[static_cast<std::size_t>(si)];
    const Material& mat = materials_[static_cast<std::size_t>(mi)];
    const Real m = mat.density * s.volume;
    // A contact at distance r_b from the centroid also drives rotation: the smaller of the mass and
    // I_min / r_b² is the inertia the contact spring sees.
    const Real iMin = mat.density * s.inertiaPerDensity.minCoeff();
    const Real mSeen = std::min(m, iMin / (s.boundingRadius * s.boundingRadius) * 1.0);
    const Real rayleigh = rayleighTime(mat, s.contactRadius);
    limits.undamped = std::min(limits.undamped, rayleigh);
    limits.damped = std::min({limits.damped, rayleigh, s.contactRadius / v});
    // The rolling spring's inertia about the contact (rollingInertia_), for one particle.
    const Real rollI = mat.density * s.inertiaPerDensity.mean() + m * s.contactRadius * s.contactRadius;
    auto against = [&](const PairLaw& law, Real mEff, Real rEff, Real rollEff) {
      Real k = 0;
      if (law.model == ContactModel::HertzMindlin) {
        k = 2 * law.effectiveModulus * std::sqrt(rEff * hertzMaxOverlap(mEff, rEff, law.effectiveModulus, v));
      } else {
        k = linearNormalStiffness(law, rEff);
      }
      if (!(k > 0)) return;
      // Damping ratio of the law against the tangent stiffness k (Hertz: 3/2 of the secant one the
      // damping is scaled with), for the inertia the spring sees: the damping is sized with the
      // translational mass m, so a contact that mostly turns the body (mSeen < m) is damped
      // sqrt(m / mSeen) times more. Central differences with explicit damping are stable for
      // ω dt <= 2 (√(1 + ζ²) − ζ).
      const Real base = law.model == ContactModel::HertzMindlin ? 0.5 / std::sqrt(1.5) : 0.5;
      const Real zeta = base * law.dampingCoefficient * std::sqrt(m / mSeen);
      const Real undamped = 2 * std::sqrt(mEff / k);
      limits.undamped = std::min(limits.undamped, undamped);
      limits.damped = std::min(limits.damped, undamped * (std::sqrt(1 + zeta * zeta) - zeta));
      if (law.rollingFriction > 0) {
        // The rolling spring of rollingTorque, k_r = 2.25 (μ_r R*)² k_n, on the rolling inertia, with
        // its dashpot's damping ratio η_r. (It binds only for μ_r above ~0.8.)
        const Real lever = law.rollingFriction * rEff;
        const Real rolling = 2 * std::sqrt(rollEff / (2.25 * lever * lever * k));
        const Real eta = law.rollingDamping;
        limits.undamped = std::min(limits.undamped, rolling);
        limits.damped = std::min(limits.damped, rolling * (std::sqrt(1 + eta * eta) - eta));
      }
    };
    against(table.law(mi, mi), 0.5 * mSeen, 0.5 * s.contactRadius, 0.5 * rollI);
    // A wall is immovable; a free lid is a body of its own mass (a light lid pressed on a grain
    // oscillates faster than the grain on a fixed wall).
    for (const Wall& w : walls_)
      if (w.material >= 0 && w.material < table.materialCount())
        against(table.law(w.material, mi), w.isLid() ? mSeen * w.mass / (mSeen + w.mass) : mSeen, s.contactRadius,
                rollI);
  }
  return limits;
}

Result<bool> Simulation::initialize() {
  using R = Result<bool>;
  // A second call would compute the t = 0 forces again over the running state (tangential springs
  // loaded twice).
  if (initialized_) return R::failure("initialize() called twice: the simulation is already running");
  if (materials_.empty()) return R::failure("no materials defined");
  if (materials_.size() > static_cast<std::size_t>(kMaxMaterials))
    return R::failure(tooManyMaterials(materials_.size()));
  for (std::size_t m = 0; m < materials_.size(); ++m) {
    const Material& mat = materials_[m];
    const std::string where = "material '" + mat.name + "'";
    if (!(mat.density > 0)) return R::failure(where + ": density must be > 0");
    if (!(mat.youngsModulus > 0)) return R::failure(where + ": youngs_modulus must be > 0");
    if (!(mat.poissonRatio > -1 && mat.poissonRatio < 0.5))
      return R::failure(where + ": poisson_ratio must be in (-1, 0.5)");
    if (!(mat.restitution > 0 && mat.restitution <= 1)) return R::failure(where + ": restitution must be in (0, 1]");
    if (!(mat.friction >= 0) || !(mat.rollingFriction >= 0)) return R::failure(where + ": friction must be >= 0");
    if (!(mat.rollingDamping >= 0 && mat.rollingDamping <= 1))
      return R::failure(where + ": rolling_damping must be in [0, 1]");
  }
  // Checked once here: the narrow phase then skips its per-call checks (PenetrationOptions::trustedInput).
  for (std::size_t k = 0; k < shapes_.size(); ++k)
    if (auto err = shapes_[k].shape.validate()) return R::failure("shape " + std::to_string(k) + ": " + *err);
  const int nm = static_cast<int>(materials_.size()), ns = static_cast<int>(shapes_.size());
  for (std::size_t i = 0; i < particles_.size(); ++i) {
    const std::string where = "particle " + std::to_string(particles_.id[i]);
    if (particles_.shape[i] < 0 || particles_.shape[i] >= ns) return R::failure(where + ": unknown shape index");
    if (particles_.material[i] < 0 || particles_.material[i] >= nm)
      return R::failure(where + ": unknown material index");
    if (!particles_.position[i].allFinite() || !particles_.velocity[i].allFinite() ||
        !particles_.angularVelocity[i].allFinite() || !particles_.orientation[i].coeffs().allFinite())
      return R::failure(where + ": non-finite position, orientation or velocity");
    {
      // The rotation is read from the quaternion as if it were unit: a non-unit one would scale the
      // shape. Rounding-level deviations are normalised; anything else is a mistake in the input.
      Quat& q = particles_.orientation[i];
      const Real qn = q.norm();
      if (!(std::abs(qn - 1) <= 1e-6))
        return R::failure(where + ": orientation must be a unit quaternion (norm " + std::to_string(qn) + ")");
      q.normalize();
    }
    if (!(particles_.mass[i] > 0) || !(particles_.inertia[i].minCoeff() > 0))
      return R::failure(where + ": mass and inertia must be > 0 (shape '" +
                        shapes_[static_cast<std::size_t>(particles_.shape[i])].name + "')");
  }
  for (std::size_t w = 0; w < walls_.size(); ++w) {
    const Wall& wall = walls_[w];
    const std::string where = "wall '" + wall.name + "'";
    if (wall.material < 0 || wall.material >= nm) return R::failure(where + ": unknown material index");
    if (wall.kind == WallKind::Plane && !(std::abs(wall.normal.norm() - 1) < 1e-9))
      return R::failure(where + ": normal must be a non-zero finite vector");
    if (!wall.origin.allFinite() || !wall.velocity.allFinite())
      return R::failure(where + ": non-finite position or velocity");
    if (wall.mass < 0 || (wall.mass > 0 && wall.kind != WallKind::Plane))
      return R::failure(where + ": only plane lids may have a mass > 0");
    for (const auto& t : wall.triangles)
      for (int v : t)
        if (v < 0 || v >= static_cast<int>(wall.vertices.size()))
          return R::failure(where + ": triangle index out of range");
  }
  if (auto m = steppingOptionsProblem()) return R::failure(*m);
  if (!options_.gravity.allFinite()) return R::failure("gravity must be finite");

  if (options_.threads > 0) omp_set_num_threads(options_.threads);
  for (const Override& o : overrides_)
    if (o.a < 0 || o.a >= nm || o.b < 0 || o.b >= nm) return R::failure("interaction override: unknown material index");
  table_ = pairTable();
  skin_ = options_.skin;
  if (!(skin_ > 0)) {
    Real sum = 0;
    for (std::size_t i = 0; i < particles_.size(); ++i)
      sum += 2 * shapes_[static_cast<std::size_t>(particles_.shape[i])].boundingRadius;
    skin_ = particles_.size() ? 0.1 * sum / static_cast<Real>(particles_.size()) : 1e-3;
  }
  lidVelocity_.assign(walls_.size(), 0);
  lidForce_.assign(walls_.size(), 0);
  stepDisplacement_.assign(particles_.size(), 0);
  parallel_ = workEstimate() >= options_.parallelThreshold;
  cacheSphereRadii();
  rolling_ = false;
  for (int a = 0; a < nm; ++a)
    for (int b = 0; b < nm; ++b) rolling_ |= table_.law(a, b).rollingFriction > 0;
  rollingInertia_.assign(rolling_ ? particles_.size() : 0, 0);
  for (std::size_t i = 0; i < rollingInertia_.size(); ++i) {
    const Real r = shapes_[static_cast<std::size_t>(particles_.shape[i])].contactRadius;
    rollingInertia_[i] = particles_.fixed[i] ? 0 : particles_.inertia[i].mean() + particles_.mass[i] * r * r;
  }
  rebuildNeighbours();
  computeForces();
  initialized_ = true;
  return true;
}

// ---------------------------------------------------------------------------------------------
// Stepping

void Simulation::cacheSphereRadii() {
  sphereRadius_.resize(particles_.size());
  needDisplacement_ = false;
  for (std::size_t i = 0; i < particles_.size(); ++i) {
    const ParticleShape& s = shapes_[static_cast<std::size_t>(particles_.shape[i])];
    sphereRadius_[i] = s.sphereRadius;
    needDisplacement_ |= !s.isSphere;
  }
}

Transform Simulation::poseOf(int i) const {
  Transform pose;
  poseInto(static_cast<std::size_t>(i), pose);
  return pose;
}

// poseOf written in place (computeForces' loop over every particle: returned by value and assigned,
// the pose was built once and copied twice).
void Simulation::poseInto(std::size_t k, Transform& pose) const {
  const ParticleShape& s = shapes_[static_cast<std::size_t>(particles_.shape[k])];
  if (s.localIsIdentity) {  // (Transform(q, p)'s arithmetic)
    pose.rotation = particles_.orientation[k].normalized().toRotationMatrix();
    pose.translation = particles_.position[k];
  } else {
    pose = Transform(particles_.orientation[k], particles_.position[k]) * s.local;
  }
}

void Simulation::kickParticle(std::size_t i, Real h) {
  if (particles_.fixed[i]) return;
  particles_.velocity[i] += particles_.force[i] * (h / particles_.mass[i]) + options_.gravity * h;
  const Vec3& inertia = particles_.inertia[i];
  if (isotropic(inertia)) {  // spheres, cubes, regular solids: L = I ω in any frame
    particles_.angularVelocity[i] += particles_.torque[i] * (h / inertia.x());
    return;
  }
  // Angular momentum kick in the world frame: L = R I Rᵀ ω.
  const Mat3 r = particles_.orientation[i].toRotationMatrix();
  Vec3 lb = inertia.cwiseProduct(mulMatT(r, particles_.angularVelocity[i]));
  lb += mulMatT(r, particles_.torque[i]) * h;
  particles_.angularVelocity[i] = mulMat(r, Vec3(lb.cwiseQuotient(inertia)));
}

void Simulation::kickLids(Real h) {
  for (std::size_t w = 0; w < walls_.size(); ++w)
    if (walls_[w].isLid())
      lidVelocity_[w] += (lidForce_[w] / walls_[w].mass + options_.gravity.dot(walls_[w].normal)) * h;
}

void Simulation::driftParticle(std::size_t i, Real h) {
  const Vec3 dx = particles_.velocity[i] * h;
  particles_.position[i] += dx;
  Real angle = 0;
  const Vec3& w = particles_.angularVelocity[i];
  const Real w2 = w.squaredNorm();
  if (w2 > 0 && isotropic(particles_.inertia[i])) {
    // Isotropic inertia: ω is constant in free flight, one exact rotation by |ω| h about ω.
    const Real x2 = 0.25 * h * h * w2;  // (half angle)²
    Real sinc = 0, c = 0;               // sin(half) / half, cos(half)
    sincAndCos(x2, sinc, c);
    const Vec3 axis = w * (0.5 * h * sinc);  // sin(half) ω/|ω|
    Quat& q = particles_.orientation[i];
    q = Quat(c, axis.x(), axis.y(), axis.z()) * q;
    renormalise(q);
    if (needDisplacement_) angle = 2 * std::sqrt(x2);
  } else if (w2 > 0) {
    Quat& q = particles_.orientation[i];
    const Quat q0 = q;
    const Vec3& inertia = particles_.inertia[i];
    Vec3 lb = inertia.cwiseProduct(q0.conjugate() * w);
    if (particles_.fixed[i]) {
      q = (q0 * Quat(Eigen::AngleAxis<Real>(h * lb.cwiseQuotient(inertia).norm(), lb.normalized()))).normalized();
    } else {
      freeRotor(q, lb, inertia, h);
      particles_.angularVelocity[i] = q * Vec3(lb.cwiseQuotient(inertia));
    }
    angle = rotationAngleBound(q0, q);
  }
  if (needDisplacement_) recordDisplacement(i, dx, angle);
}

// Rotation angle bound without atan2: 2 atan2(s, c) <= 2 s / c (atan x <= x); past 60° of
// half-angle simply π (the chord bound π r exceeds any chord 2 r).
Real Simulation::rotationAngleBound(const Quat& before, const Quat& after) {
  const Quat dq = before.conjugate() * after;
  const Real s = dq.vec().norm(), c = std::abs(dq.w());
  return c >= 0.5 ? 2 * s / c : std::numbers::pi;
}

// Largest displacement of any point of the body in this step (Montanari Eq. 3.14's max ||s||):
// translation plus the chord of the rotation at the bounding radius (bounded by angle × r).
// Only pairs with a non-sphere use it.
void Simulation::recordDisplacement(std::size_t i, const Vec3& dx, Real angle) {
  const Real rb = shapes_[static_cast<std::size_t>(particles_.shape[i])].boundingRadius;
  stepDisplacement_[i] = dx.norm() + angle * rb;
}

bool Simulation::freeAsymmetricRotor(std::size_t i) const {
  return !particles_.fixed[i] && particles_.angularVelocity[i].squaredNorm() > 0 && !isotropic(particles_.inertia[i]);
}

// driftParticle for two particles; when both are free asymmetric rotors (a bed of polyhedra), their
// rotors run interleaved (freeRotorTwo). The same operations per particle as driftParticle.
void Simulation::driftTwo(std::size_t i, std::size_t j, Real h) {
  if (!(freeAsymmetricRotor(i) && freeAsymmetricRotor(j))) {
    driftParticle(i, h);
    driftParticle(j, h);
    return;
  }
  const Vec3 dxi = particles_.velocity[i] * h, dxj = particles_.velocity[j] * h;
  particles_.position[i] += dxi;
  particles_.position[j] += dxj;
  Quat& qi = particles_.orientation[i];
  Quat& qj = particles_.orientation[j];
  const Quat qi0 = qi, qj0 = qj;
  const Vec3& inertiaI = particles_.inertia[i];
  const Vec3& inertiaJ = particles_.inertia[j];
  Vec3 li = inertiaI.cwiseProduct(qi0.conjugate() * particles_.angularVelocity[i]);
  Vec3 lj = inertiaJ.cwiseProduct(qj0.conjugate() * particles_.angularVelocity[j]);
  freeRotorTwo(qi, li, inertiaI, qj, lj, inertiaJ, h);
  particles_.angularVelocity[i] = qi * Vec3(li.cwiseQuotient(inertiaI));
  particles_.angularVelocity[j] = qj * Vec3(lj.cwiseQuotient(inertiaJ));
  if (!needDisplacement_) return;
  recordDisplacement(i, dxi, rotationAngleBound(qi0, qi));
  recordDisplacement(j, dxj, rotationAngleBound(qj0, qj));
}

void Simulation::driftWalls(Real h) {
  for (std::size_t w = 0; w < walls_.size(); ++w) {
    Wall& wall = walls_[w];
    if (wall.isLid())
      wall.origin += wall.normal * (lidVelocity_[w] * h);
    else
      wall.origin += wall.velocity * h;
  }
}

void Simulation::step() {
  requireInitialized("step()");
  // (options() stays writable after initialize(): checked again each step, a few comparisons)
  if (auto m = steppingOptionsProblem()) throw std::logic_error("Simulation options: " + *m);
  using Clock = std::chrono::steady_clock;
  const auto start = options_.profile ? Clock::now() : Clock::time_point{};
  const Real dt = options_.timeStep;
  // Half kick + drift fused per particle (one parallel loop), with the Verlet criterion's largest
  // displacement since the last rebuild.
  Real maxDisp = 0;
  // (Two particles at a time: driftTwo interleaves their free rotors. Each particle's operations are
  // the same whatever the thread count or pairing.)
#pragma omp parallel reduction(max : maxDisp) if (parallel_)
  {
    const auto [first, end] = particleSpan();
    for (std::int64_t ii = first; ii < end; ii += 2) {
      const auto i = static_cast<std::size_t>(ii);
      const std::size_t last = ii + 1 < end ? i + 1 : i;  // (an odd count ends with one particle)
      for (std::size_t k = i; k <= last; ++k) kickParticle(k, 0.5 * dt);
      if (last > i)
        driftTwo(i, last, dt);
      else
        driftParticle(i, dt);
      for (std::size_t k = i; k <= last; ++k)
        maxDisp = std::max(maxDisp, (particles_.position[k] - referencePosition_[k]).squaredNorm());
    }
  }
  kickLids(0.5 * dt);
  driftWalls(dt);
  time_ = static_cast<Real>(step_ + 1) * dt;
  ++step_;

  // Verlet criterion: pairs were listed with a skin; the list stays complete until two particles
  // could together have moved more than the skin (and a particle plus a wall likewise).
  maxDisp = std::sqrt(maxDisp);
  Real wallDisp = 0;
  for (std::size_t w = 0; w < walls_.size(); ++w)
    wallDisp = std::max(wallDisp, (walls_[w].origin - wallReference_[w]).norm());
  if (2 * maxDisp > skin_ || maxDisp + wallDisp > skin_) {
    const auto t = options_.profile ? Clock::now() : Clock::time_point{};
    rebuildNeighbours();
    if (options_.profile) timings_.neighbourSeconds += std::chrono::duration<double>(Clock::now() - t).count();
  }

  computeForces(0.5 * dt);  // forces, then the second half kick per particle in the same loop
  kickLids(0.5 * dt);
  if (options_.profile) {
    timings_.stepSeconds += std::chrono::duration<double>(Clock::now() - start).count();
    ++timings_.steps;
  }
}

// ---------------------------------------------------------------------------------------------
// Neighbour lists: linked cells (sorted cell keys) + Verlet pairs with a skin.
//
// Each particle is represented by the cube around its bounding sphere grown by half the skin, and
// inserted into every cell that cube touches; the cell size follows the median cube, so a 10:1
// size ratio costs a large particle ~10³ cell entries instead of forcing huge cells on everyone.
// A pair is reported only by the cell that holds the lower corner of the two cubes' intersection,
// so each pair is found once. Pair history (tangential springs, bounds, warm-start caches) is carried
// over from the previous list by a sorted merge.

void Simulation::rebuildNeighbours() {
  ++counters_.neighbourRebuilds;
  const std::size_t n = particles_.size();
  referencePosition_ = particles_.position;
  wallReference_.resize(walls_.size());
  for (std::size_t w = 0; w < walls_.size(); ++w) wallReference_[w] = walls_[w].origin;

  std::vector<Real> half(n);
  for (std::size_t i = 0; i < n; ++i)
    half[i] = shapes_[static_cast<std::size_t>(particles_.shape[i])].boundingRadius + 0.5 * skin_;

  std::vector<std::uint64_t> found;
  if (n > 1) {
    std::vector<Real> sorted = half;
    std::nth_element(sorted.begin(), sorted.begin() + static_cast<std::ptrdiff_t>(n / 2), sorted.end());
    Vec3 lo = particles_.position[0], hi = lo;
    for (std::size_t i = 0; i < n; ++i) {
      lo = lo.cwiseMin(particles_.position[i]);
      hi = hi.cwiseMax(particles_.position[i]);
    }
    Real maxHalf = *std::max_element(half.begin(), half.end());
    Real cell = 2 * sorted[n / 2];
    // At most 2^20 cells per axis.
    const Real span = (hi - lo).maxCoeff() + 2 * maxHalf;
    cell = std::max(cell, span / static_cast<Real>(1 << 20));
    const Vec3 origin = lo - Vec3::Constant(maxHalf + cell);
    auto cellOf = [&](Real x, int axis) { return static_cast<std::int64_t>(std::floor((x - origin[axis]) / cell)); };
    auto key = [](std::int64_t x, std::int64_t y, std::int64_t z) {
      return (static_cast<std::uint64_t>(x) << 42) | (static_cast<std::uint64_t>(y) << 21) |
             static_cast<std::uint64_t>(z);
    };
    struct Entry {
      std::uint64_t key;
      int p;
    };
    std::vector<Entry> entries;
    entries.reserve(n * 8);
    // A particle whose cube covers more cells than 64 x the particle count (a boulder among fine
    // grains: at 1000:1 in size, 1e9 cells) is kept out of the cells and tested against every other
    // particle instead, which costs less than its cell entries would (they took 3.3 GB for 101
    // particles and aborted at 1e5:1; a 10:1 mixture stays in the cells). The same tests, so the same
    // pairs.
    std::vector<int> big;
    const Real bigCells = 64.0 * static_cast<Real>(n);
    for (std::size_t i = 0; i < n; ++i) {
      const Vec3& x = particles_.position[i];
      const std::int64_t x0 = cellOf(x.x() - half[i], 0), x1 = cellOf(x.x() + half[i], 0);
      const std::int64_t y0 = cellOf(x.y() - half[i], 1), y1 = cellOf(x.y() + half[i], 1);
      const std::int64_t z0 = cellOf(x.z() - half[i], 2), z1 = cellOf(x.z() + half[i], 2);
      if (static_cast<Real>(x1 - x0 + 1) * static_cast<Real>(y1 - y0 + 1) * static_cast<Real>(z1 - z0 + 1) > bigCells) {
        big.push_back(static_cast<int>(i));
        continue;
      }
      for (std::int64_t a = x0; a <= x1; ++a)
        for (std::int64_t b = y0; b <= y1; ++b)
          for (std::int64_t c = z0; c <= z1; ++c) entries.push_back({key(a, b, c), static_cast<int>(i)});
    }
    // Cubes overlapping, and bounding spheres + skin within reach (the cells add the owner cell, so
    // that each pair is found once; a big particle meets each pair once anyway).
    auto near = [&](std::size_t i, std::size_t j) {
      const Real hs = half[i] + half[j];
      const Vec3 d = particles_.position[j] - particles_.position[i];
      return !(std::abs(d.x()) > hs || std::abs(d.y()) > hs || std::abs(d.z()) > hs) && !(d.squaredNorm() > hs * hs);
    };
    std::vector<char> isBig(big.empty() ? 0 : n, 0);
    for (const int b : big) isBig[static_cast<std::size_t>(b)] = 1;
    for (const int b : big) {
      const auto i = static_cast<std::size_t>(b);
      for (std::size_t j = 0; j < n; ++j)
        if (j != i && !(isBig[j] && j < i) && near(i, j))
          found.push_back((static_cast<std::uint64_t>(std::min(i, j)) << 32) | std::max(i, j));
    }
    std::sort(entries.begin(), entries.end(),
              [](const Entry& a, const Entry& b) { return a.key < b.key || (a.key == b.key && a.p < b.p); });
    // Runs of equal keys = cells.
    std::vector<std::size_t> runStart;
    for (std::size_t e = 0; e < entries.size(); ++e)
      if (e == 0 || entries[e].key != entries[e - 1].key) runStart.push_back(e);
    runStart.push_back(entries.size());
    const auto runs = static_cast<std::int64_t>(runStart.size()) - 1;
    const int nthreads = omp_get_max_threads();
    std::vector<std::vector<std::uint64_t>> local(static_cast<std::size_t>(nthreads));
#pragma omp parallel if (parallel_)
    {
      auto& out = local[static_cast<std::size_t>(omp_get_thread_num())];
#pragma omp for schedule(dynamic, 256)
      for (std::int64_t r = 0; r < runs; ++r) {
        const std::size_t b = runStart[static_cast<std::size_t>(r)], e = runStart[static_cast<std::size_t>(r) + 1];
        if (e - b < 2) continue;
        const std::uint64_t k = entries[b].key;
        for (std::size_t u = b; u < e; ++u)
          for (std::size_t v = u + 1; v < e; ++v) {
            const auto i = static_cast<std::size_t>(entries[u].p), j = static_cast<std::size_t>(entries[v].p);
            if (!near(i, j)) continue;
            // Owner cell: lower corner of the intersection of the two cubes.
            const Vec3 corner = (particles_.position[i].array() - half[i]).max(particles_.position[j].array() - half[j]);
            if (key(cellOf(corner.x(), 0), cellOf(corner.y(), 1), cellOf(corner.z(), 2)) != k) continue;
            out.push_back((static_cast<std::uint64_t>(i) << 32) | j);
          }
      }
    }
    for (auto& l : local) found.insert(found.end(), l.begin(), l.end());
    std::sort(found.begin(), found.end());
  }

  // Merge with the previous list (both sorted by (i, j)) to keep contact history and caches.
  decltype(pairs_) pairs;
  decltype(caches_) caches;
  decltype(pairRoll_) roll;
  pairs.reserve(found.size());
  if (rolling_) roll.reserve(found.size());
  auto bothSpheres = [this](std::uint64_t f) {  // (a found pair, (i << 32) | j)
    return shapes_[static_cast<std::size_t>(particles_.shape[f >> 32])].isSphere &&
           shapes_[static_cast<std::size_t>(particles_.shape[f & 0xffffffffu])].isSphere;
  };
  // (reserved exactly: a cache is ~1 kB, and every doubling of a large array is a fresh mapping)
  caches.reserve(static_cast<std::size_t>(
      std::count_if(found.begin(), found.end(), [&](std::uint64_t f) { return !bothSpheres(f); })));
  std::size_t old = 0;
  for (std::uint64_t f : found) {
    PairState p;
    p.i = static_cast<int>(f >> 32);
    p.j = static_cast<int>(f & 0xffffffffu);
    while (old < pairs_.size() &&
           (static_cast<std::uint64_t>(pairs_[old].i) << 32 | static_cast<std::uint64_t>(pairs_[old].j)) < f)
      ++old;
    const bool kept = old < pairs_.size() && pairs_[old].i == p.i && pairs_[old].j == p.j;
    if (kept) {
      p.bound = pairs_[old].bound;
      p.shear = pairs_[old].shear;
      p.touching = pairs_[old].touching;
    }
    if (rolling_)  // (the rolling springs, like shear, follow their pairs)
      roll.push_back(kept && old < pairRoll_.size() ? pairRoll_[old] : Vec3::Zero());
    if (!bothSpheres(f)) {
      p.cache = static_cast<int>(caches.size());
      caches.push_back(kept && pairs_[old].cache >= 0 ? caches_[static_cast<std::size_t>(pairs_[old].cache)]
                                                      : ContactCache{});
    }
    pairs.push_back(p);
  }
  if (rolling_) pairRoll_ = std::move(roll);
  pairs_ = std::move(pairs);
  caches_ = std::move(caches);
  partitionPairs();
  pairForce_.assign(pairs_.size(), Vec3::Zero());
  pairTorque_.assign(pairs_.size(), PairTorques{});
  pairDepth_.assign(caches_.size(), 0);  // narrow-phase pairs only: indexed by the pair's cache
  pairFrame_.assign(caches_.size(), PairFrame{});
  computePairConstants();

  // CSR of each particle's pairs, in pair order (fixed summation order => thread-count independent).
  pairOffsets_.assign(n + 1, 0);
  for (const PairState& p : pairs_) {
    ++pairOffsets_[static_cast<std::size_t>(p.i) + 1];
    ++pairOffsets_[static_cast<std::size_t>(p.j) + 1];
  }
  for (std::size_t i = 0; i < n; ++i) pairOffsets_[i + 1] += pairOffsets_[i];
  pairRefs_.assign(static_cast<std::size_t>(pairOffsets_[n]), 0);
  {
    std::vector<int> fill(pairOffsets_.begin(), pairOffsets_.end() - 1);
    for (std::size_t k = 0; k < pairs_.size(); ++k) {
      pairRefs_[static_cast<std::size_t>(fill[static_cast<std::size_t>(pairs_[k].i)]++)] = static_cast<int>(k);
      pairRefs_[static_cast<std::size_t>(fill[static_cast<std::size_t>(pairs_[k].j)]++)] = ~static_cast<int>(k);
    }
  }

  // Wall contact states: planes and mesh triangles (bounding box) within the particle's bounding
  // sphere + skin. History merged per particle.
  std::vector<int> offsets(n + 1, 0);
  std::vector<WallContactState> states;
  states.reserve(n * walls_.size());
  for (std::size_t i = 0; i < n; ++i) {
    offsets[i] = static_cast<int>(states.size());
    const Vec3& x = particles_.position[i];
    const Real reach = half[i] + 0.5 * skin_;
    const std::size_t oldBegin = wallOffsets_.size() == n + 1 ? static_cast<std::size_t>(wallOffsets_[i]) : 0;
    const std::size_t oldEnd = wallOffsets_.size() == n + 1 ? static_cast<std::size_t>(wallOffsets_[i + 1]) : 0;
    std::size_t o = oldBegin;
    auto addState = [&](int w, int t) {
      WallContactState s;
      s.wall = w;
      s.triangle = t;
      while (o < oldEnd && (wallStates_[o].wall < w || (wallStates_[o].wall == w && wallStates_[o].triangle < t))) ++o;
      if (o < oldEnd && wallStates_[o].wall == w && wallStates_[o].triangle == t) s = wallStates_[o];
      states.push_back(s);
    };
    for (std::size_t w = 0; w < walls_.size(); ++w) {
      const Wall& wall = walls_[w];
      if (wall.kind == WallKind::Plane) {
        if (wall.normal.dot(x - wall.origin) < reach) addState(static_cast<int>(w), -1);
        continue;
      }
      for (std::size_t t = 0; t < wall.triangles.size(); ++t) {
        const auto& tri = wall.triangles[t];
        Vec3 lo = wall.vertices[static_cast<std::size_t>(tri[0])], hi = lo;
        for (int c = 1; c < 3; ++c) {
          lo = lo.cwiseMin(wall.vertices[static_cast<std::size_t>(tri[c])]);
          hi = hi.cwiseMax(wall.vertices[static_cast<std::size_t>(tri[c])]);
        }
        if (boxesOverlap(x - wall.origin, reach, lo, hi)) addState(static_cast<int>(w), static_cast<int>(t));
      }
    }
  }
  offsets[n] = static_cast<int>(states.size());
  wallOffsets_ = std::move(offsets);
  wallStates_ = std::move(states);
}

[[gnu::always_inline]] inline Simulation::ContactScales Simulation::contactScales(const PairLaw& law, Real depth,
                                                                                  Real sqrtMass, Real rEff) {
  ContactScales s{sqrtMass, 0, 0, 0};
  if (law.model == ContactModel::HertzMindlin) {
    s.a = std::sqrt(rEff * depth);
    s.sa = std::sqrt(s.a);
  } else {
    s.kn = linearNormalStiffness(law, rEff);
  }
  return s;
}

[[gnu::always_inline]] inline Real Simulation::normalForce(const PairLaw& law, Real depth, Real vn,
                                                           const ContactScales& s) {
  Real fn = 0;
  if (law.model == ContactModel::HertzMindlin) {
    // Hertz normal force (4/3) E* √R* δ^{3/2}; damping α √(m* k_sec) v with k_sec = (4/3) E* √(R* δ):
    // the α δ^{1/4} form whose restitution is velocity-independent, α fitted to e (material.cpp).
    // √(m* k) is evaluated as √m* · √(4/3 E*) · (R* δ)^{1/4} (constants precomputed per law).
    fn = law.hertzK * s.a * depth - law.dampingCoefficient * s.sqrtMass * law.sqrtHertzK * s.sa * vn;
  } else {
    fn = s.kn * depth - law.dampingCoefficient * s.sqrtMass * std::sqrt(s.kn) * vn;
  }
  return fn > 0 ? fn : 0;  // no cohesion
}

[[gnu::always_inline]] inline Vec3 Simulation::tangentialForce(const PairLaw& law, const Vec3& n, const Vec3& vt,
                                                               const ContactScales& s, Real fn, Vec3& shear) const {
  Real kt = 0, gt = 0;
  if (law.model == ContactModel::HertzMindlin) {
    kt = law.mindlinK * s.a;  // Mindlin no-slip tangential stiffness 8 G* a
    gt = law.dampingCoefficient * s.sqrtMass * law.sqrtMindlinK * s.sa;
  } else {
    kt = 2.0 / 7.0 * s.kn;
    gt = law.dampingCoefficient * s.sqrtMass * std::sqrt(kt);
  }
  return springWithSlip(shear, n, vt, kt, gt, law.friction * fn, options_.timeStep);
}

[[gnu::always_inline]] inline Vec3 Simulation::contactForce(const PairLaw& law, Real depth, const Vec3& n,
                                                            const Vec3& relVel, Real sqrtMass, Real rEff, Vec3& shear,
                                                            Real& fnOut) const {
  const Real vn = relVel.dot(n);  // > 0: separating
  const ContactScales s = contactScales(law, depth, sqrtMass, rEff);
  const Real fn = normalForce(law, depth, vn, s);
  fnOut = fn;
  return fn * n + tangentialForce(law, n, relVel - vn * n, s, fn, shear);
}

Real Simulation::normalStiffness(const PairLaw& law, Real depth, Real rEff) {
  if (law.model == ContactModel::HertzMindlin) return 2 * law.effectiveModulus * std::sqrt(rEff * std::max<Real>(depth, 0));
  return linearNormalStiffness(law, rEff);
}

Real Simulation::pairRollingInertia(std::size_t i, std::size_t j) const {
  // (0 marks a fixed particle, an infinite inertia: the other's alone; two fixed: no dashpot)
  const Real a = rollingInertia_[i], b = rollingInertia_[j];
  if (a == 0 || b == 0) return a + b;
  return a * b / (a + b);
}

// Rolling resistance: the elastic-plastic spring-dashpot model ("model C") of Ai, Chen, Rotter &
// Ooi (Powder Technology 206, 2011, Eqs. 11-19). A rolling spring torque M_k, rotated with the
// contact frame like the tangential spring, grows by -k_r ω_r dt with the relative rolling spin ω_r
// (relSpin without its twist about n), k_r = 2.25 (μ_r R*)² k_n; a dashpot -C_r ω_r with
// C_r = 2 η_r √(I_r k_r) acts with it. One departure, the tangential law's rule (springStep): spring
// plus dashpot are limited to the full mobilisation torque M_m = μ_r R* F_n, and at the limit the
// spring is reset so that the two give exactly M_m. (Ai et al. cap the spring alone and drop the
// dashpot at the limit; a normal force rising a little under a rolling sphere then brought the
// spring below the limit and let a dashpot torque ~30x M_m through for a step: 2 % too short a stop.)
// The constant torque of their model A, used here until 2026-11-27, reverses with ω_r every step
// once the body is nearly stopped: a sphere never came to rest (it crept on at about one step's
// deceleration) and crept down slopes that μ_r should hold.
Vec3 Simulation::rollingTorque(const PairLaw& law, const Vec3& n, const Vec3& relSpin, Real kn, Real rEff,
                               Real inertia, Real fn, Vec3& roll) const {
  Vec3 m = intoPlane(roll, n);
  const Vec3 wr = relSpin - relSpin.dot(n) * n;
  const Real lever = law.rollingFriction * rEff;
  const Real kr = 2.25 * lever * lever * kn;
  const Real cr = 2 * law.rollingDamping * std::sqrt(inertia * kr);
  m -= (kr * options_.timeStep) * wr;
  Vec3 torque = m - cr * wr;
  const Real limit = lever * fn;
  const Real t2 = torque.squaredNorm();
  if (t2 > limit * limit) {  // fully mobilised: the spring slips
    torque *= limit / std::sqrt(t2);
    m = torque + cr * wr;
  }
  roll = m;
  return torque;
}

// Face contacts (manifold of 2-4 points): a normal force per point from its own depth, i.e. the
// gradient of a sum of per-point Hertz potentials, so a rocking face neither gains energy nor
// loses its restoring moment; each point's damping uses m*/N so that N points in parallel keep the
// pair's restitution. One tangential spring acts at the force-weighted centre with the summed
// normal force as Coulomb limit.
void Simulation::manifoldForces(std::size_t k, const ContactResult& r) {
  PairState& p = pairs_[k];
  const auto i = static_cast<std::size_t>(p.i), j = static_cast<std::size_t>(p.j);
  const Vec3& xi = particles_.position[i];
  const Vec3& xj = particles_.position[j];
  const Vec3& vi = particles_.velocity[i];
  const Vec3& vj = particles_.velocity[j];
  const Vec3& wi = particles_.angularVelocity[i];
  const Vec3& wj = particles_.angularVelocity[j];
  const PairLaw& law = *pairConst_[k].law;
  const Real mEff = reducedMass(particles_.mass[i], particles_.mass[j], particles_.fixed[i], particles_.fixed[j]);
  const Real rEff = pairConst_[k].radius;
  const Vec3& n = r.normal;
  int count = 0;
  for (int m = 0; m < r.contactCount; ++m) count += r.contacts[m].depth > 0;
  const Real sqrtMPoint = std::sqrt(mEff / std::max(1, count));
  Vec3 force = Vec3::Zero(), ti = Vec3::Zero(), tj = Vec3::Zero(), acc = Vec3::Zero();
  Real fnSum = 0, depthSum = 0, depthMax = 0;
  for (int m = 0; m < r.contactCount; ++m) {
    const Real d = r.contacts[m].depth;
    if (!(d > 0)) continue;
    const Vec3& pt = r.contacts[m].point;
    const Vec3 rel = (vj + wj.cross(pt - xj)) - (vi + wi.cross(pt - xi));
    const Real fn = normalForce(law, d, rel.dot(n), contactScales(law, d, sqrtMPoint, rEff));
    const Vec3 f = fn * n;
    force += f;
    tj += (pt - xj).cross(f);
    ti -= (pt - xi).cross(f);
    acc += fn * pt;
    fnSum += fn;
    depthSum += d;
    depthMax = std::max(depthMax, d);
  }
  const Vec3 c = fnSum > 0 ? Vec3(acc / fnSum) : r.contactPoint;
  const Vec3 rel = (vj + wj.cross(c - xj)) - (vi + wi.cross(c - xi));
  const Vec3 vt = rel - rel.dot(n) * n;
  const Real meanDepth = count > 0 ? depthSum / count : r.depth;
  const Vec3 ft =
      tangentialForce(law, n, vt, contactScales(law, meanDepth, pairConst_[k].sqrtMass, rEff), fnSum, p.shear);
  force += ft;
  tj += (c - xj).cross(ft);
  ti -= (c - xi).cross(ft);
  if (law.rollingFriction > 0) {  // (one rolling spring per pair, its stiffness from all the points)
    Real kn = 0;
    for (int m = 0; m < r.contactCount; ++m)
      if (r.contacts[m].depth > 0) kn += normalStiffness(law, r.contacts[m].depth, rEff);
    const Vec3 m = rollingTorque(law, n, wj - wi, kn, rEff, pairRollingInertia(i, j), fnSum, pairRoll_[k]);
    tj += m;
    ti -= m;
  }
  storePairForce(k, i, j, force, {ti, tj});
  pairDepth_[static_cast<std::size_t>(p.cache)] = std::max(depthMax, r.depth);
  pairFrame_[static_cast<std::size_t>(p.cache)] = {c, n};
  p.touching = 1;
}

void Simulation::computePairConstants() {
  pairConst_.resize(pairs_.size());
  for (std::size_t k = 0; k < pairs_.size(); ++k) {
    const auto i = static_cast<std::size_t>(pairs_[k].i), j = static_cast<std::size_t>(pairs_[k].j);
    const ParticleShape& si = shapes_[static_cast<std::size_t>(particles_.shape[i])];
    const ParticleShape& sj = shapes_[static_cast<std::size_t>(particles_.shape[j])];
    PairConstants& c = pairConst_[k];
    c.law = &table_.law(particles_.material[i], particles_.material[j]);
    c.sqrtMass =
        std::sqrt(reducedMass(particles_.mass[i], particles_.mass[j], particles_.fixed[i], particles_.fixed[j]));
    c.radius = si.contactRadius * sj.contactRadius / (si.contactRadius + sj.contactRadius);
  }
}

[[gnu::always_inline]] inline void Simulation::storePairForce(std::size_t k, std::size_t i, std::size_t j,
                                                              const Vec3& f, const PairTorques& t) {
  pairForce_[k] = f;
  // Added to the particles this range owns outright (see partitionPairs); a boundary particle
  // gathers its pairs' slots instead, so its torque slots must be written. Only the gather reads
  // torque slots, and only a boundary particle's (every pair of one has bi or bj set); the others
  // are never read (a touching pair rewrites its slot each step, a released pair zeroes it), and
  // not writing them spares a line read for ownership per touching pair in a bed larger than the
  // caches.
  const bool bi = boundary_[i], bj = boundary_[j];
  if (!bi) {
    particles_.force[i] -= f;
    particles_.torque[i] += t.i;
  }
  if (!bj) {
    particles_.force[j] += f;
    particles_.torque[j] += t.j;
  }
  if (bi || bj) pairTorque_[k] = t;
}

// The sphere-sphere contact with the law of normalForce/tangentialForce written out once, for the
// common case of sphere beds: the contact point c = x_i + a_i n = x_j - a_j n (a = radius - depth/2)
// turns the relative velocity into v_j - v_i - (a_j ω_j + a_i ω_i) × n and both torques into
// multiples of n × F_t; √m*, R* and the law come from the pair's constants.
// (Inlined into pairBlock, its only caller: out of line, its arguments and the particles' data
// went through memory once more per pair; a link-time-optimised build, which inlines it, ran sphere
// beds ~5 % faster.)
[[gnu::always_inline]] inline bool Simulation::spherePair(std::size_t k, const SphereGeometry& centreLine) {
  PairState& p = pairs_[k];
  const auto i = static_cast<std::size_t>(p.i), j = static_cast<std::size_t>(p.j);
  Vec3 d = particles_.position[j] - particles_.position[i];
  const Real ri = sphereRadius_[i], rj = sphereRadius_[j];
  const Real r = ri + rj;
  SphereGeometry g = centreLine;
  if (g.d2 == 0) [[unlikely]] {
    // Coincident centres have no centre line: push them apart along +z (a fixed choice, so that
    // results do not depend on the thread count), as if the centres were 1e-9 r apart.
    const Real eps = 1e-9 * r;
    d = Vec3(0, 0, eps);
    g.d2 = eps * eps;
    g.inv = 1 / eps;
    g.depth = r - eps;
    g.a = std::sqrt(pairConst_[k].radius * g.depth);
    g.sa = std::sqrt(g.a);
  }
  const Real d2 = g.d2;
  if (d2 >= r * r) return false;
  const Vec3 n = d * g.inv;
  const Real depth = g.depth;
  const Real ai = ri - 0.5 * depth, aj = rj - 0.5 * depth;
  const Vec3& wi = particles_.angularVelocity[i];
  const Vec3& wj = particles_.angularVelocity[j];
  const Vec3 rel = particles_.velocity[j] - particles_.velocity[i] - (aj * wj + ai * wi).cross(n);
  const PairConstants& pc = pairConst_[k];
  const PairLaw& law = *pc.law;
  const Real vn = rel.dot(n);  // > 0: separating
  const Vec3 vt = rel - vn * n;
  Real fn = 0, kt = 0, gt = 0;
  if (law.model == ContactModel::HertzMindlin) {
    const Real a = g.a, sa = g.sa;
    const Real dm = law.dampingCoefficient * pc.sqrtMass * sa;
    fn = law.hertzK * a * depth - dm * law.sqrtHertzK * vn;
    kt = law.mindlinK * a;
    gt = dm * law.sqrtMindlinK;
  } else {
    const Real kn = linearNormalStiffness(law, pc.radius);
    fn = kn * depth - law.dampingCoefficient * pc.sqrtMass * std::sqrt(kn) * vn;
    kt = 2.0 / 7.0 * kn;
    gt = law.dampingCoefficient * pc.sqrtMass * std::sqrt(kt);
  }
  fn = fn > 0 ? fn : 0;
  const Vec3 ft = springWithSlipAlong(p.shear, d, d2, vt, kt, gt, law.friction * fn, options_.timeStep);
  const Vec3 nxf = n.cross(ft);
  const Vec3 f = fn * n + ft;
  Vec3 ti = -ai * nxf, tj = -aj * nxf;
  if (law.rollingFriction > 0) {
    const Vec3 m = rollingTorque(law, n, wj - wi, normalStiffness(law, depth, pc.radius), pc.radius,
                                 pairRollingInertia(i, j), fn, pairRoll_[k]);
    tj += m;
    ti -= m;
  }
  storePairForce(k, i, j, f, {ti, tj});
  p.touching = 1;  // (the depth is not stored: touchingDepth recomputes it, one less stream)
  return true;
}

Real Simulation::touchingDepth(std::size_t k) const {
  const PairState& p = pairs_[k];
  if (p.cache >= 0) return pairDepth_[static_cast<std::size_t>(p.cache)];
  // Sphere pair: the kernel's own arithmetic on the positions it used (they change only at the
  // next drift), so the same bits.
  const auto i = static_cast<std::size_t>(p.i), j = static_cast<std::size_t>(p.j);
  const Vec3 d = particles_.position[j] - particles_.position[i];
  return sphereRadius_[i] + sphereRadius_[j] - std::sqrt(d.squaredNorm());
}

void Simulation::releasePair(std::size_t k) {
  PairState& p = pairs_[k];
  if (!p.touching) return;
  p.touching = 0;
  p.shear.setZero();
  if (rolling_) pairRoll_[k].setZero();
  pairForce_[k].setZero();
  pairTorque_[k] = PairTorques{};
  if (p.cache >= 0) pairDepth_[static_cast<std::size_t>(p.cache)] = 0;
}

int Simulation::pairForces(std::size_t k, double& narrowSeconds) {
  PairState& p = pairs_[k];
  // Slots of non-touching pairs stay zero (the gather reads every slot); only a pair that stops
  // touching clears its slot, so separated pairs cost no writes.
  // (narrow-phase pairs only: pairBlock does sphere pairs itself)
  auto release = [this, k] { releasePair(k); };
  const auto i = static_cast<std::size_t>(p.i), j = static_cast<std::size_t>(p.j);
  const Vec3& xi = particles_.position[i];
  const Vec3& xj = particles_.position[j];
  const ParticleShape& si = shapes_[static_cast<std::size_t>(particles_.shape[i])];
  const ParticleShape& sj = shapes_[static_cast<std::size_t>(particles_.shape[j])];
  // (The pair's bound was updated, and the pair skipped while it is positive, by pairBlock's sweep.)
  const auto t0 = options_.profile ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
  if (!(poseFinite_[i] && poseFinite_[j])) {
    p.bound = 0;
    release();
    return kWarning;
  }
  const ContactResult r =
      contact(si.shape, pose_[i], sj.shape, pose_[j], pairNarrow_, &caches_[static_cast<std::size_t>(p.cache)]);
  if (options_.profile) narrowSeconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (r.status == Status::InvalidInput || !std::isfinite(r.distance)) {
    p.bound = 0;
    release();
    return kWarning;
  }
  if (r.distance > 0 || r.depth <= 0 || r.normal.squaredNorm() == 0) {
    p.bound = std::max<Real>(0, std::min(r.lowerBound, r.distance));
    release();
    return kNarrow;
  }
  p.bound = 0;
  if (r.contactCount > 1) {
    manifoldForces(k, r);
    return kNarrow;
  }
  const Real depth = r.depth;
  const Vec3& n = r.normal;
  const Vec3& c = r.contactPoint;
  const Vec3& wi = particles_.angularVelocity[i];
  const Vec3& wj = particles_.angularVelocity[j];
  const Vec3 rel = (particles_.velocity[j] + wj.cross(c - xj)) - (particles_.velocity[i] + wi.cross(c - xi));
  const PairLaw& law = *pairConst_[k].law;
  const Real rEff = pairConst_[k].radius;
  Real fn = 0;
  const Vec3 f = contactForce(law, depth, n, rel, pairConst_[k].sqrtMass, rEff, p.shear, fn);
  PairTorques t{(c - xi).cross(Vec3(-f)), (c - xj).cross(f)};
  if (law.rollingFriction > 0) {
    const Vec3 m = rollingTorque(law, n, wj - wi, normalStiffness(law, depth, rEff), rEff, pairRollingInertia(i, j),
                                 fn, pairRoll_[k]);
    t.j += m;
    t.i -= m;
  }
  storePairForce(k, i, j, f, t);
  pairDepth_[static_cast<std::size_t>(p.cache)] = depth;
  pairFrame_[static_cast<std::size_t>(p.cache)] = {c, n};
  p.touching = 1;
  return kNarrow;
}

/// Polyhedra with more vertices than this check the deepest point before visiting every vertex.
constexpr std::size_t kWallSupportCheckVertices = 64;

void Simulation::wallForces(int ii) {
  const auto i = static_cast<std::size_t>(ii);
  const ParticleShape& s = shapes_[static_cast<std::size_t>(particles_.shape[i])];
  const Vec3& x = particles_.position[i];
  if (wallOffsets_[i] == wallOffsets_[i + 1]) return;
  // The particle's pose, once for all its wall contacts (polyhedral vertices, supports, triangles).
  // (spheres need neither on planes)
  const Transform pose = s.isSphere ? Transform() : pose_[i];
  const Mat3 r = s.isSphere ? Mat3(Mat3::Identity()) : particles_.orientation[i].toRotationMatrix();
  constexpr int kSeen = 16;
  int meshSeen = 0, seenWall[kSeen];
  Vec3 seenNormal[kSeen];
  Real seenDepth[kSeen];
  for (int k = wallOffsets_[i]; k < wallOffsets_[i + 1]; ++k) {
    WallContactState& st = wallStates_[static_cast<std::size_t>(k)];
    const Wall& wall = walls_[static_cast<std::size_t>(st.wall)];
    auto release = [&st] {
      if (!st.touching) return;
      st.touching = 0;
      st.shear.setZero();
      st.roll.setZero();
      st.depth = 0;
      st.force.setZero();
      st.pointCount = 0;
    };
    Real depth = 0;
    Vec3 n = wall.normal, c = Vec3::Zero();
    if (st.triangle < 0) {
      const Vec3& p0 = wall.origin;
      if (n.dot(x - p0) >= s.boundingRadius) {  // bounding sphere clear of the plane
        release();
        continue;
      }
      if (s.isSphere) {
        depth = s.sphereRadius - n.dot(x - p0);
        c = x - n * (s.sphereRadius - 0.5 * depth);
      } else if (!s.bodyVertices.empty()) {
        // Polyhedral core: each vertex below the plane is its own contact (the deepest
        // kMaxWallPoints): a Hertz force from its own depth, its own tangential spring (so a face
        // resting on the wall has twisting friction), damping with m*/N so N points in parallel keep
        // the restitution. The normal forces are the gradient of a sum of per-vertex potentials, so
        // a rocking face cannot gain energy.
        if (s.bodyVertices.size() > kWallSupportCheckVertices) {
          // Fine meshes: the deepest point (the support along −n, hill-climbing) decides in a few
          // dot products whether any vertex reaches the plane; the vertex loop runs only if one does.
          SupportHint hint;
          const Vec3 deepest =
              x + mulMat(r, s.local.apply(s.shape.support(s.local.rotateInverse(mulMatT(r, Vec3(-n))), hint)));
          if (!(n.dot(deepest - p0) < 0)) {
            release();
            st.pointCount = 0;
            continue;
          }
        }
        int ids[kMaxWallPoints];
        Real depths[kMaxWallPoints];
        Vec3 points[kMaxWallPoints];
        int count = 0;
        for (std::size_t v = 0; v < s.bodyVertices.size(); ++v) {
          const Vec3 w = x + mulMat(r, s.bodyVertices[v]);
          const Real d = s.coreRadius - n.dot(w - p0);
          if (!(d > 0)) continue;
          int slot = count;
          if (count == kMaxWallPoints) {  // keep the deepest: replace the shallowest if deeper
            slot = static_cast<int>(std::min_element(depths, depths + count) - depths);
            if (depths[slot] >= d) continue;
          } else {
            ++count;
          }
          ids[slot] = static_cast<int>(v);
          depths[slot] = d;
          points[slot] = w - n * (s.coreRadius - 0.5 * d);
        }
        if (count == 0) {
          release();
          st.pointCount = 0;
          continue;
        }
        const Vec3 wallVel =
            wall.isLid() ? Vec3(wall.normal * lidVelocity_[static_cast<std::size_t>(st.wall)]) : wall.velocity;
        const Vec3& w = particles_.angularVelocity[i];
        const PairLaw& law = table_.law(wall.material, particles_.material[i]);
        const Real m = particles_.mass[i];
        const Real sqrtMPoint = std::sqrt((wall.isLid() ? m * wall.mass / (m + wall.mass) : m) / count);
        Vec3 shears[kMaxWallPoints];
        Vec3 total = Vec3::Zero(), torque = Vec3::Zero(), acc = Vec3::Zero();
        Real fnSum = 0;
        for (int a = 0; a < count; ++a) {
          shears[a] = Vec3::Zero();
          for (int b = 0; b < st.pointCount; ++b)
            if (st.vertex[b] == ids[a]) shears[a] = st.vertexShear[b];
          const Vec3 rel = particles_.velocity[i] + w.cross(points[a] - x) - wallVel;
          Real fn = 0;
          const Vec3 f = contactForce(law, depths[a], n, rel, sqrtMPoint, s.contactRadius, shears[a], fn);
          total += f;
          torque += (points[a] - x).cross(f);
          acc += fn * points[a];
          fnSum += fn;
          depth = std::max(depth, depths[a]);
        }
        if (law.rollingFriction > 0) {  // (one rolling spring per wall contact, stiffness from all the points)
          Real kn = 0;
          for (int a = 0; a < count; ++a) kn += normalStiffness(law, depths[a], s.contactRadius);
          torque += rollingTorque(law, n, w, kn, s.contactRadius, rollingInertia_[i], fnSum, st.roll);
        }
        for (int a = 0; a < count; ++a) {
          st.vertex[a] = ids[a];
          st.vertexShear[a] = shears[a];
        }
        st.pointCount = count;
        particles_.force[i] += total;
        particles_.torque[i] += torque;
        st.touching = 1;
        st.depth = depth;
        st.point = fnSum > 0 ? Vec3(acc / fnSum) : points[0];
        st.normal = n;
        st.force = total;
        continue;
      } else {
        SupportHint hint;
        const Vec3 sp = pose.apply(s.shape.support(pose.rotateInverse(Vec3(-n)), hint));
        depth = -n.dot(sp - p0);
        c = sp + n * (0.5 * depth);
      }
    } else {
      const auto& t = wall.triangles[static_cast<std::size_t>(st.triangle)];
      Triangle tri;
      for (int v = 0; v < 3; ++v) tri.v[v] = wall.vertices[static_cast<std::size_t>(t[v])] + wall.origin;
      const ContactResult rt =
          contact(Shape(tri), Transform(), s.shape, s.isSphere ? poseOf(ii) : pose, options_.narrowPhase, nullptr);
      if (rt.status != Status::InvalidInput && std::isfinite(rt.distance) && rt.distance <= 0 && rt.depth > 0 &&
          rt.normal.squaredNorm() > 0) {
        // A particle on a shared edge or vertex of a mesh touches several triangles at the same
        // point with the same normal: one contact, not several (counted once, first triangle wins).
        bool duplicate = false;
        for (int a = 0; a < meshSeen && !duplicate; ++a)
          duplicate = seenWall[a] == st.wall && seenNormal[a].dot(rt.normal) > 1 - 1e-9 &&
                      std::abs(seenDepth[a] - rt.depth) <= 1e-9 * s.boundingRadius;
        if (!duplicate) {
          depth = rt.depth;
          n = rt.normal;
          c = rt.contactPoint;
          if (meshSeen < kSeen) {
            seenWall[meshSeen] = st.wall;
            seenNormal[meshSeen] = n;
            seenDepth[meshSeen++] = depth;
          }
        }
      }
    }
    if (!(depth > 0)) {
      release();
      continue;
    }
    const Vec3 wallVel =
        wall.isLid() ? Vec3(wall.normal * lidVelocity_[static_cast<std::size_t>(st.wall)]) : wall.velocity;
    const Vec3& w = particles_.angularVelocity[i];
    const Vec3 rel = particles_.velocity[i] + w.cross(c - x) - wallVel;
    const PairLaw& law = table_.law(wall.material, particles_.material[i]);
    const Real m = particles_.mass[i];
    const Real mEff = wall.isLid() ? m * wall.mass / (m + wall.mass) : m;
    Real fn = 0;
    const Vec3 f = contactForce(law, depth, n, rel, std::sqrt(mEff), s.contactRadius, st.shear, fn);
    particles_.force[i] += f;
    particles_.torque[i] += (c - x).cross(f);
    if (law.rollingFriction > 0)
      particles_.torque[i] += rollingTorque(law, n, w, normalStiffness(law, depth, s.contactRadius), s.contactRadius,
                                            rollingInertia_[i], fn, st.roll);
    st.touching = 1;
    st.depth = depth;
    st.point = c;
    st.normal = n;
    st.force = f;
  }
}

std::pair<std::int64_t, std::int64_t> Simulation::particleSpan() const {
  const int threads = omp_get_num_threads(), t = omp_get_thread_num();
  if (rangeParticle_.size() == static_cast<std::size_t>(threads) + 1)
    return {rangeParticle_[static_cast<std::size_t>(t)], rangeParticle_[static_cast<std::size_t>(t) + 1]};
  const auto n = static_cast<std::int64_t>(particles_.size());
  return {n * t / threads, n * (t + 1) / threads};
}

void Simulation::partitionPairs() {
  const std::size_t n = particles_.size(), np = pairs_.size();
  const int threads = parallel_ ? omp_get_max_threads() : 1;
  spherePairs_ = 0;
  for (const PairState& p : pairs_) spherePairs_ += p.cache < 0;
  boundary_.assign(n, 0);
  rangePair_.clear();
  rangeParticle_.clear();
  // One range per thread (also for narrow-phase pairs: with pairs in dynamic blocks both cores
  // wrote every particle's poses and forces, and the lines moved between their caches each step;
  // polyhedra10k's two-thread speed-up was 1.4-1.5x). Ranges hold equal shares of the pair work
  // as it stood at the last step (pairs are sorted by i), in about 5 ns units: a sphere pair
  // apart 1, touching 3 (its law); a narrow-phase pair its Montanari bound skips 1, one the narrow
  // phase is called for 100 (~0.5 us), a touching one 200 (its manifold law). Computed when the
  // list is rebuilt; in a settled bed, where rebuilds are rare, the activity changes slowly.
  std::vector<std::int64_t> work(np + 1, 0);
  const bool bounded = options_.conservativeBound;
  for (std::size_t k = 0; k < np; ++k) {
    const PairState& p = pairs_[k];
    std::int64_t w = p.touching ? 3 : 1;
    if (p.cache >= 0) w = p.touching ? 200 : (bounded && p.bound > 0) ? 1 : 100;
    work[k + 1] = work[k] + w;
  }
  rangePair_.push_back(0);
  rangeParticle_.push_back(0);
  for (int t = 1; t < threads; ++t) {
    const std::int64_t target = work[np] * t / threads;
    const auto k = static_cast<std::size_t>(std::lower_bound(work.begin(), work.end(), target) - work.begin());
    const int m = k < np ? std::max(pairs_[k].i, rangeParticle_.back()) : static_cast<int>(n);
    std::size_t first = static_cast<std::size_t>(rangePair_.back());
    while (first < np && pairs_[first].i < m) ++first;
    rangePair_.push_back(static_cast<std::int64_t>(first));
    rangeParticle_.push_back(m);
  }
  rangePair_.push_back(static_cast<std::int64_t>(np));
  rangeParticle_.push_back(static_cast<int>(n));
  // Boundary particles: the second particle of a pair done by an earlier range.
  for (std::size_t t = 0; t + 1 < rangePair_.size(); ++t)
    for (auto k = static_cast<std::size_t>(rangePair_[t]); k < static_cast<std::size_t>(rangePair_[t + 1]); ++k)
      if (pairs_[k].j >= rangeParticle_[t + 1]) boundary_[static_cast<std::size_t>(pairs_[k].j)] = 1;
}

// Pairs [k0, k1) (at most kPairBlock) in two passes: a sweep marks the pairs with work (sphere
// pairs that overlap or were touching, tested branch-free; narrow-phase pairs whose Montanari bound
// has reached 0, or all of them when the bound is off), then those are done in pair order. Half of
// a bed's listed sphere pairs are apart; the sweep spares them a mispredicted branch. (The branch
// on the pair's kind goes the same way for every pair of a one-shape bed.)
void Simulation::pairBlock(std::int64_t k0, std::int64_t k1, std::int64_t& calls, std::int64_t& skipped,
                           std::int64_t& warnings, double& narrow) {
  std::uint32_t active[kPairBlock];
  Real sumRadius[kPairBlock];
  alignas(16) Real gD2[kPairBlock], gInv[kPairBlock], gDepth[kPairBlock], gA[kPairBlock], gSa[kPairBlock];
  const Vec3* x = particles_.position.data();
  const Real* radius = sphereRadius_.data();
  const Real* moved = stepDisplacement_.data();
  const bool useBound = options_.conservativeBound;
  int nActive = 0;
  for (std::int64_t k = k0; k < k1; ++k) {
    PairState& p = pairs_[static_cast<std::size_t>(k)];
    const auto i = static_cast<std::size_t>(p.i), j = static_cast<std::size_t>(p.j);
    Real r = 0, d2 = 0;
    int work = 1;
    if (p.cache < 0) {  // sphere pair (the branch is taken the same way for every pair of a one-shape bed)
      r = radius[i] + radius[j];
      d2 = (x[j] - x[i]).squaredNorm();
      // (bitwise, not short-circuit: no branch)
      work = static_cast<int>(p.touching != 0) | static_cast<int>(d2 < r * r);
    } else {
      // Montanari (2017) Eq. 3.14: the last exact distance minus the largest point displacements
      // of both bodies since; the narrow phase is called only when this lower bound reaches 0.
      // Decided here, in the sweep: a settled bed's listed pairs are mostly apart and skipped, and
      // the second pass (its call, its prefetch of the pair's ~450-byte cache) is for those with work.
      p.bound -= moved[i] + moved[j];
      const bool skip = useBound && p.bound > 0;
      if (skip) {
        releasePair(static_cast<std::size_t>(k));  // (a pair apart is normally not touching: no-op)
        ++skipped;
      }
      work = !skip;
    }
    active[nActive] = static_cast<std::uint32_t>(k - k0);
    sumRadius[nActive] = r;
    gD2[nActive] = d2;
    nActive += work;
  }
  // The sphere kernel's chain of square roots (|d|, then √(R* depth), then its root) and the
  // division for n, for every active pair at once: independent from pair to pair, they overlap
  // here instead of stalling each pair's kernel in turn (one array per quantity: packed square
  // roots and stores). Same operations, same bits. (Skipped in beds without sphere pairs.)
  const int nGeometry = spherePairs_ > 0 ? nActive : 0;
  for (int a = 0; a < nGeometry; ++a) {
    const Real dist = std::sqrt(gD2[a]);
    gInv[a] = 1 / dist;
    gDepth[a] = sumRadius[a] - dist;
    gA[a] = std::sqrt(pairConst_[static_cast<std::size_t>(k0 + active[a])].radius * gDepth[a]);
    gSa[a] = std::sqrt(gA[a]);
  }
  for (int a = 0; a < nActive; ++a) {
    const auto k = static_cast<std::size_t>(k0 + active[a]);
    PairState& p = pairs_[k];
    // The pair after next, requested now so that its first reads do not miss:
    //  - both particles' poses and the particle data its law reads and its scatter writes (the
    //    second particle is hundreds of indices away in a poured bed, and its lines have been
    //    evicted by the per-pair streams; in perf the poses' loads alone were ~45 ns of a call's
    //    ~600 in a 10k polyhedra bed);
    //  - the narrow phase's warm-start cache (one per pair, read in pair order but far apart),
    //    from the GJK hints to the ring: a persisting polyhedral contact's lean query reads neither
    //    GJK's simplex before the hints nor the ring, which only an expansion reads. Non-temporal:
    //    the caches stream through once per step (~22 MB in the 10k bed), kept out of the outer
    //    caches they do not evict the particles' data.
    if (a + 2 < nActive) {
      const auto kq = static_cast<std::size_t>(k0 + active[a + 2]);
      const PairState& q = pairs_[kq];
      if (q.cache >= 0) {
        for (const int m : {q.i, q.j}) {
          const auto u = static_cast<std::size_t>(m);
          const auto* pose = reinterpret_cast<const char*>(&pose_[u]);
          __builtin_prefetch(pose);
          __builtin_prefetch(pose + sizeof(Transform) - 1);
          __builtin_prefetch(&particles_.position[u]);
          __builtin_prefetch(&particles_.velocity[u]);
          __builtin_prefetch(&particles_.angularVelocity[u]);
          // (read by the pair's law: the shape for the narrow phase, mass and fixed flag for the
          // manifold's reduced mass; perf put ~14 % of manifoldForces' samples on mass[j])
          __builtin_prefetch(&particles_.shape[u]);
          __builtin_prefetch(&particles_.mass[u]);
          __builtin_prefetch(&particles_.fixed[u]);
          __builtin_prefetch(&particles_.force[u], 1);
          __builtin_prefetch(&particles_.torque[u], 1);
        }
        // (its slots, written by a touching pair: stores that miss wait in the store buffer, and the
        // next query's ~0.5 kB result initialisation then stalled behind them)
        const auto cq = static_cast<std::size_t>(q.cache);
        // (its law's constants: read by every touching pair, and missed, since the skipped pairs
        // between two active ones leave no stream for the hardware prefetcher; perf: ~1/4 of
        // pairForces' cycles waited on that load)
        __builtin_prefetch(&pairConst_[kq]);
        __builtin_prefetch(&pairForce_[kq], 1);
        __builtin_prefetch(&pairDepth_[cq], 1);
        __builtin_prefetch(&pairFrame_[cq], 1);
        // (its hot part: the lines a persisting contact's query reads, at the start of the cache)
        const auto* next = reinterpret_cast<const char*>(&caches_[cq]);
        for (std::size_t line = 0; line < ContactCache::kHotBytes; line += 64)
          __builtin_prefetch(next + line, 0, 0);
      }
    }
    if (p.cache < 0) {  // sphere pair (the kernel scatters its forces itself)
      if (!spherePair(k, SphereGeometry{gD2[a], gInv[a], gDepth[a], gA[a], gSa[a]})) releasePair(k);
      continue;
    }
    // (pairForces scatters a touching pair's force itself)
    switch (pairForces(k, narrow)) {
      case kWarning:
        ++warnings;
        ++calls;
        break;
      default:
        ++calls;
        break;
    }
  }
}

void Simulation::computeForces(Real kick) {
  if (needDisplacement_) {
    // Poses for the narrow phase and wall contacts, once per particle instead of per call.
    pose_.resize(particles_.size());
    poseFinite_.resize(particles_.size());
#pragma omp parallel if (parallel_)
    {
      const auto [first, end] = particleSpan();
      for (std::int64_t i = first; i < end; ++i) {
        const auto k = static_cast<std::size_t>(i);
        poseInto(k, pose_[k]);
        poseFinite_[k] = pose_[k].translation.allFinite() && pose_[k].rotation.allFinite();
      }
    }
    // Shapes were validated when added and rotations come from unit quaternions: the narrow phase
    // skips its per-call checks; pairForces refuses non-finite poses itself.
    pairNarrow_ = options_.narrowPhase;
    pairNarrow_.trustedInput = true;
    pairNarrow_.reportSimplex = false;  // (the pair law reads depth, normal, point and manifold only)
  }
  std::int64_t calls = 0, skipped = 0, warnings = 0;
  double narrow = 0;
  // Each particle's force is the sum of its pairs' forces in pair order, whatever the thread
  // count (bit-identical results):
  // thread t does the pairs of its owner range (partitionPairs) in order and adds their forces to
  // the particles it owns outright; a boundary particle (in a pair of another range) then sums its
  // pairs' slots in pair order.
  auto gather = [this](std::size_t i) {
    Vec3 f = Vec3::Zero(), t = Vec3::Zero();
    for (int r = pairOffsets_[i]; r < pairOffsets_[i + 1]; ++r) {
      const int ref = pairRefs_[static_cast<std::size_t>(r)];
      if (ref >= 0) {
        f -= pairForce_[static_cast<std::size_t>(ref)];
        t += pairTorque_[static_cast<std::size_t>(ref)].i;
      } else {
        f += pairForce_[static_cast<std::size_t>(~ref)];
        t += pairTorque_[static_cast<std::size_t>(~ref)].j;
      }
    }
    particles_.force[i] = f;
    particles_.torque[i] = t;
  };
  auto finish = [this, kick](std::size_t i) {
    if (!walls_.empty()) wallForces(static_cast<int>(i));
    if (kick != 0) kickParticle(i, kick);
  };
  const auto ranges = static_cast<std::int64_t>(rangePair_.size()) - 1;  // (>= 1: partitionPairs)
#pragma omp parallel for schedule(static, 1) reduction(+ : calls, skipped, warnings, narrow) if (ranges > 1)
  for (std::int64_t t = 0; t < ranges; ++t) {
    const auto ts = static_cast<std::size_t>(t);
    for (int i = rangeParticle_[ts]; i < rangeParticle_[ts + 1]; ++i) {
      particles_.force[static_cast<std::size_t>(i)].setZero();
      particles_.torque[static_cast<std::size_t>(i)].setZero();
    }
    for (std::int64_t k0 = rangePair_[ts]; k0 < rangePair_[ts + 1]; k0 += kPairBlock)
      pairBlock(k0, std::min(rangePair_[ts + 1], k0 + kPairBlock), calls, skipped, warnings, narrow);
  }
#pragma omp parallel if (ranges > 1)
  {
    const auto [first, end] = particleSpan();
    for (std::int64_t ii = first; ii < end; ++ii) {
      const auto i = static_cast<std::size_t>(ii);
      if (boundary_[i]) gather(i);
      finish(i);
    }
  }
  counters_.narrowPhaseCalls += calls;
  counters_.narrowPhaseSkipped += skipped;
  counters_.analyticPairTests += spherePairs_;
  counters_.warnings += warnings;
  timings_.narrowPhaseCpuSeconds += narrow;

  // Free lids: reaction of every particle touching them, summed in particle order.
  for (std::size_t w = 0; w < walls_.size(); ++w) lidForce_[w] = 0;
  bool anyLid = false;
  for (const Wall& w : walls_) anyLid |= w.isLid();
  if (anyLid)
    for (const WallContactState& st : wallStates_)
      if (st.touching && walls_[static_cast<std::size_t>(st.wall)].isLid())
        lidForce_[static_cast<std::size_t>(st.wall)] -= st.force.dot(walls_[static_cast<std::size_t>(st.wall)].normal);
}

// ---------------------------------------------------------------------------------------------
// Measures

Stats Simulation::stats() const {
  Stats s;
  s.step = step_;
  s.time = time_;
  const Vec3 g = options_.gravity;
  for (std::size_t i = 0; i < particles_.size(); ++i) {
    const Real m = particles_.mass[i];
    const Vec3& v = particles_.velocity[i];
    const Vec3 wb = particles_.orientation[i].conjugate() * particles_.angularVelocity[i];
    s.kineticEnergy += 0.5 * m * v.squaredNorm() + 0.5 * wb.dot(particles_.inertia[i].cwiseProduct(wb));
    s.potentialEnergy -= m * g.dot(particles_.position[i]);
    s.maxSpeed = std::max(s.maxSpeed, v.norm());
  }
  for (std::size_t w = 0; w < walls_.size(); ++w)
    if (walls_[w].isLid()) {
      s.kineticEnergy += 0.5 * walls_[w].mass * lidVelocity_[w] * lidVelocity_[w];
      s.potentialEnergy -= walls_[w].mass * g.dot(walls_[w].origin);
    }
  Real sum = 0;
  std::int64_t count = 0;
  auto radiusOf = [this](int i) {
    return shapes_[static_cast<std::size_t>(particles_.shape[static_cast<std::size_t>(i)])].equivalentRadius;
  };
  auto relative = [](Real depth, Real radius) { return radius > 0 ? depth / radius : Real(0); };
  for (std::size_t k = 0; k < pairs_.size(); ++k)
    if (pairs_[k].touching) {
      ++s.contacts;
      const Real depth = touchingDepth(k);
      sum += depth;
      s.maxOverlap = std::max(s.maxOverlap, depth);
      s.maxRelativeOverlap =
          std::max(s.maxRelativeOverlap, relative(depth, std::min(radiusOf(pairs_[k].i), radiusOf(pairs_[k].j))));
      ++count;
    }
  for (std::size_t i = 0; i + 1 < wallOffsets_.size(); ++i)
    for (int k = wallOffsets_[i]; k < wallOffsets_[i + 1]; ++k) {
      const WallContactState& st = wallStates_[static_cast<std::size_t>(k)];
      if (!st.touching) continue;
      ++s.wallContacts;
      sum += st.depth;
      s.maxOverlap = std::max(s.maxOverlap, st.depth);
      s.maxRelativeOverlap = std::max(s.maxRelativeOverlap, relative(st.depth, radiusOf(static_cast<int>(i))));
      ++count;
    }
  s.meanOverlap = count ? sum / static_cast<Real>(count) : 0;
  s.coordinationNumber =
      particles_.size() ? 2.0 * static_cast<Real>(s.contacts) / static_cast<Real>(particles_.size()) : 0;
  return s;
}

std::vector<ContactInfo> Simulation::contacts() const {
  std::vector<ContactInfo> out;
  for (std::size_t k = 0; k < pairs_.size(); ++k)
    if (pairs_[k].touching) {
      const PairState& p = pairs_[k];
      const Real depth = touchingDepth(k);
      PairFrame g;
      if (p.cache >= 0) {
        g = pairFrame_[static_cast<std::size_t>(p.cache)];
      } else {  // sphere pair: the kernel's own point and normal, from the positions
        const auto i = static_cast<std::size_t>(p.i), j = static_cast<std::size_t>(p.j);
        const Vec3 d = particles_.position[j] - particles_.position[i];
        g.normal = d.squaredNorm() > 0 ? Vec3(d * (1 / d.norm())) : Vec3::UnitZ();  // (as spherePair)
        g.point = particles_.position[i] + g.normal * (sphereRadius_[i] - 0.5 * depth);
      }
      out.push_back({p.i, p.j, g.point, g.normal, depth, pairForce_[k]});
    }
  for (std::size_t i = 0; i + 1 < wallOffsets_.size(); ++i)
    for (int k = wallOffsets_[i]; k < wallOffsets_[i + 1]; ++k) {
      const WallContactState& st = wallStates_[static_cast<std::size_t>(k)];
      if (st.touching) out.push_back({static_cast<int>(i), -1 - st.wall, st.point, st.normal, st.depth, st.force});
    }
  return out;
}

int Simulation::threadsUsed() const { return parallel_ ? omp_get_max_threads() : 1; }

double Simulation::contactDetectionShare() const {
  const Timings& t = timings_;
  return t.stepSeconds > 0 ? (t.neighbourSeconds + t.narrowPhaseCpuSeconds / threadsUsed()) / t.stepSeconds : 0.0;
}

std::int64_t Simulation::workEstimate() const {
  std::int64_t w = 0;
  for (std::size_t i = 0; i < particles_.size(); ++i)
    w += shapes_[static_cast<std::size_t>(particles_.shape[i])].isSphere ? 1 : 32;
  return w;
}

Real Simulation::particleVolume() const {
  Real v = 0;
  for (std::size_t i = 0; i < particles_.size(); ++i)
    v += shapes_[static_cast<std::size_t>(particles_.shape[i])].volume;
  return v;
}

Real Simulation::lidSpeed(int wall) const {
  return wall >= 0 && wall < static_cast<int>(lidVelocity_.size()) ? lidVelocity_[static_cast<std::size_t>(wall)] : 0;
}

std::uint64_t Simulation::stateHash() const {
  std::uint64_t h = kFnvOffset;
  fnvVec(h, particles_.position);
  fnvVec(h, particles_.orientation);
  fnvVec(h, particles_.velocity);
  fnvVec(h, particles_.angularVelocity);
  for (const PairState& p : pairs_) {
    fnv(h, &p.i, sizeof p.i);
    fnv(h, &p.j, sizeof p.j);
    fnv(h, p.shear.data(), sizeof(Real) * 3);
  }
  for (const Vec3& m : pairRoll_) fnv(h, m.data(), sizeof(Real) * 3);
  for (const WallContactState& st : wallStates_) {
    fnv(h, st.shear.data(), sizeof(Real) * 3);
    if (rolling_) fnv(h, st.roll.data(), sizeof(Real) * 3);
    for (int a = 0; a < st.pointCount; ++a) fnv(h, st.vertexShear[a].data(), sizeof(Real) * 3);
  }
  fnvVec(h, lidVelocity_);
  fnv(h, &time_, sizeof time_);
  return h;
}

// ---------------------------------------------------------------------------------------------
// Checkpoints

// The sizes of the records stored raw: a checkpoint from a build whose structs differ is refused
// instead of being read as garbage.
std::uint64_t Simulation::layoutStamp() {
  // (and where the warm-start cache's parts lie: fields moved within the same size, as the hot part
  // was on 2026-11-27, would otherwise be read as other fields; and a format number, raised when
  // bytes keep their place but change meaning, as the manifold's face memo did on 2026-11-27)
  constexpr std::uint64_t kCacheFormat = 3;
  const ContactCache c;
  auto at = [&c](const void* field) {
    return static_cast<std::uint64_t>(reinterpret_cast<const char*>(field) - reinterpret_cast<const char*>(&c));
  };
  const std::uint64_t sizes[] = {sizeof(PairState),        sizeof(ContactCache), sizeof(PairTorques), sizeof(PairFrame),
                                 sizeof(WallContactState), sizeof(Counters),     sizeof(Quat),        sizeof(Vec3),
                                 at(&c.faceA),             at(&c.manifold),      at(&c.gjk),          at(&c.gjk.localA),
                                 at(&c.ringA),             at(&c.memoA),         kCacheFormat};
  std::uint64_t h = 1469598103934665603ULL;
  for (std::uint64_t v : sizes) h = (h ^ v) * 1099511628211ULL;
  return h;
}

void Simulation::saveState(std::ostream& target) const {
  // (streamed through the hash, the buffer on the heap: its 64 kB would crowd a thread's stack)
  const auto hashing = std::make_unique<HashingBuffer>(target);
  std::ostream out(hashing.get());
  writePayload(out);
  out.flush();
  writePod(target, hashing->hash());
  target.write(kSumTag, sizeof kSumTag);
}

void Simulation::writePayload(std::ostream& out) const {
  out.write(kMagic, sizeof kMagic);
  writePod(out, layoutStamp());
  writePod(out, static_cast<std::uint64_t>(particles_.size()));
  writePod(out, static_cast<std::uint64_t>(shapes_.size()));
  writePod(out, static_cast<std::uint64_t>(walls_.size()));
  writePod(out, time_);
  writePod(out, step_);
  writePod(out, options_.timeStep);
  writePod(out, counters_);
  writePod(out, skin_);
  writeVec(out, particles_.id);
  writeVec(out, particles_.position);
  writeVec(out, particles_.orientation);
  writeVec(out, particles_.velocity);
  writeVec(out, particles_.angularVelocity);
  writeVec(out, particles_.force);
  writeVec(out, particles_.torque);
  writeVec(out, particles_.mass);
  writeVec(out, particles_.inertia);
  writeVec(out, particles_.shape);
  writeVec(out, particles_.material);
  writeVec(out, particles_.fixed);
  std::vector<Vec3> origins, velocities;
  for (const Wall& w : walls_) {
    origins.push_back(w.origin);
    velocities.push_back(w.velocity);
  }
  writeVec(out, origins);
  writeVec(out, velocities);
  writeVec(out, lidVelocity_);
  writeVec(out, lidForce_);
  writeVec(out, referencePosition_);
  writeVec(out, wallReference_);
  writeVec(out, pairs_);
  writeVec(out, caches_);
  writeVec(out, pairForce_);
  writeVec(out, pairTorque_);
  writeVec(out, pairDepth_);
  writeVec(out, pairFrame_);
  writeVec(out, pairOffsets_);
  writeVec(out, pairRefs_);
  writeVec(out, stepDisplacement_);
  writeVec(out, wallOffsets_);
  writeVec(out, wallStates_);
  writeVec(out, pairRoll_);
}

Result<bool> Simulation::loadState(std::istream& source) {
  using R = Result<bool>;
  if (!initialized_)
    return R::failure("loadState needs a simulation set up from the checkpoint's scenario and initialized first");
  // A seekable stream (a file) is checked in a first streaming pass and parsed in a second, so the
  // file is never held in memory (it was: a polyhedra10k resume peaked 43 MB higher). Other streams
  // are buffered.
  constexpr std::size_t kTrailer = sizeof(std::uint64_t) + sizeof kSumTag;
  const auto badSum = [] {
    return R::failure("checkpoint corrupt (checksum mismatch): the file was changed or damaged after it was written");
  };
  std::string bytes;
  std::optional<std::istringstream> buffered;
  std::istream* in = &source;
  std::uint64_t payload = 0;
  const auto start = source.tellg();
  if (start != std::streampos(-1) && source.seekg(0, std::ios::end) && source.tellg() >= start) {
    const auto size = static_cast<std::uint64_t>(source.tellg() - start);
    payload = size;
    if (size >= kTrailer) {
      char trailer[kTrailer];
      source.seekg(start + static_cast<std::streamoff>(size - kTrailer));
      source.read(trailer, kTrailer);
      if (source && std::memcmp(trailer + sizeof(std::uint64_t), kSumTag, sizeof kSumTag) == 0) {
        payload = size - kTrailer;
        std::uint64_t stored = 0, h = kFnvOffset;
        std::memcpy(&stored, trailer, sizeof stored);
        source.seekg(start);
        std::vector<char> chunk(std::size_t{1} << 20);
        for (std::uint64_t left = payload; left > 0 && source;) {
          const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(left, chunk.size()));
          source.read(chunk.data(), static_cast<std::streamsize>(n));
          fnv(h, chunk.data(), n);
          left -= n;
        }
        if (!source || h != stored) return badSum();
      }
    }
    source.clear();
    source.seekg(start);
  } else {
    source.clear();
    bytes.assign(std::istreambuf_iterator<char>(source), std::istreambuf_iterator<char>());
    payload = bytes.size();
    if (bytes.size() >= kTrailer &&
        std::memcmp(bytes.data() + bytes.size() - sizeof kSumTag, kSumTag, sizeof kSumTag) == 0) {
      std::uint64_t stored = 0;
      std::memcpy(&stored, bytes.data() + bytes.size() - kTrailer, sizeof stored);
      payload = bytes.size() - kTrailer;
      if (fnv1a(bytes.data(), payload) != stored) return badSum();
    }
    in = &buffered.emplace(std::move(bytes), std::ios::binary);
  }
  // Read into a copy and commit only a checkpoint that passed every check: a refused file leaves
  // this simulation as it was.
  // The copy leaves out the per-pair and wall-contact records, which the checkpoint replaces
  // wholesale: copying them doubled the memory peak of a resume (polyhedra10k: 143 -> 236 MB).
  // (The records are moved aside and put back by a guard, also if the copy throws bad_alloc.)
  Simulation next = [this] {
    struct Aside {
      Simulation& s;
      decltype(pairs_) pairs = std::move(s.pairs_);
      decltype(caches_) caches = std::move(s.caches_);
      decltype(pairForce_) forces = std::move(s.pairForce_);
      decltype(pairTorque_) torques = std::move(s.pairTorque_);
      decltype(pairDepth_) depths = std::move(s.pairDepth_);
      decltype(pairFrame_) frames = std::move(s.pairFrame_);
      decltype(pairRefs_) refs = std::move(s.pairRefs_);
      decltype(wallStates_) walls = std::move(s.wallStates_);
      decltype(pairRoll_) roll = std::move(s.pairRoll_);
      ~Aside() {
        s.pairs_ = std::move(pairs), s.caches_ = std::move(caches), s.pairForce_ = std::move(forces);
        s.pairTorque_ = std::move(torques), s.pairDepth_ = std::move(depths), s.pairFrame_ = std::move(frames);
        s.pairRefs_ = std::move(refs), s.wallStates_ = std::move(walls), s.pairRoll_ = std::move(roll);
      }
    } aside{*this};
    return Simulation(*this);
  }();
  if (auto r = next.readPayload(*in, payload); !r.ok()) return r;
  *this = std::move(next);
  // The set-up (contact table, threads, sphere radii) is initialize()'s, unchanged: only what
  // depends on the loaded pair list is derived again.
  computePairConstants();
  partitionPairs();
  return true;
}

Result<bool> Simulation::readPayload(std::istream& source, std::uint64_t bytes) {
  using R = Result<bool>;
  Reader in{source, bytes};
  char magic[sizeof kMagic];
  if (!in.take(magic, sizeof magic) || std::memcmp(magic, kMagic, sizeof kMagic) != 0)
    return R::failure("not a proxima DEM checkpoint of this version (bad magic)");
  std::uint64_t layout = 0;
  if (!readPod(in, layout)) return R::failure("checkpoint truncated (header)");
  if (layout != layoutStamp())
    return R::failure(
        "checkpoint written by a build with a different state layout (per-pair caches and "
        "contact records are stored raw); resume it with the build that wrote it, or start "
        "again from the scenario");
  std::uint64_t np = 0, ns = 0, nw = 0;
  if (!readPod(in, np) || !readPod(in, ns) || !readPod(in, nw)) return R::failure("checkpoint truncated (header)");
  if (np != particles_.size() || ns != shapes_.size() || nw != walls_.size())
    return R::failure("checkpoint does not match the scenario: " + std::to_string(np) + " particles, " +
                      std::to_string(ns) + " shapes and " + std::to_string(nw) + " walls in the checkpoint, " +
                      std::to_string(particles_.size()) + ", " + std::to_string(shapes_.size()) + " and " +
                      std::to_string(walls_.size()) + " in the scenario");
  const std::vector<int> setUpShape = particles_.shape, setUpMaterial = particles_.material;
  Real dt = 0;
  bool ok = readPod(in, time_) && readPod(in, step_) && readPod(in, dt) && readPod(in, counters_) && readPod(in, skin_);
  ok = ok && readVec(in, particles_.id) && readVec(in, particles_.position) && readVec(in, particles_.orientation) &&
       readVec(in, particles_.velocity) && readVec(in, particles_.angularVelocity) && readVec(in, particles_.force) &&
       readVec(in, particles_.torque) && readVec(in, particles_.mass) && readVec(in, particles_.inertia) &&
       readVec(in, particles_.shape) && readVec(in, particles_.material) && readVec(in, particles_.fixed);
  std::vector<Vec3> origins, velocities;
  ok = ok && readVec(in, origins) && readVec(in, velocities) && readVec(in, lidVelocity_) && readVec(in, lidForce_) &&
       readVec(in, referencePosition_) && readVec(in, wallReference_) && readVec(in, pairs_) && readVec(in, caches_) &&
       readVec(in, pairForce_) && readVec(in, pairTorque_) && readVec(in, pairDepth_) && readVec(in, pairFrame_) &&
       readVec(in, pairOffsets_) && readVec(in, pairRefs_) && readVec(in, stepDisplacement_) &&
       readVec(in, wallOffsets_) && readVec(in, wallStates_) && readVec(in, pairRoll_);
  if (!ok) return R::failure("checkpoint truncated or corrupt");
  if (in.left != 0) return R::failure("checkpoint has trailing data after its state");

  // Sizes and indices: everything the stepping loops index with must be in range.
  auto bad = [](const std::string& what) { return R::failure("checkpoint inconsistent: " + what); };
  const std::size_t n = np;
  for (std::size_t len : {particles_.id.size(), particles_.position.size(), particles_.orientation.size(),
                          particles_.velocity.size(), particles_.angularVelocity.size(), particles_.force.size(),
                          particles_.torque.size(), particles_.mass.size(), particles_.inertia.size(),
                          particles_.shape.size(), particles_.material.size(), particles_.fixed.size(),
                          referencePosition_.size(), stepDisplacement_.size()})
    if (len != n) return bad("per-particle arrays of different lengths");
  for (std::size_t len : {origins.size(), velocities.size(), lidVelocity_.size(), lidForce_.size(), wallReference_.size()})
    if (len != nw) return bad("per-wall arrays of different lengths");
  for (std::size_t i = 0; i < n; ++i)
    if (particles_.shape[i] != setUpShape[i] || particles_.material[i] != setUpMaterial[i])
      return R::failure("checkpoint does not match the scenario: particle " + std::to_string(particles_.id[i]) +
                        " has shape " + std::to_string(particles_.shape[i]) + " and material " +
                        std::to_string(particles_.material[i]) + " in the checkpoint, " +
                        std::to_string(setUpShape[i]) + " and " + std::to_string(setUpMaterial[i]) + " in the scenario");
  if (!(dt > 0) || !std::isfinite(dt) || !(skin_ > 0) || step_ < 0) return bad("time step, skin or step count");
  const std::size_t nPairs = pairs_.size(), nCaches = caches_.size();
  if (pairForce_.size() != nPairs || pairTorque_.size() != nPairs || pairDepth_.size() != nCaches ||
      pairFrame_.size() != nCaches)
    return bad("per-pair arrays of different lengths");
  if (pairRoll_.size() != (rolling_ ? nPairs : 0)) return bad("rolling springs (rolling friction set differently?)");
  for (std::size_t k = 1; k < nPairs; ++k)
    if (std::pair(pairs_[k - 1].i, pairs_[k - 1].j) >= std::pair(pairs_[k].i, pairs_[k].j))
      return bad("pair list not sorted");
  std::vector<char> cacheUsed(nCaches, 0);
  for (const PairState& p : pairs_) {
    if (p.i < 0 || p.j <= p.i || static_cast<std::size_t>(p.j) >= n || p.cache < -1 ||
        (p.cache >= 0 && static_cast<std::size_t>(p.cache) >= nCaches))
      return bad("pair index out of range");
    // A narrow-phase pair (not two spheres) has its own cache, a sphere pair none (rebuildNeighbours).
    const bool spheres = shapes_[static_cast<std::size_t>(particles_.shape[static_cast<std::size_t>(p.i)])].isSphere &&
                         shapes_[static_cast<std::size_t>(particles_.shape[static_cast<std::size_t>(p.j)])].isSphere;
    if (spheres != (p.cache < 0)) return bad("pair cache assignment");
    if (p.cache >= 0 && cacheUsed[static_cast<std::size_t>(p.cache)]++) return bad("cache shared by two pairs");
  }
  for (const ContactCache& c : caches_)
    if (!c.plausible()) return bad("warm-start cache out of range");
  auto csrOk = [n](const std::vector<int>& offsets, std::size_t entries) {
    if (offsets.size() != n + 1 || offsets[0] != 0 || static_cast<std::size_t>(offsets[n]) != entries) return false;
    for (std::size_t i = 0; i < n; ++i)
      if (offsets[i + 1] < offsets[i]) return false;
    return true;
  };
  if (!csrOk(pairOffsets_, pairRefs_.size())) return bad("pair offsets");
  for (int ref : pairRefs_)
    if (static_cast<std::size_t>(ref >= 0 ? ref : ~ref) >= nPairs) return bad("pair reference out of range");
  if (!csrOk(wallOffsets_, wallStates_.size())) return bad("wall-contact offsets");
  for (const WallContactState& st : wallStates_) {
    if (st.wall < 0 || static_cast<std::size_t>(st.wall) >= nw || st.pointCount < 0 || st.pointCount > kMaxWallPoints)
      return bad("wall contact out of range");
    const Wall& w = walls_[static_cast<std::size_t>(st.wall)];
    if (st.triangle < -1 || (st.triangle >= 0 && static_cast<std::size_t>(st.triangle) >= w.triangles.size()))
      return bad("wall triangle out of range");
  }
  for (std::size_t w = 0; w < walls_.size(); ++w) {
    walls_[w].origin = origins[w];
    walls_[w].velocity = velocities[w];
  }
  options_.timeStep = dt;
  return true;
}

}  // namespace proxima::dem
