#include <cmath>
#include <cstdio>

#include <proxima/narrowphase/distance.hpp>

int main() {
  using namespace proxima;
  const DistanceResult r = distance(Shape(Sphere{1}), {}, Shape(Box{Vec3(1, 1, 1)}), Transform::translate(Vec3(3.5, 0, 0)));
  std::printf("status=%s distance=%.17g\n", std::string(toString(r.status)).c_str(), r.distance);
  return (r.status == Status::Separated && std::abs(r.distance - 1.5) < 1e-15) ? 0 : 1;
}
