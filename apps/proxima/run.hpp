// The `proxima run` subcommand.
#pragma once

#include <string>

namespace proxima::app {

struct RunOptions {
  std::string scenario;     ///< YAML file; empty = the built-in default scenario
  std::string output;       ///< overrides output.directory
  bool resume = false;      ///< continue from OUTPUT/checkpoint.bin
  int threads = 0;          ///< overrides threads
  double duration = 0;      ///< overrides time.duration
  bool noVtk = false;
  bool quiet = false;       ///< no progress line
  double progressSeconds = 1.0;
};

/// Returns the process exit code (0 ok, 1 runtime failure, 2 bad input).
int runScenario(const RunOptions& options);

}  // namespace proxima::app
