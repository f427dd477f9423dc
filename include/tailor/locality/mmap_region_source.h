// SPDX-License-Identifier: MIT
// The portable region source of the locality heap: aligned regions straight
// from mmap/munmap. tailor::locality_heap uses it when libtailor is not the
// process's malloc (default_region_source.h); its blocks must then be
// released through the heap, never with plain free(). With
// libtailor_region_source.cpp (dlsym), the only part of the locality layer
// that talks to the OS.
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
