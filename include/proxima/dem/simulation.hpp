// The DEM engine: explicit time stepping of rigid convex particles with contact laws, Verlet
// neighbour lists over linked cells, Montanari's conservative distance bound, walls and a free lid.
//
// One step (velocity Verlet / kick-drift-kick, Noble & Weinzierl §2):
//   v += (F/m + g) dt/2, L += τ dt/2          (half kick; L = angular momentum, world)
//   x += v dt; q advanced by the symplectic free-rotor splitting (integrator.hpp)
//   neighbour lists rebuilt if a particle moved more than skin/2 since the last build
//   contact forces at the new positions (narrow phase skipped while the bound stays > 0)
//   v += (F/m + g) dt/2, L += τ dt/2
// Determinism: each particle's force is the sum of its pairs' forces in pair order, whatever the
// thread count (computeForces: one thread adds them in the pair loop; sphere beds give each thread a
// particle range and gather only the particles shared by two ranges; other systems gather every
// particle from per-pair slots), so results are bit-identical for any OpenMP thread count.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "proxima/core/large_array.hpp"
#include "proxima/core/status.hpp"
#include "proxima/dem/material.hpp"
#include "proxima/dem/particles.hpp"
#include "proxima/dem/walls.hpp"
#include "proxima/narrowphase/penetration.hpp"

namespace proxima::dem {

/// Whole-system measures at the current step (computed on demand; serial, fixed order).
struct Stats {
  std::int64_t step = 0;
  Real time = 0;
  Real kineticEnergy = 0;     ///< translational + rotational, particles (+ free lids)
  Real potentialEnergy = 0;   ///< gravitational, -m g·x, particles (+ free lids)
  std::int64_t contacts = 0;  ///< particle-particle contacts with overlap > 0
  std::int64_t wallContacts = 0;
  Real meanOverlap = 0;  ///< over particle-particle and wall contacts
  Real maxOverlap = 0;
  /// Largest overlap relative to the volume-equivalent radius of the smaller particle in the
  /// contact (a wall contact: its particle's): whether a contact law still holds, in polydisperse
  /// beds too, where the largest overlap is often a large grain's.
  Real maxRelativeOverlap = 0;
  Real coordinationNumber = 0;  ///< 2 × particle-particle contacts / particles
  Real maxSpeed = 0;
};

/// Cumulative counters since the start of the run (carried through checkpoints).
struct Counters {
  std::int64_t narrowPhaseCalls = 0;    ///< GJK / GJK-TD calls for non-sphere pairs
  std::int64_t narrowPhaseSkipped = 0;  ///< pair-steps skipped by the conservative bound (Eq. 3.14)
  std::int64_t analyticPairTests = 0;   ///< sphere-sphere pair-steps (no narrow phase needed)
  std::int64_t neighbourRebuilds = 0;
  std::int64_t warnings = 0;  ///< narrow-phase results that were not clean (counted, not fatal)
};

/// One contact for output and tests. j < 0 means wall number (-1 - j).
struct ContactInfo {
  int i = 0, j = 0;
  Vec3 point = Vec3::Zero();
  Vec3 normal = Vec3::Zero();  ///< unit, from i (or the wall) towards j (or particle i for walls)
  Real depth = 0;
  Vec3 force = Vec3::Zero();  ///< on j (on particle i for walls)
};

/// Where the time goes (SimulationOptions::profile): wall time of step() and of the neighbour-list
/// rebuilds, and the narrow-phase time (GJK / GJK-TD / manifold calls) summed over threads.
/// Contact detection = neighbour search + narrow phase.
struct Timings {
  double stepSeconds = 0;
  double neighbourSeconds = 0;
  double narrowPhaseCpuSeconds = 0;
  std::int64_t steps = 0;
};

struct SimulationOptions {
  Vec3 gravity{0, 0, -9.81};
  Real timeStep = 1e-5;
  Real skin = 0;  ///< Verlet skin; 0 = 0.1 × mean bounding diameter at initialize()
  bool conservativeBound = true;
  int threads = 0;  ///< 0 = leave OpenMP's default
  /// Systems with fewer particles than this run on one thread: fork/join and idle spinning cost
  /// more than they save on small systems (much more on a loaded machine). Results do not depend
  /// on it.
  /// Compared with the work estimate: spheres count 1, other shapes (narrow phase ~30x a sphere
  /// pair) count 32, so 64 polyhedra already run in parallel.
  std::int64_t parallelThreshold = 2048;
  PenetrationOptions narrowPhase;
  /// Measure Timings (two clock reads per narrow-phase call, ~1-2 % of a polyhedron pair's cost).
  bool profile = false;
};

class Simulation {
 public:
  Simulation() = default;

  // ---- set-up (before initialize(); called after it they throw std::logic_error) ----
  void setMaterials(std::vector<Material> materials, ContactModel model);
  /// Per-pair overrides of restitution, friction and rolling friction.
  void overridePair(int materialA, int materialB, Real restitution, Real friction, Real rollingFriction);
  int addShape(ParticleShape s);
  /// Adds a particle with mass and inertia from its shape and material density. Returns its index.
  /// `q` is normalised (a zero quaternion is refused by initialize()).
  int addParticle(int shape, int material, const Vec3& x, const Quat& q = Quat::Identity(),
                  const Vec3& v = Vec3::Zero(), const Vec3& w = Vec3::Zero());
  int addWall(Wall w);
  /// Writable also while running (e.g. the time step or the gravity between steps); step() throws
  /// std::logic_error on a time step <= 0 or narrow-phase options that validateOptions() refuses.
  SimulationOptions& options() { return options_; }
  /// Nothing set up yet (no materials, shapes, particles or walls) and not initialized.
  [[nodiscard]] bool isFresh() const {
    return !initialized_ && materials_.empty() && shapes_.empty() && particles_.size() == 0 && walls_.empty() &&
           overrides_.empty();
  }
  [[nodiscard]] const SimulationOptions& options() const { return options_; }

  /// Stable time-step limit for the current particles and materials: the smaller of the Rayleigh
  /// time and 2/ω_max of the stiffest contact (Hertz: tangent stiffness at the maximum overlap of an
  /// impact at `impactSpeed`; linear: k_n). Explicit schemes are unstable above it.
  [[nodiscard]] Real stableTimeStep(Real impactSpeed) const;
  /// The same limit for the damped contact: 2/ω_max · (√(1 + ζ²) − ζ) with ζ the damping ratio the
  /// restitution asks for (explicit damping is unstable above it; at low restitution, ζ >> 1, it is
  /// far below the undamped limit), and at most the time in which a particle at `impactSpeed` moves
  /// by its own volume-equivalent radius (contact detection assumes small steps).
  [[nodiscard]] Real dampedTimeStep(Real impactSpeed) const;
  /// Both limits from one pass over the particle kinds (the builder needs both).
  struct TimeStepLimits {
    Real undamped, damped;
  };
  [[nodiscard]] TimeStepLimits timeStepLimits(Real impactSpeed) const;
  /// The contact table of the materials with the valid pair overrides applied (initialize() refuses
  /// invalid ones; the time-step estimate, which may run before it, skips them).
  [[nodiscard]] ContactTable pairTable() const;

  /// Validates the set-up, builds the contact table and neighbour lists and computes the forces at
  /// t = 0. Errors name what is wrong (particle id, shape, material).
  Result<bool> initialize();
  /// One time step. Throws std::logic_error before a successful initialize() or loadState().
  void step();
  void run(std::int64_t steps) {
    for (std::int64_t s = 0; s < steps; ++s) step();
  }

  // ---- state ----
  [[nodiscard]] Real time() const { return time_; }
  [[nodiscard]] std::int64_t stepCount() const { return step_; }
  [[nodiscard]] Particles& particles() { return particles_; }
  [[nodiscard]] const Particles& particles() const { return particles_; }
  [[nodiscard]] const std::vector<ParticleShape>& shapes() const { return shapes_; }
  [[nodiscard]] const std::vector<Material>& materials() const { return materials_; }
  [[nodiscard]] const std::vector<Wall>& walls() const { return walls_; }
  [[nodiscard]] std::vector<Wall>& walls() { return walls_; }
  [[nodiscard]] const ContactTable& contactTable() const { return table_; }
  [[nodiscard]] Stats stats() const;
  [[nodiscard]] const Counters& counters() const { return counters_; }
  /// Filled when options().profile is on (not part of checkpoints).
  [[nodiscard]] const Timings& timings() const { return timings_; }
  /// Threads the parallel loops use (1 when the system is below the parallel threshold).
  [[nodiscard]] int threadsUsed() const;
  /// Share of the step wall time spent in contact detection: (neighbour rebuilds + narrow-phase
  /// CPU time / threadsUsed()) / step time. 0 before any profiled step.
  [[nodiscard]] double contactDetectionShare() const;
  [[nodiscard]] std::vector<ContactInfo> contacts() const;
  /// Number of neighbour pairs in the current Verlet list.
  [[nodiscard]] std::size_t neighbourPairs() const { return pairs_.size(); }
  /// Total particle volume (for packing fractions).
  [[nodiscard]] Real particleVolume() const;
  /// Velocity of each free lid (along its normal), index = wall index; 0 for other walls.
  [[nodiscard]] Real lidSpeed(int wall) const;

  /// FNV-1a hash of the dynamic state (positions, orientations, velocities, contact history).
  [[nodiscard]] std::uint64_t stateHash() const;

  /// Binary checkpoint of the whole dynamic state (particles, contact history and warm-start caches,
  /// walls, neighbour-list reference, counters). Loading it into a Simulation set up from the same
  /// scenario continues bit-for-bit. A checksum trailer makes a damaged file fail to load.
  void saveState(std::ostream& out) const;
  /// Refused (this simulation unchanged) unless the checkpoint comes from the same set-up: the same
  /// particle count, shapes and materials per particle, walls, and consistent indices throughout.
  Result<bool> loadState(std::istream& in);

 private:
  void writePayload(std::ostream& out) const;  ///< saveState's data, before the checksum
  Result<bool> readPayload(std::istream& in, std::uint64_t bytes);  ///< loadState into *this, every check
  static std::uint64_t layoutStamp();  ///< checkpoint check: sizes of the records stored raw
  struct PairState {
    int i = 0, j = 0;
    Real bound = 0;             ///< certified lower bound on the distance (Eq. 3.14); <= 0: query
    Vec3 shear = Vec3::Zero();  ///< tangential spring displacement (world)
    int cache = -1;             ///< index into caches_ (non-sphere pairs)
    std::uint8_t touching = 0;
  };
  /// Per step, written by the pair's thread only, one array per quantity so that each loop streams
  /// only what it reads: pairForce_ (force on j; scatter, gather and output), pairTorque_ (the
  /// gather), pairDepth_ (stats) and pairFrame_ (point and normal for output), these two only for
  /// narrow-phase pairs, indexed by the pair's cache (a sphere pair's follow from the positions).
  struct PairTorques {
    Vec3 i = Vec3::Zero(), j = Vec3::Zero();
  };
  struct PairFrame {
    Vec3 point = Vec3::Zero(), normal = Vec3::Zero();
  };
  /// Constant per listed pair (derived at each rebuild, not checkpointed): the law, √m* and R*.
  struct PairConstants {
    const PairLaw* law = nullptr;
    Real sqrtMass = 0;
    Real radius = 0;
  };
  static constexpr int kMaxWallPoints = 8;
  struct WallContactState {  ///< particle-wall (plane) or particle-triangle history
    int wall = 0, triangle = -1;
    Vec3 shear = Vec3::Zero();
    Vec3 roll = Vec3::Zero();  ///< rolling spring torque (world; rolling resistance only)
    /// Polyhedral cores on planes: per-vertex contacts (the deepest kMaxWallPoints vertices), each
    /// with its own tangential spring, so that a face resting on a wall has twisting friction.
    int pointCount = 0;
    int vertex[kMaxWallPoints] = {};
    Vec3 vertexShear[kMaxWallPoints];
    Vec3 point = Vec3::Zero(), normal = Vec3::Zero(), force = Vec3::Zero();
    Real depth = 0;
    std::uint8_t touching = 0;
  };

  void rebuildNeighbours();
  /// Contact forces at the current positions; `kick` > 0 applies that half kick to each particle
  /// right after its forces are gathered (same loop).
  void computeForces(Real kick = 0);
  /// Force of narrow-phase pair k into its slot and onto its particles not on a range boundary
  /// (partitionPairs); returns kNarrow or kWarning. (pairBlock's sweep has updated
  /// the pair's bound and skipped the pair while it is positive, with the bound on.)
  int pairForces(std::size_t k, double& narrowSeconds);
  /// A touching pair's force on j into slot k, added to particles i (-f, t.i) and j (f, t.j) unless
  /// on a range boundary (then the torques go into their slot too, for the gather); used by the
  /// sphere kernel and the narrow-phase laws. From the values in registers: read back from the
  /// slots, which were stored as scalars and loaded as pairs, they waited on store forwarding (in
  /// perf, ~3 % of a 10k polyhedral bed's step).
  void storePairForce(std::size_t k, std::size_t i, std::size_t j, const Vec3& f, const PairTorques& t);
  static constexpr int kNarrow = 2, kWarning = 3;
  void wallForces(int i);
  void kickParticle(std::size_t i, Real h);
  void driftParticle(std::size_t i, Real h);
  void driftTwo(std::size_t i, std::size_t j, Real h);  ///< driftParticle of both (rotors interleaved)
  [[nodiscard]] bool freeAsymmetricRotor(std::size_t i) const;
  static Real rotationAngleBound(const Quat& before, const Quat& after);
  void recordDisplacement(std::size_t i, const Vec3& dx, Real angle);
  void kickLids(Real h);
  void driftWalls(Real h);
  [[nodiscard]] Transform poseOf(int i) const;
  void poseInto(std::size_t i, Transform& pose) const;
  void cacheSphereRadii();
  /// The square roots a contact's normal and tangential laws share, worked out once per contact:
  /// √m*; Hertz: a = √(R* δ) and √a; linear: the normal stiffness k_n.
  struct ContactScales {
    Real sqrtMass, a, sa, kn;
  };
  static ContactScales contactScales(const PairLaw& law, Real depth, Real sqrtMass, Real rEff);
  /// Normal force magnitude (>= 0) of the law at overlap `depth` and normal velocity vn (> 0 separating).
  static Real normalForce(const PairLaw& law, Real depth, Real vn, const ContactScales& s);
  /// Tangential force (spring with history + damping, Coulomb-limited by μ fn); updates shear.
  Vec3 tangentialForce(const PairLaw& law, const Vec3& n, const Vec3& vt, const ContactScales& s, Real fn,
                       Vec3& shear) const;
  void manifoldForces(std::size_t k, const ContactResult& r);
  /// A sphere pair's centre-line quantities, computed for a whole block before its pairs are
  /// done (pairBlock): d2 = |x_j - x_i|², inv = 1/√d2, depth = r_i + r_j - √d2, and the Hertz
  /// contact radius a = √(R* depth) with √a. (NaN when apart: not read then.)
  struct SphereGeometry {
    Real d2, inv, depth, a, sa;
  };
  /// Sphere-sphere pair k (analytic contact, the whole law inlined); returns whether it touches.
  /// Adds the force and torques to the particles not on a range boundary (partitionPairs).
  bool spherePair(std::size_t k, const SphereGeometry& g);
  static constexpr std::int64_t kPairBlock = 256;
  void pairBlock(std::int64_t k0, std::int64_t k1, std::int64_t& calls, std::int64_t& skipped, std::int64_t& warnings,
                 double& narrow);
  /// Owner ranges for the force loop (one per thread), weighted by the pairs' work, and boundary_.
  void partitionPairs();
  /// This thread's particles in a parallel region: its owner range when there is one per thread,
  /// else an equal share (the particle loops then touch the data the thread's pairs touch).
  [[nodiscard]] std::pair<std::int64_t, std::int64_t> particleSpan() const;
  /// Depth of touching pair k (stored for narrow-phase pairs, recomputed for sphere pairs).
  [[nodiscard]] Real touchingDepth(std::size_t k) const;
  /// A pair that stopped touching: history reset, slots zeroed (the gather reads every slot).
  void releasePair(std::size_t k);
  /// The pair's law, √m*, R* from the particles' materials, masses and shapes.
  void computePairConstants();
  /// Applies the material law to a contact; returns force on B (j) and updates shear.
  /// (sqrtMass: √m*, the pair's constant or √ of the caller's reduced mass.)
  Vec3 contactForce(const PairLaw& law, Real depth, const Vec3& n, const Vec3& relVel, Real sqrtMass, Real rEff,
                    Vec3& shear, Real& normalForce) const;
  /// Rolling resistance of a contact (law.rollingFriction > 0): the torque on the body that turns at
  /// `relSpin` relative to the other (its partner gets the opposite); updates the spring `roll`.
  /// kn: the normal stiffness at this overlap; inertia: the contact's rolling inertia (rollingInertia).
  Vec3 rollingTorque(const PairLaw& law, const Vec3& n, const Vec3& relSpin, Real kn, Real rEff, Real inertia,
                     Real fn, Vec3& roll) const;
  /// The pair's rolling inertia, 1 / (1/I_i + 1/I_j) of the particles' rollingInertia_ (Ai et al. Eq. 16).
  [[nodiscard]] Real pairRollingInertia(std::size_t i, std::size_t j) const;
  /// Normal stiffness dF_n/dδ of the law at overlap `depth` (Hertz: 2 E* √(R* δ); linear: k_n).
  static Real normalStiffness(const PairLaw& law, Real depth, Real rEff);

  SimulationOptions options_;
  std::vector<Material> materials_;
  ContactModel model_ = ContactModel::HertzMindlin;
  struct Override {
    int a, b;
    Real e, mu, muR;
  };
  std::vector<Override> overrides_;
  ContactTable table_;
  std::vector<ParticleShape> shapes_;
  Particles particles_;
  std::vector<Wall> walls_;
  std::vector<Real> lidVelocity_;  ///< per wall (free lids only)
  std::vector<Real> lidForce_;     ///< per wall, last computed reaction along the normal

  // neighbour lists (the per-pair arrays in LargeVector: huge pages when large, see large_array.hpp)
  Real skin_ = 0;
  std::vector<Vec3> referencePosition_;  ///< positions at the last rebuild
  std::vector<Vec3> wallReference_;      ///< wall origins at the last rebuild
  LargeVector<PairState> pairs_;         ///< sorted by (i, j)
  LargeVector<ContactCache> caches_;
  LargeVector<Vec3> pairForce_;
  LargeVector<PairTorques> pairTorque_;
  LargeVector<Real> pairDepth_;
  LargeVector<PairFrame> pairFrame_;
  LargeVector<PairConstants> pairConst_;
  std::int64_t spherePairs_ = 0;             ///< listed sphere-sphere pairs (analytic tests per step)
  std::vector<int> pairOffsets_;             ///< CSR: pairs of particle p are pairRefs_[pairOffsets_[p] ..)
  LargeVector<int> pairRefs_;                ///< (ref >= 0: pair ref as i; ~ref: as j)
  std::vector<Real> stepDisplacement_;       ///< max displacement of a body point in the last step
  std::vector<Real> sphereRadius_;           ///< per particle (0 unless a sphere), for the sphere-pair path
  bool needDisplacement_ = true;             ///< some particle is not a sphere (stepDisplacement_ used)
  LargeVector<Transform> pose_;              ///< per particle at this step's forces (if needDisplacement_)
  std::vector<char> poseFinite_;             ///< pose_[i] is finite (checked once per step, not per pair)
  PenetrationOptions pairNarrow_;            ///< options_.narrowPhase with trustedInput (set each step)
  // walls: CSR per particle of wall contact states (planes always present, mesh triangles near)
  std::vector<int> wallOffsets_;
  std::vector<WallContactState> wallStates_;
  // rolling resistance (only when some law has rolling_friction > 0; else both empty)
  bool rolling_ = false;
  LargeVector<Vec3> pairRoll_;          ///< per pair: rolling spring torque (world), like shear
  std::vector<Real> rollingInertia_;    ///< per particle: mean principal moment + m R² about the contact (R: contact radius); 0 if fixed

  Real time_ = 0;
  std::int64_t step_ = 0;
  Counters counters_;
  Timings timings_;
  bool initialized_ = false;  ///< initialize() or loadState() succeeded: set-up closed, step() allowed
  void requireSetUp(const char* what) const;
  void requireInitialized(const char* what) const;
  /// What is wrong with the options step() uses (time step, narrow phase), or nothing.
  [[nodiscard]] std::optional<std::string> steppingOptionsProblem() const;
  bool parallel_ = false;  ///< OpenMP loops on (workEstimate() >= parallelThreshold)
  /// Owner ranges (partitionPairs): pairs [rangePair_[t], rangePair_[t+1]) have their first
  /// particle in [rangeParticle_[t], rangeParticle_[t+1]); boundary_[p] = 1 if p is the second
  /// particle of a pair of an earlier range (its force is gathered from the pair slots).
  std::vector<std::int64_t> rangePair_;
  std::vector<int> rangeParticle_;
  std::vector<std::uint8_t> boundary_;
  /// Particles weighted by their per-step cost: 1 per sphere, 32 per other shape.
  [[nodiscard]] std::int64_t workEstimate() const;
};

}  // namespace proxima::dem
