// Private: binding a caller's warm-start cache to the pair it is used for (distance() and contact()).
#pragma once

#include <cstdint>

#include "proxima/narrowphase/distance.hpp"

namespace proxima::detail {

/// A cache filled for another pair (or this pair swapped), or holding out-of-range data, would
/// warm-start from points that are not on these shapes: it is reset and stamped with the pair's key
/// (cachePairKey). `key` is the cache's own pairKey field (GjkCache::pairKey, ContactCache::gjk.pairKey).
template <class Cache>
inline void bindCacheToPair(Cache& cache, std::uint64_t& key, const Shape& a, const Shape& b) {
  const std::uint64_t k = cachePairKey(a, b);
  if (key != k || !cache.plausible()) [[unlikely]] {
    cache.reset();
    key = k;
  }
}

}  // namespace proxima::detail
