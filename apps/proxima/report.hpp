// The `proxima report` subcommand: plots and a markdown summary of `proxima run` output folders,
// written by apps/proxima/proxima_report.py (Python 3 + matplotlib), which this command runs.
#pragma once

#include <string>
#include <vector>

namespace proxima::app {

struct ReportOptions {
  std::vector<std::string> runs;    ///< `proxima run` output folders
  std::vector<std::string> labels;  ///< one per run folder, or none (the folder names)
  std::string output = "report";    ///< output folder
  std::string title;                ///< report title (the script's default if empty)
};

/// Replaces the process with the report script (interpreter: $PROXIMA_PYTHON, else /usr/bin/python3
/// when it exists, else `python3` from PATH; script: $PROXIMA_REPORT_SCRIPT, else
/// <exe dir>/proxima_report.py, else <exe dir>/../share/proxima/proxima_report.py). `argv` is the
/// command line, quoted into the report. Returns only on failure: exit code 2 with a message.
int runReport(const ReportOptions& options, int argc, char** argv);

}  // namespace proxima::app
