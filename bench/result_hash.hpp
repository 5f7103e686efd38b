// FNV-1a over the bits of query results: the profile drivers (gjk_profile.cpp, contact_profile.cpp)
// print it so that a refactor can be checked to change no bit of any answer.
#pragma once

#include <cstdint>
#include <cstring>

#include "proxima/narrowphase/gjk.hpp"
#include "proxima/narrowphase/penetration.hpp"

namespace pbench {

struct ResultHash {
  std::uint64_t h = 1469598103934665603ull;
  void mix(double d) {
    std::uint64_t u;
    std::memcpy(&u, &d, sizeof u);
    h = (h ^ u) * 1099511628211ull;
  }
  void mix(const proxima::Vec3& v) { mix(v.x()), mix(v.y()), mix(v.z()); }
  /// Distance: distance, iterations, status, simplex size, witnesses and normal.
  void mix(const proxima::DistanceResult& r) {
    mix(r.distance), mix(r.iterations), mix(static_cast<int>(r.status)), mix(r.simplexSize);
    for (int i = 0; i < 3; ++i) mix(r.witnessA[i]), mix(r.witnessB[i]), mix(r.normal[i]);
  }
  /// Contact: status, distance, depth, normal, witnesses, contact point and the manifold.
  void mix(const proxima::ContactResult& r) {
    mix(static_cast<int>(r.status)), mix(r.distance), mix(r.depth), mix(r.normal), mix(r.witnessA), mix(r.witnessB);
    mix(r.contactPoint), mix(r.contactCount);
    for (int i = 0; i < r.contactCount; ++i) mix(r.contacts[i].point), mix(r.contacts[i].depth);
  }
};

}  // namespace pbench
