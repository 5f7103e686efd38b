// Storage for the simulator's large per-pair arrays (pair states, warm-start caches, pair forces):
// arrays of 2 MiB or more are placed on 2 MiB boundaries and offered to the kernel's transparent
// huge pages, so that the pair loop's scattered reads of them do not miss the TLB on nearly every
// pair (a settled 10 000-polyhedra bed holds ~26 MB of caches, 6 400 small pages against a ~1 500-
// entry TLB). Smaller arrays come from the ordinary allocator. Only the storage differs: the values,
// and so the results, are those of std::vector<T>.
#pragma once

#include <cstddef>
#include <cstdint>
#include <new>
#include <vector>

namespace proxima {

namespace detail {
inline constexpr std::size_t kHugePageBytes = std::size_t{2} << 20;
/// `bytes` (>= kHugePageBytes) rounded up to whole huge pages, aligned to one, advised for huge
/// pages where the system has them (Linux madvise(MADV_HUGEPAGE); elsewhere plain aligned memory).
void* allocateLarge(std::size_t bytes);
void deallocateLarge(void* p, std::size_t bytes) noexcept;
}  // namespace detail

template <class T>
struct LargeArrayAllocator {
  using value_type = T;
  LargeArrayAllocator() noexcept = default;
  template <class U>
  LargeArrayAllocator(const LargeArrayAllocator<U>&) noexcept {}

  [[nodiscard]] std::size_t max_size() const noexcept { return PTRDIFF_MAX / sizeof(T); }
  T* allocate(std::size_t n) {
    if (n > static_cast<std::size_t>(-1) / sizeof(T)) throw std::bad_array_new_length();
    const std::size_t bytes = n * sizeof(T);
    if (bytes >= detail::kHugePageBytes) return static_cast<T*>(detail::allocateLarge(bytes));
    return static_cast<T*>(::operator new(bytes, std::align_val_t{alignof(T)}));
  }
  void deallocate(T* p, std::size_t n) noexcept {
    const std::size_t bytes = n * sizeof(T);
    if (bytes >= detail::kHugePageBytes)
      detail::deallocateLarge(p, bytes);
    else
      ::operator delete(p, std::align_val_t{alignof(T)});
  }
  template <class U>
  bool operator==(const LargeArrayAllocator<U>&) const noexcept {
    return true;
  }
};

/// std::vector with LargeArrayAllocator: the same interface and values.
template <class T>
using LargeVector = std::vector<T, LargeArrayAllocator<T>>;

}  // namespace proxima
