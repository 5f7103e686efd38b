// How OpenMP threads wait between the parallel loops of a DEM step (a step is ~1 ms; it has three
// synchronisation points). libgomp reads its settings when it loads, so a program that wants other
// defaults must set them and re-execute itself before any OpenMP call.
#pragma once

#include <unistd.h>

#include <cstdlib>

namespace proxima::dem {

/// Unless the user chose (OMP_WAIT_POLICY or GOMP_SPINCOUNT set), re-executes the program with
/// GOMP_SPINCOUNT=10000: a waiting thread spins for a few microseconds, then sleeps. Measured on
/// 10k settled spheres, 2 threads vs 1 with the second core free (docs/benchmarks.md):
///   passive (sleep at once): 1.2-1.4x   spin 1000: 1.6x   spin 10000: 1.7-2.2x
/// and with the second core busy with another process: passive 5.8 M, spin 1000 5.6 M, spin 10000
/// 3.1 M particle-steps/s, against 6-7 M on one thread; libgomp's default (spin 300000) collapsed to
/// 0.5 M. On a machine whose cores are busy, run one thread (or set OMP_WAIT_POLICY=passive).
/// Returns only if it did not re-execute.
inline void setOpenMpWaiting(char** argv) {
  if (std::getenv("OMP_WAIT_POLICY") || std::getenv("GOMP_SPINCOUNT")) return;
  if (setenv("GOMP_SPINCOUNT", "10000", 1) == 0) execv("/proc/self/exe", argv);
}

}  // namespace proxima::dem
