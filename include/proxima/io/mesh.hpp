// Triangle-mesh import: Wavefront OBJ and STL (ASCII or binary). For convex shapes only the
// vertices matter (their convex hull is taken); faces are kept for later mesh-based capabilities.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "proxima/core/status.hpp"
#include "proxima/core/types.hpp"

namespace proxima::io {

struct TriangleMesh {
  std::vector<Vec3> vertices;
  std::vector<std::array<int, 3>> triangles;
};

/// Reads an OBJ or STL file (chosen by extension, case-insensitive). Errors name the file and line.
/// OBJ faces take each vertex as v, v/vt, v//vn or v/vt/vn (integers; negative = relative to the
/// last element defined so far); anything else, or an index out of range, is an error naming the
/// line and the token.
Result<TriangleMesh> readMesh(const std::string& path);
Result<TriangleMesh> readObj(const std::string& path);
Result<TriangleMesh> readStl(const std::string& path);

}  // namespace proxima::io
