#include "proxima/core/large_array.hpp"

#include <cstdint>
#include <limits>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace proxima::detail {

namespace {
/// `bytes` rounded up to whole huge pages (for a size allocate() accepted: no overflow).
std::size_t wholePages(std::size_t bytes) { return (bytes + kHugePageBytes - 1) / kHugePageBytes * kHugePageBytes; }
/// The same, with bad_alloc when that, plus the huge page of slack the aligned mapping takes, would
/// not fit in a size_t (only a direct allocate() call can ask that: std::vector stops at max_size()).
std::size_t roundUp(std::size_t bytes) {
  if (bytes > std::numeric_limits<std::size_t>::max() - 2 * kHugePageBytes) throw std::bad_alloc();
  return wholePages(bytes);
}
}  // namespace

#if defined(__linux__) && defined(MADV_HUGEPAGE)

// Straight from the kernel, not through malloc: freed arrays go back to the system at once (malloc
// would keep them in its heap after raising its mmap threshold, and the huge pages with them).
void* allocateLarge(std::size_t bytes) {
  const std::size_t size = roundUp(bytes);
  // Map one huge page more than needed and unmap the unaligned head and tail.
  void* raw = mmap(nullptr, size + kHugePageBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) throw std::bad_alloc();
  const auto start = reinterpret_cast<std::uintptr_t>(raw);
  const std::uintptr_t aligned = (start + kHugePageBytes - 1) / kHugePageBytes * kHugePageBytes;
  if (aligned > start) munmap(raw, aligned - start);
  if (const std::size_t tail = start + kHugePageBytes - aligned)
    munmap(reinterpret_cast<void*>(aligned + size), tail);
  // Advice only: where huge pages are off the memory is ordinary pages, so the result is not checked.
  (void)madvise(reinterpret_cast<void*>(aligned), size, MADV_HUGEPAGE);
  return reinterpret_cast<void*>(aligned);
}

void deallocateLarge(void* p, std::size_t bytes) noexcept {
  munmap(p, wholePages(bytes));
}

#else

void* allocateLarge(std::size_t bytes) { return ::operator new(roundUp(bytes), std::align_val_t{kHugePageBytes}); }

void deallocateLarge(void* p, std::size_t bytes) noexcept {
  ::operator delete(p, wholePages(bytes), std::align_val_t{kHugePageBytes});
}

#endif

}  // namespace proxima::detail
