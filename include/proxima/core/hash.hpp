// Word-wise hash for content fingerprints (warm-start cache keys): a multiply and a shift per
// 8 bytes. Not a file format: the values may change between builds.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace proxima {

inline constexpr std::uint64_t kHashSeed = 0x243F6A8885A308D3ULL;

/// Mixes `bytes` (a multiple of 8) at `data` into h.
inline std::uint64_t hashWords(std::uint64_t h, const void* data, std::size_t bytes) {
  for (std::size_t k = 0; k < bytes; k += sizeof(std::uint64_t)) {
    std::uint64_t w = 0;
    std::memcpy(&w, static_cast<const char*>(data) + k, sizeof w);
    h = (h ^ w) * 0x9E3779B97F4A7C15ULL;
    h ^= h >> 29;
  }
  return h;
}

}  // namespace proxima
