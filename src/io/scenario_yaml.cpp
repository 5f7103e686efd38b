// YAML scenario parser (docs/scenario-format.md). One pass over the document with a small set of
// typed readers; every error throws a ScenarioError carrying "FILE:LINE: path: what" and is turned
// into a failed Result at the API boundary.
#include "proxima/io/scenario_yaml.hpp"

#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/yaml.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <utility>
#include <vector>

#include "proxima/io/mesh.hpp"
#include "proxima/io/shape_json.hpp"

namespace proxima::io {
namespace {

using nlohmann::json;

struct ScenarioError {
  std::string message;
};

std::string num(Real x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6g", x);
  return buf;
}

std::string join(const std::vector<std::string>& items, const char* sep = ", ") {
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i) out += (i ? sep : "") + items[i];
  return out;
}

std::string field(const std::string& path, const std::string& key) { return path.empty() ? key : path + "." + key; }
std::string index(const std::string& path, std::size_t i) { return path + "[" + std::to_string(i) + "]"; }

/// Plain (unquoted) scalars are the only ones read as numbers or booleans. A quoted scalar ("2500",
/// which yaml-cpp tags "!") or one tagged as a string (!!str 2500) is text, never a number.
bool isQuoted(const YAML::Node& n) {
  return n.IsScalar() && (n.Tag() == "!" || n.Tag() == "tag:yaml.org,2002:str" || n.Tag() == "!!str");
}

std::string describe(const YAML::Node& n) {
  if (!n.IsDefined() || n.IsNull()) return "nothing";
  if (n.IsSequence()) return "a list";
  if (n.IsMap()) return "a map";
  return (isQuoted(n) ? "the string \"" : "\"") + n.Scalar() + "\"";
}

/// A map node with its keys checked against the allowed set (unknown and duplicate keys are errors).
struct Map {
  YAML::Node node;
  std::string path;
  std::vector<std::pair<std::string, YAML::Node>> entries;  ///< in file order

  [[nodiscard]] const YAML::Node* find(const std::string& key) const {
    for (const auto& [k, v] : entries)
      if (k == key) return &v;
    return nullptr;
  }
  [[nodiscard]] bool has(const std::string& key) const { return find(key) != nullptr; }
  [[nodiscard]] std::string at(const std::string& key) const { return field(path, key); }
};

class Parser {
 public:
  Parser(std::string file, std::string baseDir) : file_(std::move(file)), baseDir_(std::move(baseDir)) {}

  dem::Scenario parse(const YAML::Node& root);

 private:
  // ---- errors ----
  [[nodiscard]] std::string prefix(const YAML::Node& at) const {
    const YAML::Mark m = at.Mark();
    if (m.is_null() || m.line < 0) return file_ + ": ";
    return file_ + ":" + std::to_string(m.line + 1) + ": ";
  }
  [[noreturn]] void fail(const YAML::Node& at, const std::string& path, const std::string& what) const {
    throw ScenarioError{prefix(at) + path + ": " + what};
  }

  // ---- typed readers ----
  Map map(const YAML::Node& n, const std::string& path, std::initializer_list<const char*> allowed,
          const char* expected = nullptr) const {
    if (!n.IsMap())
      fail(n, path,
           std::string("expected a map") + (expected ? std::string(" ") + expected : std::string()) + ", got " +
               describe(n));
    Map m{n, path, {}};
    std::set<std::string> ok;
    std::vector<std::string> names;
    for (const char* a : allowed) ok.insert(a), names.emplace_back(a);
    for (auto it = n.begin(); it != n.end(); ++it) {
      const YAML::Node key = it->first;
      if (!key.IsScalar()) fail(key, path, "map keys must be plain names, got " + describe(key));
      const std::string k = key.Scalar();
      if (!ok.count(k)) fail(key, field(path, k), "unknown key (expected one of: " + join(names) + ")");
      if (m.has(k)) fail(key, field(path, k), "duplicate key");
      m.entries.emplace_back(k, it->second);
    }
    return m;
  }

  const YAML::Node& require(const Map& m, const std::string& key, const std::string& what) const {
    const YAML::Node* v = m.find(key);
    if (!v) fail(m.node, m.at(key), "missing; " + what);
    return *v;
  }

  Real real(const YAML::Node& n, const std::string& path) const {
    if (!n.IsScalar() || isQuoted(n)) fail(n, path, "expected a number, got " + describe(n));
    double x = 0;
    if (!YAML::convert<double>::decode(n, x)) fail(n, path, "expected a number, got " + describe(n));
    if (!std::isfinite(x)) fail(n, path, "must be a finite number, got " + describe(n));
    if (x == 0) {
      // (1e-999 reads as 0: say so, instead of "got 0" for a number the file does not contain)
      const std::string& t = n.Scalar();
      const std::size_t mantissaEnd = std::min(t.find_first_of("eE"), t.size());
      if (t.find_first_of("123456789") < mantissaEnd)
        fail(n, path, "the number " + t + " is too small for a double (it would read as 0)");
    }
    return x;
  }
  Real positive(const YAML::Node& n, const std::string& path) const {
    const Real x = real(n, path);
    if (!(x > 0)) fail(n, path, "must be > 0 (got " + num(x) + ")");
    return x;
  }
  Real nonNegative(const YAML::Node& n, const std::string& path) const {
    const Real x = real(n, path);
    if (x < 0) fail(n, path, "must be >= 0 (got " + num(x) + ")");
    return x;
  }
  std::int64_t integer(const YAML::Node& n, const std::string& path, std::int64_t min) const {
    const Real x = real(n, path);
    if (x != std::floor(x) || std::abs(x) > 9.007199254740992e15)
      fail(n, path, "expected a whole number (of at most 2^53 = 9007199254740992 in size), got " + describe(n));
    const auto i = static_cast<std::int64_t>(x);
    if (i < min) fail(n, path, "must be >= " + std::to_string(min) + " (got " + std::to_string(i) + ")");
    return i;
  }
  bool boolean(const YAML::Node& n, const std::string& path) const {
    bool b = false;
    if (!n.IsScalar() || isQuoted(n) || !YAML::convert<bool>::decode(n, b))
      fail(n, path, "expected true or false, got " + describe(n));
    return b;
  }
  std::string string(const YAML::Node& n, const std::string& path) const {
    if (!n.IsScalar()) fail(n, path, "expected a string, got " + describe(n));
    if (n.Scalar().empty()) fail(n, path, "must not be empty");
    return n.Scalar();
  }
  Vec3 vec3(const YAML::Node& n, const std::string& path) const {
    if (!n.IsSequence()) fail(n, path, "expected a list of 3 numbers [x, y, z], got " + describe(n));
    if (n.size() != 3) fail(n, path, "expected exactly 3 numbers [x, y, z], got " + std::to_string(n.size()));
    Vec3 v;
    for (std::size_t i = 0; i < 3; ++i) v[static_cast<int>(i)] = real(n[i], index(path, i));
    return v;
  }
  // A position (corners, wall points, mesh offsets): within the coordinate range shapes accept,
  // 1e60 (tol::kMaxMagnitude); a mesh offset of 1e300 was taken as it came.
  Vec3 position(const YAML::Node& n, const std::string& path) const {
    const Vec3 v = vec3(n, path);
    for (std::size_t i = 0; i < 3; ++i)
      if (!(std::abs(v[static_cast<int>(i)]) <= tol::kMaxMagnitude))
        fail(n[i], index(path, i), "coordinate " + num(v[static_cast<int>(i)]) + " beyond 1e60 in size");
    return v;
  }
  const YAML::Node& list(const YAML::Node& n, const std::string& path, bool nonEmpty, const char* what) const {
    if (!n.IsSequence()) fail(n, path, std::string("expected a list of ") + what + ", got " + describe(n));
    if (nonEmpty && n.size() == 0) fail(n, path, std::string("must list at least one ") + what);
    return n;
  }

  // Optional fields: assign only when present.
  template <class F>
  void opt(const Map& m, const std::string& key, F&& read) const {
    if (const YAML::Node* v = m.find(key)) read(*v, m.at(key));
  }

  int materialIndex(const YAML::Node& n, const std::string& path) const {
    const std::string name = string(n, path);
    for (std::size_t i = 0; i < materialNames_.size(); ++i)
      if (materialNames_[i] == name) return static_cast<int>(i);
    fail(n, path, "unknown material \"" + name + "\" (known: " + join(materialNames_) + ")");
  }
  /// `material:` of a template or wall: required unless exactly one material is defined.
  int materialOf(const Map& m) const {
    if (const YAML::Node* v = m.find("material")) return materialIndex(*v, m.at("material"));
    if (materialNames_.size() == 1) return 0;
    fail(m.node, m.at("material"),
         "missing; required when several materials are defined (known: " + join(materialNames_) + ")");
  }

  // ---- sections ----
  void materials(const YAML::Node& n, dem::Scenario& sc);
  void interactions(const YAML::Node& n, dem::Scenario& sc) const;
  void templates(const YAML::Node& n, dem::Scenario& sc) const;
  Shape shape(const YAML::Node& n, const std::string& path) const;
  dem::SizeDistribution size(const YAML::Node& n, const std::string& path) const;
  void particles(const YAML::Node& n, dem::Scenario& sc) const;
  void walls(const YAML::Node& n, dem::Scenario& sc) const;
  void time(const YAML::Node& n, dem::Scenario& sc) const;
  void output(const YAML::Node& n, dem::Scenario& sc) const;

  std::string file_, baseDir_;
  std::vector<std::string> materialNames_;
};

// ---------------------------------------------------------------------------------------------------

dem::Scenario Parser::parse(const YAML::Node& root) {
  if (!root.IsDefined() || root.IsNull())
    throw ScenarioError{file_ + ": empty scenario; expected a map with materials, templates, particles and time"};
  const Map top = map(root, "",
                      {"materials", "contact_model", "interactions", "templates", "particles", "walls", "gravity",
                       "time", "neighbours", "conservative_bound", "stop", "threads", "output"},
                      "of scenario sections");
  dem::Scenario sc;
  sc.sourceFile = file_;
  materials(require(top, "materials", "a scenario needs a non-empty list of materials"), sc);
  opt(top, "contact_model", [&](const YAML::Node& v, const std::string& p) {
    const std::string s = string(v, p);
    if (s == "hertz_mindlin")
      sc.model = dem::ContactModel::HertzMindlin;
    else if (s == "linear")
      sc.model = dem::ContactModel::LinearSpringDashpot;
    else
      fail(v, p, "unknown contact model \"" + s + "\" (expected hertz_mindlin or linear)");
  });
  // A linear stiffness under the Hertz law would be silently unused.
  if (sc.model == dem::ContactModel::HertzMindlin)
    for (std::size_t i = 0; i < sc.materials.size(); ++i)
      if (sc.materials[i].linearStiffness > 0)
        throw ScenarioError{file_ + ": materials[" + std::to_string(i) +
                            "].stiffness: used only by contact_model: linear (hertz_mindlin takes its stiffness from "
                            "youngs_modulus and poisson_ratio); remove it or set contact_model: linear"};
  opt(top, "interactions", [&](const YAML::Node& v, const std::string&) { interactions(v, sc); });
  templates(require(top, "templates", "a scenario needs a non-empty list of particle templates"), sc);
  particles(require(top, "particles", "a scenario needs a non-empty list of insertion blocks"), sc);
  opt(top, "walls", [&](const YAML::Node& v, const std::string&) { walls(v, sc); });
  opt(top, "gravity", [&](const YAML::Node& v, const std::string& p) { sc.gravity = vec3(v, p); });
  time(require(top, "time", "a scenario needs time: {duration: ...}"), sc);
  opt(top, "neighbours", [&](const YAML::Node& v, const std::string& p) {
    const Map m = map(v, p, {"skin"});
    opt(m, "skin", [&](const YAML::Node& x, const std::string& q) { sc.skin = nonNegative(x, q); });
  });
  opt(top, "conservative_bound",
      [&](const YAML::Node& v, const std::string& p) { sc.conservativeBound = boolean(v, p); });
  opt(top, "stop", [&](const YAML::Node& v, const std::string& p) {
    const Map m = map(v, p, {"kinetic_energy", "min_time"});
    opt(m, "kinetic_energy",
        [&](const YAML::Node& x, const std::string& q) { sc.stopKineticEnergy = nonNegative(x, q); });
    opt(m, "min_time", [&](const YAML::Node& x, const std::string& q) { sc.stopMinTime = nonNegative(x, q); });
  });
  opt(top, "threads", [&](const YAML::Node& v, const std::string& p) {
    const std::int64_t t = integer(v, p, 0);
    if (t > 4096) fail(v, p, "must be <= 4096 (got " + std::to_string(t) + ")");
    sc.threads = static_cast<int>(t);
  });
  opt(top, "output", [&](const YAML::Node& v, const std::string&) { output(v, sc); });
  return sc;
}

void Parser::materials(const YAML::Node& n, dem::Scenario& sc) {
  list(n, "materials", true, "materials");
  if (n.size() > static_cast<std::size_t>(dem::kMaxMaterials))
    fail(n, "materials", dem::tooManyMaterials(n.size()));
  for (std::size_t i = 0; i < n.size(); ++i) {
    const std::string path = index("materials", i);
    const Map m = map(n[i], path,
                      {"name", "density", "youngs_modulus", "poisson_ratio", "restitution", "friction",
                       "rolling_friction", "rolling_damping", "stiffness"});
    dem::Material mat;
    const YAML::Node& nameNode = require(m, "name", "every material needs a unique name");
    mat.name = string(nameNode, m.at("name"));
    for (const auto& known : materialNames_)
      if (known == mat.name) fail(nameNode, m.at("name"), "duplicate material name \"" + mat.name + "\"");
    mat.density = positive(require(m, "density", "the density in kg/m^3"), m.at("density"));
    mat.youngsModulus = positive(require(m, "youngs_modulus", "Young's modulus in Pa"), m.at("youngs_modulus"));
    opt(m, "poisson_ratio", [&](const YAML::Node& v, const std::string& p) {
      mat.poissonRatio = real(v, p);
      if (!(mat.poissonRatio > -1 && mat.poissonRatio < 0.5))
        fail(v, p, "must be in (-1, 0.5) (got " + num(mat.poissonRatio) + ")");
    });
    opt(m, "restitution", [&](const YAML::Node& v, const std::string& p) {
      mat.restitution = real(v, p);
      if (!(mat.restitution > 0 && mat.restitution <= 1))
        fail(v, p, "must be in (0, 1] (got " + num(mat.restitution) + ")");
    });
    opt(m, "friction", [&](const YAML::Node& v, const std::string& p) { mat.friction = nonNegative(v, p); });
    opt(m, "rolling_friction",
        [&](const YAML::Node& v, const std::string& p) { mat.rollingFriction = nonNegative(v, p); });
    opt(m, "rolling_damping", [&](const YAML::Node& v, const std::string& p) {
      mat.rollingDamping = real(v, p);
      if (!(mat.rollingDamping >= 0 && mat.rollingDamping <= 1))
        fail(v, p, "must be in [0, 1] (a damping ratio; got " + num(mat.rollingDamping) + ")");
    });
    opt(m, "stiffness", [&](const YAML::Node& v, const std::string& p) { mat.linearStiffness = nonNegative(v, p); });
    materialNames_.push_back(mat.name);
    sc.materials.push_back(std::move(mat));
  }
}

void Parser::interactions(const YAML::Node& n, dem::Scenario& sc) const {
  list(n, "interactions", false, "material-pair overrides");
  for (std::size_t i = 0; i < n.size(); ++i) {
    const std::string path = index("interactions", i);
    const Map m = map(n[i], path, {"materials", "restitution", "friction", "rolling_friction"});
    const YAML::Node& pair = require(m, "materials", "the two material names, e.g. [glass, steel]");
    if (!pair.IsSequence() || pair.size() != 2)
      fail(pair, m.at("materials"), "expected a list of two material names, got " + describe(pair));
    dem::Scenario::PairOverride o;
    o.a = materialIndex(pair[0], index(m.at("materials"), 0));
    o.b = materialIndex(pair[1], index(m.at("materials"), 1));
    for (const auto& prev : sc.overrides)
      if ((prev.a == o.a && prev.b == o.b) || (prev.a == o.b && prev.b == o.a))
        fail(pair, m.at("materials"), "duplicate interaction for this material pair");
    // Absent values keep the default combining rule (the mean of the two materials).
    const dem::Material& ma = sc.materials[static_cast<std::size_t>(o.a)];
    const dem::Material& mb = sc.materials[static_cast<std::size_t>(o.b)];
    o.restitution = 0.5 * (ma.restitution + mb.restitution);
    o.friction = 0.5 * (ma.friction + mb.friction);
    o.rollingFriction = 0.5 * (ma.rollingFriction + mb.rollingFriction);
    opt(m, "restitution", [&](const YAML::Node& v, const std::string& p) {
      o.restitution = real(v, p);
      if (!(o.restitution > 0 && o.restitution <= 1)) fail(v, p, "must be in (0, 1] (got " + num(o.restitution) + ")");
    });
    opt(m, "friction", [&](const YAML::Node& v, const std::string& p) { o.friction = nonNegative(v, p); });
    opt(m, "rolling_friction",
        [&](const YAML::Node& v, const std::string& p) { o.rollingFriction = nonNegative(v, p); });
    sc.overrides.push_back(o);
  }
}

// YAML -> JSON for the shape description (parsed by parseShape, the contract of `proxima distance`).
json toJson(const YAML::Node& n) {
  if (n.IsMap()) {
    json o = json::object();
    for (auto it = n.begin(); it != n.end(); ++it) o[it->first.Scalar()] = toJson(it->second);
    return o;
  }
  if (n.IsSequence()) {
    json a = json::array();
    for (std::size_t i = 0; i < n.size(); ++i) a.push_back(toJson(n[i]));
    return a;
  }
  if (!n.IsScalar()) return nullptr;
  if (isQuoted(n)) return n.Scalar();
  double x = 0;
  if (YAML::convert<double>::decode(n, x)) return x;  // non-finite values are rejected by parseShape
  const std::string& s = n.Scalar();
  if (s == "true") return true;
  if (s == "false") return false;
  return s;
}

/// The node a field path (".points[2][1]") designates, or the deepest existing ancestor.
YAML::Node locate(YAML::Node n, const std::string& rest) {
  std::size_t i = 0;
  while (i < rest.size()) {
    if (rest[i] == '.') {
      std::size_t j = i + 1;
      while (j < rest.size() && rest[j] != '.' && rest[j] != '[') ++j;
      const std::string key = rest.substr(i + 1, j - i - 1);
      if (!n.IsMap()) break;
      YAML::Node next;
      bool found = false;
      for (auto it = n.begin(); it != n.end(); ++it)
        if (it->first.IsScalar() && it->first.Scalar() == key) next.reset(it->second), found = true;
      if (!found) break;
      n.reset(next);
      i = j;
    } else if (rest[i] == '[') {
      const std::size_t j = rest.find(']', i);
      if (j == std::string::npos || !n.IsSequence()) break;
      const std::size_t k = std::stoul(rest.substr(i + 1, j - i - 1));
      if (k >= n.size()) break;
      const YAML::Node& cn = n;
      YAML::Node next = cn[k];
      n.reset(next);
      i = j + 1;
    } else {
      break;
    }
  }
  return n;
}

Shape Parser::shape(const YAML::Node& n, const std::string& path) const {
  if (!n.IsMap()) fail(n, path, "expected a shape map such as {type: sphere, radius: 0.001}, got " + describe(n));
  for (auto it = n.begin(); it != n.end(); ++it) {
    if (!it->first.IsScalar()) fail(it->first, path, "map keys must be plain names");
    const std::string& k = it->first.Scalar();
    if (k == "position" || k == "orientation")
      fail(it->first, field(path, k),
           "not allowed in a template (particles are placed and oriented by the insertion blocks)");
  }
  auto parsed = parseShape(toJson(n), path, baseDir_);
  if (!parsed) {
    // parseShape names the field ("templates[0].shape.radius: ..."); find its line.
    const std::string& msg = parsed.message();
    const std::size_t colon = msg.find(": ");
    YAML::Node at = n;
    if (colon != std::string::npos && msg.compare(0, path.size(), path) == 0)
      at = locate(n, msg.substr(path.size(), colon - path.size()));
    throw ScenarioError{prefix(at) + msg};
  }
  Shape s = std::move(parsed).value().shape;
  if (auto bad = s.validate()) fail(n, path, *bad);
  if (s.inflate() > 0) return s;  // has a volume (and its mass properties are sampled, i.e. slow)
  auto mp = computeMassProperties(s);
  if (!mp || !(mp.value().volume > 0))
    fail(n, path,
         "a particle shape needs a volume" + (mp ? std::string(" (this one has none)") : " (" + mp.message() + ")") +
             "; use a solid shape or an inflate radius > 0");
  return s;
}

dem::SizeDistribution Parser::size(const YAML::Node& n, const std::string& path) const {
  dem::SizeDistribution d;
  if (n.IsScalar()) {
    const Real s = positive(n, path);
    d.kind = dem::SizeDistribution::Kind::Fixed;
    d.min = d.max = d.median = s;
    return d;
  }
  if (!n.IsMap())
    fail(n, path, "expected a scale factor or a map {distribution: uniform|lognormal|table, ...}, got " + describe(n));
  YAML::Node kindNode;
  bool hasKind = false;
  for (auto it = n.begin(); it != n.end(); ++it)
    if (!hasKind && it->first.IsScalar() && it->first.Scalar() == "distribution")
      kindNode.reset(it->second), hasKind = true;
  if (!hasKind) fail(n, field(path, "distribution"), "missing; expected uniform, lognormal or table");
  const std::string kind = string(kindNode, field(path, "distribution"));
  if (kind == "uniform") {
    const Map m = map(n, path, {"distribution", "min", "max"});
    d.kind = dem::SizeDistribution::Kind::Uniform;
    d.min = positive(require(m, "min", "the smallest scale factor"), m.at("min"));
    d.max = positive(require(m, "max", "the largest scale factor"), m.at("max"));
    if (d.max < d.min) fail(*m.find("max"), m.at("max"), "must be >= min (" + num(d.min) + "), got " + num(d.max));
  } else if (kind == "lognormal") {
    const Map m = map(n, path, {"distribution", "median", "sigma", "min", "max"});
    d.kind = dem::SizeDistribution::Kind::LogNormal;
    d.median = positive(require(m, "median", "the median scale factor"), m.at("median"));
    d.sigma = nonNegative(require(m, "sigma", "the standard deviation of ln(size)"), m.at("sigma"));
    d.min = 0;
    d.max = std::numeric_limits<Real>::infinity();
    opt(m, "min", [&](const YAML::Node& v, const std::string& p) { d.min = positive(v, p); });
    opt(m, "max", [&](const YAML::Node& v, const std::string& p) { d.max = positive(v, p); });
    // (min == max is one size, as for uniform: the builder then draws nothing)
    if (d.max < d.min) fail(*m.find("max"), m.at("max"), "must be >= min (" + num(d.min) + "), got " + num(d.max));
    // Draws reach median·e^(±8.5 σ) (one in ~1e17 lies beyond): without a bound on that side they
    // must stay numbers, or a grain gets size 0 or infinity and the run fails far from this field.
    const Real wide = std::exp(8.5 * d.sigma);
    const bool overflows = !std::isfinite(d.max) && !std::isfinite(d.median * wide);
    const bool underflows = d.min == 0 && !(d.median / wide >= std::numeric_limits<Real>::min());
    if (overflows || underflows)
      fail(*m.find("sigma"), m.at("sigma"),
           num(d.sigma) + " draws sizes " + (overflows ? "beyond the largest" : "below the smallest") +
               " number (median x e^(" + (overflows ? "+" : "-") + "8.5 sigma)); give " +
               (overflows ? "max" : "min") + " or a smaller sigma (sigma of ln(size) is ~0.1-1 for granular materials)");
  } else if (kind == "table") {
    const Map m = map(n, path, {"distribution", "sizes", "fractions"});
    d.kind = dem::SizeDistribution::Kind::Table;
    const YAML::Node& sizes = list(require(m, "sizes", "the list of scale factors"), m.at("sizes"), true, "sizes");
    const YAML::Node& fr =
        list(require(m, "fractions", "the number fraction of each size"), m.at("fractions"), true, "fractions");
    if (fr.size() != sizes.size())
      fail(fr, m.at("fractions"),
           "expected one fraction per size (" + std::to_string(sizes.size()) + "), got " + std::to_string(fr.size()));
    Real sum = 0;
    for (std::size_t i = 0; i < sizes.size(); ++i) {
      d.sizes.push_back(positive(sizes[i], index(m.at("sizes"), i)));
      d.fractions.push_back(nonNegative(fr[i], index(m.at("fractions"), i)));
      sum += d.fractions.back();
    }
    if (!(sum > 0)) fail(fr, m.at("fractions"), "must not all be 0");
    if (!std::isfinite(sum))
      fail(fr, m.at("fractions"), "sum beyond the range of a number: give them as fractions or percentages");
    for (Real& f : d.fractions) f /= sum;
  } else {
    fail(kindNode, field(path, "distribution"),
         "unknown size distribution \"" + kind + "\" (expected uniform, lognormal or table)");
  }
  return d;
}

void Parser::templates(const YAML::Node& n, dem::Scenario& sc) const {
  list(n, "templates", true, "particle templates");
  for (std::size_t i = 0; i < n.size(); ++i) {
    const std::string path = index("templates", i);
    const Map m = map(n[i], path, {"name", "shape", "material", "size"});
    dem::ParticleTemplate t;
    const YAML::Node& nameNode = require(m, "name", "every template needs a unique name");
    t.name = string(nameNode, m.at("name"));
    for (const auto& prev : sc.templates)
      if (prev.name == t.name) fail(nameNode, m.at("name"), "duplicate template name \"" + t.name + "\"");
    t.shape = shape(require(m, "shape", "e.g. {type: sphere, radius: 0.001}"), m.at("shape"));
    t.material = materialOf(m);
    opt(m, "size", [&](const YAML::Node& v, const std::string& p) { t.size = size(v, p); });
    sc.templates.push_back(std::move(t));
  }
}

void Parser::particles(const YAML::Node& n, dem::Scenario& sc) const {
  list(n, "particles", true, "insertion blocks");
  std::vector<std::string> names;
  for (const auto& t : sc.templates) names.push_back(t.name);
  for (std::size_t i = 0; i < n.size(); ++i) {
    const std::string path = index("particles", i);
    const Map m = map(n[i], path,
                      {"template", "method", "count", "volume_fraction", "region", "velocity", "velocity_jitter",
                       "random_orientation", "seed"});
    dem::InsertionSpec b;
    const YAML::Node& tn = require(m, "template", "the name of a particle template");
    const std::string tname = string(tn, m.at("template"));
    b.templateIndex = -1;
    for (std::size_t k = 0; k < names.size(); ++k)
      if (names[k] == tname) b.templateIndex = static_cast<int>(k);
    if (b.templateIndex < 0)
      fail(tn, m.at("template"), "unknown template \"" + tname + "\" (known: " + join(names) + ")");
    opt(m, "method", [&](const YAML::Node& v, const std::string& p) {
      const std::string s = string(v, p);
      if (s == "random")
        b.method = dem::InsertionSpec::Method::Random;
      else if (s == "lattice")
        b.method = dem::InsertionSpec::Method::Lattice;
      else if (s == "deposition")
        b.method = dem::InsertionSpec::Method::Deposition;
      else
        fail(v, p, "unknown insertion method \"" + s + "\" (expected random, lattice or deposition)");
    });
    const YAML::Node* count = m.find("count");
    const YAML::Node* phi = m.find("volume_fraction");
    if (count && phi) fail(*phi, m.at("volume_fraction"), "give either count or volume_fraction, not both");
    if (!count && !phi) fail(m.node, path, "needs count or volume_fraction (exactly one of the two)");
    if (count) {
      b.count = integer(*count, m.at("count"), 1);
      if (b.count > 1000000000) fail(*count, m.at("count"), "must be <= 1e9 (got " + std::to_string(b.count) + ")");
    }
    if (phi) {
      b.volumeFraction = real(*phi, m.at("volume_fraction"));
      if (!(b.volumeFraction > 0 && b.volumeFraction < 1))
        fail(*phi, m.at("volume_fraction"), "must be in (0, 1) (got " + num(b.volumeFraction) + ")");
    }
    const YAML::Node& rn = require(m, "region", "the insertion box {min: [x,y,z], max: [x,y,z]}");
    const Map r = map(rn, m.at("region"), {"min", "max"});
    b.region.min = position(require(r, "min", "the lower corner [x, y, z]"), r.at("min"));
    b.region.max = position(require(r, "max", "the upper corner [x, y, z]"), r.at("max"));
    for (int k = 0; k < 3; ++k)
      if (!(b.region.max[k] > b.region.min[k]))
        fail(*r.find("max"), r.at("max"),
             std::string("must be greater than min in every component (") + "xyz"[k] + ": max " + num(b.region.max[k]) +
                 " <= min " + num(b.region.min[k]) + ")");
    opt(m, "velocity", [&](const YAML::Node& v, const std::string& p) { b.velocity = vec3(v, p); });
    opt(m, "velocity_jitter", [&](const YAML::Node& v, const std::string& p) { b.velocityJitter = nonNegative(v, p); });
    opt(m, "random_orientation",
        [&](const YAML::Node& v, const std::string& p) { b.randomOrientation = boolean(v, p); });
    opt(m, "seed",
        [&](const YAML::Node& v, const std::string& p) { b.seed = static_cast<std::uint64_t>(integer(v, p, 0)); });
    sc.insertions.push_back(b);
  }
}

void Parser::walls(const YAML::Node& n, dem::Scenario& sc) const {
  list(n, "walls", false, "walls");
  std::set<std::string> used;
  auto add = [&](dem::Wall w, const YAML::Node& at, const std::string& path) {
    if (!used.insert(w.name).second) fail(at, path, "duplicate wall name \"" + w.name + "\"");
    sc.walls.push_back(std::move(w));
  };
  for (std::size_t i = 0; i < n.size(); ++i) {
    const std::string path = index("walls", i);
    if (!n[i].IsMap()) fail(n[i], path, "expected a wall map {type: plane|box|mesh|lid, ...}, got " + describe(n[i]));
    YAML::Node typeNode;
    bool hasType = false;
    for (auto it = n[i].begin(); it != n[i].end(); ++it)
      if (!hasType && it->first.IsScalar() && it->first.Scalar() == "type") typeNode.reset(it->second), hasType = true;
    if (!hasType) fail(n[i], field(path, "type"), "missing; expected plane, box, mesh or lid");
    const std::string type = string(typeNode, field(path, "type"));
    const std::string defaultName = type + std::to_string(i);
    auto nameOf = [&](const Map& m) {
      const YAML::Node* v = m.find("name");
      return v ? string(*v, m.at("name")) : defaultName;
    };
    auto nameNode = [&](const Map& m) { return m.find("name") ? *m.find("name") : m.node; };
    if (type == "plane") {
      const Map m = map(n[i], path, {"type", "name", "point", "normal", "material", "velocity"});
      dem::Wall w;
      w.name = nameOf(m);
      w.kind = dem::WallKind::Plane;
      w.origin = position(require(m, "point", "a point on the plane [x, y, z]"), m.at("point"));
      const YAML::Node& nn = require(m, "normal", "the normal pointing into the domain [x, y, z]");
      const Vec3 normal = vec3(nn, m.at("normal"));
      if (!(normal.norm() > 0)) fail(nn, m.at("normal"), "must not be the zero vector");
      w.normal = normal.normalized();
      w.material = materialOf(m);
      opt(m, "velocity", [&](const YAML::Node& v, const std::string& p) { w.velocity = vec3(v, p); });
      add(std::move(w), nameNode(m), m.at("name"));
    } else if (type == "box") {
      const Map m = map(n[i], path, {"type", "name", "min", "max", "open_top", "material", "velocity"});
      const std::string name = nameOf(m);
      // The box's own name is taken too (its faces are name.xmin, ...): a plane of the same name
      // would be indistinguishable in the output.
      if (!used.insert(name).second) fail(nameNode(m), m.at("name"), "duplicate wall name \"" + name + "\"");
      const Vec3 lo = position(require(m, "min", "the lower corner [x, y, z]"), m.at("min"));
      const Vec3 hi = position(require(m, "max", "the upper corner [x, y, z]"), m.at("max"));
      for (int k = 0; k < 3; ++k)
        if (!(hi[k] > lo[k]))
          fail(*m.find("max"), m.at("max"),
               std::string("must be greater than min in every component (") + "xyz"[k] + ": max " + num(hi[k]) +
                   " <= min " + num(lo[k]) + ")");
      bool openTop = false;
      opt(m, "open_top", [&](const YAML::Node& v, const std::string& p) { openTop = boolean(v, p); });
      const int material = materialOf(m);
      Vec3 velocity = Vec3::Zero();
      opt(m, "velocity", [&](const YAML::Node& v, const std::string& p) { velocity = vec3(v, p); });
      if (!sc.container) sc.container = dem::PackingBox{lo, hi, !openTop};
      static const char* kFace[6] = {"xmin", "xmax", "ymin", "ymax", "zmin", "zmax"};
      for (int f = 0; f < 6; ++f) {
        if (f == 5 && openTop) continue;
        const int axis = f / 2;
        const bool isMax = f % 2 == 1;
        dem::Wall w;
        w.name = name + "." + kFace[f];
        w.kind = dem::WallKind::Plane;
        w.origin = isMax ? hi : lo;
        w.normal = Vec3::Zero();
        w.normal[axis] = isMax ? -1 : 1;
        w.material = material;
        w.velocity = velocity;
        add(std::move(w), nameNode(m), m.at("name"));
      }
    } else if (type == "mesh") {
      const Map m = map(n[i], path, {"type", "name", "file", "scale", "offset", "material", "velocity"});
      dem::Wall w;
      w.name = nameOf(m);
      w.kind = dem::WallKind::Mesh;
      const YAML::Node& fn = require(m, "file", "an OBJ or STL file (relative to the scenario file)");
      std::filesystem::path file = string(fn, m.at("file"));
      if (file.is_relative() && !baseDir_.empty()) file = std::filesystem::path(baseDir_) / file;
      auto mesh = readMesh(file.string());
      if (!mesh) fail(fn, m.at("file"), mesh.message());
      if (mesh.value().triangles.empty()) fail(fn, m.at("file"), file.string() + ": the mesh has no triangles");
      Real scale = 1;
      opt(m, "scale", [&](const YAML::Node& v, const std::string& p) { scale = positive(v, p); });
      opt(m, "offset", [&](const YAML::Node& v, const std::string& p) { w.origin = position(v, p); });
      opt(m, "velocity", [&](const YAML::Node& v, const std::string& p) { w.velocity = vec3(v, p); });
      w.material = materialOf(m);
      for (const Vec3& v : mesh.value().vertices) w.vertices.push_back(scale * v);
      w.triangles = std::move(mesh.value().triangles);
      add(std::move(w), nameNode(m), m.at("name"));
    } else if (type == "lid") {
      const Map m = map(n[i], path, {"type", "name", "height", "mass", "material", "gap"});
      dem::Wall w;
      w.name = nameOf(m);
      w.kind = dem::WallKind::Plane;
      w.normal = Vec3(0, 0, -1);
      const YAML::Node& hn = require(m, "height", "the lid's z in m, or above_particles");
      const bool above = hn.IsScalar() && !isQuoted(hn) && hn.Scalar() == "above_particles";
      Real gap = 0;
      opt(m, "gap", [&](const YAML::Node& v, const std::string& p) {
        if (!above) fail(v, p, "only used with height: above_particles");
        gap = nonNegative(v, p);
      });
      if (above) {
        w.aboveParticles = true;
        w.gap = gap;
      } else {
        double z = 0;
        if (!hn.IsScalar() || isQuoted(hn) || !YAML::convert<double>::decode(hn, z))
          fail(hn, m.at("height"), "expected a height in m or above_particles, got " + describe(hn));
        w.origin = Vec3(0, 0, real(hn, m.at("height")));
      }
      w.mass = positive(require(m, "mass", "the lid's mass in kg (> 0)"), m.at("mass"));
      w.material = materialOf(m);
      add(std::move(w), nameNode(m), m.at("name"));
    } else {
      fail(typeNode, field(path, "type"), "unknown wall type \"" + type + "\" (expected plane, box, mesh or lid)");
    }
  }
}

void Parser::time(const YAML::Node& n, dem::Scenario& sc) const {
  const Map m = map(n, "time", {"duration", "step", "safety", "force_step", "impact_speed"});
  sc.duration = positive(require(m, "duration", "the simulated time in s (> 0)"), m.at("duration"));
  opt(m, "step", [&](const YAML::Node& v, const std::string& p) {
    if (v.IsScalar() && !isQuoted(v) && v.Scalar() == "auto") {
      sc.timeStep = 0;
      return;
    }
    double x = 0;
    if (!v.IsScalar() || isQuoted(v) || !YAML::convert<double>::decode(v, x))
      fail(v, p, "expected auto or a time step in s, got " + describe(v));
    sc.timeStep = positive(v, p);
  });
  opt(m, "safety", [&](const YAML::Node& v, const std::string& p) {
    sc.safetyFactor = real(v, p);
    if (!(sc.safetyFactor > 0 && sc.safetyFactor <= 1))
      fail(v, p, "must be in (0, 1] (got " + num(sc.safetyFactor) + ")");
  });
  opt(m, "force_step", [&](const YAML::Node& v, const std::string& p) { sc.forceTimeStep = boolean(v, p); });
  opt(m, "impact_speed",
      [&](const YAML::Node& v, const std::string& p) { sc.characteristicSpeed = nonNegative(v, p); });
}

void Parser::output(const YAML::Node& n, dem::Scenario& sc) const {
  const Map m = map(n, "output", {"directory", "frame_interval", "csv_interval", "checkpoint_interval", "vtk"});
  opt(m, "directory", [&](const YAML::Node& v, const std::string& p) { sc.output.directory = string(v, p); });
  opt(m, "frame_interval",
      [&](const YAML::Node& v, const std::string& p) { sc.output.frameInterval = nonNegative(v, p); });
  opt(m, "csv_interval", [&](const YAML::Node& v, const std::string& p) { sc.output.csvInterval = nonNegative(v, p); });
  opt(m, "checkpoint_interval",
      [&](const YAML::Node& v, const std::string& p) { sc.output.checkpointInterval = nonNegative(v, p); });
  opt(m, "vtk", [&](const YAML::Node& v, const std::string& p) { sc.output.vtk = boolean(v, p); });
}

}  // namespace

Result<dem::Scenario> parseScenario(const std::string& yamlText, const std::string& sourceName,
                                    const std::string& baseDir) {
  const std::string file = sourceName.empty() ? std::string("<scenario>") : sourceName;
  YAML::Node root;
  try {
    const std::vector<YAML::Node> docs = YAML::LoadAll(yamlText);
    if (docs.size() > 1)
      return Result<dem::Scenario>::failure(file + ": " + std::to_string(docs.size()) +
                                            " YAML documents ('---' separators); a scenario is one document");
    if (!docs.empty()) root = docs[0];
  } catch (const YAML::DeepRecursion& e) {  // (its own message reads "bad file")
    return Result<dem::Scenario>::failure(file + ":" + std::to_string(e.mark.line + 1) +
                                          ": YAML: lists or maps nested deeper than " + std::to_string(e.depth()) +
                                          " levels (the parser's limit)");
  } catch (const YAML::Exception& e) {
    const std::string where = e.mark.is_null() ? file + ": " : file + ":" + std::to_string(e.mark.line + 1) + ": ";
    const bool tabs = yamlText.find('\t') != std::string::npos;
    return Result<dem::Scenario>::failure(where + "YAML syntax error: " + e.msg +
                                          (tabs ? " (the file contains tab characters: YAML indents with spaces only)" : ""));
  }
  try {
    dem::Scenario out = Parser(file, baseDir).parse(root);
    out.canonical = toJson(root).dump(-1, ' ', false, json::error_handler_t::replace);
    return out;
  } catch (const ScenarioError& e) {
    return Result<dem::Scenario>::failure(e.message);
  } catch (const YAML::Exception& e) {
    const std::string where = e.mark.is_null() ? file + ": " : file + ":" + std::to_string(e.mark.line + 1) + ": ";
    return Result<dem::Scenario>::failure(where + e.msg);
  } catch (const std::exception& e) {
    return Result<dem::Scenario>::failure(file + ": " + e.what());
  }
}

Result<dem::Scenario> loadScenario(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    return Result<dem::Scenario>::failure(path + ": is a directory; expected a scenario file (YAML)");
  std::ifstream in(path, std::ios::binary);
  if (!in) return Result<dem::Scenario>::failure(path + ": cannot open the scenario file");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return Result<dem::Scenario>::failure(path + ": read error");
  return parseScenario(text.str(), path, std::filesystem::path(path).parent_path().string());
}

}  // namespace proxima::io
