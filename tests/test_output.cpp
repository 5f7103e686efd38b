// Simulation output: surface meshes, VTK XML frames (parsed back by a small reader of the raw
// appended format), .pvd collections and resuming, the CSV time series and the JSON summary.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <numbers>
#include <sstream>
#include <string>
#include <vector>

#include "proxima/dem/simulation.hpp"
#include "proxima/io/output.hpp"

using namespace proxima;
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

fs::path freshDir(const std::string& name) {
  const fs::path d = fs::temp_directory_path() / ("proxima_test_output_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(d);
  return d;
}

/// Removes a test's directory at the end of the test unless the test failed (kept for inspection).
struct Cleanup {
  fs::path dir;
  ~Cleanup() {
    if (!::testing::Test::HasFailure()) {
      std::error_code ec;
      fs::remove_all(dir, ec);
    }
  }
};

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<std::string> lines(const fs::path& p) {
  std::ifstream in(p);
  std::vector<std::string> out;
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

std::string field(const std::string& line, int k) {
  std::stringstream ss(line);
  std::string f;
  for (int i = 0; i <= k; ++i) std::getline(ss, f, ',');
  return f;
}

std::size_t countFields(const std::string& line) {
  return static_cast<std::size_t>(std::count(line.begin(), line.end(), ',')) + 1;
}

// ---- a small reader of VTK XML UnstructuredGrid files with raw appended data ----

struct VtuArray {
  std::string section, name, type;
  int components = 1;
  std::vector<double> values;      // converted (integers exactly up to 2^53)
  std::vector<std::int64_t> ints;  // integer arrays only
};

struct Vtu {
  std::map<std::string, std::string> file;  // VTKFile attributes
  std::uint64_t points = 0, cells = 0;
  std::map<std::string, VtuArray> arrays;  // by "Section/Name"
  double timeValue = -1;
  const VtuArray& at(const std::string& key) const {
    static const VtuArray none;
    auto it = arrays.find(key);
    return it == arrays.end() ? none : it->second;
  }
};

std::map<std::string, std::string> attributes(const std::string& tag) {
  std::map<std::string, std::string> a;
  std::size_t p = tag.find(' ');
  while (p != std::string::npos && p < tag.size()) {
    const auto eq = tag.find("=\"", p);
    if (eq == std::string::npos) break;
    std::string key = tag.substr(p, eq - p);
    key.erase(0, key.find_first_not_of(" \t\n"));
    const auto end = tag.find('"', eq + 2);
    a[key] = tag.substr(eq + 2, end - eq - 2);
    p = end + 1;
  }
  return a;
}

std::size_t typeSize(const std::string& t) {
  if (t == "Float64" || t == "Int64" || t == "UInt64") return 8;
  if (t == "Float32" || t == "Int32" || t == "UInt32") return 4;
  if (t == "UInt8" || t == "Int8") return 1;
  return 0;
}

/// Parses the XML part with a tag stack (must be balanced), then reads every appended array and
/// checks its UInt64 byte count against NumberOfPoints/NumberOfCells and the next array's offset.
::testing::AssertionResult readVtu(const fs::path& path, Vtu& out) {
  const std::string text = slurp(path);
  const std::string marker = "<AppendedData encoding=\"raw\">";
  const auto appended = text.find(marker);
  if (appended == std::string::npos) return ::testing::AssertionFailure() << "no raw AppendedData";
  const auto underscore = text.find('_', appended + marker.size());
  if (underscore == std::string::npos) return ::testing::AssertionFailure() << "no '_' data marker";
  const std::size_t base = underscore + 1;

  std::vector<std::string> stack;
  struct Decl {
    std::string section;
    std::map<std::string, std::string> attr;
  };
  std::vector<Decl> decls;
  std::string section;
  for (std::size_t p = text.find('<'); p < appended + marker.size() && p != std::string::npos;
       p = text.find('<', p + 1)) {
    const auto end = text.find('>', p);
    std::string tag = text.substr(p + 1, end - p - 1);
    if (tag.starts_with("?")) continue;
    if (tag.starts_with("/")) {
      const std::string name = tag.substr(1);
      if (stack.empty() || stack.back() != name) return ::testing::AssertionFailure() << "unbalanced </" << name << ">";
      stack.pop_back();
      continue;
    }
    const bool selfClosing = tag.ends_with("/");
    if (selfClosing) tag.pop_back();
    const std::string name = tag.substr(0, tag.find(' '));
    const auto attr = attributes(tag);
    if (name == "VTKFile") out.file = attr;
    if (name == "Piece")
      out.points = std::stoull(attr.at("NumberOfPoints")), out.cells = std::stoull(attr.at("NumberOfCells"));
    if (name == "PointData" || name == "CellData" || name == "Points" || name == "Cells" || name == "FieldData")
      section = name;
    if (name == "DataArray") {
      if (attr.count("format") && attr.at("format") == "appended") {
        decls.push_back({section, attr});
      } else if (attr.count("Name") && attr.at("Name") == "TimeValue") {
        out.timeValue = std::stod(text.substr(end + 1));
      }
    }
    if (!selfClosing) stack.push_back(name);
  }
  if (stack != std::vector<std::string>{"VTKFile", "AppendedData"})
    return ::testing::AssertionFailure() << "unexpected open elements before the data (" << stack.size() << ")";

  std::size_t lastEnd = base;
  for (const auto& d : decls) {
    VtuArray a;
    a.section = d.section, a.name = d.attr.at("Name"), a.type = d.attr.at("type");
    a.components = d.attr.count("NumberOfComponents") ? std::stoi(d.attr.at("NumberOfComponents")) : 1;
    const std::size_t off = base + std::stoull(d.attr.at("offset"));
    if (off != lastEnd) return ::testing::AssertionFailure() << a.name << ": offset leaves a gap or overlaps";
    std::uint64_t bytes = 0;
    std::memcpy(&bytes, text.data() + off, 8);
    const std::size_t sz = typeSize(a.type);
    if (sz == 0) return ::testing::AssertionFailure() << a.name << ": unknown type " << a.type;
    std::uint64_t tuples = 0;
    if (a.section == "Points" || a.section == "PointData") tuples = out.points;
    if (a.section == "CellData") tuples = out.cells;
    if (a.section == "Cells") tuples = a.name == "connectivity" ? bytes / sz : out.cells;
    if (bytes != tuples * a.components * sz)
      return ::testing::AssertionFailure() << a.name << ": byte count " << bytes << " for " << tuples << " tuples";
    const char* p = text.data() + off + 8;
    for (std::uint64_t k = 0; k < bytes / sz; ++k, p += sz) {
      if (a.type == "Float64") {
        double v;
        std::memcpy(&v, p, 8);
        a.values.push_back(v);
      } else if (a.type == "Float32") {
        float v;
        std::memcpy(&v, p, 4);
        a.values.push_back(v);
      } else if (a.type == "Int64") {
        std::int64_t v;
        std::memcpy(&v, p, 8);
        a.ints.push_back(v);
        a.values.push_back(double(v));
      } else if (a.type == "Int32") {
        std::int32_t v;
        std::memcpy(&v, p, 4);
        a.ints.push_back(v);
        a.values.push_back(v);
      } else if (a.type == "UInt8") {
        a.ints.push_back(static_cast<unsigned char>(*p));
        a.values.push_back(static_cast<unsigned char>(*p));
      }
    }
    lastEnd = off + 8 + bytes;
    out.arrays[a.section + "/" + a.name] = std::move(a);
  }
  if (text.compare(lastEnd, std::string::npos, "\n  </AppendedData>\n</VTKFile>\n") != 0)
    return ::testing::AssertionFailure() << "data is not followed by exactly the closing tags";
  return ::testing::AssertionSuccess();
}

dem::Material glass() {
  dem::Material m;
  m.name = "glass";
  m.density = 2500;
  m.youngsModulus = 1e7;
  return m;
}

/// A cube (half extent 1/16) at (0.25, 0.5, 0.125), a sphere (r 0.01) and, optionally, a rotated
/// cube; a floor plane at z = 0 and a mesh wall (one triangle). No contacts, no gravity.
struct Scene {
  dem::Simulation sim;
  Quat q = Quat(Eigen::AngleAxisd(0.7, Vec3(1, 2, 3).normalized()));
  explicit Scene(bool rotatedCube = true) {
    sim.setMaterials({glass()}, dem::ContactModel::HertzMindlin);
    auto cube = dem::makeParticleShape("cube", Shape(Box{Vec3::Constant(0.0625)}));
    auto ball = dem::makeParticleShape("ball", Shape(Sphere{0.01}));
    EXPECT_TRUE(cube.ok() && ball.ok());
    const int kc = sim.addShape(cube.value()), kb = sim.addShape(ball.value());
    sim.addParticle(kc, 0, Vec3(0.25, 0.5, 0.125), Quat::Identity(), Vec3(1, 0, 0));
    sim.addParticle(kb, 0, Vec3(-0.5, 0, 0.5), Quat::Identity(), Vec3(0, 3, 4), Vec3(0, 0, 2));
    if (rotatedCube) sim.addParticle(kc, 0, Vec3(0.5, -0.5, 0.75), q);
    dem::Wall floor;
    floor.name = "floor";
    sim.addWall(floor);
    dem::Wall mesh;
    mesh.name = "ramp";
    mesh.kind = dem::WallKind::Mesh;
    mesh.origin = Vec3(0, 0, 2);
    mesh.vertices = {Vec3(0, 0, 0), Vec3(1, 0, 0), Vec3(0, 1, 0)};
    mesh.triangles = {{0, 1, 2}};
    sim.addWall(mesh);
    sim.options().gravity = Vec3::Zero();
    sim.options().timeStep = 1e-6;
    auto init = sim.initialize();
    EXPECT_TRUE(init.ok()) << init.message();
  }
};

/// Two spheres (r 0.01) pressed together head-on along x (overlap 1e-4), a cube (half extent 0.01)
/// 1e-5 into a floor plane at z = 0, and a sphere touching nothing; no gravity, one step of 1e-7 s:
/// two contacts, a particle pair and a wall contact.
struct ContactScene {
  dem::Simulation sim;
  ContactScene() {
    sim.setMaterials({glass()}, dem::ContactModel::HertzMindlin);
    auto ball = dem::makeParticleShape("ball", Shape(Sphere{0.01}));
    auto cube = dem::makeParticleShape("cube", Shape(Box{Vec3::Constant(0.01)}));
    EXPECT_TRUE(ball.ok() && cube.ok());
    const int kb = sim.addShape(ball.value()), kc = sim.addShape(cube.value());
    sim.addParticle(kb, 0, Vec3(0.1, 0.1, 0.5), Quat::Identity());
    sim.addParticle(kb, 0, Vec3(0.1 + 0.0199, 0.1, 0.5), Quat::Identity());
    sim.addParticle(kc, 0, Vec3(0.3, 0.3, 0.00999), Quat::Identity());
    sim.addParticle(kb, 0, Vec3(0.5, 0.5, 0.5), Quat::Identity());
    dem::Wall floor;
    floor.name = "floor";
    sim.addWall(floor);
    sim.options().gravity = Vec3::Zero();
    sim.options().timeStep = 1e-7;
    auto init = sim.initialize();
    EXPECT_TRUE(init.ok()) << init.message();
    sim.run(1);
  }
};

Vec3 pointOf(const VtuArray& a, std::size_t k) { return {a.values[3 * k], a.values[3 * k + 1], a.values[3 * k + 2]}; }

/// Signed volume enclosed by a triangle mesh (positive when the triangles face outwards).
Real enclosedVolume(const io::SurfaceMesh& m) {
  Real v = 0;
  for (const auto& t : m.triangles) v += m.points[t[0]].dot(m.points[t[1]].cross(m.points[t[2]])) / 6;
  return v;
}

}  // namespace

TEST(Output, FormatDuration) {
  EXPECT_EQ(io::formatDuration(12.34), "12.3s");
  EXPECT_EQ(io::formatDuration(0), "0.0s");
  EXPECT_EQ(io::formatDuration(185), "3m05s");
  EXPECT_EQ(io::formatDuration(3720), "1h02m");
  EXPECT_EQ(io::formatDuration(59.97), "1m00s");
  EXPECT_EQ(io::formatDuration(3599.7), "1h00m");
  EXPECT_EQ(io::formatDuration(100 * 3600 + 5 * 60), "100h05m");
  EXPECT_EQ(io::formatDuration(-1), "?");
  EXPECT_EQ(io::formatDuration(std::nan("")), "?");
}

TEST(OutputMesh, IcosphereLevels) {
  const int expectedTriangles[] = {20, 80, 320};
  const int expectedPoints[] = {12, 42, 162};
  for (int level = 0; level <= 2; ++level) {
    const auto m = io::icosphere(level);
    EXPECT_EQ(m.triangles.size(), static_cast<std::size_t>(expectedTriangles[level]));
    EXPECT_EQ(m.points.size(), static_cast<std::size_t>(expectedPoints[level]));
    for (const auto& p : m.points) EXPECT_NEAR(p.norm(), 1, 1e-15);
    for (const auto& t : m.triangles) {  // outward: normal along the triangle's centroid
      const Vec3 n = (m.points[t[1]] - m.points[t[0]]).cross(m.points[t[2]] - m.points[t[0]]);
      EXPECT_GT(n.dot(m.points[t[0]] + m.points[t[1]] + m.points[t[2]]), 0);
    }
    EXPECT_GT(enclosedVolume(m), 0);
    EXPECT_LT(enclosedVolume(m), 4 * std::numbers::pi / 3);
  }
}

TEST(OutputMesh, ShapeSurfaces) {
  // Box: its 8 corners and 12 outward triangles, exactly.
  const auto box = io::shapeSurface(Shape(Box{Vec3(1, 2, 3)}));
  ASSERT_EQ(box.points.size(), 8u);
  ASSERT_EQ(box.triangles.size(), 12u);
  for (const auto& p : box.points) EXPECT_EQ(p.cwiseAbs(), Vec3(1, 2, 3));
  EXPECT_NEAR(enclosedVolume(box), 48, 1e-12);

  // Sphere: points on the surface; level 2 encloses more than level 1.
  const auto s1 = io::shapeSurface(Shape(Sphere{0.5}), 1), s2 = io::shapeSurface(Shape(Sphere{0.5}), 2);
  EXPECT_EQ(s1.triangles.size(), 80u);
  EXPECT_EQ(s2.triangles.size(), 320u);
  for (const auto& p : s1.points) EXPECT_NEAR(p.norm(), 0.5, 1e-15);
  EXPECT_GT(enclosedVolume(s2), enclosedVolume(s1));

  // Ellipsoid: every point satisfies the surface equation.
  const Vec3 r(1, 0.5, 0.25);
  for (const auto& p : io::shapeSurface(Shape(Ellipsoid{r})).points)
    EXPECT_NEAR(p.cwiseQuotient(r).squaredNorm(), 1, 1e-12);

  // Cylinder: flat faces collapse support points; they are merged and no degenerate triangle remains.
  const auto cyl = io::shapeSurface(Shape(Cylinder{1, 2}));
  for (const auto& p : cyl.points) {
    EXPECT_NEAR(std::abs(p.z()), 2, 1e-15);
    EXPECT_LE(std::hypot(p.x(), p.y()), 1 + 1e-15);
  }
  for (const auto& t : cyl.triangles) EXPECT_TRUE(t[0] != t[1] && t[1] != t[2] && t[0] != t[2]);
  EXPECT_GT(enclosedVolume(cyl), 0);
  // Closed and outward (review 2026-11-26: the mapped icosphere folded over at the rims, with
  // zero-area and inward triangles and edges shared by four triangles): every directed edge once,
  // its reverse once, every triangle of positive area facing away from the centre.
  for (const Shape& flat : {Shape(Cylinder{1, 2}), Shape(Cone{0.5, 2}), Shape(Cylinder{0.3, 0.1}, 0.05)}) {
    for (int level : {1, 2}) {
      const auto m = io::shapeSurface(flat, level);
      std::map<std::pair<int, int>, int> edges;
      Vec3 centre = Vec3::Zero();
      for (const auto& p : m.points) centre += p / static_cast<Real>(m.points.size());
      for (const auto& t : m.triangles) {
        for (int k = 0; k < 3; ++k) ++edges[{t[k], t[(k + 1) % 3]}];
        const Vec3 n = (m.points[t[1]] - m.points[t[0]]).cross(m.points[t[2]] - m.points[t[0]]);
        EXPECT_GT(n.norm(), 1e-9) << toString(flat.type()) << " level " << level;
        EXPECT_GT(n.dot(m.points[t[0]] - centre), 0) << toString(flat.type()) << " level " << level;
      }
      for (const auto& [e, count] : edges) {
        EXPECT_EQ(count, 1) << toString(flat.type()) << " level " << level;
        EXPECT_EQ(edges.count({e.second, e.first}), 1u) << toString(flat.type()) << " level " << level;
      }
    }
  }

  // Polytope: the hull's own triangles; inflated: sampled (more points, larger volume).
  std::vector<Vec3> octa = {{1, 0, 0}, {-1, 0, 0}, {0, 1, 0}, {0, -1, 0}, {0, 0, 1}, {0, 0, -1}};
  auto poly = Polytope::fromPoints(octa);
  ASSERT_TRUE(poly.ok());
  const auto o = io::shapeSurface(Shape(poly.value()));
  EXPECT_EQ(o.points.size(), 6u);
  EXPECT_EQ(o.triangles.size(), 8u);
  EXPECT_NEAR(enclosedVolume(o), 4.0 / 3.0, 1e-12);
  const auto rounded = io::shapeSurface(Shape(poly.value(), 0.1));
  EXPECT_GT(rounded.points.size(), 6u);
  EXPECT_GT(enclosedVolume(rounded), 4.0 / 3.0);
  EXPECT_LT(enclosedVolume(rounded), 4.0 / 3.0 + 8 * 0.1 * std::sqrt(3.0) / 2 * 2 + 0.1);

  // Particle shape: into the body frame by `local` (the cone's centroid sits at -h/4).
  auto cone = dem::makeParticleShape("cone", Shape(Cone{0.5, 2}));
  ASSERT_TRUE(cone.ok()) << cone.message();
  const auto own = io::shapeSurface(cone.value().shape);
  const auto body = io::surfaceMesh(cone.value());
  ASSERT_EQ(own.points.size(), body.points.size());
  for (std::size_t k = 0; k < own.points.size(); ++k)
    EXPECT_LT((body.points[k] - cone.value().local.apply(own.points[k])).norm(), 1e-15);
  Real farthest = 0;
  for (const auto& p : body.points) farthest = std::max(farthest, p.norm());
  EXPECT_NEAR(farthest, 1.5, 1e-12) << "the apex is 3h/4 from the centroid";
}

TEST(OutputVtk, FrameFilesParseAndHoldWorldGeometry) {
  Scene scene;
  const auto& sim = scene.sim;
  const fs::path dir = freshDir("frame");
  const Cleanup cleanup{dir};
  io::VtkSeriesWriter writer(dir);
  auto w = writer.writeFrame(sim);
  ASSERT_TRUE(w.ok()) << w.message();

  Vtu vtu;
  ASSERT_TRUE(readVtu(dir / "frames/particles_000000.vtu", vtu));
  EXPECT_EQ(vtu.file["type"], "UnstructuredGrid");
  EXPECT_EQ(vtu.file["version"], "1.0");
  EXPECT_EQ(vtu.file["byte_order"], "LittleEndian");
  EXPECT_EQ(vtu.file["header_type"], "UInt64");
  EXPECT_EQ(vtu.points, 8u + 42u + 8u);
  EXPECT_EQ(vtu.cells, 12u + 80u + 12u);
  EXPECT_EQ(vtu.timeValue, 0.0);

  // The first cube: exactly its 8 world corners (dyadic coordinates, identity orientation).
  const auto& pts = vtu.at("Points/Points");
  ASSERT_EQ(pts.values.size(), 3 * vtu.points);
  std::vector<Vec3> corners;
  for (std::size_t k = 0; k < 8; ++k) corners.push_back(pointOf(pts, k));
  for (int sx : {-1, 1})
    for (int sy : {-1, 1})
      for (int sz : {-1, 1}) {
        const Vec3 c = Vec3(0.25, 0.5, 0.125) + 0.0625 * Vec3(sx, sy, sz);
        EXPECT_EQ(std::count(corners.begin(), corners.end(), c), 1) << c.transpose();
      }
  // The sphere: 42 points at distance r from its centre.
  for (std::size_t k = 8; k < 50; ++k) EXPECT_NEAR((pointOf(pts, k) - Vec3(-0.5, 0, 0.5)).norm(), 0.01, 1e-14);
  // The rotated cube: q * corner + x.
  const Vec3 x3(0.5, -0.5, 0.75);
  for (std::size_t k = 50; k < 58; ++k) {
    const Vec3 local = scene.q.inverse() * (pointOf(pts, k) - x3);
    EXPECT_NEAR(local.cwiseAbs().maxCoeff(), 0.0625, 1e-14);
    EXPECT_NEAR(local.cwiseAbs().minCoeff(), 0.0625, 1e-14);
  }

  // Cells: triangles indexing their own particle's points.
  const auto& conn = vtu.at("Cells/connectivity").ints;
  const auto& offs = vtu.at("Cells/offsets").ints;
  const auto& types = vtu.at("Cells/types").ints;
  ASSERT_EQ(conn.size(), 3 * vtu.cells);
  ASSERT_EQ(offs.size(), vtu.cells);
  EXPECT_EQ(offs.back(), static_cast<std::int64_t>(conn.size()));
  EXPECT_TRUE(std::all_of(types.begin(), types.end(), [](auto t) { return t == 5; }));
  for (std::size_t c = 0; c < 12; ++c)
    for (int v = 0; v < 3; ++v) EXPECT_LT(conn[3 * c + v], 8);
  for (std::size_t c = 12; c < 92; ++c)
    for (int v = 0; v < 3; ++v) EXPECT_TRUE(conn[3 * c + v] >= 8 && conn[3 * c + v] < 50);

  // Point data: the particle's values on each of its points.
  const auto& id = vtu.at("PointData/id");
  EXPECT_EQ(id.type, "Int64");
  EXPECT_EQ(id.ints[0], sim.particles().id[0]);
  EXPECT_EQ(id.ints[8], sim.particles().id[1]);
  EXPECT_EQ(id.ints[57], sim.particles().id[2]);
  EXPECT_EQ(vtu.at("PointData/velocity").components, 3);
  EXPECT_EQ(pointOf(vtu.at("PointData/velocity"), 20), Vec3(0, 3, 4));
  EXPECT_EQ(pointOf(vtu.at("PointData/angular_velocity"), 20), Vec3(0, 0, 2));
  EXPECT_EQ(vtu.at("PointData/speed").values[20], 5);
  EXPECT_EQ(vtu.at("PointData/shape").type, "Int32");
  EXPECT_EQ(vtu.at("PointData/shape").ints[20], 1);
  EXPECT_EQ(vtu.at("PointData/material").ints[20], 0);

  // Centres: one vertex per particle.
  Vtu centres;
  ASSERT_TRUE(readVtu(dir / "frames/centres_000000.vtu", centres));
  EXPECT_EQ(centres.points, 3u);
  EXPECT_EQ(centres.cells, 3u);
  EXPECT_EQ(pointOf(centres.at("Points/Points"), 1), Vec3(-0.5, 0, 0.5));
  EXPECT_TRUE(std::all_of(centres.at("Cells/types").ints.begin(), centres.at("Cells/types").ints.end(),
                          [](auto t) { return t == 1; }));
  const auto& orient = centres.at("PointData/orientation");
  ASSERT_EQ(orient.components, 4);
  EXPECT_DOUBLE_EQ(orient.values[8], sim.particles().orientation[2].w());
  EXPECT_DOUBLE_EQ(orient.values[9], sim.particles().orientation[2].x());
  EXPECT_DOUBLE_EQ(centres.at("PointData/bounding_radius").values[1], 0.01);
  EXPECT_EQ(centres.at("PointData/force").values.size(), 9u);
  EXPECT_EQ(centres.at("PointData/velocity").values.size(), 9u);

  // Walls: the floor as a quad centred under the particles' centroid, the mesh as its triangle.
  Vtu walls;
  ASSERT_TRUE(readVtu(dir / "frames/walls_000000.vtu", walls));
  EXPECT_EQ(walls.points, 7u);
  EXPECT_EQ(walls.cells, 2u);
  EXPECT_EQ(walls.at("Cells/types").ints, (std::vector<std::int64_t>{9, 5}));
  EXPECT_EQ(walls.at("CellData/wall").ints, (std::vector<std::int64_t>{0, 1}));
  Vec3 centre = Vec3::Zero();
  for (std::size_t k = 0; k < 4; ++k) {
    EXPECT_EQ(pointOf(walls.at("Points/Points"), k).z(), 0);
    centre += pointOf(walls.at("Points/Points"), k) / 4;
  }
  const Vec3 centroid = (Vec3(0.25, 0.5, 0.125) + Vec3(-0.5, 0, 0.5) + x3) / 3;
  EXPECT_NEAR(centre.x(), centroid.x(), 1e-12);
  EXPECT_NEAR(centre.y(), centroid.y(), 1e-12);
  const Real side = (pointOf(walls.at("Points/Points"), 1) - pointOf(walls.at("Points/Points"), 0)).norm();
  EXPECT_GT(side, 1.5 * 2.0) << "1.5 x the diagonal of a scene that spans more than 2 units (the mesh at z = 2)";
  EXPECT_EQ(pointOf(walls.at("Points/Points"), 5), Vec3(1, 0, 2));

  // No contact in this scene: an empty contact network (no points, no cells), still a valid frame.
  Vtu network;
  ASSERT_TRUE(readVtu(dir / "frames/contacts_000000.vtu", network));
  EXPECT_EQ(network.points, 0u);
  EXPECT_EQ(network.cells, 0u);
  EXPECT_TRUE(fs::exists(dir / "contacts.pvd"));

  // Files are renamed into place: no temporary is left behind.
  for (const auto& e : fs::recursive_directory_iterator(dir)) EXPECT_NE(e.path().extension(), ".tmp") << e.path();
}

// The contact network frame (force chains): one line per contact of the last step, from centre to
// centre (to the contact point for a wall contact), carrying what Simulation::contacts() reports.
// Two spheres pressed together head-on along x, a cube resting on the floor with a small overlap, and
// a sphere touching nothing; no gravity, one step.
TEST(OutputVtk, ContactNetworkFrameHoldsEveryContact) {
  ContactScene scene;
  const dem::Simulation& sim = scene.sim;
  const auto contacts = sim.contacts();
  ASSERT_EQ(contacts.size(), 2u) << "the sphere pair and the cube on the floor";

  const fs::path dir = freshDir("network");
  const Cleanup cleanup{dir};
  io::VtkSeriesWriter writer(dir);
  ASSERT_TRUE(writer.writeFrame(sim).ok());
  Vtu net;
  ASSERT_TRUE(readVtu(dir / "frames/contacts_000000.vtu", net));
  ASSERT_EQ(net.cells, 2u);
  ASSERT_EQ(net.points, 4u);
  EXPECT_EQ(net.at("Cells/types").ints, (std::vector<std::int64_t>{3, 3}));
  EXPECT_EQ(net.at("Cells/offsets").ints, (std::vector<std::int64_t>{2, 4}));
  EXPECT_EQ(net.at("Cells/connectivity").ints, (std::vector<std::int64_t>{0, 1, 2, 3}));
  const auto& P = sim.particles();
  for (std::size_t c = 0; c < 2; ++c) {
    const dem::ContactInfo& k = contacts[c];
    const bool wall = k.j < 0;
    const auto i = static_cast<std::size_t>(k.i);
    EXPECT_EQ(pointOf(net.at("Points/Points"), 2 * c), P.position[i]);
    EXPECT_EQ(pointOf(net.at("Points/Points"), 2 * c + 1), wall ? k.point : P.position[static_cast<std::size_t>(k.j)]);
    EXPECT_EQ(net.at("CellData/id_i").ints[c], wall ? -1 : P.id[i]);
    EXPECT_EQ(net.at("CellData/id_j").ints[c], wall ? P.id[i] : P.id[static_cast<std::size_t>(k.j)]);
    EXPECT_EQ(net.at("CellData/wall").ints[c], wall ? 0 : -1);
    EXPECT_EQ(pointOf(net.at("CellData/force"), c), k.force);
    EXPECT_EQ(pointOf(net.at("CellData/normal"), c), k.normal);
    EXPECT_EQ(pointOf(net.at("CellData/contact_point"), c), k.point);
    EXPECT_EQ(net.at("CellData/overlap").values[c], k.depth);
    // Both contacts push their bodies apart and are head-on: a positive normal part equal to |force|.
    EXPECT_GT(net.at("CellData/normal_force").values[c], 0);
    EXPECT_NEAR(net.at("CellData/normal_force").values[c], k.force.norm(), 1e-12 * k.force.norm());
    EXPECT_LE(net.at("CellData/tangential_force").values[c], 1e-9 * k.force.norm());
  }
  // The sphere pair along +x (from the first towards the second, the force on the second along +x),
  // the cube pushed up by the floor; overlaps as placed (one step of 1e-7 s moves nothing measurable).
  const std::size_t pair = contacts[0].j >= 0 ? 0 : 1, onWall = 1 - pair;
  EXPECT_NEAR(net.at("CellData/overlap").values[pair], 1e-4, 1e-9);
  EXPECT_NEAR(net.at("CellData/overlap").values[onWall], 1e-5, 1e-9);
  EXPECT_GT(pointOf(net.at("CellData/force"), pair).x(), 0);
  EXPECT_GT(pointOf(net.at("CellData/force"), onWall).z(), 0);
  EXPECT_NEAR(pointOf(net.at("CellData/contact_point"), onWall).z(), 0, 1e-5);
}

TEST(OutputVtk, Float32Option) {
  Scene scene(false);
  const fs::path dir = freshDir("f32");
  const Cleanup cleanup{dir};
  io::VtkOptions opt;
  opt.float32 = true;
  opt.sphereSubdivision = 2;
  opt.walls = false;
  io::VtkSeriesWriter writer(dir, "grains", opt);
  ASSERT_TRUE(writer.writeFrame(scene.sim).ok());
  Vtu vtu;
  ASSERT_TRUE(readVtu(dir / "frames/grains_000000.vtu", vtu));
  EXPECT_EQ(vtu.at("Points/Points").type, "Float32");
  EXPECT_EQ(vtu.points, 8u + 162u);
  EXPECT_EQ(vtu.cells, 12u + 320u);
  EXPECT_TRUE(fs::exists(dir / "grains.pvd"));
  EXPECT_FALSE(fs::exists(dir / "walls.pvd"));
}

TEST(OutputVtk, PvdListsFramesAndResumeDropsLaterOnes) {
  Scene scene;
  auto& sim = scene.sim;
  const fs::path dir = freshDir("pvd");
  const Cleanup cleanup{dir};
  std::vector<double> times;
  {
    io::VtkSeriesWriter writer(dir);
    for (int f = 0; f < 4; ++f) {
      if (f > 0) sim.run(5);
      times.push_back(sim.time());
      ASSERT_TRUE(writer.writeFrame(sim).ok());
    }
    EXPECT_EQ(writer.nextFrame(), 4);
  }
  for (const char* name : {"particles", "centres", "walls", "contacts"}) {
    auto entries = io::readPvd(dir / (std::string(name) + ".pvd"));
    ASSERT_TRUE(entries.ok()) << entries.message();
    ASSERT_EQ(entries.value().size(), 4u) << name;
    for (int f = 0; f < 4; ++f) {
      EXPECT_EQ(entries.value()[f].time, times[f]) << "timestep round-trips exactly";
      char file[64];
      std::snprintf(file, sizeof file, "frames/%s_%06d.vtu", name, f);
      EXPECT_EQ(entries.value()[f].file, file);
      EXPECT_TRUE(fs::exists(dir / file));
    }
  }
  const std::string pvd = slurp(dir / "particles.pvd");
  EXPECT_NE(pvd.find("<VTKFile type=\"Collection\""), std::string::npos);
  EXPECT_NE(pvd.find("</Collection>\n</VTKFile>"), std::string::npos);
  EXPECT_FALSE(fs::exists(dir / "particles.pvd.tmp"));

  // Resume at the time of frame 1: frames 2 and 3 are dropped, numbering continues at 2.
  io::VtkSeriesWriter again(dir);
  auto next = again.resume(times[1]);
  ASSERT_TRUE(next.ok()) << next.message();
  EXPECT_EQ(next.value(), 2);
  EXPECT_EQ(again.particleEntries().size(), 2u);
  EXPECT_EQ(io::readPvd(dir / "walls.pvd").value().size(), 2u);
  EXPECT_FALSE(fs::exists(dir / "frames/particles_000002.vtu"));
  EXPECT_FALSE(fs::exists(dir / "frames/centres_000003.vtu"));
  EXPECT_FALSE(fs::exists(dir / "frames/contacts_000002.vtu"));
  EXPECT_EQ(io::readPvd(dir / "contacts.pvd").value().size(), 2u);
  ASSERT_TRUE(again.writeFrame(sim).ok());
  auto entries = io::readPvd(dir / "particles.pvd").value();
  ASSERT_EQ(entries.size(), 3u);
  EXPECT_EQ(entries[2].file, "frames/particles_000002.vtu");
  EXPECT_EQ(entries[2].time, sim.time());

  // Resuming where there is nothing: starts at frame 0.
  const fs::path emptyDir = freshDir("pvd_empty");
  const Cleanup cleanupEmpty{emptyDir};
  io::VtkSeriesWriter empty(emptyDir);
  EXPECT_EQ(empty.resume(1.0).value(), 0);
}

TEST(OutputCsv, HeaderRowsAndResume) {
  Scene scene;
  auto& sim = scene.sim;
  const fs::path dir = freshDir("csv");
  const Cleanup cleanup{dir};
  const std::string header =
      "step,time,kinetic_energy,potential_energy,contacts,wall_contacts,mean_overlap,max_overlap,"
      "coordination_number,max_speed,narrow_phase_calls,narrow_phase_skipped,neighbour_rebuilds";
  double ke0 = 0;
  {
    io::CsvTimeSeries csv(dir);
    ASSERT_TRUE(csv.addColumn("lid_height").ok());
    EXPECT_FALSE(csv.addColumn("bad,name").ok());
    const double extra[] = {0.5};
    ke0 = sim.stats().kineticEnergy;
    for (int r = 0; r < 5; ++r) {
      ASSERT_TRUE(csv.row(sim, extra).ok());
      // Written as the run goes: the row is on disk before the next one.
      EXPECT_EQ(lines(dir / "timeseries.csv").size(), static_cast<std::size_t>(r + 2));
      sim.run(3);
    }
    EXPECT_FALSE(csv.row(sim).ok()) << "missing extra value";
    EXPECT_FALSE(csv.addColumn("late").ok());
    EXPECT_EQ(csv.rowsWritten(), 5);
  }
  auto rows = lines(dir / "timeseries.csv");
  ASSERT_EQ(rows.size(), 6u);
  EXPECT_EQ(rows[0], header + ",lid_height");
  for (std::size_t r = 1; r < rows.size(); ++r) {
    EXPECT_EQ(countFields(rows[r]), 14u) << rows[r];
    EXPECT_TRUE(rows[r].starts_with(std::to_string(3 * (r - 1)) + ",")) << rows[r];
    EXPECT_TRUE(rows[r].ends_with(",0.5")) << rows[r];
  }
  // The values are the simulation's stats (%.10g) and counters.
  char ke[32];
  std::snprintf(ke, sizeof ke, "%.10g", ke0);
  EXPECT_EQ(field(rows[1], 2), ke);
  EXPECT_GT(ke0, 0) << "the cube moves at 1 m/s";
  EXPECT_EQ(field(rows[1], 1), "0");

  // Resume after step 6: rows with step 9 and 12 are removed, new rows appended.
  {
    io::CsvTimeSeries csv(dir, std::int64_t{6});
    ASSERT_TRUE(csv.addColumn("lid_height").ok());
    const double extra[] = {0.25};
    ASSERT_TRUE(csv.row(sim, extra).ok());
  }
  rows = lines(dir / "timeseries.csv");
  ASSERT_EQ(rows.size(), 5u);
  EXPECT_TRUE(rows[3].starts_with("6,"));
  EXPECT_TRUE(rows[4].starts_with(std::to_string(sim.stepCount()) + ","));
  EXPECT_TRUE(rows[4].ends_with(",0.25"));

  // Resuming with different columns is refused (the old file is kept).
  io::CsvTimeSeries other(dir, std::int64_t{6});
  EXPECT_FALSE(other.row(sim).ok());
  EXPECT_EQ(lines(dir / "timeseries.csv").size(), 5u);

  // Without resume the file starts afresh.
  io::CsvTimeSeries fresh(dir);
  ASSERT_TRUE(fresh.row(sim).ok());
  rows = lines(dir / "timeseries.csv");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0], header);
  EXPECT_EQ(countFields(rows[1]), 13u);
}

TEST(OutputJson, SummaryHasKeysAndMergesExtra) {
  Scene scene;
  scene.sim.run(4);
  const fs::path dir = freshDir("json");
  const Cleanup cleanup{dir};
  fs::create_directories(dir);
  const json extra = {{"wall_time_seconds", 1.5}, {"steps_per_second", 2.67}, {"scenario", "demo.yaml"}};
  auto w = io::writeSummaryJson(dir / "summary.json", scene.sim, extra);
  ASSERT_TRUE(w.ok()) << w.message();
  const json j = json::parse(slurp(dir / "summary.json"));
  for (const char* key :
       {"particles", "walls", "time", "steps", "time_step", "particle_volume", "shapes", "materials", "stats",
        "counters", "narrow_phase_saved_fraction", "state_hash", "wall_time_seconds", "steps_per_second", "scenario"})
    EXPECT_TRUE(j.contains(key)) << key;
  EXPECT_EQ(j["particles"], 3);
  EXPECT_EQ(j["walls"], 2);
  EXPECT_EQ(j["steps"], 4);
  EXPECT_EQ(j["wall_time_seconds"], 1.5);
  ASSERT_EQ(j["shapes"].size(), 2u);
  EXPECT_EQ(j["shapes"][0]["name"], "cube");
  EXPECT_EQ(j["shapes"][0]["type"], "box");
  EXPECT_EQ(j["shapes"][0]["particles"], 2);
  EXPECT_EQ(j["shapes"][1]["particles"], 1);
  EXPECT_NEAR(j["shapes"][0]["volume"].get<double>(), 0.125 * 0.125 * 0.125, 1e-15);
  EXPECT_NEAR(j["shapes"][1]["bounding_radius"].get<double>(), 0.01, 1e-15);
  EXPECT_NEAR(j["shapes"][1]["equivalent_radius"].get<double>(), 0.01, 1e-12);
  for (const char* key : {"kinetic_energy", "potential_energy", "contacts", "wall_contacts", "mean_overlap",
                          "max_overlap", "coordination_number", "max_speed"})
    EXPECT_TRUE(j["stats"].contains(key)) << key;
  for (const char* key : {"narrow_phase_calls", "narrow_phase_skipped", "neighbour_rebuilds", "warnings"})
    EXPECT_TRUE(j["counters"].contains(key)) << key;
  const double f = j["narrow_phase_saved_fraction"];
  EXPECT_GE(f, 0);
  EXPECT_LE(f, 1);
  const auto& c = scene.sim.counters();
  if (c.narrowPhaseCalls + c.narrowPhaseSkipped > 0) {
    EXPECT_DOUBLE_EQ(f, double(c.narrowPhaseSkipped) / double(c.narrowPhaseCalls + c.narrowPhaseSkipped));
  }
  EXPECT_FALSE(fs::exists(dir / "summary.json.tmp"));
  // extra overrides a computed key of the same name
  EXPECT_EQ(io::summaryJson(scene.sim, {{"particles", "many"}})["particles"], "many");
}

// Optional: read the frames with VTK's own XML reader when a Python with the vtk module is present.
TEST(OutputVtk, ReadableByVtkWhenAvailable) {
  std::string python;
  for (const char* candidate : {"python3", "/usr/bin/python3"}) {
    const std::string cmd = std::string(candidate) + " -c \"import vtk\" >/dev/null 2>&1";
    if (std::system(cmd.c_str()) == 0) {
      python = candidate;
      break;
    }
  }
  if (python.empty()) GTEST_SKIP() << "no python3 with the vtk module";
  Scene scene;
  const fs::path dir = freshDir("vtk");
  const Cleanup cleanup{dir};
  io::VtkSeriesWriter writer(dir);
  ASSERT_TRUE(writer.writeFrame(scene.sim).ok());
  ContactScene touching;  // (a second series in the same folder, for its contact network)
  io::VtkSeriesWriter second(dir / "touching");
  ASSERT_TRUE(second.writeFrame(touching.sim).ok());
  const fs::path script = dir / "check.py";
  std::ofstream(script)
      << "import sys, vtk\n"
         "def read(p):\n"
         "    r = vtk.vtkXMLUnstructuredGridReader(); r.SetFileName(p); r.Update()\n"
         "    return r.GetOutput()\n"
         "d = sys.argv[1]\n"
         "g = read(d + '/frames/particles_000000.vtu')\n"
         "assert g.GetNumberOfPoints() == 58 and g.GetNumberOfCells() == 104, (g.GetNumberOfPoints(), "
         "g.GetNumberOfCells())\n"
         "assert g.GetPointData().GetArray('velocity').GetNumberOfComponents() == 3\n"
         "assert g.GetPointData().GetArray('speed').GetValue(20) == 5.0\n"
         "assert g.GetCellType(0) == 5\n"
         "c = read(d + '/frames/centres_000000.vtu')\n"
         "assert c.GetNumberOfPoints() == 3 and c.GetPointData().GetArray('orientation').GetNumberOfComponents() == 4\n"
         "w = read(d + '/frames/walls_000000.vtu')\n"
         "assert w.GetNumberOfCells() == 2 and w.GetCellType(0) == 9\n"
         "e = read(d + '/frames/contacts_000000.vtu')\n"
         "assert e.GetNumberOfPoints() == 0 and e.GetNumberOfCells() == 0\n"
         "n = read(d + '/touching/frames/contacts_000000.vtu')\n"
         "assert n.GetNumberOfCells() == 2 and n.GetCellType(0) == 3 and n.GetCellType(1) == 3\n"
         "assert n.GetCellData().GetArray('force').GetNumberOfComponents() == 3\n"
         "assert n.GetCellData().GetArray('normal_force').GetValue(0) > 0\n"
         "p = vtk.vtkPVDReader() if hasattr(vtk, 'vtkPVDReader') else None\n"
         "print('ok')\n";
  const std::string cmd =
      python + " " + script.string() + " " + dir.string() + " > " + (dir / "out.txt").string() + " 2>&1";
  EXPECT_EQ(std::system(cmd.c_str()), 0) << slurp(dir / "out.txt");
}
