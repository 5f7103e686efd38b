// YAML scenario files (docs/scenario-format.md): materials, contact model, pair overrides, particle
// templates with size distributions, insertion blocks, walls, time stepping, stopping and output.
//
// Strict: unknown keys, duplicate keys, wrong types, out-of-range values, unknown names and vectors
// that are not exactly three finite numbers are errors. Every message starts with "FILE:LINE: "
// (the line of the offending node, or of the enclosing map for a missing key), then names the field
// path and says what is expected, e.g.
//   scenario.yaml:14: templates[0].material: unknown material "steel" (known: glass)
#pragma once

#include <string>

#include "proxima/core/status.hpp"
#include "proxima/dem/scenario.hpp"

namespace proxima::io {

/// Reads and parses a scenario file. Relative mesh paths (templates' `shape.file`, mesh walls'
/// `file`) resolve against the file's folder.
Result<dem::Scenario> loadScenario(const std::string& path);

/// Parses scenario text. `sourceName` prefixes the messages (and fills Scenario::sourceFile);
/// `baseDir` resolves relative mesh paths ("" = the working directory).
///
/// Walls: a `box` becomes five or six inward-facing planes named NAME.xmin, NAME.xmax, NAME.ymin,
/// NAME.ymax, NAME.zmin and NAME.zmax (no NAME.zmax with open_top). A `lid` is a Plane wall with
/// normal (0,0,-1) and mass > 0. A lid with `height: above_particles` cannot be placed before the
/// particles exist; it is stored with origin.z = NaN and origin.x = its `gap`, and
/// dem::buildSimulation moves it to (max particle top + gap) once the particles are inserted.
Result<dem::Scenario> parseScenario(const std::string& yamlText, const std::string& sourceName,
                                    const std::string& baseDir);

}  // namespace proxima::io
