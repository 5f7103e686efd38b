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
Result<TriangleMesh> readMesh(const std::string& path);
Result<TriangleMesh> readObj(const std::string& path);
Result<TriangleMesh> readStl(const std::string& path);

}  // namespace proxima::io
