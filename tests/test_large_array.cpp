// LargeVector: the storage of the simulator's per-pair arrays. Large arrays sit on 2 MiB boundaries
// (the condition for the kernel to back them with huge pages); the values behave as in std::vector.
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <numeric>
#include <sstream>
#include <string>
#include <vector>

#include "proxima/core/large_array.hpp"

namespace proxima {
namespace {

bool hugeAligned(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % detail::kHugePageBytes == 0; }

TEST(LargeArray, LargeArraysAreHugePageAlignedAndKeepTheirValues) {
  // Just above one huge page, several, and a size that is not a multiple of one.
  for (const std::size_t n : {std::size_t{262145}, std::size_t{1} << 20, std::size_t{777777}}) {
    LargeVector<std::uint64_t> v(n);
    ASSERT_TRUE(hugeAligned(v.data())) << n;
    std::iota(v.begin(), v.end(), std::uint64_t{7});
    // Growth reallocates: the copy is aligned too and holds the same values.
    v.resize(2 * n + 3, 1);
    ASSERT_TRUE(hugeAligned(v.data())) << n;
    for (std::size_t k = 0; k < n; ++k) ASSERT_EQ(v[k], k + 7) << k;
    for (std::size_t k = n; k < 2 * n + 3; ++k) ASSERT_EQ(v[k], 1u) << k;
    const LargeVector<std::uint64_t> copy = v;
    EXPECT_TRUE(hugeAligned(copy.data()));
    EXPECT_EQ(copy, v);
    // Shrinking to a small array moves it to ordinary storage (a new block), values kept.
    const std::uint64_t* large = v.data();
    v.resize(10);
    v.shrink_to_fit();
    EXPECT_EQ(v.capacity(), 10u);
    EXPECT_NE(v.data(), large);
    for (std::size_t k = 0; k < 10; ++k) EXPECT_EQ(v[k], k + 7);
  }
}

// The kernel records the advice on the mapping (VmFlags "hg" in /proc/self/smaps) wherever it has
// transparent huge pages at all, whatever their mode.
TEST(LargeArray, LargeArraysAreAdvisedForHugePages) {
  if (!std::filesystem::exists("/sys/kernel/mm/transparent_hugepage/enabled") ||
      !std::filesystem::exists("/proc/self/smaps"))
    GTEST_SKIP() << "no transparent huge pages here";
  LargeVector<double> v(1 << 20, 1.0);
  const auto at = reinterpret_cast<std::uintptr_t>(v.data());
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool inside = false, found = false, advised = false;
  while (std::getline(smaps, line)) {
    std::uintptr_t lo = 0, hi = 0;
    char dash = 0;
    std::istringstream head(line);
    if (head >> std::hex >> lo >> dash >> hi && dash == '-') {
      inside = lo <= at && at < hi;
      found |= inside;
      continue;
    }
    if (inside && line.rfind("VmFlags:", 0) == 0) advised = line.find(" hg") != std::string::npos;
  }
  ASSERT_TRUE(found);
  EXPECT_TRUE(advised);
}

TEST(LargeArray, SizesBeyondAnyMappingAreRefused) {
  LargeArrayAllocator<char> bytes;
  EXPECT_THROW((void)bytes.allocate(std::numeric_limits<std::size_t>::max() - 100), std::bad_alloc);
  LargeArrayAllocator<double> doubles;
  EXPECT_THROW((void)doubles.allocate(std::numeric_limits<std::size_t>::max() / 4), std::bad_alloc);
  EXPECT_LE(doubles.max_size(), std::numeric_limits<std::size_t>::max() / sizeof(double));
}

TEST(LargeArray, SmallArraysAndGrowthByPushBack) {
  LargeVector<double> v;
  std::vector<double> plain;
  // push_back grows through small and large capacities (the pair list's growth at a rebuild).
  for (int k = 0; k < 400000; ++k) {
    v.push_back(k * 0.5);
    plain.push_back(k * 0.5);
  }
  EXPECT_TRUE(std::equal(v.begin(), v.end(), plain.begin(), plain.end()));
  EXPECT_TRUE(hugeAligned(v.data()));
  LargeVector<double> small(100, 3.0);
  EXPECT_EQ(small.size(), 100u);
  EXPECT_EQ(small[99], 3.0);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(small.data()) % alignof(double), 0u);
}

}  // namespace
}  // namespace proxima
