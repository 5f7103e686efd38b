#include "proxima/io/mesh.hpp"

#include <algorithm>
#include <charconv>
#include <cctype>
#include <cstdint>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string_view>

#include "proxima/core/tolerances.hpp"

namespace proxima::io {
namespace {

using R = Result<TriangleMesh>;

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

R fail(const std::string& path, std::size_t line, const std::string& what) {
  std::ostringstream m;
  m << path;
  if (line > 0) m << ":" << line;
  m << ": " << what;
  return R::failure(m.str());
}

R finish(const std::string& path, TriangleMesh mesh) {
  if (mesh.vertices.empty()) return fail(path, 0, "mesh has no vertices");
  for (std::size_t i = 0; i < mesh.vertices.size(); ++i)
    if (!mesh.vertices[i].allFinite()) return fail(path, 0, "vertex " + std::to_string(i) + " is not finite");
  return mesh;
}

// A vertex's three coordinates from the rest of its line: each a whole token that is a finite
// number (std::from_chars: `>>` read '3abc' as 3 and 'nan' as a parse failure). Empty on success,
// else what is wrong.
std::string readPoint(std::istringstream& s, Vec3& p) {
  for (int c = 0; c < 3; ++c) {
    std::string tok;
    if (!(s >> tok)) return "vertex needs three numbers";
    double x = 0;
    const char* begin = tok.data() + (tok.size() > 1 && tok[0] == '+');  // (from_chars takes no '+')
    const char* end = tok.data() + tok.size();
    const auto [q, ec] = std::from_chars(begin, end, x);
    if (ec == std::errc::result_out_of_range) return "vertex coordinate '" + tok + "' is out of range";
    if (ec != std::errc() || q != end) return "vertex coordinate '" + tok + "' is not a number";
    if (!std::isfinite(x)) return "vertex coordinate '" + tok + "' is not finite";
    // (the shape would refuse it too, but without the file and line)
    if (std::abs(x) > tol::kMaxMagnitude) return "vertex coordinate '" + tok + "' is beyond the supported range (|x| > 1e60)";
    p[c] = x;
  }
  return {};
}

}  // namespace

R readObj(const std::string& path) {
  std::ifstream in(path);
  if (!in) return fail(path, 0, "cannot open file");
  TriangleMesh mesh;
  std::string line;
  std::size_t no = 0;
  long long texCoords = 0, normals = 0;  // vt and vn lines so far (face indices must refer to them)
  while (std::getline(in, line)) {
    ++no;
    if (!line.empty() && line.back() == '\r') line.pop_back();  // CRLF files
    std::istringstream s(line);
    std::string tag;
    if (!(s >> tag) || tag[0] == '#') continue;
    if (tag == "v") {
      Vec3 p;
      if (const std::string why = readPoint(s, p); !why.empty()) return fail(path, no, why);
      mesh.vertices.push_back(p);
    } else if (tag == "vt") {
      ++texCoords;
    } else if (tag == "vn") {
      ++normals;
    } else if (tag == "f") {
      std::vector<int> idx;
      std::string tok;
      while (s >> tok) {
        // One face vertex: v, v/vt, v//vn or v/vt/vn, each field a whole integer (std::from_chars: no
        // '+', no spaces, nothing after the digits; atoi read '3abc' as 3 and overflowed silently).
        std::string_view fields[3];  // v, vt, vn; empty = absent
        const std::string_view t(tok);
        const std::size_t s1 = t.find('/'), s2 = s1 == t.npos ? t.npos : t.find('/', s1 + 1);
        bool form = s2 == t.npos || t.find('/', s2 + 1) == t.npos;  // at most two slashes
        fields[0] = t.substr(0, s1);
        if (s1 != t.npos) fields[1] = t.substr(s1 + 1, s2 == t.npos ? t.npos : s2 - s1 - 1);
        if (s2 != t.npos) fields[2] = t.substr(s2 + 1);
        form = form && !fields[0].empty() && (s1 == t.npos || s2 != t.npos || !fields[1].empty()) &&
               (s2 == t.npos || !fields[2].empty());
        const long long counts[3] = {static_cast<long long>(mesh.vertices.size()), texCoords, normals};
        const char* what[3] = {"vertex", "texture coordinate", "normal"};
        long long resolved[3] = {0, 0, 0};
        for (int f = 0; f < 3 && form; ++f) {
          if (fields[f].empty()) continue;
          long long k = 0;
          const char* end = fields[f].data() + fields[f].size();
          const auto [p, ec] = std::from_chars(fields[f].data(), end, k);
          if (p != end || (ec != std::errc() && ec != std::errc::result_out_of_range)) {
            form = false;
            break;
          }
          // Positive indices count from 1, negative ones back from the last element defined so far;
          // 0 and anything beyond (including integers too large for 64 bits) is out of range.
          resolved[f] = k > 0 ? k - 1 : counts[f] + k;
          if (ec != std::errc() || k == 0 || resolved[f] < 0 || resolved[f] >= counts[f])
            return fail(path, no,
                        "face vertex '" + tok + "': " + what[f] + " index out of range (" + std::to_string(counts[f]) +
                            " defined so far)");
        }
        if (!form)
          return fail(path, no, "face vertex '" + tok + "' is not v, v/vt, v//vn or v/vt/vn with integer indices");
        idx.push_back(static_cast<int>(resolved[0]));
      }
      if (idx.size() < 3) return fail(path, no, "face needs at least three vertices");
      for (std::size_t j = 1; j + 1 < idx.size(); ++j) mesh.triangles.push_back({idx[0], idx[j], idx[j + 1]});
    }
  }
  return finish(path, std::move(mesh));
}

R readStl(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return fail(path, 0, "cannot open file");
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  TriangleMesh mesh;
  std::map<std::array<double, 3>, int> ids;  // merge the repeated corners of STL facets
  auto vertexId = [&](const Vec3& p) {
    const std::array<double, 3> key{p.x(), p.y(), p.z()};
    auto [it, inserted] = ids.emplace(key, static_cast<int>(mesh.vertices.size()));
    if (inserted) mesh.vertices.push_back(p);
    return it->second;
  };
  // Binary STL: 80-byte header, uint32 count, 50 bytes per facet. Its size identifies it even when
  // the header starts with "solid" (as many exporters write).
  if (bytes.size() >= 84) {
    std::uint32_t n;
    std::memcpy(&n, bytes.data() + 80, 4);
    if (bytes.size() == 84 + 50ull * n) {
      for (std::uint32_t f = 0; f < n; ++f) {
        const char* p = bytes.data() + 84 + 50ull * f + 12;
        std::array<int, 3> tri{};
        for (int k = 0; k < 3; ++k) {
          float c[3];
          std::memcpy(c, p + 12 * k, 12);
          // (before the merge: a NaN key breaks the map's ordering and the vertex would vanish)
          if (!(std::isfinite(c[0]) && std::isfinite(c[1]) && std::isfinite(c[2])))
            return fail(path, 0, "binary facet " + std::to_string(f) + ", corner " + std::to_string(k) + " is not finite");
          tri[k] = vertexId(Vec3(c[0], c[1], c[2]));
        }
        mesh.triangles.push_back(tri);
      }
      return finish(path, std::move(mesh));
    }
  }
  std::istringstream s(bytes);
  std::string line;
  std::size_t no = 0;
  std::vector<int> facet;
  bool sawSolid = false;
  while (std::getline(s, line)) {
    ++no;
    std::istringstream ls(line);
    std::string tag;
    if (!(ls >> tag)) continue;
    if (tag == "solid") sawSolid = true;
    else if (tag == "vertex") {
      Vec3 p;
      if (const std::string why = readPoint(ls, p); !why.empty()) return fail(path, no, why);
      facet.push_back(vertexId(p));
    } else if (tag == "endloop") {
      if (facet.size() != 3) return fail(path, no, "facet does not have three vertices");
      mesh.triangles.push_back({facet[0], facet[1], facet[2]});
      facet.clear();
    }
  }
  if (!sawSolid) return fail(path, 0, "neither a binary STL (size mismatch) nor an ASCII STL ('solid' missing)");
  return finish(path, std::move(mesh));
}

R readMesh(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) return fail(path, 0, "is a directory, not a mesh file");
  const std::string l = lower(path);
  auto ends = [&](const char* e) { return l.size() >= std::strlen(e) && l.compare(l.size() - std::strlen(e), std::string::npos, e) == 0; };
  if (ends(".obj")) return readObj(path);
  if (ends(".stl")) return readStl(path);
  return fail(path, 0, "unknown mesh format (expected .obj or .stl)");
}

}  // namespace proxima::io
