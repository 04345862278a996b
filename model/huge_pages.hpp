// Memory for the large tables that are probed at random (a sparse table's
// hash slots): with 4 KiB pages nearly every probe of a table of tens of MiB
// also misses the TLB. Blocks of 2 MiB and more come 2 MiB-aligned and
// advised for transparent huge pages (MADV_HUGEPAGE: Debian's default THP
// mode is "madvise"); smaller ones are ordinary.
#pragma once

#include <sys/mman.h>

#include <cstddef>
#include <cstdlib>
#include <memory>
#include <new>

namespace downpour {

template <class T>
struct huge_page_allocator {
  using value_type = T;
  static constexpr std::size_t kHugePage = std::size_t{2} << 20;

  huge_page_allocator() = default;
  template <class U>
  huge_page_allocator(const huge_page_allocator<U>&) {}  // NOLINT: rebinding

  T* allocate(std::size_t n) {
    const std::size_t bytes = n * sizeof(T);
    if (bytes < kHugePage) return std::allocator<T>().allocate(n);
    const std::size_t rounded = (bytes + kHugePage - 1) / kHugePage * kHugePage;
    void* p = std::aligned_alloc(kHugePage, rounded);
    if (p == nullptr) throw std::bad_alloc();
    ::madvise(p, rounded, MADV_HUGEPAGE);  // a hint: without it the pages are small
    return static_cast<T*>(p);
  }
  void deallocate(T* p, std::size_t n) {
    if (n * sizeof(T) < kHugePage) return std::allocator<T>().deallocate(p, n);
    std::free(p);
  }
  template <class U>
  bool operator==(const huge_page_allocator<U>&) const { return true; }
  template <class U>
  bool operator!=(const huge_page_allocator<U>&) const { return false; }
};

}  // namespace downpour
