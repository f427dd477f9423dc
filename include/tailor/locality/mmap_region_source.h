// SPDX-License-Identifier: MIT
// The stand-in OS layer of the locality heap: aligned regions straight from
// mmap/munmap. It exists only until libtailor's back end (issue 5) lands;
// then the heap takes its regions from libtailor's segments instead, so that
// hinted and plain allocations share one heap (docs/locality.md). Nothing
// else in the locality layer includes system headers.
#pragma once

#include <cstddef>

namespace tailor::locality {

class mmap_region_source {
 public:
  /// The system page size (sysconf), read once.
  static std::size_t page_size() noexcept;
  /// Maps bytes + align - page, then unmaps the misaligned head and the tail.
  void* obtain(std::size_t bytes, std::size_t align) noexcept;
  void give_back(void* p, std::size_t bytes) noexcept;
};

}  // namespace tailor::locality
