// Seeded random numbers that are the same on every platform: the 64-bit Mersenne twister (fully
// specified by the standard) with explicit transforms (the standard distributions are
// implementation-defined). Used wherever a seed must reproduce a scenario (insertion, rock grains).
#pragma once

#include <cmath>
#include <cstdint>
#include <numbers>
#include <random>

#include "proxima/core/types.hpp"

namespace proxima {

struct SeededRandom {
  std::mt19937_64 engine;
  explicit SeededRandom(std::uint64_t seed) : engine(seed) {}

  Real uniform() { return static_cast<Real>(engine() >> 11) * 0x1.0p-53; }  ///< [0, 1)
  Real uniform(Real a, Real b) { return a + (b - a) * uniform(); }
  Real normal() {  // Box-Muller, one value per call
    const Real u1 = 1 - uniform(), u2 = uniform();
    return std::sqrt(-2 * std::log(u1)) * std::cos(2 * std::numbers::pi * u2);
  }
  Quat orientation() {  // uniform on SO(3) (Shoemake 1992)
    const Real u1 = uniform(), u2 = 2 * std::numbers::pi * uniform(), u3 = 2 * std::numbers::pi * uniform();
    const Real a = std::sqrt(1 - u1), b = std::sqrt(u1);
    return Quat(b * std::cos(u3), a * std::sin(u2), a * std::cos(u2), b * std::sin(u3)).normalized();
  }
  Vec3 direction() {  // uniform on the unit sphere (Archimedes: z uniform)
    const Real z = uniform(-1, 1), phi = 2 * std::numbers::pi * uniform();
    const Real s = std::sqrt(std::max<Real>(0, 1 - z * z));
    return {s * std::cos(phi), s * std::sin(phi), z};
  }
  Vec3 inUnitBall() {  // rejection from the cube
    for (;;) {
      const Vec3 v(uniform(-1, 1), uniform(-1, 1), uniform(-1, 1));
      if (v.squaredNorm() <= 1) return v;
    }
  }
};

}  // namespace proxima
