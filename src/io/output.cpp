// VTK XML frames (raw appended binary, streamed), .pvd collections, CSV time series, JSON summary.
#include "proxima/io/output.hpp"

#include <algorithm>
#include <cerrno>
#include <bit>
#include <charconv>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <sstream>
#include <system_error>
#include <type_traits>
#include <variant>

namespace proxima::io {

namespace fs = std::filesystem;

namespace {

std::string fmt(const char* f, double v) {
  char b[64];
  std::snprintf(b, sizeof b, f, v);
  return b;
}

/// Shortest decimal form that reads back as the same double.
std::string exact(double v) {
  char b[64];
  const auto r = std::to_chars(b, b + sizeof b, v);
  return std::string(b, r.ptr);
}

std::string tmpName(const fs::path& p) { return p.string() + ".tmp"; }

/// Renames `tmp` over `path`; removes `tmp` on failure.
Result<bool> commit(const std::string& tmp, const fs::path& path) {
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) {
    fs::remove(tmp, ec);
    return Result<bool>::failure(path.string() + ": cannot replace the file: " + ec.message());
  }
  return true;
}

// ---- surface meshes ----------------------------------------------------------------------------

/// Merges exactly coincident points and drops triangles that lose an edge.
SurfaceMesh compact(const SurfaceMesh& m) {
  SurfaceMesh out;
  std::map<std::array<Real, 3>, int> index;
  std::vector<int> remap(m.points.size());
  for (std::size_t i = 0; i < m.points.size(); ++i) {
    const Vec3& p = m.points[i];
    auto [it, inserted] = index.emplace(std::array<Real, 3>{p.x(), p.y(), p.z()}, static_cast<int>(out.points.size()));
    if (inserted) out.points.push_back(p);
    remap[i] = it->second;
  }
  for (const auto& t : m.triangles) {
    const std::array<int, 3> u{remap[t[0]], remap[t[1]], remap[t[2]]};
    if (u[0] != u[1] && u[1] != u[2] && u[0] != u[2]) out.triangles.push_back(u);
  }
  return out;
}

SurfaceMesh boxSurface(const Vec3& h) {
  SurfaceMesh m;
  for (int k = 0; k < 8; ++k)
    m.points.emplace_back((k & 1) ? h.x() : -h.x(), (k & 2) ? h.y() : -h.y(), (k & 4) ? h.z() : -h.z());
  // Two triangles per face, counter-clockwise seen from outside.
  m.triangles = {{0, 2, 3}, {0, 3, 1},   // -z
                 {4, 5, 7}, {4, 7, 6},   // +z
                 {0, 1, 5}, {0, 5, 4},   // -y
                 {2, 6, 7}, {2, 7, 3},   // +y
                 {0, 4, 6}, {0, 6, 2},   // -x
                 {1, 3, 7}, {1, 7, 5}};  // +x
  return m;
}

SurfaceMesh tetrahedronSurface(const Tetrahedron& t) {
  SurfaceMesh m;
  m.points.assign(t.v, t.v + 4);
  const int faces[4][4] = {{0, 1, 2, 3}, {0, 1, 3, 2}, {0, 2, 3, 1}, {1, 2, 3, 0}};  // 3 corners + opposite
  for (const auto& f : faces) {
    const Vec3 n = (m.points[f[1]] - m.points[f[0]]).cross(m.points[f[2]] - m.points[f[0]]);
    if (n.dot(m.points[f[3]] - m.points[f[0]]) > 0)
      m.triangles.push_back({f[0], f[2], f[1]});
    else
      m.triangles.push_back({f[0], f[1], f[2]});
  }
  return m;
}

// ---- VTU writer --------------------------------------------------------------------------------

enum class Ty { Real, I64, I32, U8 };

/// Buffered binary output of one appended-data section; counts the bytes it is given.
class Sink {
 public:
  Sink(std::ofstream& out, bool f32) : out_(out), buf_(1 << 20), f32_(f32) {}
  template <class T>
  void raw(T v) {
    if (fill_ + sizeof(T) > buf_.size()) flush();
    std::memcpy(buf_.data() + fill_, &v, sizeof(T));
    fill_ += sizeof(T);
    count_ += sizeof(T);
  }
  void real(Real v) {
    if (f32_)
      raw(static_cast<float>(v));
    else
      raw(static_cast<double>(v));
  }
  void vec(const Vec3& v) { real(v.x()), real(v.y()), real(v.z()); }
  void i64(std::int64_t v) { raw(v); }
  void i32(std::int32_t v) { raw(v); }
  void u8(std::uint8_t v) { raw(v); }
  void flush() {
    out_.write(buf_.data(), static_cast<std::streamsize>(fill_));
    fill_ = 0;
  }
  [[nodiscard]] std::uint64_t count() const { return count_; }

 private:
  std::ofstream& out_;
  std::vector<char> buf_;
  std::size_t fill_ = 0;
  std::uint64_t count_ = 0;
  bool f32_;
};

enum Section { kPointData = 0, kCellData = 1, kPoints = 2, kCells = 3 };

struct ArraySpec {
  Section section;
  std::string name;
  Ty type;
  int components;
  std::uint64_t tuples;
  std::function<void(Sink&)> write;
};

std::size_t sizeOf(Ty t, bool f32) {
  switch (t) {
    case Ty::Real:
      return f32 ? 4 : 8;
    case Ty::I64:
      return 8;
    case Ty::I32:
      return 4;
    case Ty::U8:
      return 1;
  }
  return 0;
}

const char* typeName(Ty t, bool f32) {
  switch (t) {
    case Ty::Real:
      return f32 ? "Float32" : "Float64";
    case Ty::I64:
      return "Int64";
    case Ty::I32:
      return "Int32";
    case Ty::U8:
      return "UInt8";
  }
  return "";
}

/// Writes one UnstructuredGrid piece: XML header with the offsets of every array, then the raw
/// appended data, each array preceded by its UInt64 byte count. Written to a temporary file and
/// renamed into place.
Result<bool> writeVtu(const fs::path& path, std::vector<ArraySpec> arrays, std::uint64_t points, std::uint64_t cells,
                      double time, std::int64_t step, bool f32) {
  std::stable_sort(arrays.begin(), arrays.end(),
                   [](const ArraySpec& a, const ArraySpec& b) { return a.section < b.section; });
  const std::string tmp = tmpName(path);
  std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
  if (!out) return Result<bool>::failure(path.string() + ": cannot open for writing");

  std::ostringstream xml;
  xml << "<?xml version=\"1.0\"?>\n"
      << "<VTKFile type=\"UnstructuredGrid\" version=\"1.0\" byte_order=\""
      << (std::endian::native == std::endian::little ? "LittleEndian" : "BigEndian") << "\" header_type=\"UInt64\">\n"
      << "  <UnstructuredGrid>\n"
      << "    <FieldData>\n"
      << "      <DataArray type=\"Float64\" Name=\"TimeValue\" NumberOfTuples=\"1\" format=\"ascii\">" << exact(time)
      << "</DataArray>\n"
      << "      <DataArray type=\"Int64\" Name=\"step\" NumberOfTuples=\"1\" format=\"ascii\">" << step
      << "</DataArray>\n"
      << "    </FieldData>\n"
      << "    <Piece NumberOfPoints=\"" << points << "\" NumberOfCells=\"" << cells << "\">\n";
  static constexpr const char* kTags[] = {"PointData", "CellData", "Points", "Cells"};
  std::uint64_t offset = 0;
  int open = -1;
  for (const auto& a : arrays) {
    if (a.section != open) {
      if (open >= 0) xml << "      </" << kTags[open] << ">\n";
      open = a.section;
      xml << "      <" << kTags[open] << ">\n";
    }
    xml << "        <DataArray type=\"" << typeName(a.type, f32) << "\" Name=\"" << a.name << "\"";
    if (a.components != 1) xml << " NumberOfComponents=\"" << a.components << "\"";
    xml << " format=\"appended\" offset=\"" << offset << "\"/>\n";
    offset += 8 + a.tuples * static_cast<std::uint64_t>(a.components) * sizeOf(a.type, f32);
  }
  if (open >= 0) xml << "      </" << kTags[open] << ">\n";
  xml << "    </Piece>\n"
      << "  </UnstructuredGrid>\n"
      << "  <AppendedData encoding=\"raw\">\n   _";
  const std::string head = xml.str();
  out.write(head.data(), static_cast<std::streamsize>(head.size()));

  Sink sink(out, f32);
  for (const auto& a : arrays) {
    const std::uint64_t bytes = a.tuples * static_cast<std::uint64_t>(a.components) * sizeOf(a.type, f32);
    sink.raw(bytes);
    const std::uint64_t before = sink.count();
    a.write(sink);
    if (sink.count() - before != bytes) {
      out.close();
      std::error_code ec;
      fs::remove(tmp, ec);
      return Result<bool>::failure(path.string() + ": internal error: array '" + a.name + "' wrote " +
                                   std::to_string(sink.count() - before) + " bytes, declared " + std::to_string(bytes));
    }
  }
  sink.flush();
  static constexpr char kTail[] = "\n  </AppendedData>\n</VTKFile>\n";
  out.write(kTail, sizeof kTail - 1);
  out.close();
  if (!out) {
    std::error_code ec;
    fs::remove(tmp, ec);
    return Result<bool>::failure(path.string() + ": write failed");
  }
  return commit(tmp, path);
}

/// Frame number from ".../name_NNNNNN.vtu"; -1 when there is none.
int frameNumber(const std::string& file) {
  const auto us = file.rfind('_');
  const auto dot = file.rfind('.');
  if (us == std::string::npos || dot == std::string::npos || dot <= us + 1) return -1;
  int n = 0;
  for (auto k = us + 1; k < dot; ++k) {
    if (file[k] < '0' || file[k] > '9') return -1;
    n = n * 10 + (file[k] - '0');
  }
  return n;
}

/// Value of attribute `name="..."` in an XML start tag; nullopt if absent.
std::optional<std::string> attribute(const std::string& tag, const std::string& name) {
  const std::string key = name + "=\"";
  std::size_t p = 0;
  while ((p = tag.find(key, p)) != std::string::npos) {
    if (p == 0 || tag[p - 1] == ' ' || tag[p - 1] == '\t' || tag[p - 1] == '\n') {
      const auto start = p + key.size();
      const auto end = tag.find('"', start);
      if (end == std::string::npos) return std::nullopt;
      return tag.substr(start, end - start);
    }
    p += key.size();
  }
  return std::nullopt;
}

std::string xmlEscape(const std::string& s) {
  std::string o;
  for (char c : s) {
    switch (c) {
      case '&':
        o += "&amp;";
        break;
      case '<':
        o += "&lt;";
        break;
      case '>':
        o += "&gt;";
        break;
      case '"':
        o += "&quot;";
        break;
      default:
        o += c;
    }
  }
  return o;
}

std::string xmlUnescape(const std::string& s) {
  std::string o;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '&') {
      static constexpr std::pair<const char*, char> kEntities[] = {
          {"&amp;", '&'}, {"&lt;", '<'}, {"&gt;", '>'}, {"&quot;", '"'}, {"&apos;", '\''}};
      bool done = false;
      for (const auto& [e, c] : kEntities) {
        if (s.compare(i, std::strlen(e), e) == 0) {
          o += c, i += std::strlen(e) - 1, done = true;
          break;
        }
      }
      if (done) continue;
    }
    o += s[i];
  }
  return o;
}

}  // namespace

// ---- surface meshes ------------------------------------------------------------------------------

SurfaceMesh icosphere(int subdivision) {
  subdivision = std::clamp(subdivision, 0, 6);
  const Real t = (1 + std::sqrt(Real(5))) / 2;
  SurfaceMesh m;
  m.points = {{-1, t, 0},  {1, t, 0},  {-1, -t, 0}, {1, -t, 0}, {0, -1, t},  {0, 1, t},
              {0, -1, -t}, {0, 1, -t}, {t, 0, -1},  {t, 0, 1},  {-t, 0, -1}, {-t, 0, 1}};
  for (auto& p : m.points) p.normalize();
  m.triangles = {{0, 11, 5},  {0, 5, 1},  {0, 1, 7},  {0, 7, 10}, {0, 10, 11}, {1, 5, 9}, {5, 11, 4},
                 {11, 10, 2}, {10, 7, 6}, {7, 1, 8},  {3, 9, 4},  {3, 4, 2},   {3, 2, 6}, {3, 6, 8},
                 {3, 8, 9},   {4, 9, 5},  {2, 4, 11}, {6, 2, 10}, {8, 6, 7},   {9, 8, 1}};
  for (int level = 0; level < subdivision; ++level) {
    std::map<std::pair<int, int>, int> midpoints;
    auto mid = [&](int a, int b) {
      const auto key = std::minmax(a, b);
      auto it = midpoints.find(key);
      if (it != midpoints.end()) return it->second;
      m.points.push_back((m.points[a] + m.points[b]).normalized());
      const int k = static_cast<int>(m.points.size()) - 1;
      midpoints.emplace(key, k);
      return k;
    };
    std::vector<std::array<int, 3>> next;
    next.reserve(m.triangles.size() * 4);
    for (const auto& tr : m.triangles) {
      const int a = mid(tr[0], tr[1]), b = mid(tr[1], tr[2]), c = mid(tr[2], tr[0]);
      next.push_back({tr[0], a, c});
      next.push_back({tr[1], b, a});
      next.push_back({tr[2], c, b});
      next.push_back({a, b, c});
    }
    m.triangles = std::move(next);
  }
  return m;
}

SurfaceMesh shapeSurface(const Shape& shape, int subdivision) {
  if (shape.inflate() == 0) {
    const auto& g = shape.geometry();
    if (const auto* b = std::get_if<Box>(&g)) return compact(boxSurface(b->halfExtents));
    if (const auto* t = std::get_if<Tetrahedron>(&g)) return compact(tetrahedronSurface(*t));
    if (const auto* p = std::get_if<Polytope>(&g)) {
      if (p->dimension() == 3 && !p->data().triangles.empty())
        return SurfaceMesh{p->data().vertices, p->data().triangles};
    }
  }
  SurfaceMesh m = icosphere(subdivision);
  SupportHint hint;
  for (auto& d : m.points) d = shape.support(d, hint);
  // Cylinders and cones have flat caps and rims: many directions map to one point (a rim point for
  // every direction of the same azimuth), equal only up to rounding, and the mapped icosphere folds
  // over itself there (zero-area and inward triangles). The hull of the mapped points is the closed,
  // outward surface (Qhull merges the near-duplicates); strictly convex shapes keep the mapping.
  const auto& g = shape.geometry();
  if (std::holds_alternative<Cylinder>(g) || std::holds_alternative<Cone>(g)) {
    auto hull = Polytope::fromPoints(m.points);
    if (hull.ok() && hull.value().dimension() == 3 && !hull.value().data().triangles.empty())
      return SurfaceMesh{hull.value().data().vertices, hull.value().data().triangles};
  }
  return compact(m);
}

SurfaceMesh surfaceMesh(const dem::ParticleShape& shape, int subdivision) {
  SurfaceMesh m = shapeSurface(shape.shape, subdivision);
  if (!shape.localIsIdentity)
    for (auto& p : m.points) p = shape.local.apply(p);
  return m;
}

// ---- pvd -------------------------------------------------------------------------------------------

Result<std::vector<PvdEntry>> readPvd(const fs::path& path) {
  std::ifstream in(path);
  if (!in) return Result<std::vector<PvdEntry>>::failure(path.string() + ": cannot open");
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  std::vector<PvdEntry> entries;
  std::size_t p = 0;
  while ((p = text.find("<DataSet", p)) != std::string::npos) {
    const auto end = text.find('>', p);
    if (end == std::string::npos)
      return Result<std::vector<PvdEntry>>::failure(path.string() + ": truncated DataSet element");
    const std::string tag = text.substr(p, end - p);
    const auto ts = attribute(tag, "timestep");
    const auto file = attribute(tag, "file");
    if (!ts || !file)
      return Result<std::vector<PvdEntry>>::failure(path.string() + ": DataSet without timestep or file: " + tag);
    char* stop = nullptr;
    const double t = std::strtod(ts->c_str(), &stop);
    if (stop == ts->c_str() || *stop != '\0')
      return Result<std::vector<PvdEntry>>::failure(path.string() + ": bad timestep '" + *ts + "'");
    entries.push_back({t, xmlUnescape(*file)});
    p = end;
  }
  return entries;
}

Result<bool> writePvd(const fs::path& path, const std::vector<PvdEntry>& entries) {
  std::string text =
      "<?xml version=\"1.0\"?>\n"
      "<VTKFile type=\"Collection\" version=\"1.0\" byte_order=\"LittleEndian\" header_type=\"UInt64\">\n"
      "  <Collection>\n";
  for (const auto& e : entries)
    text +=
        "    <DataSet timestep=\"" + exact(e.time) + "\" group=\"\" part=\"0\" file=\"" + xmlEscape(e.file) + "\"/>\n";
  text += "  </Collection>\n</VTKFile>\n";
  return writeFileAtomically(path, text);
}

Result<bool> writeFileAtomically(const fs::path& path, const std::string& text) {
  return writeFileAtomically(path, [&](std::ostream& out) { out.write(text.data(), static_cast<std::streamsize>(text.size())); });
}

Result<bool> writeFileAtomically(const fs::path& path, const std::function<void(std::ostream&)>& write) {
  const std::string tmp = tmpName(path);
  {
    errno = 0;
    // (the reason, e.g. "No space left on device", when the system gives one)
    auto why = [] { return errno != 0 ? std::string(": ") + std::strerror(errno) : std::string(); };
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return Result<bool>::failure(path.string() + ": cannot open for writing" + why());
    write(out);
    out.close();
    if (!out) {
      const std::string reason = why();
      std::error_code ec;
      fs::remove(tmp, ec);
      return Result<bool>::failure(path.string() + ": write failed" + reason);
    }
  }
  return commit(tmp, path);
}

// ---- VtkSeriesWriter ---------------------------------------------------------------------------------

VtkSeriesWriter::VtkSeriesWriter(fs::path directory, std::string basename, VtkOptions options)
    : dir_(std::move(directory)), names_{std::move(basename), "centres", "walls", "contacts"}, options_(options) {
  std::error_code ec;
  fs::create_directories(dir_ / "frames", ec);
  if (ec) createError_ = (dir_ / "frames").string() + ": cannot create directory: " + ec.message();
}

Result<int> VtkSeriesWriter::resume(double time) {
  if (!createError_.empty()) return Result<int>::failure(createError_);
  int last = -1;
  for (int s = 0; s < kSeries; ++s) {
    const fs::path pvd = dir_ / (names_[s] + ".pvd");
    series_[s].clear();
    if (!fs::exists(pvd)) continue;
    auto entries = readPvd(pvd);
    if (!entries) return Result<int>::failure(entries.message());
    for (auto& e : entries.value()) {
      if (e.time <= time) {
        last = std::max(last, frameNumber(e.file));
        series_[s].push_back(std::move(e));
      } else {
        std::error_code ec;
        fs::remove(dir_ / e.file, ec);  // frames after the resume point; a missing file is fine
      }
    }
    if (auto w = writePvd(pvd, series_[s]); !w) return Result<int>::failure(w.message());
  }
  next_ = last + 1;
  return next_;
}

const SurfaceMesh& VtkSeriesWriter::mesh(const dem::Simulation& sim, int shape) {
  const auto& shapes = sim.shapes();
  if (meshKeys_.size() != shapes.size()) {
    meshKeys_.assign(shapes.size(), std::string());
    meshes_.assign(shapes.size(), SurfaceMesh{});
    for (auto& k : meshKeys_) k = std::string(1, '\0');  // not built yet (no shape name starts with NUL)
  }
  const auto k = static_cast<std::size_t>(shape);
  if (meshKeys_[k] != shapes[k].name) {
    meshes_[k] = surfaceMesh(shapes[k], options_.sphereSubdivision);
    meshKeys_[k] = shapes[k].name;
  }
  return meshes_[k];
}

Result<bool> VtkSeriesWriter::writeFrame(const dem::Simulation& sim) {
  if (!createError_.empty()) return Result<bool>::failure(createError_);
  char number[32];
  std::snprintf(number, sizeof number, "%06d", next_);
  const bool enabled[kSeries] = {options_.surfaces, options_.centres, options_.walls && !sim.walls().empty(),
                                 options_.contacts};
  for (int s = 0; s < kSeries; ++s) {
    if (!enabled[s]) continue;
    const std::string rel = "frames/" + names_[s] + "_" + number + ".vtu";
    Result<bool> r = s == 0   ? writeSurfaces(sim, dir_ / rel)
                     : s == 1 ? writeCentres(sim, dir_ / rel)
                     : s == 2 ? writeWalls(sim, dir_ / rel)
                              : writeContacts(sim, dir_ / rel);
    if (!r) return r;
    // Re-writing a frame number (after resume) replaces its entry.
    auto& entries = series_[s];
    std::erase_if(entries, [&](const PvdEntry& e) { return e.file == rel; });
    entries.push_back({sim.time(), rel});
    if (auto w = writePvd(dir_ / (names_[s] + ".pvd"), entries); !w) return w;
  }
  ++next_;
  return true;
}

namespace {

/// The per-particle fields both particle files carry; `spread` turns a per-particle writer into the
/// array's writer (once per particle for centres, once per surface point for surfaces).
template <class Spread>
void addMotionFields(std::vector<ArraySpec>& arrays, const dem::Particles& P, std::uint64_t tuples, Spread spread) {
  arrays.push_back({kPointData, "id", Ty::I64, 1, tuples, spread([&P](Sink& s, std::size_t i) { s.i64(P.id[i]); })});
  arrays.push_back(
      {kPointData, "velocity", Ty::Real, 3, tuples, spread([&P](Sink& s, std::size_t i) { s.vec(P.velocity[i]); })});
  arrays.push_back({kPointData, "angular_velocity", Ty::Real, 3, tuples,
                    spread([&P](Sink& s, std::size_t i) { s.vec(P.angularVelocity[i]); })});
  arrays.push_back({kPointData, "speed", Ty::Real, 1, tuples,
                    spread([&P](Sink& s, std::size_t i) { s.real(P.velocity[i].norm()); })});
}
template <class Spread>
void addKindFields(std::vector<ArraySpec>& arrays, const dem::Particles& P, std::uint64_t tuples, Spread spread) {
  arrays.push_back({kPointData, "shape", Ty::I32, 1, tuples, spread([&P](Sink& s, std::size_t i) { s.i32(P.shape[i]); })});
  arrays.push_back(
      {kPointData, "material", Ty::I32, 1, tuples, spread([&P](Sink& s, std::size_t i) { s.i32(P.material[i]); })});
}

}  // namespace

Result<bool> VtkSeriesWriter::writeSurfaces(const dem::Simulation& sim, const fs::path& file) {
  const auto& P = sim.particles();
  const std::size_t n = P.size();
  for (std::size_t k = 0; k < sim.shapes().size(); ++k) mesh(sim, static_cast<int>(k));
  std::uint64_t points = 0, cells = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const auto& m = meshes_[static_cast<std::size_t>(P.shape[i])];
    points += m.points.size(), cells += m.triangles.size();
  }
  auto meshOf = [&](std::size_t i) -> const SurfaceMesh& { return meshes_[static_cast<std::size_t>(P.shape[i])]; };
  // Per-point data: the particle's value repeated on each of its surface points.
  auto perPoint = [&](auto&& put) {
    return [&, put](Sink& s) {
      for (std::size_t i = 0; i < n; ++i)
        for (std::size_t k = meshOf(i).points.size(); k > 0; --k) put(s, i);
    };
  };
  std::vector<ArraySpec> arrays;
  arrays.push_back({kPoints, "Points", Ty::Real, 3, points, [&](Sink& s) {
                      for (std::size_t i = 0; i < n; ++i) {
                        const Transform pose(P.orientation[i], P.position[i]);
                        for (const auto& p : meshOf(i).points) s.vec(pose.apply(p));
                      }
                    }});
  arrays.push_back({kCells, "connectivity", Ty::I64, 1, 3 * cells, [&](Sink& s) {
                      std::int64_t base = 0;
                      for (std::size_t i = 0; i < n; ++i) {
                        const auto& m = meshOf(i);
                        for (const auto& t : m.triangles)
                          for (int v : t) s.i64(base + v);
                        base += static_cast<std::int64_t>(m.points.size());
                      }
                    }});
  arrays.push_back({kCells, "offsets", Ty::I64, 1, cells, [&](Sink& s) {
                      for (std::uint64_t c = 1; c <= cells; ++c) s.i64(static_cast<std::int64_t>(3 * c));
                    }});
  arrays.push_back({kCells, "types", Ty::U8, 1, cells, [&](Sink& s) {
                      for (std::uint64_t c = 0; c < cells; ++c) s.u8(5);  // VTK_TRIANGLE
                    }});
  addMotionFields(arrays, P, points, perPoint);
  addKindFields(arrays, P, points, perPoint);
  return writeVtu(file, std::move(arrays), points, cells, sim.time(), sim.stepCount(), options_.float32);
}

Result<bool> VtkSeriesWriter::writeCentres(const dem::Simulation& sim, const fs::path& file) {
  const auto& P = sim.particles();
  const auto& shapes = sim.shapes();
  const std::uint64_t n = P.size();
  auto each = [&](auto&& put) {
    return [&, put](Sink& s) {
      for (std::size_t i = 0; i < n; ++i) put(s, i);
    };
  };
  std::vector<ArraySpec> arrays;
  arrays.push_back({kPoints, "Points", Ty::Real, 3, n, each([&](Sink& s, std::size_t i) { s.vec(P.position[i]); })});
  arrays.push_back({kCells, "connectivity", Ty::I64, 1, n,
                    each([&](Sink& s, std::size_t i) { s.i64(static_cast<std::int64_t>(i)); })});
  arrays.push_back({kCells, "offsets", Ty::I64, 1, n,
                    each([&](Sink& s, std::size_t i) { s.i64(static_cast<std::int64_t>(i + 1)); })});
  arrays.push_back({kCells, "types", Ty::U8, 1, n, each([&](Sink& s, std::size_t) { s.u8(1); })});  // VTK_VERTEX
  addMotionFields(arrays, P, n, each);
  arrays.push_back({kPointData, "bounding_radius", Ty::Real, 1, n, each([&](Sink& s, std::size_t i) {
                      s.real(shapes[static_cast<std::size_t>(P.shape[i])].boundingRadius);
                    })});
  arrays.push_back({kPointData, "force", Ty::Real, 3, n, each([&](Sink& s, std::size_t i) { s.vec(P.force[i]); })});
  arrays.push_back({kPointData, "orientation", Ty::Real, 4, n, each([&](Sink& s, std::size_t i) {
                      const Quat& q = P.orientation[i];
                      s.real(q.w()), s.real(q.x()), s.real(q.y()), s.real(q.z());
                    })});
  addKindFields(arrays, P, n, each);
  return writeVtu(file, std::move(arrays), n, n, sim.time(), sim.stepCount(), options_.float32);
}

Result<bool> VtkSeriesWriter::writeWalls(const dem::Simulation& sim, const fs::path& file) {
  const auto& P = sim.particles();
  const auto& walls = sim.walls();
  // Extent of the scene: particles (with their bounding radii) and mesh walls.
  Vec3 lo = Vec3::Constant(std::numeric_limits<Real>::infinity()), hi = -lo;
  Vec3 centroid = Vec3::Zero();
  for (std::size_t i = 0; i < P.size(); ++i) {
    const Real r = sim.shapes()[static_cast<std::size_t>(P.shape[i])].boundingRadius;
    lo = lo.cwiseMin(P.position[i] - Vec3::Constant(r));
    hi = hi.cwiseMax(P.position[i] + Vec3::Constant(r));
    centroid += P.position[i];
  }
  if (P.size() > 0) centroid /= static_cast<Real>(P.size());
  for (const auto& w : walls)
    if (w.kind == dem::WallKind::Mesh)
      for (const auto& v : w.vertices) lo = lo.cwiseMin(v + w.origin), hi = hi.cwiseMax(v + w.origin);
  Real span = (hi.array() >= lo.array()).all() ? 1.5 * (hi - lo).norm() : 0;
  if (!(span > 0) || !std::isfinite(span)) span = 1;

  // Geometry: plane quads (4 points, VTK_QUAD) and mesh triangles.
  std::vector<Vec3> pts;
  std::vector<std::int64_t> conn, offs;
  std::vector<std::uint8_t> types;
  std::vector<std::int32_t> wallIndex;
  std::vector<Vec3> wallVelocity;
  for (std::size_t w = 0; w < walls.size(); ++w) {
    const auto& W = walls[w];
    const Vec3 v = W.isLid() ? Vec3(sim.lidSpeed(static_cast<int>(w)) * W.normal) : W.velocity;
    if (W.kind == dem::WallKind::Plane) {
      const Vec3 nrm = W.normal.normalized();
      const Vec3 c = P.size() > 0 ? Vec3(centroid - nrm * nrm.dot(centroid - W.origin)) : W.origin;
      const Vec3 a = std::abs(nrm.x()) < 0.9 ? Vec3::UnitX() : Vec3::UnitY();
      const Vec3 u = (a - nrm * nrm.dot(a)).normalized();
      const Vec3 t = nrm.cross(u);
      const Real h = span / 2;
      const auto base = static_cast<std::int64_t>(pts.size());
      pts.push_back(c - h * u - h * t), pts.push_back(c + h * u - h * t);
      pts.push_back(c + h * u + h * t), pts.push_back(c - h * u + h * t);
      for (int k = 0; k < 4; ++k) conn.push_back(base + k);
      offs.push_back(static_cast<std::int64_t>(conn.size()));
      types.push_back(9);  // VTK_QUAD, counter-clockwise seen from the domain side
      wallIndex.push_back(static_cast<std::int32_t>(w)), wallVelocity.push_back(v);
    } else {
      const auto base = static_cast<std::int64_t>(pts.size());
      for (const auto& p : W.vertices) pts.push_back(p + W.origin);
      for (const auto& tri : W.triangles) {
        for (int k : tri) conn.push_back(base + k);
        offs.push_back(static_cast<std::int64_t>(conn.size()));
        types.push_back(5);  // VTK_TRIANGLE
        wallIndex.push_back(static_cast<std::int32_t>(w)), wallVelocity.push_back(v);
      }
    }
  }
  const std::uint64_t np = pts.size(), nc = types.size();
  std::vector<ArraySpec> arrays;
  arrays.push_back({kPoints, "Points", Ty::Real, 3, np, [&](Sink& s) {
                      for (const auto& p : pts) s.vec(p);
                    }});
  arrays.push_back({kCells, "connectivity", Ty::I64, 1, conn.size(), [&](Sink& s) {
                      for (auto c : conn) s.i64(c);
                    }});
  arrays.push_back({kCells, "offsets", Ty::I64, 1, nc, [&](Sink& s) {
                      for (auto o : offs) s.i64(o);
                    }});
  arrays.push_back({kCells, "types", Ty::U8, 1, nc, [&](Sink& s) {
                      for (auto t : types) s.u8(t);
                    }});
  arrays.push_back({kCellData, "wall", Ty::I32, 1, nc, [&](Sink& s) {
                      for (auto w : wallIndex) s.i32(w);
                    }});
  arrays.push_back({kCellData, "velocity", Ty::Real, 3, nc, [&](Sink& s) {
                      for (const auto& v : wallVelocity) s.vec(v);
                    }});
  return writeVtu(file, std::move(arrays), np, nc, sim.time(), sim.stepCount(), options_.float32);
}

// The contact network (force chains): one VTK_LINE per contact of the last step, from particle i's
// centre to particle j's, or to the contact point for a wall contact, with the contact's force,
// its normal and tangential parts, normal, point and overlap as cell data. (A frame with no contact
// is an empty grid: ParaView shows nothing and the series keeps its frame numbers.)
Result<bool> VtkSeriesWriter::writeContacts(const dem::Simulation& sim, const fs::path& file) {
  const auto& P = sim.particles();
  const std::vector<dem::ContactInfo> contacts = sim.contacts();
  const std::uint64_t nc = contacts.size(), np = 2 * nc;
  auto each = [&](auto&& put) {
    return [&, put](Sink& s) {
      for (const auto& c : contacts) put(s, c);
    };
  };
  auto idOf = [&P](int i) { return P.id[static_cast<std::size_t>(i)]; };
  // Force on j (on the particle for a wall contact) along the normal, which points from i (the wall)
  // towards j (the particle): positive when the contact pushes the bodies apart.
  auto normalPart = [](const dem::ContactInfo& c) { return c.force.dot(c.normal); };
  std::vector<ArraySpec> arrays;
  arrays.push_back({kPoints, "Points", Ty::Real, 3, np, each([&](Sink& s, const dem::ContactInfo& c) {
                      s.vec(P.position[static_cast<std::size_t>(c.i)]);
                      s.vec(c.j >= 0 ? P.position[static_cast<std::size_t>(c.j)] : c.point);
                    })});
  arrays.push_back({kCells, "connectivity", Ty::I64, 1, np, [&](Sink& s) {
                      for (std::uint64_t k = 0; k < np; ++k) s.i64(static_cast<std::int64_t>(k));
                    }});
  arrays.push_back({kCells, "offsets", Ty::I64, 1, nc, [&](Sink& s) {
                      for (std::uint64_t k = 1; k <= nc; ++k) s.i64(static_cast<std::int64_t>(2 * k));
                    }});
  arrays.push_back({kCells, "types", Ty::U8, 1, nc, [&](Sink& s) {
                      for (std::uint64_t k = 0; k < nc; ++k) s.u8(3);  // VTK_LINE
                    }});
  arrays.push_back({kCellData, "id_i", Ty::I64, 1, nc, each([&](Sink& s, const dem::ContactInfo& c) {
                      s.i64(c.j >= 0 ? idOf(c.i) : -1);
                    })});
  arrays.push_back({kCellData, "id_j", Ty::I64, 1, nc, each([&](Sink& s, const dem::ContactInfo& c) {
                      s.i64(idOf(c.j >= 0 ? c.j : c.i));
                    })});
  arrays.push_back({kCellData, "wall", Ty::I32, 1, nc, each([&](Sink& s, const dem::ContactInfo& c) {
                      s.i32(c.j >= 0 ? -1 : -1 - c.j);
                    })});
  arrays.push_back({kCellData, "force", Ty::Real, 3, nc, each([](Sink& s, const dem::ContactInfo& c) { s.vec(c.force); })});
  arrays.push_back({kCellData, "normal_force", Ty::Real, 1, nc,
                    each([&](Sink& s, const dem::ContactInfo& c) { s.real(normalPart(c)); })});
  arrays.push_back({kCellData, "tangential_force", Ty::Real, 1, nc, each([&](Sink& s, const dem::ContactInfo& c) {
                      s.real((c.force - normalPart(c) * c.normal).norm());
                    })});
  arrays.push_back({kCellData, "normal", Ty::Real, 3, nc, each([](Sink& s, const dem::ContactInfo& c) { s.vec(c.normal); })});
  arrays.push_back({kCellData, "contact_point", Ty::Real, 3, nc,
                    each([](Sink& s, const dem::ContactInfo& c) { s.vec(c.point); })});
  arrays.push_back({kCellData, "overlap", Ty::Real, 1, nc, each([](Sink& s, const dem::ContactInfo& c) { s.real(c.depth); })});
  return writeVtu(file, std::move(arrays), np, nc, sim.time(), sim.stepCount(), options_.float32);
}

// ---- CSV -----------------------------------------------------------------------------------------------

CsvTimeSeries::CsvTimeSeries(fs::path directory, std::optional<std::int64_t> resumeStep, std::string fileName)
    : path_(std::move(directory) / fileName), resumeStep_(resumeStep) {}

Result<bool> CsvTimeSeries::addColumn(std::string name) {
  if (opened_) return Result<bool>::failure(path_.string() + ": column '" + name + "' added after the first row");
  if (name.empty() || name.find_first_of(",\"\n\r") != std::string::npos)
    return Result<bool>::failure(path_.string() + ": bad column name '" + name + "'");
  extra_.push_back(std::move(name));
  return true;
}

std::string CsvTimeSeries::header() const {
  std::string h;
  for (const char* c : kColumns) {
    if (!h.empty()) h += ',';
    h += c;
  }
  for (const auto& c : extra_) h += "," + c;
  return h;
}

Result<bool> CsvTimeSeries::open() {
  std::error_code ec;
  if (path_.has_parent_path()) fs::create_directories(path_.parent_path(), ec);
  if (ec) return Result<bool>::failure(path_.parent_path().string() + ": cannot create directory: " + ec.message());
  const std::string h = header();
  if (resumeStep_ && !fs::exists(path_))
    return Result<bool>::failure(path_.string() + ": cannot resume the series: the file is missing (its rows up to step " +
                                 std::to_string(*resumeStep_) +
                                 " would be lost); restore it, or run without --resume to start afresh");
  if (resumeStep_) {
    std::ifstream in(path_);
    if (!in) return Result<bool>::failure(path_.string() + ": cannot open to resume");
    std::string line, kept;
    if (!std::getline(in, line) || line != h)
      return Result<bool>::failure(path_.string() + ": cannot resume: its header '" + line +
                                   "' differs from the current columns '" + h + "'");
    kept = line + "\n";
    const auto columns = static_cast<std::size_t>(std::count(h.begin(), h.end(), ',')) + 1;
    std::size_t no = 1;
    long long last = -1;  // step of the last row kept
    // A row of the earlier session up to the checkpoint that is not whole (fields missing, its step
    // unreadable or out of order) means the file was damaged: appending to it would leave a series
    // with holes. Only the file's last line may be torn (a run killed while writing it), and only
    // when it has no line end.
    auto damaged = [&](const std::string& why) {
      return Result<bool>::failure(path_.string() + ", line " + std::to_string(no) + ": cannot resume the series: " +
                                   why + "; restore the file, or run without --resume to start afresh");
    };
    while (std::getline(in, line)) {
      ++no;
      const bool torn = in.eof();  // (no line end after it)
      if (!line.empty() && line.back() == '\r') line.pop_back();
      if (line.empty()) continue;
      char* stop = nullptr;
      const long long step = std::strtoll(line.c_str(), &stop, 10);
      const bool readable = stop != line.c_str() && *stop == ',';
      const auto fields = static_cast<std::size_t>(std::count(line.begin(), line.end(), ',')) + 1;
      if (readable && step > *resumeStep_) break;  // rows are in step order: the rest is after the checkpoint
      if (!readable || fields != columns || step <= last) {
        if (torn) break;
        if (!readable) return damaged("a row whose step is not a number");
        if (fields != columns)
          return damaged("a row of " + std::to_string(fields) + " values, the header has " + std::to_string(columns));
        return damaged("step " + std::to_string(step) + " after step " + std::to_string(last));
      }
      last = step;
      kept += line + "\n";
    }
    if (requiredStep_ && last < *requiredStep_)
      return Result<bool>::failure(
          path_.string() + ": cannot resume the series: its rows end at step " + std::to_string(last) +
          ", before the checkpoint's last row (step " + std::to_string(*requiredStep_) +
          "): rows are missing; restore the file, or run without --resume to start afresh");
    in.close();
    if (auto w = writeFileAtomically(path_, kept); !w) return w;
    out_.open(path_, std::ios::app);
  } else {
    out_.open(path_, std::ios::trunc);
    if (out_) out_ << h << '\n';
  }
  if (!out_) return Result<bool>::failure(path_.string() + ": cannot open for writing");
  out_.flush();
  opened_ = true;
  return true;
}

Result<bool> CsvTimeSeries::row(const dem::Simulation& sim, std::span<const double> extras) {
  return row(sim.stats(), sim.counters(), extras);
}

Result<bool> CsvTimeSeries::row(const dem::Stats& s, const dem::Counters& c, std::span<const double> extras) {
  if (extras.size() != extra_.size())
    return Result<bool>::failure(path_.string() + ": row has " + std::to_string(extras.size()) + " extra values for " +
                                 std::to_string(extra_.size()) + " extra columns");
  if (!opened_)
    if (auto r = open(); !r) return r;
  std::string line;
  auto integer = [&](std::int64_t v) { line += std::to_string(v) + ","; };
  auto real = [&](double v) { line += fmt("%.10g", v) + ","; };
  integer(s.step), real(s.time), real(s.kineticEnergy), real(s.potentialEnergy), integer(s.contacts),
      integer(s.wallContacts), real(s.meanOverlap), real(s.maxOverlap), real(s.coordinationNumber), real(s.maxSpeed),
      integer(c.narrowPhaseCalls), integer(c.narrowPhaseSkipped), integer(c.neighbourRebuilds);
  for (double v : extras) real(v);
  line.back() = '\n';
  out_ << line;
  out_.flush();
  if (!out_) return Result<bool>::failure(path_.string() + ": write failed");
  ++rows_;
  return true;
}

// ---- JSON ------------------------------------------------------------------------------------------------

nlohmann::json toJson(const dem::Stats& s) {
  return {{"step", s.step},
          {"time", s.time},
          {"kinetic_energy", s.kineticEnergy},
          {"potential_energy", s.potentialEnergy},
          {"contacts", s.contacts},
          {"wall_contacts", s.wallContacts},
          {"mean_overlap", s.meanOverlap},
          {"max_overlap", s.maxOverlap},
          {"coordination_number", s.coordinationNumber},
          {"max_speed", s.maxSpeed}};
}

nlohmann::json toJson(const dem::Counters& c) {
  return {{"narrow_phase_calls", c.narrowPhaseCalls},
          {"narrow_phase_skipped", c.narrowPhaseSkipped},
          {"analytic_pair_tests", c.analyticPairTests},
          {"neighbour_rebuilds", c.neighbourRebuilds},
          {"warnings", c.warnings}};
}

nlohmann::json summaryJson(const dem::Simulation& sim, const nlohmann::json& extra) {
  using nlohmann::json;
  const auto& P = sim.particles();
  std::vector<std::int64_t> perShape(sim.shapes().size(), 0);
  for (int k : P.shape)
    if (k >= 0 && static_cast<std::size_t>(k) < perShape.size()) ++perShape[static_cast<std::size_t>(k)];
  json shapes = json::array();
  for (std::size_t k = 0; k < sim.shapes().size(); ++k) {
    const auto& s = sim.shapes()[k];
    shapes.push_back({{"name", s.name},
                      {"type", std::string(toString(s.shape.type()))},
                      {"particles", perShape[k]},
                      {"volume", s.volume},
                      {"bounding_radius", s.boundingRadius},
                      {"equivalent_radius", s.equivalentRadius},
                      {"vertices", s.bodyVertices.size()}});
  }
  json materials = json::array();
  for (const auto& m : sim.materials()) materials.push_back({{"name", m.name}, {"density", m.density}});
  const auto& c = sim.counters();
  const double tried = static_cast<double>(c.narrowPhaseCalls) + static_cast<double>(c.narrowPhaseSkipped);
  char hash[32];
  std::snprintf(hash, sizeof hash, "%016" PRIx64, sim.stateHash());
  json j = {{"particles", P.size()},
            {"walls", sim.walls().size()},
            {"time", sim.time()},
            {"steps", sim.stepCount()},
            {"time_step", sim.options().timeStep},
            {"particle_volume", sim.particleVolume()},
            {"shapes", shapes},
            {"materials", materials},
            {"stats", toJson(sim.stats())},
            {"counters", toJson(c)},
            {"narrow_phase_saved_fraction", tried > 0 ? static_cast<double>(c.narrowPhaseSkipped) / tried : 0.0},
            {"state_hash", hash}};
  if (extra.is_object())
    for (const auto& [key, value] : extra.items()) j[key] = value;
  return j;
}

Result<bool> writeSummaryJson(const fs::path& path, const dem::Simulation& sim, const nlohmann::json& extra) {
  return writeFileAtomically(path, summaryJson(sim, extra).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
}

// ---- misc ------------------------------------------------------------------------------------------------

std::string formatDuration(double seconds) {
  if (!(seconds >= 0) || !std::isfinite(seconds)) return "?";
  char b[64];
  if (seconds < 59.95) {
    std::snprintf(b, sizeof b, "%.1fs", seconds);
    return b;
  }
  const auto s = static_cast<long long>(std::llround(seconds));
  if (s < 3600) {
    std::snprintf(b, sizeof b, "%lldm%02llds", s / 60, s % 60);
    return b;
  }
  const auto m = static_cast<long long>(std::llround(seconds / 60));
  std::snprintf(b, sizeof b, "%lldh%02lldm", m / 60, m % 60);
  return b;
}

}  // namespace proxima::io
