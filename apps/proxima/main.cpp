// `proxima` command-line program. Subcommands:
//   proxima distance [PAIR.json]            one pair -> one JSON result (built-in example if none)
//   proxima distance --batch FILE|-         JSON lines in, one result per line out, in order
#include <CLI/CLI.hpp>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "proxima/io/shape_json.hpp"
#include "proxima/narrowphase/distance.hpp"

namespace {

using json = nlohmann::json;
using namespace proxima;

// Built-in example: two 'rock-like' polytopes near contact, a sphere against a box, and an
// inflated (sphero-) tetrahedron against a capsule.
const char* kBuiltInPairs[] = {
    R"({"id": "polytopes", "a": {"type": "polytope", "points": [[1,0,0],[-1,0,0],[0,1,0],[0,-1,0],[0,0,1],[0,0,-1],[0.5,0.5,0.6]]},
        "b": {"type": "polytope", "points": [[1,0,0],[-1,0,0],[0,1,0],[0,-1,0],[0,0,1],[0,0,-1]], "position": [2.001,0,0],
              "orientation": [0.9238795325112867, 0.3826834323650898, 0, 0]}})",
    R"({"id": "sphere-box", "a": {"type": "sphere", "radius": 0.5}, "b": {"type": "box", "half_extents": [1,1,1], "position": [0,0,1.75]}})",
    R"({"id": "spherotet-capsule", "a": {"type": "tetrahedron", "points": [[0,0,0],[1,0,0],[0,1,0],[0,0,1]], "inflate": 0.1},
        "b": {"type": "capsule", "radius": 0.2, "half_length": 1, "position": [2,2,2]}})",
};

struct QueryOptions {
  GjkOptions gjk;
};

json runPair(const json& j, const std::string& baseDir, io::MeshCache& meshes, const QueryOptions& q) {
  json id = j.is_object() && j.contains("id") ? j["id"] : json(nullptr);
  auto pair = io::parsePair(j, baseDir, &meshes);
  if (!pair) return io::invalidInputJson(pair.message(), id);
  const auto& p = pair.value();
  const DistanceResult r = distance(p.a.shape, p.a.pose, p.b.shape, p.b.pose, q.gjk);
  json out = io::toJson(r);
  if (!p.id.is_null()) out["id"] = p.id;
  return out;
}

int runBatch(std::istream& in, const std::string& baseDir, const QueryOptions& q) {
  io::MeshCache meshes;
  std::string line;
  std::size_t no = 0;
  while (std::getline(in, line)) {
    ++no;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;  // blank lines are skipped
    json out;
    try {
      out = runPair(json::parse(line), baseDir, meshes, q);
    } catch (const json::parse_error& e) {
      out = io::invalidInputJson("line " + std::to_string(no) + ": malformed JSON: " + e.what());
    }
    std::cout << out.dump() << '\n';
  }
  std::cout.flush();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"proxima: distance queries and contact detection between convex bodies"};
  app.require_subcommand(1);

  auto* dist = app.add_subcommand("distance", "Distance between two convex shapes (JSON in, JSON out)");
  std::string pairFile, batchFile, sub = "signed-volumes", support = "auto";
  bool exact = false, noBackup = false;
  dist->add_option("pair", pairFile, "JSON file with {\"a\": SHAPE, \"b\": SHAPE}; built-in examples if omitted");
  dist->add_option("--batch", batchFile, "JSON-lines file of pairs ('-' for standard input)");
  dist->add_option("--sub-algorithm", sub, "signed-volumes (default) or johnson")
      ->check(CLI::IsMember({"signed-volumes", "johnson"}));
  dist->add_flag("--exact-signs", exact, "Signed Volumes with exact determinant signs");
  dist->add_flag("--no-backup", noBackup, "Johnson without the Backup procedure");
  dist->add_option("--support", support, "polytope support: auto, brute-force or hill-climb")
      ->check(CLI::IsMember({"auto", "brute-force", "hill-climb"}));

  CLI11_PARSE(app, argc, argv);

  QueryOptions q;
  q.gjk.subAlgorithm = sub == "johnson" ? SubAlgorithm::Johnson : SubAlgorithm::SignedVolumes;
  q.gjk.signs = exact ? SignMode::Exact : SignMode::Fast;
  q.gjk.johnsonBackup = !noBackup;
  q.gjk.supportMode = support == "brute-force" ? SupportMode::BruteForce
                      : support == "hill-climb" ? SupportMode::HillClimb
                                                : SupportMode::Auto;

  if (!batchFile.empty() && !pairFile.empty()) {
    std::cerr << "proxima distance: give either a pair file or --batch, not both\n";
    return 2;
  }
  if (!batchFile.empty()) {
    if (batchFile == "-") return runBatch(std::cin, std::filesystem::current_path().string(), q);
    std::ifstream in(batchFile);
    if (!in) {
      std::cerr << "proxima distance: cannot open batch file '" << batchFile << "'\n";
      return 2;
    }
    return runBatch(in, std::filesystem::path(batchFile).parent_path().string(), q);
  }
  io::MeshCache meshes;
  if (pairFile.empty()) {
    std::cerr << "proxima distance: no pair file given; running the built-in examples\n";
    for (const char* text : kBuiltInPairs) std::cout << runPair(json::parse(text), "", meshes, q).dump() << '\n';
    return 0;
  }
  std::ifstream in(pairFile);
  if (!in) {
    std::cerr << "proxima distance: cannot open '" << pairFile << "'\n";
    return 2;
  }
  json j;
  try {
    j = json::parse(in);
  } catch (const json::parse_error& e) {
    std::cout << io::invalidInputJson(pairFile + ": malformed JSON: " + e.what()).dump() << '\n';
    return 1;
  }
  const json out = runPair(j, std::filesystem::path(pairFile).parent_path().string(), meshes, q);
  std::cout << out.dump() << '\n';
  return out["status"] == "invalid_input" ? 1 : 0;
}
