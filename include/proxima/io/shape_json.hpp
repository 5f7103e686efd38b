// JSON description of shapes, pairs and query results: the stable contract of `proxima distance`.
//
// SHAPE = {"type": ..., type fields..., "position": [x,y,z], "orientation": [w,x,y,z], "inflate": r}
// PAIR  = {"a": SHAPE, "b": SHAPE, "id": any (optional, echoed in the result)}
// Unknown keys are errors; every error names the offending field ("b.radius: must be >= 0 ...").
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "proxima/narrowphase/gjk.hpp"
#include "proxima/narrowphase/penetration.hpp"
#include "proxima/shapes/shape.hpp"

namespace proxima::io {

struct PlacedShape {
  Shape shape;
  Transform pose;
};

struct ShapePair {
  PlacedShape a, b;
  nlohmann::json id;  ///< null when absent
};

/// Loads meshes once per path across many pairs (batch mode).
class MeshCache {
 public:
  Result<Polytope> hullOf(const std::string& path);

 private:
  std::map<std::string, Polytope> hulls_;
};

/// Parses JSON text as nlohmann::json::parse does, but refuses what it would accept silently: a key
/// given twice in one object (nlohmann keeps the last) and a number too small for a double (1e-400
/// would read as 0). Throws std::invalid_argument naming the field ("a.radius: duplicate key");
/// syntax errors and numbers beyond a double throw nlohmann::json::exception as parse() does.
nlohmann::json parseJsonStrict(std::string_view text);

/// where: the field path used in error messages ("a", "b"). baseDir resolves relative mesh paths.
Result<PlacedShape> parseShape(const nlohmann::json& j, const std::string& where, const std::string& baseDir,
                               MeshCache* meshes = nullptr);
Result<ShapePair> parsePair(const nlohmann::json& j, const std::string& baseDir, MeshCache* meshes = nullptr);

/// {"status", "distance", "witness_a", "witness_b", "normal", "iterations", ["message"], ["id"]}.
/// Non-finite numbers are written as null.
nlohmann::json toJson(const DistanceResult& r);

/// The distance keys plus "depth" (>= 0), "contact_point", "contacts": [{"point", "depth"}...]
/// (the manifold; empty when apart), "expansions" and "method".
nlohmann::json toJson(const ContactResult& r);

/// An invalid_input result carrying a message (for lines that cannot be parsed). With a contact
/// method: the keys of toJson(ContactResult) (depth null, no contacts), so `proxima contact` output
/// has one schema.
nlohmann::json invalidInputJson(const std::string& message, const nlohmann::json& id = nullptr,
                                const std::optional<PenetrationMethod>& contactMethod = std::nullopt);

}  // namespace proxima::io
