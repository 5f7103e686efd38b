#include "proxima/io/shape_json.hpp"

#include <cmath>
#include <filesystem>
#include <cstdio>
#include <iostream>
#include <limits>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "proxima/io/mesh.hpp"
#include "proxima/shapes/rock.hpp"

namespace proxima::io {
namespace {

using json = nlohmann::json;

struct ParseError {
  std::string message;
};

[[noreturn]] void fail(const std::string& field, const std::string& what) { throw ParseError{field + ": " + what}; }

Real number(const json& j, const std::string& field) {
  if (!j.is_number()) fail(field, "expected a number, got " + std::string(j.type_name()));
  const Real x = j.get<Real>();
  if (!std::isfinite(x)) fail(field, "not finite");
  // Sizes and coordinates enter products (support values, squared distances): beyond this they
  // overflow inside the query and the answer would be a 'degenerate' full of nulls.
  if (std::abs(x) > tol::kMaxMagnitude) fail(field, "out of the supported range (|x| > 1e60, got " + j.dump() + ")");
  return x;
}

Vec3 vec3(const json& j, const std::string& field) {
  if (!j.is_array() || j.size() != 3) fail(field, "expected an array of 3 numbers");
  return {number(j[0], field + "[0]"), number(j[1], field + "[1]"), number(j[2], field + "[2]")};
}

std::vector<Vec3> points(const json& j, const std::string& field, std::size_t exact) {
  if (!j.is_array()) fail(field, "expected an array of [x,y,z] points");
  if (exact && j.size() != exact) fail(field, "expected exactly " + std::to_string(exact) + " points, got " + std::to_string(j.size()));
  if (j.empty()) fail(field, "needs at least one point");
  std::vector<Vec3> out;
  for (std::size_t i = 0; i < j.size(); ++i) out.push_back(vec3(j[i], field + "[" + std::to_string(i) + "]"));
  return out;
}

const json& require(const json& j, const char* key, const std::string& where) {
  auto it = j.find(key);
  if (it == j.end()) fail(where + "." + key, "missing");
  return *it;
}

/// A whole number (YAML scenarios arrive as floating-point JSON numbers; 24.0 is accepted).
long long whole(const json& j, const std::string& field, double lo, double hi) {
  if (!j.is_number()) fail(field, "expected a whole number, got " + j.dump());
  const double x = j.get<double>();
  if (!(x == std::floor(x) && x >= lo && x <= hi))
    fail(field, "expected a whole number in [" + json(lo).dump() + ", " + json(hi).dump() + "], got " + j.dump());
  return static_cast<long long>(x);
}

int integer(const json& j, const std::string& field, double lo = -1e9) { return static_cast<int>(whole(j, field, lo, 1e9)); }

/// `max_vertices: N` on a polytope or mesh: a coarser mesh of the same grain (rock.hpp).
Polytope reduced(const json& j, const std::string& where, Polytope p) {
  if (!j.contains("max_vertices")) return p;
  auto r = reduceVertices(p, integer(j["max_vertices"], where + ".max_vertices", 4));  // (a tetrahedron at least)
  if (!r) fail(where + ".max_vertices", r.message());
  return std::move(r).value();
}

Real nonNegative(const json& j, const char* key, const std::string& where) {
  const std::string f = where + "." + key;
  const Real x = number(require(j, key, where), f);
  if (x < 0) fail(f, "must be >= 0 (got " + j[key].dump() + ")");
  return x;
}

PlacedShape parse(const json& j, const std::string& where, const std::string& baseDir, MeshCache* meshes) {
  if (!j.is_object()) fail(where, "expected an object with a \"type\"");
  const json& t = require(j, "type", where);
  if (!t.is_string()) fail(where + ".type", "expected a string");
  const std::string type = t.get<std::string>();
  std::set<std::string> allowed = {"type", "position", "orientation", "inflate"};
  PlacedShape out;
  Shape s;
  auto allow = [&](std::initializer_list<const char*> keys) { allowed.insert(keys.begin(), keys.end()); };
  if (type == "point") {
    allow({"point"});
    Point p;
    if (j.contains("point")) p.p = vec3(j["point"], where + ".point");
    s = Shape(p);
  } else if (type == "segment" || type == "triangle" || type == "tetrahedron" || type == "polytope") {
    allow({"points"});
    if (type == "polytope") allow({"max_vertices"});
    const std::size_t n = type == "segment" ? 2 : type == "triangle" ? 3 : type == "tetrahedron" ? 4 : 0;
    const auto pts = points(require(j, "points", where), where + ".points", n);
    if (type == "segment") s = Shape(Segment{pts[0], pts[1]});
    else if (type == "triangle") s = Shape(Triangle{{pts[0], pts[1], pts[2]}});
    else if (type == "tetrahedron") s = Shape(Tetrahedron{{pts[0], pts[1], pts[2], pts[3]}});
    else {
      auto poly = Polytope::fromPoints(pts);
      if (!poly) fail(where + ".points", poly.message());
      s = Shape(reduced(j, where, std::move(poly).value()));
    }
  } else if (type == "sphere") {
    allow({"radius"});
    s = Shape(Sphere{nonNegative(j, "radius", where)});
  } else if (type == "ellipsoid") {
    allow({"radii"});
    const Vec3 r = vec3(require(j, "radii", where), where + ".radii");
    for (int i = 0; i < 3; ++i)
      if (r[i] < 0) fail(where + ".radii[" + std::to_string(i) + "]", "must be >= 0 (got " + json(r[i]).dump() + ")");
    s = Shape(Ellipsoid{r});
  } else if (type == "box") {
    allow({"half_extents"});
    const Vec3 h = vec3(require(j, "half_extents", where), where + ".half_extents");
    for (int i = 0; i < 3; ++i)
      if (h[i] < 0) fail(where + ".half_extents[" + std::to_string(i) + "]", "must be >= 0 (got " + json(h[i]).dump() + ")");
    s = Shape(Box{h});
  } else if (type == "capsule" || type == "cylinder") {
    allow({"radius", "half_length"});
    const Real r = nonNegative(j, "radius", where), h = nonNegative(j, "half_length", where);
    s = type == "capsule" ? Shape(Capsule{r, h}) : Shape(Cylinder{r, h});
  } else if (type == "cone") {
    allow({"radius", "height"});
    s = Shape(Cone{nonNegative(j, "radius", where), nonNegative(j, "height", where)});
  } else if (type == "rock") {
    allow({"vertices", "resolution", "elongation", "flatness", "roughness", "seed", "radius"});
    RockParams rp;
    if (j.contains("vertices") && j.contains("resolution")) fail(where + ".resolution", "give vertices or resolution, not both");
    if (j.contains("vertices")) rp.vertices = integer(j["vertices"], where + ".vertices");
    if (j.contains("resolution")) {
      const json& r = j["resolution"];
      const auto n = r.is_string() ? resolutionVertices(r.get<std::string>()) : std::nullopt;
      if (!n) fail(where + ".resolution", "expected coarse, medium or fine, got " + r.dump());
      rp.vertices = *n;
    }
    if (j.contains("elongation")) rp.elongation = number(j["elongation"], where + ".elongation");
    if (j.contains("flatness")) rp.flatness = number(j["flatness"], where + ".flatness");
    if (j.contains("roughness")) rp.roughness = number(j["roughness"], where + ".roughness");
    if (j.contains("radius")) rp.radius = number(j["radius"], where + ".radius");
    if (j.contains("seed")) rp.seed = static_cast<std::uint64_t>(whole(j["seed"], where + ".seed", 0, 9007199254740992.0));
    auto rock = makeRock(rp);
    if (!rock) {
      // makeRock names the parameter it refuses ("flatness: ..."; one word); other messages are about
      // the rock as a whole ("the generated hull has no volume: ...").
      const std::string m = rock.message();
      const auto colon = m.find(": ");
      const bool named = colon != std::string::npos && m.find(' ') > colon;
      fail(where + "." + (named ? m.substr(0, colon) : std::string("type")), named ? m.substr(colon + 2) : "rock: " + m);
    }
    s = Shape(std::move(rock).value());
  } else if (type == "mesh") {
    allow({"file", "max_vertices"});
    const json& f = require(j, "file", where);
    if (!f.is_string()) fail(where + ".file", "expected a file path string");
    std::filesystem::path p = f.get<std::string>();
    if (p.is_relative() && !baseDir.empty()) p = std::filesystem::path(baseDir) / p;
    MeshCache local;
    auto hull = (meshes ? meshes : &local)->hullOf(p.string());
    if (!hull) fail(where + ".file", hull.message());
    s = Shape(reduced(j, where, hull.value()));
  } else {
    fail(where + ".type",
         "unknown shape type '" + type +
             "' (expected point, segment, triangle, tetrahedron, polytope, sphere, ellipsoid, box, capsule, "
             "cylinder, cone, mesh or rock)");
  }
  for (auto it = j.begin(); it != j.end(); ++it)
    if (!allowed.count(it.key())) fail(where + "." + it.key(), "unknown key for a " + type);
  if (j.contains("inflate")) s.setInflate(nonNegative(j, "inflate", where));
  Vec3 pos = Vec3::Zero();
  if (j.contains("position")) pos = vec3(j["position"], where + ".position");
  Quat q = Quat::Identity();
  if (j.contains("orientation")) {
    const json& o = j["orientation"];
    const std::string f = where + ".orientation";
    if (!o.is_array() || o.size() != 4) fail(f, "expected [w, x, y, z]");
    q = Quat(number(o[0], f + "[0]"), number(o[1], f + "[1]"), number(o[2], f + "[2]"), number(o[3], f + "[3]"));
    const Real n = q.norm();
    if (!(std::abs(n - 1) < 1e-6)) fail(f, "not a unit quaternion (norm " + json(n).dump() + ")");
    q.normalize();
  }
  out.shape = std::move(s);
  out.pose = Transform(q, pos);
  return out;
}

json vecJson(const Vec3& v) {
  json a = json::array();
  for (int i = 0; i < 3; ++i) a.push_back(std::isfinite(v[i]) ? json(v[i] + 0.0) : json(nullptr));  // (+0.0: no "-0.0")
  return a;
}

}  // namespace

Result<Polytope> MeshCache::hullOf(const std::string& path) {
  if (auto it = hulls_.find(path); it != hulls_.end()) return it->second;
  auto mesh = readMesh(path);
  if (!mesh) return Result<Polytope>::failure(mesh.message());
  auto hull = Polytope::fromPoints(mesh.value().vertices);
  if (!hull) return Result<Polytope>::failure(path + ": " + hull.message());
  // Bodies are convex: a mesh with vertices strictly inside its hull is replaced by the hull, and
  // the user is told (concave grains need the concave-bodies capability).
  const Polytope& h = hull.value();
  if (h.dimension() == 3) {
    Real extent = 0;
    for (const Vec3& v : h.vertices()) extent = std::max(extent, v.cwiseAbs().maxCoeff());
    const Real tol = 1e-9 * std::max<Real>(extent, 1e-300);
    const auto& d = h.data();
    std::size_t inside = 0;
    for (const Vec3& v : mesh.value().vertices) {
      Real best = -std::numeric_limits<Real>::infinity();
      for (std::size_t t = 0; t < d.triangles.size(); ++t)
        if (d.triangleNormals[t].squaredNorm() > 0)
          best = std::max(best, d.triangleNormals[t].dot(v - d.vertices[static_cast<std::size_t>(d.triangles[t][0])]));
      if (best < -tol) ++inside;
    }
    if (inside > 0) {
      std::string volumes;
      auto hv = computeMassProperties(Shape(h));
      Real meshVolume = 0;  // signed volume by the divergence theorem (meaningful for closed meshes)
      for (const auto& t : mesh.value().triangles)
        meshVolume += mesh.value().vertices[static_cast<std::size_t>(t[0])].dot(
                          mesh.value().vertices[static_cast<std::size_t>(t[1])].cross(
                              mesh.value().vertices[static_cast<std::size_t>(t[2])])) / 6;
      if (hv && meshVolume > 0 && meshVolume < hv.value().volume) {
        char b[128];
        std::snprintf(b, sizeof b, "; the hull's volume is %.1f%% larger than the mesh's",
                      100 * (hv.value().volume / meshVolume - 1));
        volumes = b;
      }
      std::cerr << "proxima: warning: " << path << ": the mesh is not convex (" << inside << " of "
                << mesh.value().vertices.size() << " vertices lie inside its convex hull" << volumes
                << "); its convex hull is used (concave bodies are not supported yet)\n";
    }
  }
  hulls_.emplace(path, hull.value());
  return hull;
}

Result<PlacedShape> parseShape(const json& j, const std::string& where, const std::string& baseDir, MeshCache* meshes) {
  try {
    return parse(j, where, baseDir, meshes);
  } catch (const ParseError& e) {
    return Result<PlacedShape>::failure(e.message);
  } catch (const json::exception& e) {
    return Result<PlacedShape>::failure(where + ": " + e.what());
  }
}

Result<ShapePair> parsePair(const json& j, const std::string& baseDir, MeshCache* meshes) {
  if (!j.is_object()) return Result<ShapePair>::failure("pair: expected an object {\"a\": SHAPE, \"b\": SHAPE}");
  for (auto it = j.begin(); it != j.end(); ++it)
    if (it.key() != "a" && it.key() != "b" && it.key() != "id")
      return Result<ShapePair>::failure(it.key() + ": unknown key (a pair has \"a\", \"b\" and optional \"id\")");
  ShapePair p;
  if (j.contains("id")) p.id = j["id"];
  if (!j.contains("a")) return Result<ShapePair>::failure("a: missing");
  if (!j.contains("b")) return Result<ShapePair>::failure("b: missing");
  auto a = parseShape(j["a"], "a", baseDir, meshes);
  if (!a) return Result<ShapePair>::failure(a.message());
  auto b = parseShape(j["b"], "b", baseDir, meshes);
  if (!b) return Result<ShapePair>::failure(b.message());
  p.a = std::move(a).value();
  p.b = std::move(b).value();
  return p;
}

json toJson(const DistanceResult& r) {
  json o;
  o["status"] = std::string(toString(r.status));
  o["distance"] = std::isfinite(r.distance) ? json(r.distance + 0.0) : json(nullptr);
  o["witness_a"] = vecJson(r.witnessA);
  o["witness_b"] = vecJson(r.witnessB);
  o["normal"] = vecJson(r.normal);
  o["iterations"] = r.iterations;
  if (r.status == Status::Separated || r.status == Status::MaxIterations || r.status == Status::Degenerate)
    o["lower_bound"] = std::isfinite(r.lowerBound) ? json(r.lowerBound + 0.0) : json(nullptr);
  if (!r.message.empty()) o["message"] = r.message;
  return o;
}

json toJson(const ContactResult& r) {
  json o = toJson(static_cast<const DistanceResult&>(r));
  o["depth"] = std::isfinite(r.depth) && r.status != Status::InvalidInput ? json(r.depth + 0.0) : json(nullptr);
  o["contact_point"] = vecJson(r.contactPoint);
  json list = json::array();
  for (int i = 0; i < r.contactCount; ++i)
    list.push_back({{"point", vecJson(r.contacts[i].point)}, {"depth", r.contacts[i].depth + 0.0}});
  o["contacts"] = std::move(list);
  o["expansions"] = r.expansions;
  o["method"] = std::string(toString(r.method));
  return o;
}

namespace {

// nlohmann's DOM builder, with each value's field path tracked so that a duplicate key or an
// underflowing number is refused by name. (sax_parse calls these members on this type: they hide the
// base's, which they then call.)
class StrictDomBuilder : public nlohmann::detail::json_sax_dom_parser<json> {
 public:
  using Base = nlohmann::detail::json_sax_dom_parser<json>;
  explicit StrictDomBuilder(json& out) : Base(out, true) {}

  bool null() { return beginValue(), Base::null(); }
  bool boolean(bool v) { return beginValue(), Base::boolean(v); }
  bool number_integer(json::number_integer_t v) { return beginValue(), Base::number_integer(v); }
  bool number_unsigned(json::number_unsigned_t v) { return beginValue(), Base::number_unsigned(v); }
  bool number_float(json::number_float_t v, const json::string_t& text) {
    beginValue();
    // A mantissa with a non-zero digit that reads as 0 underflowed (the digits before the exponent).
    if (v == 0) {
      const std::string mantissa = text.substr(0, text.find_first_of("eE"));
      if (mantissa.find_first_of("123456789") != std::string::npos)
        throw std::invalid_argument(path() + ": the number " + text +
                                    " is too small for a double (it would read as 0)");
    }
    return Base::number_float(v, text);
  }
  bool string(json::string_t& v) { return beginValue(), Base::string(v); }
  bool binary(json::binary_t& v) { return beginValue(), Base::binary(v); }
  bool start_object(std::size_t n) {
    beginValue();
    frames_.push_back({true, {}, 0, {}});
    return Base::start_object(n);
  }
  bool key(json::string_t& k) {
    Frame& f = frames_.back();
    f.key = k;
    if (!f.keys.insert(k).second) throw std::invalid_argument(path() + ": duplicate key");
    return Base::key(k);
  }
  bool end_object() {
    frames_.pop_back();
    return Base::end_object();
  }
  bool start_array(std::size_t n) {
    beginValue();
    frames_.push_back({false, {}, 0, {}});
    return Base::start_array(n);
  }
  bool end_array() {
    frames_.pop_back();
    return Base::end_array();
  }

 private:
  struct Frame {
    bool object;
    std::string key;        // the current member (objects)
    std::size_t count;      // elements begun so far (arrays)
    std::set<std::string> keys;
  };
  std::vector<Frame> frames_;

  // Every value begins here: an array element advances its array's index.
  void beginValue() {
    if (!frames_.empty() && !frames_.back().object) ++frames_.back().count;
  }
  // "a.vertices[3]" (the top level is "(top level)").
  [[nodiscard]] std::string path() const {
    std::string p;
    for (const Frame& f : frames_) {
      if (f.object) {
        if (!p.empty()) p += '.';
        p += f.key;
      } else {
        p += '[' + std::to_string(f.count == 0 ? 0 : f.count - 1) + ']';
      }
    }
    return p.empty() ? "(top level)" : p;
  }
};

}  // namespace

json parseJsonStrict(std::string_view text) {
  json out;
  StrictDomBuilder builder(out);
  json::sax_parse(text, &builder);
  return out;
}

json invalidInputJson(const std::string& message, const json& id, const std::optional<PenetrationMethod>& contactMethod) {
  ContactResult r;
  r.status = Status::InvalidInput;
  r.message = message;
  json o = toJson(static_cast<const DistanceResult&>(r));
  if (contactMethod) {  // `proxima contact`: the same keys as its other results
    r.method = *contactMethod;
    o = toJson(r);
  }
  if (!id.is_null()) o["id"] = id;
  return o;
}

}  // namespace proxima::io
