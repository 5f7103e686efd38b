// Simulation output: VTK XML frames for ParaView (particle surfaces, particle centres, walls) with
// .pvd time collections, a CSV time series of whole-system measures, and a JSON run summary.
// Formats and columns are described in docs/output-format.md.
//
// Every file a reader may open during a run is replaced atomically (written to "<name>.tmp" and
// renamed), so ParaView or a plotting script polling the output directory always sees complete
// files. Memory use is bounded: frames are streamed array by array through a fixed-size buffer.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "proxima/core/status.hpp"
#include "proxima/core/types.hpp"
#include "proxima/dem/simulation.hpp"

namespace proxima::io {

// ---------------------------------------------------------------------------------------------
// Surface meshes
// ---------------------------------------------------------------------------------------------

/// Triangulated surface with outward-oriented triangles (counter-clockwise seen from outside).
struct SurfaceMesh {
  std::vector<Vec3> points;
  std::vector<std::array<int, 3>> triangles;
};

/// Unit sphere from a subdivided icosahedron: level 0 = 12 points / 20 triangles, each level
/// splits every triangle in four (level 1 = 42 / 80, level 2 = 162 / 320). Levels are clamped to
/// [0, 6].
SurfaceMesh icosphere(int subdivision);

/// Surface of a shape in its own frame. Exact for boxes, tetrahedra and solid polytopes without
/// inflation (their hull triangles); every other shape (spheres, ellipsoids, capsules, cylinders,
/// cones, anything inflated) maps each icosphere direction d to the shape's support point in d —
/// exact surface points for strictly convex shapes, collapsed points on flat faces (coincident
/// points are merged and triangles that become degenerate are dropped).
SurfaceMesh shapeSurface(const Shape& shape, int subdivision = 1);

/// Surface of a particle shape in its BODY frame (shapeSurface transformed by `local`).
SurfaceMesh surfaceMesh(const dem::ParticleShape& shape, int subdivision = 1);

// ---------------------------------------------------------------------------------------------
// VTK frames
// ---------------------------------------------------------------------------------------------

struct VtkOptions {
  int sphereSubdivision = 1;  ///< icosphere level for curved shapes (1 = 80 triangles, 2 = 320)
  bool surfaces = true;       ///< write frames/<basename>_NNNNNN.vtu (all particle triangles)
  bool centres = true;        ///< write frames/centres_NNNNNN.vtu (one vertex per particle)
  bool walls = true;          ///< write frames/walls_NNNNNN.vtu (when the simulation has walls)
  bool contacts = true;       ///< write frames/contacts_NNNNNN.vtu (the contact network: one line per contact)
  bool float32 = false;       ///< Float32 instead of Float64 for coordinates and real-valued arrays
};

/// One entry of a .pvd collection: simulated time and file path relative to the output directory.
struct PvdEntry {
  double time = 0;
  std::string file;
};

/// Reads the DataSet entries of a .pvd written by VtkSeriesWriter (one element per line).
Result<std::vector<PvdEntry>> readPvd(const std::filesystem::path& path);
/// Writes a .pvd collection atomically (tmp + rename).
Result<bool> writePvd(const std::filesystem::path& path, const std::vector<PvdEntry>& entries);

/// Writes a series of VTK XML UnstructuredGrid frames and keeps the .pvd collections current.
///
/// Layout under `directory`:
///   <basename>.pvd, centres.pvd, walls.pvd, contacts.pvd
///   frames/<basename>_NNNNNN.vtu, frames/centres_NNNNNN.vtu, frames/walls_NNNNNN.vtu,
///   frames/contacts_NNNNNN.vtu
/// (basename defaults to "particles"; NNNNNN is the frame number, from 0). Binary data are raw
/// appended (<AppendedData encoding="raw">) with UInt64 byte-count headers.
class VtkSeriesWriter {
 public:
  /// Creates `directory` and `directory/frames` (errors are reported by the first writeFrame()).
  explicit VtkSeriesWriter(std::filesystem::path directory, std::string basename = "particles",
                           VtkOptions options = {});

  /// Continues an earlier run in the same directory: reads the existing .pvd files, drops the entries
  /// with time > `time` (and deletes their frame files), rewrites the .pvd files, and numbers the
  /// next frame after the last kept one. Call before the first writeFrame(). Returns the number of
  /// the next frame. Missing .pvd files are not an error (nothing to continue).
  Result<int> resume(double time);

  /// Writes the frame files for the current state of `sim` and rewrites the .pvd files.
  Result<bool> writeFrame(const dem::Simulation& sim);

  [[nodiscard]] int nextFrame() const { return next_; }
  [[nodiscard]] const std::filesystem::path& directory() const { return dir_; }
  [[nodiscard]] const std::vector<PvdEntry>& particleEntries() const { return series_[0]; }
  [[nodiscard]] const std::vector<PvdEntry>& centreEntries() const { return series_[1]; }
  [[nodiscard]] const std::vector<PvdEntry>& wallEntries() const { return series_[2]; }
  [[nodiscard]] const std::vector<PvdEntry>& contactEntries() const { return series_[3]; }

  /// The body-frame mesh of shape `shape` of `sim`, built on first use and cached per shape index
  /// (rebuilt if the shape library's size or the shape's name changes).
  const SurfaceMesh& mesh(const dem::Simulation& sim, int shape);

 private:
  Result<bool> writeSurfaces(const dem::Simulation& sim, const std::filesystem::path& file);
  Result<bool> writeCentres(const dem::Simulation& sim, const std::filesystem::path& file);
  Result<bool> writeWalls(const dem::Simulation& sim, const std::filesystem::path& file);
  Result<bool> writeContacts(const dem::Simulation& sim, const std::filesystem::path& file);

  static constexpr int kSeries = 4;
  std::filesystem::path dir_;
  std::string names_[kSeries];  ///< series names: basename, "centres", "walls", "contacts"
  VtkOptions options_;
  std::string createError_;
  int next_ = 0;
  std::vector<PvdEntry> series_[kSeries];
  std::vector<std::string> meshKeys_;  ///< shape names the cached meshes were built for
  std::vector<SurfaceMesh> meshes_;
};

// ---------------------------------------------------------------------------------------------
// CSV time series
// ---------------------------------------------------------------------------------------------

/// DIR/timeseries.csv: one row per call, flushed immediately. Columns (see kColumns) then the
/// extra columns registered with addColumn() before the first row. Integers are written exactly,
/// reals with %.10g.
class CsvTimeSeries {
 public:
  static constexpr std::array<const char*, 13> kColumns = {"step",
                                                           "time",
                                                           "kinetic_energy",
                                                           "potential_energy",
                                                           "contacts",
                                                           "wall_contacts",
                                                           "mean_overlap",
                                                           "max_overlap",
                                                           "coordination_number",
                                                           "max_speed",
                                                           "narrow_phase_calls",
                                                           "narrow_phase_skipped",
                                                           "neighbour_rebuilds"};

  /// `resumeStep`: continue an existing file, keeping its rows with step <= *resumeStep (later rows
  /// are removed when the first row is written); without it the file is started afresh.
  explicit CsvTimeSeries(std::filesystem::path directory, std::optional<std::int64_t> resumeStep = std::nullopt,
                         std::string fileName = "timeseries.csv");

  /// On a resume, the file must hold the rows through this step (the last row the checkpoint's run
  /// wrote on its cadence): a file cut short is refused when it is opened, not continued with a gap.
  void requireRowsThrough(std::int64_t step) { requiredStep_ = step; }
  /// Opens the file now instead of at the first row (after the columns are registered): a resume
  /// checks the earlier rows before it steps.
  Result<bool> start() { return opened_ ? Result<bool>(true) : open(); }
  /// Registers an extra column; only before the first row.
  Result<bool> addColumn(std::string name);
  /// Appends a row from the simulation's stats() and counters(); `extras` must have one value per
  /// extra column. A resumed file whose header differs from the current columns is an error.
  Result<bool> row(const dem::Simulation& sim, std::span<const double> extras = {});
  /// Same with stats computed by the caller.
  Result<bool> row(const dem::Stats& stats, const dem::Counters& counters, std::span<const double> extras = {});

  [[nodiscard]] const std::filesystem::path& path() const { return path_; }
  [[nodiscard]] std::string header() const;
  [[nodiscard]] std::int64_t rowsWritten() const { return rows_; }

 private:
  Result<bool> open();

  std::filesystem::path path_;
  std::optional<std::int64_t> resumeStep_, requiredStep_;
  std::vector<std::string> extra_;
  std::ofstream out_;
  bool opened_ = false;
  std::int64_t rows_ = 0;
};

// ---------------------------------------------------------------------------------------------
// JSON
// ---------------------------------------------------------------------------------------------

/// {"step", "time", "kinetic_energy", "potential_energy", "contacts", "wall_contacts",
///  "mean_overlap", "max_overlap", "coordination_number", "max_speed"}
nlohmann::json toJson(const dem::Stats& s);
/// {"narrow_phase_calls", "narrow_phase_skipped", "analytic_pair_tests", "neighbour_rebuilds", "warnings"}
nlohmann::json toJson(const dem::Counters& c);

/// Run summary: particle and wall counts, time, steps, time step, particle volume, the shape
/// library (name, type, particles, volume, bounding/equivalent radius), final stats, counters and
/// narrow_phase_saved_fraction = skipped / (calls + skipped); then every top-level key of `extra`
/// (e.g. wall_time_seconds, steps_per_second) is set, overriding a computed key of the same name.
nlohmann::json summaryJson(const dem::Simulation& sim, const nlohmann::json& extra = nlohmann::json::object());
/// Writes summaryJson() (indented) atomically.
Result<bool> writeSummaryJson(const std::filesystem::path& path, const dem::Simulation& sim,
                              const nlohmann::json& extra = nlohmann::json::object());

/// Writes `text` to `path` atomically: "<path>.tmp" then rename.
Result<bool> writeFileAtomically(const std::filesystem::path& path, const std::string& text);
/// The same with the content streamed by `write` (nothing held in memory): "<path>.tmp", then
/// rename; a failed write says why (e.g. "No space left on device") and leaves no temporary.
Result<bool> writeFileAtomically(const std::filesystem::path& path, const std::function<void(std::ostream&)>& write);

/// Short human duration for progress lines: "12.3s", "3m05s", "1h02m" (negative or NaN: "?").
std::string formatDuration(double seconds);

}  // namespace proxima::io
