// Whole-simulation benchmark, proxima side of the protocol in bench/peers/README.md: build a scene
// from its scenario file, pour and settle it untimed (the scenario's settle time), then time a fixed
// number of steps of the settled bed with 1 and 2 threads (the settled state is checkpointed once
// and reloaded for each thread count, so every count times the same steps from the same state).
// Usage: proxima_bench_dem SCENE.yaml --timed-steps N [--settle-time S] [--threads 1,2] [--repeat R]
//        [--settle-threads T] [--settled CHECKPOINT] [--single-point] [--out results.json]
// --single-point: the timed steps without the contact manifold (one point per contact), to measure
// the manifold's share of a polyhedral bed's time (not the protocol: it changes the forces).
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "proxima/dem/threads.hpp"
#include "proxima/dem/builder.hpp"
#include "proxima/io/scenario_yaml.hpp"

using namespace proxima;
using json = nlohmann::json;

namespace {

double peakRssMb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / 1024.0;
}

double cpuSeconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         1e-6 * static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

}  // namespace

int main(int argc, char** argv) {
  proxima::dem::setOpenMpWaiting(argv);  // short spin, then sleep (threads.hpp)
  std::string scene, out;
  long timedSteps = 2000;
  double settleTime = 0.5;
  int repeat = 1;
  int settleThreads = 1;    // untimed; one thread is the robust choice on a shared machine
  std::string settledFile;  // --settled FILE: reuse (or create) the settled checkpoint
  std::vector<int> threads = {1, 2};
  bool singlePoint = false;
  for (int a = 1; a < argc; ++a) {
    const std::string arg = argv[a];
    auto next = [&]() -> std::string {
      if (a + 1 >= argc) {
        std::cerr << arg << " needs a value\n";
        std::exit(2);
      }
      return argv[++a];
    };
    if (arg == "--timed-steps") timedSteps = std::stol(next());
    else if (arg == "--settle-time") settleTime = std::stod(next());
    else if (arg == "--repeat") repeat = std::stoi(next());
    else if (arg == "--settle-threads") settleThreads = std::stoi(next());
    else if (arg == "--settled") settledFile = next();
    else if (arg == "--single-point") singlePoint = true;
    else if (arg == "--out") out = next();
    else if (arg == "--threads") {
      threads.clear();
      std::stringstream ss(next());
      for (std::string t; std::getline(ss, t, ',');) threads.push_back(std::stoi(t));
    } else scene = arg;
  }
  if (scene.empty()) {
    std::cerr << "usage: proxima_bench_dem SCENE.yaml [--timed-steps N] [--settle-time S] [--threads 1,2] [--repeat R] [--settled F] [--single-point] [--out F]\n";
    return 2;
  }
  auto sc = io::loadScenario(scene);
  if (!sc.ok()) {
    std::cerr << sc.message() << '\n';
    return 2;
  }
  sc.value().output.vtk = false;

  // Settle once (all threads), keep the state in a file: the checkpoint given by --settled, else a
  // temporary one. (It was kept in memory, and copied into a string stream for each load: the peak
  // RSS reported for the timed runs then included up to twice the checkpoint, +80 MB on polyhedra10k.)
  std::string stateFile = settledFile;
  bool temporary = false;
  if (stateFile.empty()) {
    std::string pattern = (std::filesystem::temp_directory_path() / "proxima_bench_dem_XXXXXX").string();
    const int fd = mkstemp(pattern.data());
    if (fd < 0) {
      std::cerr << "cannot create a temporary file for the settled state (" << pattern << ")\n";
      return 2;
    }
    close(fd);
    stateFile = pattern, temporary = true;
  }
  struct RemoveAtExit {
    const std::string& path;
    bool on;
    ~RemoveAtExit() {
      if (on) std::remove(path.c_str());
    }
  } removeAtExit{stateFile, temporary};
  json base;
  {
    dem::Simulation sim;
    auto scS = sc.value();
    scS.threads = settleThreads;
    if (auto r = dem::buildSimulation(scS, sim); !r.ok()) {
      std::cerr << r.message() << '\n';
      return 2;
    }
    const long settleSteps = std::lround(settleTime / sim.options().timeStep);
    const auto t0 = std::chrono::steady_clock::now();
    std::ifstream cached(settledFile, std::ios::binary);
    const bool reuse = !settledFile.empty() && cached;
    if (reuse) {
      if (auto r = sim.loadState(cached); !r.ok()) {
        std::cerr << settledFile << ": " << r.message() << '\n';
        return 1;
      }
    } else {
      for (long s = 0; s < settleSteps; ++s) {
        sim.step();
        if (s % 2000 == 0) {
          std::fprintf(stderr, "\rsettling %ld/%ld", s, settleSteps);
          std::fflush(stderr);
        }
      }
    }
    if (!reuse) {
      std::ofstream save(stateFile, std::ios::binary);
      sim.saveState(save);
      if (!save.flush()) {
        std::cerr << stateFile << ": cannot write the settled state\n";
        return 2;
      }
    }
    const double settleWall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const dem::Stats st = sim.stats();
    std::fprintf(stderr, "\rsettled %ld steps in %.1f s; vmax %.3g m/s, Z %.2f\n", settleSteps, settleWall, st.maxSpeed,
                 st.coordinationNumber);
    base = {{"scene", scene},
            {"particles", sim.particles().size()},
            {"settle_steps", settleSteps},
            {"settle_wall_seconds", settleWall},
            {"vmax_start", st.maxSpeed},
            {"settled", st.maxSpeed < 0.05},
            {"coordination_number", st.coordinationNumber},
            {"contacts", st.contacts},
            // Pour phase: narrow-phase calls saved by the conservative bound (Montanari Eq. 3.14).
            {"settle_narrow_phase_calls", sim.counters().narrowPhaseCalls},
            {"settle_narrow_phase_skipped", sim.counters().narrowPhaseSkipped}};
  }

  json results = json::array();
  for (int t : threads)
    for (int rep = 0; rep < repeat; ++rep) {
      auto scT = sc.value();
      scT.threads = t;
      dem::Simulation sim;
      if (auto r = dem::buildSimulation(scT, sim); !r.ok()) return 2;
      std::ifstream in(stateFile, std::ios::binary);
      if (auto r = sim.loadState(in); !r.ok()) {
        std::cerr << r.message() << '\n';
        return 1;
      }
      if (singlePoint) sim.options().narrowPhase.manifold = false;
      const dem::Counters c0 = sim.counters();
      const double cpu0 = cpuSeconds();
      const auto t0 = std::chrono::steady_clock::now();
      sim.run(timedSteps);
      const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      const double cpu = cpuSeconds() - cpu0;
      const dem::Counters& c = sim.counters();
      const double n = static_cast<double>(sim.particles().size());
      json r = base;
      r["peer"] = "proxima";
      if (singlePoint) r["single_point"] = true;
      r["threads"] = t;
      r["repeat"] = rep;
      r["steps"] = timedSteps;
      r["seconds"] = wall;
      r["cpu_seconds"] = cpu;
      r["cpu_share"] = wall > 0 ? cpu / (wall * t) : 0.0;
      r["particle_steps_per_s"] = n * static_cast<double>(timedSteps) / wall;
      r["peak_rss_mb"] = peakRssMb();
      r["vmax_end"] = sim.stats().maxSpeed;
      const auto calls = c.narrowPhaseCalls - c0.narrowPhaseCalls, skipped = c.narrowPhaseSkipped - c0.narrowPhaseSkipped;
      r["narrow_phase_calls"] = calls;
      r["narrow_phase_skipped"] = skipped;
      r["narrow_phase_saved_fraction"] = calls + skipped > 0 ? static_cast<double>(skipped) / static_cast<double>(calls + skipped) : 0.0;
      r["neighbour_rebuilds"] = c.neighbourRebuilds - c0.neighbourRebuilds;
      // Per narrow-phase call, everything included (the step's wall time over its calls): the figure
      // to compare across scene sizes, whose contacts per particle differ (walls).
      const double ps = n * static_cast<double>(timedSteps);
      r["narrow_phase_calls_per_particle_step"] = ps > 0 ? static_cast<double>(calls) / ps : 0.0;
      r["wall_ns_per_narrow_phase_call"] = calls > 0 ? 1e9 * wall / static_cast<double>(calls) : 0.0;
      // The timed steps run without the profiler (two clock reads per narrow-phase call, ~3 % of a
      // polyhedral step); the contact-detection share comes from a fifth as many steps after them.
      const long profiledSteps = std::max(10L, timedSteps / 5);
      sim.options().profile = true;
      sim.run(profiledSteps);
      r["profiled_steps"] = profiledSteps;
      r["contact_detection_share"] = sim.contactDetectionShare();
      r["narrow_phase_cpu_seconds"] = sim.timings().narrowPhaseCpuSeconds;
      r["neighbour_seconds"] = sim.timings().neighbourSeconds;
      std::size_t vertices = 0;
      for (const auto& shape : sim.shapes()) vertices = std::max(vertices, shape.bodyVertices.size());
      r["vertices"] = vertices;
      std::fprintf(stderr, "threads %d: %.3g particle-steps/s (%.2f s wall, cpu share %.2f)\n", t,
                   r["particle_steps_per_s"].get<double>(), wall, r["cpu_share"].get<double>());
      results.push_back(r);
    }
  const std::string text = json{{"results", results}}.dump(2);
  if (out.empty())
    std::cout << text << '\n';
  else
    std::ofstream(out) << text << '\n';
  return 0;
}
