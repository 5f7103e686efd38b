// `proxima run SCENARIO.yaml`: builds the simulation from a scenario file, steps it with a progress
// line, writes VTK frames, the CSV time series, checkpoints and a JSON summary as it goes, and
// resumes from the last checkpoint bit-for-bit with --resume.
#include "run.hpp"

#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <map>
#include <sstream>
#include <nlohmann/json.hpp>

#include "proxima/dem/builder.hpp"
#include "proxima/dem/packing.hpp"
#include "proxima/io/output.hpp"
#include "proxima/io/scenario_yaml.hpp"

namespace proxima::app {

namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

// Built-in default (no scenario given): the packing study of Montanari's thesis ch. 5 at the scaled
// setting of examples/packing/ (grains 10x the thesis's sand, E / 10): 2000 faceted rock grains
// (medium mesh) deposited in a box, sedimented under a free steel lid until they settle.
constexpr const char* kDefaultScenario = R"(# proxima built-in default: 2000 faceted grains packed under a lid (Montanari thesis ch. 5).
materials:
  - {name: sand, density: 2650, youngs_modulus: 7.6e6, poisson_ratio: 0.3, restitution: 0.5, friction: 0.5}
  - {name: steel, density: 7850, youngs_modulus: 2.1e8, poisson_ratio: 0.33, restitution: 0.5, friction: 0.3}
templates:
  - name: grain
    shape: {type: rock, resolution: medium, elongation: 0.8, flatness: 0.75, roughness: 0.15, seed: 7, radius: 1.0e-2}
    material: sand
    size: {distribution: table, sizes: [0.355, 0.25, 0.175], fractions: [0.07, 0.76, 0.17]}
particles:
  - {template: grain, method: deposition, count: 2000, region: {min: [0, 0, 0], max: [0.071, 0.071, 0.3]}, seed: 1}
walls:
  - {type: box, name: box, min: [0, 0, 0], max: [0.071, 0.071, 0.4], open_top: true, material: steel}
  - {type: lid, name: lid, height: above_particles, gap: 0.002, mass: 0.5936, material: steel}
time: {duration: 0.8}
stop: {kinetic_energy: 1.0e-9, min_time: 0.3}
output: {directory: proxima-out/default, frame_interval: 0.05, csv_interval: 0.005, checkpoint_interval: 0.1}
)";

/// One line per template: shape, vertex count, volume-equivalent and bounding radii (min–max over the
/// sizes present), particle count.
void printTemplates(const dem::Simulation& sim) {
  struct Row {
    std::string type;
    std::size_t vertices = 0;
    Real eqMin = 1e300, eqMax = 0, bMin = 1e300, bMax = 0;
    std::int64_t particles = 0;
  };
  std::vector<std::string> order;
  std::map<std::string, Row> rows;
  std::vector<std::int64_t> perShape(sim.shapes().size(), 0);
  for (int k : sim.particles().shape) ++perShape[static_cast<std::size_t>(k)];
  for (std::size_t k = 0; k < sim.shapes().size(); ++k) {
    const auto& s = sim.shapes()[k];
    if (!rows.count(s.name)) order.push_back(s.name);
    Row& r = rows[s.name];
    r.type = std::string(toString(s.shape.type()));
    r.vertices = s.bodyVertices.size();
    r.eqMin = std::min(r.eqMin, s.equivalentRadius), r.eqMax = std::max(r.eqMax, s.equivalentRadius);
    r.bMin = std::min(r.bMin, s.boundingRadius), r.bMax = std::max(r.bMax, s.boundingRadius);
    r.particles += perShape[k];
  }
  auto range = [](Real a, Real b) {
    char buf[64];
    if (b <= a * (1 + 1e-12)) std::snprintf(buf, sizeof buf, "%.4g", a);
    else std::snprintf(buf, sizeof buf, "%.4g-%.4g", a, b);
    return std::string(buf);
  };
  for (const auto& name : order) {
    const Row& r = rows[name];
    std::fprintf(stderr, "proxima run: template %s: %lld particles, %s%s; volume-equivalent radius %s m, bounding radius %s m\n",
                 name.c_str(), static_cast<long long>(r.particles), r.type.c_str(),
                 r.vertices >= 4 ? (", " + std::to_string(r.vertices) + " vertices").c_str() : "",
                 range(r.eqMin, r.eqMax).c_str(), range(r.bMin, r.bMax).c_str());
  }
}

json packingJson(const dem::PackingMetrics& m) {
  return {{"lid_height", m.height},        {"height_from_lid", m.lid},
          {"box_volume", m.boxVolume},     {"particle_volume", m.particleVolume},
          {"void_ratio", m.voidRatio},     {"packing_fraction", m.packingFraction},
          {"core_packing_fraction", std::isfinite(m.coreFraction) ? json(m.coreFraction) : json(nullptr)},
          {"core_margin", m.coreMargin},
          {"particle_top", m.particleTop},
          {"lid_above_particles", m.lidAboveParticles()},
          {"coordination_number", m.coordinationNumber},
          {"coordination_histogram", m.coordinationHistogram}};
}

std::int64_t stepsFor(Real interval, Real dt, std::int64_t fallback) {
  if (!(interval > 0)) return std::max<std::int64_t>(1, fallback);
  return std::max<std::int64_t>(1, std::llround(interval / dt));
}

struct Cadence {
  std::int64_t total = 0, frame = 0, csv = 0, checkpoint = 0;
};

// A file's content as FNV-1a 64 (16 hex digits: a fingerprint of content, not a cryptographic hash),
// or "unreadable". (Mesh files in the scenario record, and checkpoint.bin.)
std::string fileDigest(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return "unreadable";
  std::uint64_t h = 14695981039346656037ULL;
  char buf[1 << 16];
  while (in.read(buf, sizeof buf) || in.gcount() > 0) {
    for (std::streamsize k = 0; k < in.gcount(); ++k) h = (h ^ static_cast<unsigned char>(buf[k])) * 1099511628211ULL;
    if (!in) break;
  }
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
  return hex;
}

// Every mesh file the scenario names ("file" of a shape or wall), with its content's digest next to
// it: a mesh edited between a run and its resume changes the particles or walls the checkpoint
// belongs to. (Relative paths are the scenario file's, as the parser reads them.)
void addFileDigests(json& j, const fs::path& baseDir) {
  if (j.is_array()) {
    for (json& e : j) addFileDigests(e, baseDir);
  } else if (j.is_object()) {
    if (j.contains("file") && j["file"].is_string()) {
      fs::path f = j["file"].get<std::string>();
      if (f.is_relative() && !baseDir.empty()) f = baseDir / f;
      j["file_fnv1a"] = fileDigest(f);
    }
    for (auto& [key, value] : j.items())
      if (key != "file") addFileDigests(value, baseDir);
  }
}

// The parts of a scenario that a resumed run must share with the run that wrote the checkpoint:
// everything but the run length, the stop rule, the thread count and the output settings (which a
// resume may change: results do not depend on them), plus the digests of its mesh files.
json resumeFingerprint(const dem::Scenario& sc, const fs::path& baseDir) {
  json j = json::parse(sc.canonical.empty() ? "{}" : sc.canonical, nullptr, false);
  if (!j.is_object()) return json::object();
  for (const char* k : {"stop", "threads", "output"}) j.erase(k);
  if (j.contains("time") && j["time"].is_object()) j["time"].erase("duration");
  addFileDigests(j, baseDir);
  return j;
}

// A JSON pointer (/materials/0/youngs_modulus) as the scenario's field path (materials[0].youngs_modulus).
std::string fieldPath(const std::string& pointer) {
  std::string out, token;
  std::istringstream in(pointer);
  while (std::getline(in, token, '/')) {
    if (token.empty()) continue;
    const bool index = token.find_first_not_of("0123456789") == std::string::npos;
    out += index ? "[" + token + "]" : (out.empty() ? "" : ".") + token;
  }
  return out.empty() ? pointer : out;
}

// The first particle of a blown-up run, or -1: a state that is not finite, or a speed that carries
// the particle further than its own bounding radius in one step (no stable run does that: the
// contact detection and the integrator both assume small steps; caught before the numbers run off
// to 1e200).
std::int64_t firstBlownUp(const dem::Simulation& sim) {
  const auto& p = sim.particles();
  const Real dt = sim.options().timeStep;
  for (std::size_t i = 0; i < p.size(); ++i) {
    if (!p.position[i].allFinite() || !p.velocity[i].allFinite() || !p.angularVelocity[i].allFinite())
      return static_cast<std::int64_t>(i);
    const Real r = sim.shapes()[static_cast<std::size_t>(p.shape[i])].boundingRadius;
    if (p.velocity[i].norm() * dt > r) return static_cast<std::int64_t>(i);
  }
  return -1;
}

// Removes what an earlier run wrote into the output folder (frames, series, checkpoint), so that a
// fresh run does not leave, e.g., the walls of a different scenario in walls.pvd. Other files stay.
void clearPreviousOutput(const fs::path& dir) {
  std::error_code ec;
  for (const char* f : {"particles.pvd", "centres.pvd", "walls.pvd", "contacts.pvd", "checkpoint.bin", "checkpoint.new.bin",
                        "checkpoint.json", "summary.json"})
    fs::remove(dir / f, ec);
  if (!fs::is_directory(dir / "frames", ec)) return;
  for (const auto& e : fs::directory_iterator(dir / "frames", ec)) {
    const std::string name = e.path().filename().string();
    const bool ours = e.path().extension() == ".vtu" &&
                      (name.rfind("particles_", 0) == 0 || name.rfind("centres_", 0) == 0 || name.rfind("walls_", 0) == 0 ||
                       name.rfind("contacts_", 0) == 0);
    if (ours) fs::remove(e.path(), ec);
  }
}

// The state goes to checkpoint.new.bin, then checkpoint.json with the scenario record, the output
// cadence and the digest of the new state file's bytes, then checkpoint.new.bin becomes
// checkpoint.bin: the record is checked against the scenario on a resume and the digest against the
// state file, so a checkpoint.json from another run or another checkpoint cannot vouch for this one.
// Each file is streamed to a temporary and renamed (the state is not held in memory; the digest is
// read back from the file written). A run killed between two of these steps leaves either the old
// pair (checkpoint.bin and the old record) or the new record with the new state still under its
// first name: a resume finishes the rename (committedState). (Writing checkpoint.bin first, as
// before 2026-11-27, left a kill between the two files with a state its record did not describe, and
// nothing to resume from.)
constexpr const char* kPendingState = "checkpoint.new.bin";

Result<bool> writeCheckpoint(const fs::path& dir, const dem::Simulation& sim, double wallSeconds,
                             const json& fingerprint, const Cadence& cad) {
  const fs::path pending = dir / kPendingState;
  if (auto w = io::writeFileAtomically(pending, [&](std::ostream& out) { sim.saveState(out); }); !w) return w;
  json meta = {{"step", sim.stepCount()},
               {"time", sim.time()},
               {"wall_seconds", wallSeconds},
               {"checkpoint_fnv1a", fileDigest(pending)},
               {"cadence_steps", {{"frame", cad.frame}, {"csv", cad.csv}}},
               {"scenario", fingerprint}};
  if (auto w = io::writeFileAtomically(dir / "checkpoint.json", meta.dump(2, ' ', false, json::error_handler_t::replace) + "\n");
      !w)
    return w;
  std::error_code ec;
  fs::rename(pending, dir / "checkpoint.bin", ec);
  if (ec)
    return Result<bool>::failure("cannot rename " + pending.string() + " to checkpoint.bin: " + ec.message());
  return true;
}

// The state file that checkpoint.json's digest names: checkpoint.bin, or a checkpoint.new.bin that a
// killed run wrote with its record but did not rename yet (renamed now). Empty when neither matches.
std::string committedState(const fs::path& dir, const std::string& recorded, std::string& actual) {
  actual = fileDigest(dir / "checkpoint.bin");
  if (!recorded.empty() && actual == recorded) return "checkpoint.bin";
  std::error_code ec;
  if (!recorded.empty() && fs::is_regular_file(dir / kPendingState, ec) && fileDigest(dir / kPendingState) == recorded) {
    fs::rename(dir / kPendingState, dir / "checkpoint.bin", ec);
    if (!ec) return "checkpoint.bin";
    return kPendingState;  // (read where it is)
  }
  return {};
}

// SIGINT / SIGTERM (Ctrl-C, a batch system's time limit): the run finishes its step, writes a
// checkpoint and the summary, and exits with 128 + the signal, resumable with --resume. A second
// signal ends the process at once (the handler restores the default).
volatile std::sig_atomic_t gStopSignal = 0;
extern "C" void onStopSignal(int sig) {
  gStopSignal = sig;
  std::signal(sig, SIG_DFL);
}

}  // namespace

int runScenario(const RunOptions& o) {
  // ---- scenario ----
  Result<dem::Scenario> parsed = o.scenario.empty()
                                     ? io::parseScenario(kDefaultScenario, "<built-in default>", "")
                                     : io::loadScenario(o.scenario);
  if (!parsed.ok()) {
    std::cerr << "proxima run: " << parsed.message() << '\n';
    return 2;
  }
  dem::Scenario sc = std::move(parsed).value();
  if (o.scenario.empty())
    std::cerr << "proxima run: no scenario given; running the built-in default: 2000 faceted grains packed in a box "
                 "under a lid (Montanari ch. 5; a few minutes on 2 cores). See examples/packing/ and examples/scenarios/ "
                 "for more.\n";
  if (!o.output.empty()) sc.output.directory = o.output;
  if (o.duration > 0) sc.duration = o.duration;
  if (o.threads > 0) sc.threads = o.threads;
  if (o.noVtk) sc.output.vtk = false;

  dem::Simulation sim;
  // Large insertions take a while: a progress line after the first second (none with -q).
  const auto buildStart = std::chrono::steady_clock::now();
  bool insertionShown = false;
  auto insertion = [&](std::size_t block, std::int64_t placed, std::int64_t count) {
    if (o.quiet || std::chrono::duration<double>(std::chrono::steady_clock::now() - buildStart).count() < 1) return;
    std::cerr << "\rinserting particles[" << block << "]: " << placed << " of " << count << std::flush;
    insertionShown = true;
  };
  auto built = dem::buildSimulation(sc, sim, insertion);
  if (insertionShown) std::cerr << '\n';
  if (!built.ok()) {
    std::cerr << "proxima run: " << built.message() << '\n';
    return 2;
  }
  const fs::path dir = sc.output.directory;
  std::error_code ec;
  if (o.resume && !fs::is_regular_file(dir / "checkpoint.bin", ec) && !fs::is_regular_file(dir / kPendingState, ec)) {
    std::cerr << "proxima run: --resume: no checkpoint in '" << dir.string() << "' (checkpoint.bin)\n";
    return 2;
  }
  fs::create_directories(dir, ec);
  if (ec) {
    std::cerr << "proxima run: cannot create output directory '" << dir.string() << "': " << ec.message() << '\n';
    return 2;
  }

  sim.options().profile = true;  // the summary reports the share of time in contact detection
  const Real dt = sim.options().timeStep;
  // A run length that cannot be meant: the time step longer than the run, or more steps than any
  // run finishes (a near-degenerate shape or an extreme material sets a tiny stable step).
  if (!(dt > 0) || !std::isfinite(dt) || dt > sc.duration) {
    std::cerr << "proxima run: " << sc.sourceFile << ": time: the time step (" << dt
              << " s) must be positive and no longer than time.duration (" << sc.duration << " s)\n";
    return 2;
  }
  if (const double steps = sc.duration / dt; !(steps <= 1e10)) {
    std::cerr << "proxima run: " << sc.sourceFile << ": time: duration " << sc.duration << " s at a time step of " << dt
              << " s is " << steps
              << " steps (more than 1e10, which no run finishes); check time.duration, time.step, the materials "
                 "(the stable step scales with the smallest particle and the stiffest material; a rolling_friction "
                 "above ~0.8 shortens it in proportion, through the rolling spring) and near-degenerate shapes "
                 "(needles, flat hulls)\n";
    return 2;
  }
  const json fingerprint =
      resumeFingerprint(sc, o.scenario.empty() ? fs::path() : fs::path(o.scenario).parent_path());
  Cadence cad;
  cad.total = std::max<std::int64_t>(1, std::llround(sc.duration / dt));
  cad.frame = stepsFor(sc.output.frameInterval, dt, cad.total / 20);
  cad.csv = stepsFor(sc.output.csvInterval, dt, cad.total / 200);
  cad.checkpoint = sc.output.checkpointInterval > 0 ? stepsFor(sc.output.checkpointInterval, dt, cad.total) : cad.total;

  // ---- resume ----
  double wallBefore = 0;
  std::optional<std::int64_t> resumeStep;
  if (o.resume) {
    // The scenario record first (it names the field that differs), then the checkpoint itself.
    json meta;
    try {
      std::ifstream metaIn(dir / "checkpoint.json");
      if (metaIn) meta = json::parse(metaIn);
    } catch (const std::exception&) {
    }
    if (meta.is_object() && meta.contains("wall_seconds") && meta["wall_seconds"].is_number())
      wallBefore = meta["wall_seconds"].get<double>();
    // Frame and CSV intervals left to their defaults follow time.duration (20 frames, 200 rows): a
    // resume that extends the run keeps the cadence the series began with, so that the series is
    // the uninterrupted run's (an interval the scenario sets is the same on both sides).
    if (meta.is_object() && meta.contains("cadence_steps") && meta["cadence_steps"].is_object()) {
      const json& recorded = meta["cadence_steps"];
      auto keep = [&](const char* key, Real interval, std::int64_t& steps) {
        if (interval > 0 || !recorded.contains(key) || !recorded[key].is_number_integer()) return;
        if (const auto v = recorded[key].get<std::int64_t>(); v >= 1) steps = v;
      };
      keep("frame", sc.output.frameInterval, cad.frame);
      keep("csv", sc.output.csvInterval, cad.csv);
    }
    if (meta.is_object() && meta.contains("scenario")) {
      // Same scenario (up to duration, stop rule, threads, output) or no resume: a different one
      // would continue a state it did not produce.
      const json diff = json::diff(meta["scenario"], fingerprint);
      if (!diff.empty()) {
        std::string paths;
        for (std::size_t k = 0; k < diff.size() && k < 6; ++k) {
          std::string path = fieldPath(diff[k].value("path", std::string("?")));
          // (a mesh's digest: its file's content changed, or the file is another)
          if (const auto at = path.rfind(".file_fnv1a"); at != std::string::npos && at + 11 == path.size())
            path = path.substr(0, at) + ".file (the mesh file's content)";
          paths += (k ? ", " : "") + path;
        }
        if (diff.size() > 6) paths += ", ...";
        std::cerr << "proxima run: --resume: " << sc.sourceFile << " differs from the scenario of the checkpoint in '"
                  << dir.string() << "' at " << paths
                  << " (only time.duration, stop, threads and output may change on a resume); run without --resume "
                     "to start afresh\n";
        return 2;
      }
    } else {
      // The record is what ties the checkpoint to its scenario (materials, shapes, meshes, walls):
      // without it a different scenario would continue a state it did not produce.
      std::cerr << "proxima run: --resume: " << (dir / "checkpoint.json").string()
                << " is missing or has no scenario record, so the scenario cannot be checked against the "
                   "checkpoint; restore it (it is written next to checkpoint.bin), or run without --resume to start "
                   "afresh\n";
      return 2;
    }
    // The record vouches only for the state file written with it.
    const auto at = meta.find("checkpoint_fnv1a");
    const std::string recorded = at != meta.end() && at->is_string() ? at->get<std::string>() : std::string();
    std::string actual;
    const std::string stateFile = committedState(dir, recorded, actual);
    if (stateFile.empty()) {
      std::cerr << "proxima run: --resume: " << (dir / "checkpoint.json").string()
                << (recorded.empty() ? " has no digest of checkpoint.bin (checkpoint_fnv1a; builds before 2026-11-27 wrote none)"
                                     : " was written with another checkpoint.bin (digest " + recorded + ", the file's " +
                                           actual + ")")
                << ", so the scenario record cannot vouch for the state; restore the two files written together, or "
                   "run without --resume to start afresh\n";
      return 2;
    }
    std::ifstream in(dir / stateFile, std::ios::binary);
    if (!in) {
      std::cerr << "proxima run: --resume: cannot read " << (dir / stateFile).string() << '\n';
      return 2;
    }
    if (auto loaded = sim.loadState(in); !loaded.ok()) {
      std::cerr << "proxima run: --resume: " << (dir / stateFile).string() << ": " << loaded.message() << '\n';
      return 2;
    }
    resumeStep = sim.stepCount();
    std::cerr << "proxima run: resuming at step " << sim.stepCount() << " (t = " << sim.time() << " s)\n";
  }

  if (!resumeStep) clearPreviousOutput(dir);
  // The closing CSV row and frame of an earlier session that ended at the checkpoint exist only
  // because it ended there: when the run goes on, they are dropped unless they fall on the cadence,
  // so that the series equals an uninterrupted run's.
  const bool continuing = resumeStep && *resumeStep < cad.total;
  const std::optional<std::int64_t> csvKeep =
      resumeStep ? std::optional<std::int64_t>(continuing && *resumeStep % cad.csv != 0 ? *resumeStep - 1 : *resumeStep)
                 : std::nullopt;
  const double frameKeep = continuing && *resumeStep % cad.frame != 0 ? sim.time() - 0.5 * dt : sim.time();
  // (constructed only when frames are written: it creates the frames/ folder)
  std::optional<io::VtkSeriesWriter> vtk;
  if (sc.output.vtk) vtk.emplace(dir);
  if (vtk && resumeStep) {
    if (auto r = vtk->resume(frameKeep); !r.ok()) {
      std::cerr << "proxima run: " << r.message() << '\n';
      return 2;
    }
  }
  io::CsvTimeSeries csv(dir, csvKeep);
  // (the last row on the cadence at or before the checkpoint must be in the file)
  if (csvKeep) csv.requireRowsThrough(*csvKeep / cad.csv * cad.csv);
  csv.addColumn("wall_seconds");
  csv.addColumn("particle_steps_per_second");
  // Packing study columns (a box container with a lid or a closed top; Montanari Eq. 5.1).
  const bool packing = sc.container && dem::measurePacking(sim, *sc.container).has_value();
  if (packing)
    for (const char* c : {"lid_height", "box_volume", "void_ratio", "packing_fraction", "core_packing_fraction"})
      csv.addColumn(c);
  // A resumed series is checked (and cut back to the checkpoint) before any step is taken.
  if (resumeStep)
    if (auto r = csv.start(); !r.ok()) {
      std::cerr << "proxima run: --resume: " << r.message() << '\n';
      return 2;
    }

  const auto n = static_cast<double>(sim.particles().size());
  const auto t0 = Clock::now();
  auto wall = [&] { return wallBefore + std::chrono::duration<double>(Clock::now() - t0).count(); };
  double lastRateWall = wall();
  std::int64_t lastRateStep = sim.stepCount();
  double rate = 0;
  // Overlaps beyond a quarter of the smaller particle's radius leave the range of any contact law (a
  // lid typed in grams as kilograms crushes the bed): said once, the run goes on. (Relative to the
  // particles in contact: in a polydisperse bed the largest overlap is often a large grain's, well
  // within its own range, and the smallest radius would raise a false alarm.)
  bool overlapWarned = false;
  std::string failure;  // set when the run is stopped for a blow-up or a signal (written into summary.json)
  dem::Stats rowStats;  // the last CSV row's statistics (one pass over particles and pairs per row)
  auto record = [&]() -> bool {
    rowStats = sim.stats();
    if (!overlapWarned && rowStats.maxRelativeOverlap > 0.25) {
      overlapWarned = true;
      std::fprintf(stderr,
                   "\nproxima run: warning: at t = %.4g s a contact overlaps by %.4g times the volume-equivalent "
                   "radius of the smaller particle in it (the largest overlap is %.3g m): the contacts are too soft "
                   "for the load (a heavy lid or wall, a low youngs_modulus, a high impact speed); no contact law "
                   "holds at such overlaps\n",
                   sim.time(), rowStats.maxRelativeOverlap, rowStats.maxOverlap);
    }
    if (const std::int64_t bad = firstBlownUp(sim); bad >= 0) {
      const auto i = static_cast<std::size_t>(bad);
      std::ostringstream m;
      m << "the simulation blew up by step " << sim.stepCount() << " (t = " << sim.time() << " s): particle " << bad
        << " has position (" << sim.particles().position[i].transpose() << ") and velocity ("
        << sim.particles().velocity[i].transpose() << "), more than its radius per step. The time step (" << dt
        << " s) is too large for the stiffest contact, or a wall or lid is too light or too fast";
      std::cerr << "\nproxima run: " << m.str() << "; the output up to the previous row is kept\n";
      failure = m.str();
      return false;
    }
    // Beyond the warning: an overlap larger than the smaller particle's radius, or a lid pressed
    // through the bed to the floor, is no longer a contact at all (bodies pass through each other)
    // and every figure after it is meaningless: the run stops as failed.
    auto stopAsFailed = [&](const std::string& what) {
      std::cerr << "\nproxima run: " << what << "; the output up to the previous row is kept\n";
      failure = what;
      return false;
    };
    if (rowStats.maxRelativeOverlap > 1) {
      std::ostringstream m;
      m << "at step " << sim.stepCount() << " (t = " << sim.time() << " s) a contact overlaps by "
        << rowStats.maxRelativeOverlap
        << " times the volume-equivalent radius of the smaller particle in it: the bodies have passed into each "
           "other (the contacts are far too soft for the load: a heavy lid or wall, a low youngs_modulus, a high "
           "impact speed)";
      return stopAsFailed(m.str());
    }
    // (measured once per row: the failure check and the CSV's packing columns)
    const auto pack = packing ? dem::measurePacking(sim, *sc.container) : std::nullopt;
    if (pack && !(pack->boxVolume > 0)) {
      std::ostringstream t;
      t << "at step " << sim.stepCount() << " (t = " << sim.time() << " s) the lid is at height " << pack->height
        << " m, at or below the floor: it has passed through the bed (too heavy for these contacts)";
      return stopAsFailed(t.str());
    }
    const double w = wall();
    if (w > lastRateWall) rate = n * static_cast<double>(sim.stepCount() - lastRateStep) / (w - lastRateWall);
    lastRateWall = w;
    lastRateStep = sim.stepCount();
    std::vector<double> extras = {w, rate};
    if (pack)
      extras.insert(extras.end(),
                    {pack->height, pack->boxVolume, pack->voidRatio, pack->packingFraction, pack->coreFraction});
    if (auto r = csv.row(rowStats, sim.counters(), extras); !r.ok()) {
      std::cerr << "proxima run: " << r.message() << '\n';
      return false;
    }
    return true;
  };
  auto frame = [&]() -> bool {
    if (!vtk) return true;
    if (auto r = vtk->writeFrame(sim); !r.ok()) {
      std::cerr << "proxima run: " << r.message() << '\n';
      return false;
    }
    return true;
  };

  std::cerr << "proxima run: " << sim.particles().size() << " particles, " << sim.walls().size() << " walls, dt = " << dt
            << " s, " << cad.total << " steps, output in " << dir.string() << '\n';
  printTemplates(sim);
  if (!resumeStep) {
    if (!record() || !frame()) return 1;
  }

  auto lastProgress = Clock::now();
  const std::int64_t startStep = sim.stepCount();
  if (resumeStep && *resumeStep >= cad.total)
    std::cerr << "proxima run: --resume: the checkpoint (step " << *resumeStep << ", t = " << sim.time()
              << " s) is already at or past time.duration (" << sc.duration << " s): nothing to run\n";
  // A blown-up run still gets a summary.json (with "error"), so that `proxima report` shows it as
  // failed rather than as running forever.
  auto failedRun = [&]() {
    if (!failure.empty()) {
      json extra = {{"scenario", o.scenario.empty() ? "<built-in default>" : o.scenario},
                    {"error", failure},
                    {"stopped_early", true},
                    {"resumed", resumeStep.has_value()}};
      (void)io::writeSummaryJson(dir / "summary.json", sim, extra);
    }
    return 1;
  };
  bool stoppedEarly = false;
  gStopSignal = 0;
  std::signal(SIGINT, onStopSignal);
  std::signal(SIGTERM, onStopSignal);
  while (sim.stepCount() < cad.total) {
    if (const int sig = gStopSignal) {
      std::signal(SIGINT, SIG_DFL), std::signal(SIGTERM, SIG_DFL);
      const char* name = sig == SIGINT ? "SIGINT" : "SIGTERM";
      std::cerr << "\nproxima run: " << name << " at step " << sim.stepCount() << " (t = " << sim.time()
                << " s): writing a checkpoint; continue with --resume\n";
      if (auto r = writeCheckpoint(dir, sim, wall(), fingerprint, cad); !r.ok()) {
        std::cerr << "proxima run: " << r.message() << '\n';
        return 1;
      }
      failure = std::string("interrupted by ") + name + "; resumable with --resume";
      (void)failedRun();  // (the summary with the reason)
      return 128 + sig;
    }
    sim.step();
    const std::int64_t s = sim.stepCount();
    const bool last = s == cad.total;
    if (s % cad.csv == 0 || last)
      if (!record()) return failedRun();
    if (s % cad.frame == 0 || last)
      if (!frame()) return 1;
    if (s % cad.checkpoint == 0 || last)
      if (auto r = writeCheckpoint(dir, sim, wall(), fingerprint, cad); !r.ok()) {
        std::cerr << "proxima run: " << r.message() << '\n';
        return 1;
      }
    if (sc.stopKineticEnergy > 0 && sim.time() >= sc.stopMinTime && s % cad.csv == 0) {
      // (record() ran at this step: rowStats are this step's)
      if (rowStats.kineticEnergy / std::max(1.0, n) < sc.stopKineticEnergy) {
        std::cerr << "\nproxima run: kinetic energy per particle " << rowStats.kineticEnergy / n << " J below "
                  << sc.stopKineticEnergy << " J at t = " << sim.time() << " s; stopping\n";
        // (this step's CSV row was just written: the stop is tested on CSV steps only)
        if (!(s % cad.frame == 0 || last) && !frame()) return 1;
        if (!(s % cad.checkpoint == 0 || last))
          if (auto r = writeCheckpoint(dir, sim, wall(), fingerprint, cad); !r.ok()) return 1;
        stoppedEarly = true;
        break;
      }
    }
    if (!o.quiet && std::chrono::duration<double>(Clock::now() - lastProgress).count() > o.progressSeconds) {
      lastProgress = Clock::now();
      const dem::Stats st = sim.stats();
      const double elapsed = std::chrono::duration<double>(Clock::now() - t0).count();
      const double perStep = elapsed / static_cast<double>(std::max<std::int64_t>(1, s - startStep));
      char voids[48] = "";
      if (packing) std::snprintf(voids, sizeof voids, "  e = %.4f", dem::measurePacking(sim, *sc.container)->voidRatio);
      std::fprintf(stderr, "\rstep %lld/%lld  t = %.4g s  KE = %.3e J  contacts %lld (+%lld wall)%s  wall %s  ETA %s   ",
                   static_cast<long long>(s), static_cast<long long>(cad.total), sim.time(), st.kineticEnergy,
                   static_cast<long long>(st.contacts), static_cast<long long>(st.wallContacts), voids,
                   io::formatDuration(wall()).c_str(),
                   io::formatDuration(perStep * static_cast<double>(cad.total - s)).c_str());
      std::fflush(stderr);
    }
  }
  std::signal(SIGINT, SIG_DFL), std::signal(SIGTERM, SIG_DFL);
  const double totalWall = wall();
  const double runWall = std::chrono::duration<double>(Clock::now() - t0).count();
  const std::int64_t stepsRun = sim.stepCount() - startStep;
  json extra = {{"scenario", o.scenario.empty() ? "<built-in default>" : o.scenario},
                {"wall_time_seconds", totalWall},
                {"steps_this_session", stepsRun},
                {"particle_steps_per_second", runWall > 0 ? n * static_cast<double>(stepsRun) / runWall : 0.0},
                {"stopped_early", stoppedEarly},
                {"resumed", resumeStep.has_value()}};
  const dem::Timings& tm = sim.timings();
  extra["timings"] = {{"steps", tm.steps},
                      {"step_seconds", tm.stepSeconds},
                      {"neighbour_seconds", tm.neighbourSeconds},
                      {"narrow_phase_cpu_seconds", tm.narrowPhaseCpuSeconds},
                      {"threads", sim.threadsUsed()},
                      {"contact_detection_share", sim.contactDetectionShare()}};
  std::optional<dem::PackingMetrics> finalPacking;
  if (packing) {
    finalPacking = dem::measurePacking(sim, *sc.container);
    extra["packing"] = packingJson(*finalPacking);
  }
  if (auto r = io::writeSummaryJson(dir / "summary.json", sim, extra); !r.ok()) {
    std::cerr << "proxima run: " << r.message() << '\n';
    return 1;
  }
  const dem::Stats st = sim.stats();
  const dem::Counters& c = sim.counters();
  const double saved = c.narrowPhaseCalls + c.narrowPhaseSkipped > 0
                           ? static_cast<double>(c.narrowPhaseSkipped) / static_cast<double>(c.narrowPhaseCalls + c.narrowPhaseSkipped)
                           : 0.0;
  std::fprintf(stderr,
               "\nproxima run: done, %lld steps, t = %.4g s, wall %s (%.3g particle-steps/s); contacts %lld, Z = %.2f; "
               "narrow phase %lld calls, %.1f%% saved by the conservative bound; %.0f%% of the time in contact detection\n",
               static_cast<long long>(sim.stepCount()), sim.time(), io::formatDuration(totalWall).c_str(),
               runWall > 0 ? n * static_cast<double>(stepsRun) / runWall : 0.0, static_cast<long long>(st.contacts),
               st.coordinationNumber, static_cast<long long>(c.narrowPhaseCalls), 100 * saved,
               100 * sim.contactDetectionShare());
  if (finalPacking)
    std::fprintf(stderr,
                 "proxima run: packing: void ratio e = %.4f, packing fraction %.4f (core %.4f), lid height %.6g m, Z = %.3f\n",
                 finalPacking->voidRatio, finalPacking->packingFraction, finalPacking->coreFraction, finalPacking->height,
                 finalPacking->coordinationNumber);
  if (finalPacking && finalPacking->lidAboveParticles())
    std::fprintf(stderr,
                 "proxima run: warning: the lid (at %.6g m) rests on nothing: the highest particle reaches %.6g m, so the "
                 "void ratio and packing fraction count the empty space under the lid (a longer run lets it settle)\n",
                 finalPacking->height, finalPacking->particleTop);
  std::cout << (dir / "summary.json").string() << '\n';
  return 0;
}

}  // namespace proxima::app
