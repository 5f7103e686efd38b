// `proxima report RUN_DIR... [-o OUT_DIR] [--label NAME...] [--title TEXT]`: finds a Python 3 and
// proxima_report.py and executes it; the script reads the run folders and writes the PNG plots and
// report.md (see docs/user-guide.md, "proxima report").
#include "report.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>

namespace proxima::app {

namespace {

namespace fs = std::filesystem;

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

// POSIX shell quoting, so that the command line in the report can be pasted back into a shell.
std::string shellQuote(const std::string& s) {
  if (!s.empty() && s.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_@%+=:,./-") ==
                        std::string::npos)
    return s;
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\"'\"'") : std::string(1, c);
  return q + "'";
}

fs::path executableDir(const char* argv0) {
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec && argv0 && std::strchr(argv0, '/')) exe = fs::absolute(argv0, ec);
  return exe.parent_path();
}

bool isFile(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec);
}

}  // namespace

int runReport(const ReportOptions& o, int argc, char** argv) {
  if (o.runs.empty()) {
    std::cerr << "proxima report: no run folder given (usage: proxima report RUN_DIR [RUN_DIR...] [-o OUT_DIR] "
                 "[--label NAME...] [--title TEXT])\n";
    return 2;
  }
  // ---- the script ----
  fs::path script;
  if (std::string s = env("PROXIMA_REPORT_SCRIPT"); !s.empty()) {
    if (!isFile(s)) {
      std::cerr << "proxima report: PROXIMA_REPORT_SCRIPT='" << s << "' is not a file\n";
      return 2;
    }
    script = s;
  } else {
    const fs::path dir = executableDir(argc > 0 ? argv[0] : nullptr);
    const fs::path candidates[] = {dir / "proxima_report.py", dir / ".." / "share" / "proxima" / "proxima_report.py"};
    for (const fs::path& c : candidates)
      if (isFile(c)) {
        script = c.lexically_normal();
        break;
      }
    if (script.empty()) {
      std::cerr << "proxima report: cannot find proxima_report.py (looked in " << candidates[0].string() << " and "
                << candidates[1].lexically_normal().string() << "); set PROXIMA_REPORT_SCRIPT to its path\n";
      return 2;
    }
  }

  // ---- the interpreter ----
  std::string python = env("PROXIMA_PYTHON");
  if (python.empty()) python = access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3" : "python3";

  // ---- the command line that produced the report, and the script's arguments ----
  std::string command;
  for (int i = 0; i < argc; ++i) command += (i ? " " : "") + shellQuote(argv[i]);
  std::vector<std::string> args = {python, script.string(), "--command=" + command, "--output=" + o.output};
  if (!o.title.empty()) args.push_back("--title=" + o.title);
  for (const std::string& l : o.labels) args.push_back("--label=" + l);
  args.push_back("--");
  args.insert(args.end(), o.runs.begin(), o.runs.end());

  std::vector<char*> cargs;
  for (std::string& a : args) cargs.push_back(a.data());
  cargs.push_back(nullptr);
  std::cout.flush();
  std::cerr.flush();
  execvp(cargs[0], cargs.data());  // returns only on failure
  std::cerr << "proxima report: cannot run the Python interpreter '" << python << "': " << std::strerror(errno)
            << " (install python3 and python3-matplotlib, or set PROXIMA_PYTHON)\n";
  return 2;
}

}  // namespace proxima::app
