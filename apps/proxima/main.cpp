// `proxima` command-line program. Subcommands:
//   proxima distance [PAIR.json]            one pair -> one JSON result (built-in example if none)
//   proxima distance --batch FILE|-         JSON lines in, one result per line out, in order
//   proxima contact  [PAIR.json | --batch FILE|-] [--method gjk-td|nezami|cundall]
//                                           same input; adds depth, contact point and manifold
//   proxima run [SCENARIO.yaml]             DEM simulation (apps/proxima/run.cpp)
//   proxima report RUN_DIR... [-o OUT_DIR]  PNG plots + report.md of run folders (apps/proxima/report.cpp)
#include "report.hpp"
#include "run.hpp"
#include <unistd.h>
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <CLI/CLI.hpp>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <new>
#include <sstream>
#include <stdexcept>
#include <string_view>

#include "proxima/dem/threads.hpp"
#include "proxima/io/shape_json.hpp"
#include "proxima/narrowphase/distance.hpp"
#include "proxima/narrowphase/penetration.hpp"

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

// Overlapping pairs for `proxima contact` without input: stacked boxes (face-face, 4-point
// manifold), a rotated box on a box (edge-face), and a sphere sunk into a box.
const char* kBuiltInContactPairs[] = {
    R"({"id": "stacked-boxes", "a": {"type": "box", "half_extents": [1,1,1]},
        "b": {"type": "box", "half_extents": [0.5,0.5,0.5], "position": [0.2,-0.1,1.49]}})",
    R"({"id": "edge-on-face", "a": {"type": "box", "half_extents": [1,1,1]},
        "b": {"type": "box", "half_extents": [0.5,0.5,0.5], "position": [0,0,1.68],
              "orientation": [0.9238795325112867, 0.3826834323650898, 0, 0]}})",
    R"({"id": "sphere-in-box", "a": {"type": "box", "half_extents": [1,1,1]}, "b": {"type": "sphere", "radius": 0.5, "position": [0.3,0.2,1.2]}})",
};

struct QueryOptions {
  bool contact = false;  // `proxima contact` instead of `proxima distance`
  GjkOptions gjk;
  PenetrationMethod method = PenetrationMethod::GjkTd;
};

// A JSON library error as a user reads it: without the library's "[json.exception...]" tag, and
// for a batch line without the parser's "line 1" (the caller names the batch line).
std::string jsonErrorText(const json::exception& e, bool oneLine) {
  std::string m = e.what();
  if (const auto tag = m.find("] "); m.rfind("[json.exception.", 0) == 0 && tag != std::string::npos) m = m.substr(tag + 2);
  if (oneLine)
    if (const auto at = m.find("at line 1, column"); at != std::string::npos) m.replace(at, 17, "at column");
  return m;
}

// A result as one line of JSON. Bytes that are not UTF-8 (a malformed input line is quoted in its
// error message) are written as U+FFFD instead of making the writer throw.
std::string jsonLine(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

// Input nested deeper than this is refused before it is parsed: copying and writing a JSON value
// recurse once per level, and a 200 kB line of brackets overflowed the stack.
constexpr int kMaxJsonDepth = 256;

// The depth of the deepest array or object of a JSON text (brackets inside strings do not count);
// stops counting past kMaxJsonDepth.
int jsonNesting(std::string_view text) {
  int depth = 0, deepest = 0;
  bool inString = false, escaped = false;
  for (const char c : text) {
    if (inString) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') inString = false;
    } else if (c == '"') {
      inString = true;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
      if (deepest > kMaxJsonDepth) return deepest;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return deepest;
}

// Parses a pair's JSON text; too deep a nesting is a parse error like any other.
json parsePairText(std::string_view text) {
  if (jsonNesting(text) > kMaxJsonDepth)
    throw std::invalid_argument("nested deeper than " + std::to_string(kMaxJsonDepth) + " levels");
  return io::parseJsonStrict(text);
}

json invalid(const std::string& message, const QueryOptions& q, const json& id = nullptr) {
  return io::invalidInputJson(message, id, q.contact ? std::optional<PenetrationMethod>(q.method) : std::nullopt);
}

json runPair(const json& j, const std::string& baseDir, io::MeshCache& meshes, const QueryOptions& q) {
  json id = j.is_object() && j.contains("id") ? j["id"] : json(nullptr);
  auto pair = io::parsePair(j, baseDir, &meshes);
  if (!pair) return invalid(pair.message(), q, id);
  const auto& p = pair.value();
  json out;
  if (q.contact) {
    PenetrationOptions po;
    po.gjk = q.gjk;
    po.method = q.method;
    out = io::toJson(contact(p.a.shape, p.a.pose, p.b.shape, p.b.pose, po));
  } else {
    out = io::toJson(distance(p.a.shape, p.a.pose, p.b.shape, p.b.pose, q.gjk));
  }
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
    const std::string where = "line " + std::to_string(no) + ": ";
    json out;
    try {
      out = runPair(parsePairText(line), baseDir, meshes, q);
      // (a field error names the field; the line is named here)
      if (out["status"] == "invalid_input" && out.contains("message"))
        out["message"] = where + out["message"].get<std::string>();
    } catch (const json::exception& e) {  // syntax errors, numbers beyond a double (1e400), ...
      out = invalid(where + "malformed JSON: " + jsonErrorText(e, true), q);
    } catch (const std::invalid_argument& e) {  // nested too deep, a duplicate key, an underflow
      out = invalid(where + "malformed JSON: " + e.what(), q);
    } catch (const std::bad_alloc&) {  // a pair too large for the memory left (the next may fit)
      out = invalid(where + "out of memory for this pair", q);
    }
    std::cout << jsonLine(out) << '\n';
    std::cout.flush();  // a result per line as it is computed (a later line cannot lose it)
  }
  // A line that could not be read (getline sets badbit: a line too long for the memory left, or a
  // read error) ends the batch; said, with a failing status, instead of ending as if the input had
  // (the later lines were dropped silently with exit 0, 2026-11-27).
  if (in.bad()) {
    std::cerr << "proxima: batch line " << no + 1
              << ": could not be read (a line too long for the memory left, or a read error); the lines after it "
                 "were not answered\n";
    return 1;
  }
  return 0;
}

// An input path that exists but is not a readable file (a directory): the message, else empty.
std::string notAFile(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) return "'" + path + "' is a directory, not a file";
  return {};
}

// Runs one subcommand on a pair file, a batch, or the built-in examples.
int runCommand(const char* name, const std::string& pairFile, const std::string& batchFile, const QueryOptions& q) {
  if (!batchFile.empty() && !pairFile.empty()) {
    std::cerr << "proxima " << name << ": give either a pair file or --batch, not both\n";
    return 2;
  }
  if (!batchFile.empty()) {
    if (batchFile == "-") return runBatch(std::cin, std::filesystem::current_path().string(), q);
    if (const std::string m = notAFile(batchFile); !m.empty()) {
      std::cerr << "proxima " << name << ": cannot read batch file: " << m << '\n';
      return 2;
    }
    std::ifstream in(batchFile);
    if (!in) {
      std::cerr << "proxima " << name << ": cannot open batch file '" << batchFile << "'\n";
      return 2;
    }
    return runBatch(in, std::filesystem::path(batchFile).parent_path().string(), q);
  }
  io::MeshCache meshes;
  if (pairFile.empty()) {
    std::cerr << "proxima " << name << ": no pair file given; running the built-in examples\n";
    if (q.contact)
      for (const char* text : kBuiltInContactPairs) std::cout << jsonLine(runPair(json::parse(text), "", meshes, q)) << '\n';
    else
      for (const char* text : kBuiltInPairs) std::cout << jsonLine(runPair(json::parse(text), "", meshes, q)) << '\n';
    return 0;
  }
  if (const std::string m = notAFile(pairFile); !m.empty()) {
    std::cerr << "proxima " << name << ": cannot read pair file: " << m << '\n';
    return 2;
  }
  std::ifstream in(pairFile);
  if (!in) {
    std::cerr << "proxima " << name << ": cannot open '" << pairFile << "'\n";
    return 2;
  }
  json j;
  try {
    std::ostringstream text;
    text << in.rdbuf();
    j = parsePairText(text.str());
  } catch (const json::exception& e) {  // syntax errors, numbers beyond a double (1e400), ...
    std::cout << jsonLine(invalid(pairFile + ": malformed JSON: " + jsonErrorText(e, false), q)) << '\n';
    return 1;
  } catch (const std::invalid_argument& e) {  // nested too deep, a duplicate key, an underflow
    std::cout << jsonLine(invalid(pairFile + ": malformed JSON: " + e.what(), q)) << '\n';
    return 1;
  }
  const json out = runPair(j, std::filesystem::path(pairFile).parent_path().string(), meshes, q);
  std::cout << jsonLine(out) << '\n';
  // Exit status 1 when there is no answer: invalid input, or a query that broke down (degenerate).
  return out["status"] == "invalid_input" || out["status"] == "degenerate" ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  proxima::dem::setOpenMpWaiting(argv);  // short spin, then sleep (threads.hpp)
  CLI::App app{"proxima: distance queries and contact detection between convex bodies"};
  app.require_subcommand(1);

  std::string pairFile, batchFile, sub = "signed-volumes", support = "auto", method = "gjk-td";
  bool exact = false, noBackup = false;
  auto* dist = app.add_subcommand("distance", "Distance between two convex shapes (JSON in, JSON out)");
  auto* cont = app.add_subcommand("contact", "Penetration depth, contact normal, contact point and manifold");
  for (CLI::App* c : {dist, cont}) {
    c->add_option("pair", pairFile, "JSON file with {\"a\": SHAPE, \"b\": SHAPE}; built-in examples if omitted");
    c->add_option("--batch", batchFile, "JSON-lines file of pairs ('-' for standard input)");
    c->add_option("--sub-algorithm", sub, "GJK sub-algorithm: signed-volumes (default) or johnson")
        ->check(CLI::IsMember({"signed-volumes", "johnson"}));
    c->add_flag("--exact-signs", exact, "Signed Volumes with exact determinant signs");
    c->add_flag("--no-backup", noBackup, "Johnson without the Backup procedure");
    c->add_option("--support", support, "polytope support: auto, brute-force or hill-climb")
        ->check(CLI::IsMember({"auto", "brute-force", "hill-climb"}));
  }
  // Number checks whose messages say what is expected (CLI11's range checks print the double range).
  // (whole numbers: at most `most`; the thread count has the scenario key's limit, 4096)
  auto numberCheck = [](bool wholeNumber, double most = 1e6) {
    return CLI::Validator(
        [wholeNumber, most](std::string& text) -> std::string {
          const std::string want = wholeNumber ? "a whole number from 0 to " + std::to_string(static_cast<long>(most))
                                               : "a positive, finite number of seconds";
          try {
            std::size_t used = 0;
            const double x = std::stod(text, &used);
            const bool ok = used == text.size() && std::isfinite(x) &&
                            (wholeNumber ? x >= 0 && x == std::floor(x) && x <= most : x > 0);
            return ok ? std::string() : "expected " + want + ", got '" + text + "'";
          } catch (const std::exception&) {
            return "expected " + want + ", got '" + text + "'";
          }
        },
        wholeNumber ? "INT>=0" : "SECONDS>0");
  };
  app::RunOptions runOpts;
  auto* run = app.add_subcommand("run", "Run a DEM simulation from a YAML scenario (built-in default if omitted)");
  run->add_option("scenario", runOpts.scenario, "scenario file (YAML); see docs/scenario-format.md");
  run->add_option("-o,--output", runOpts.output, "output directory (overrides output.directory)")
      ->check(CLI::Validator([](std::string& d) { return d.empty() ? std::string("expected a directory, got ''") : std::string(); }, "DIR"));
  run->add_flag("--resume", runOpts.resume, "continue from OUTPUT/checkpoint.bin (bit-for-bit)");
  run->add_option("-j,--threads", runOpts.threads, "OpenMP threads (overrides threads)")->check(numberCheck(true, 4096));
  run->add_option("--duration", runOpts.duration, "simulated time in s (overrides time.duration)")->check(numberCheck(false));
  run->add_flag("--no-vtk", runOpts.noVtk, "no ParaView frames (CSV, checkpoints and summary only)");
  run->add_flag("-q,--quiet", runOpts.quiet, "no progress line");

  app::ReportOptions reportOpts;
  auto* report = app.add_subcommand("report", "PNG plots and a markdown summary of proxima run output folders");
  report->add_option("RUN_DIR", reportOpts.runs, "output folders of proxima run (finished or running)");
  report->add_option("-o,--output", reportOpts.output, "output folder for the PNGs and report.md (default: report)");
  report->add_option("--label", reportOpts.labels, "one label per run folder, in order (default: the folder names)");
  report->add_option("--title", reportOpts.title, "report title");

  cont->add_option("--method", method, "gjk-td (default), nezami or cundall (the last two: polyhedra only)")
      ->check(CLI::IsMember({"gjk-td", "nezami", "cundall"}));

  CLI11_PARSE(app, argc, argv);
  if (run->parsed()) return app::runScenario(runOpts);
  if (report->parsed()) return app::runReport(reportOpts, argc, argv);

  QueryOptions q;
  q.contact = cont->parsed();
  q.gjk.subAlgorithm = sub == "johnson" ? SubAlgorithm::Johnson : SubAlgorithm::SignedVolumes;
  q.gjk.signs = exact ? SignMode::Exact : SignMode::Fast;
  q.gjk.johnsonBackup = !noBackup;
  q.gjk.supportMode = support == "brute-force" ? SupportMode::BruteForce
                      : support == "hill-climb" ? SupportMode::HillClimb
                                                : SupportMode::Auto;
  q.method = method == "nezami" ? PenetrationMethod::Nezami
             : method == "cundall" ? PenetrationMethod::Cundall
                                   : PenetrationMethod::GjkTd;
  return runCommand(q.contact ? "contact" : "distance", pairFile, batchFile, q);
}
