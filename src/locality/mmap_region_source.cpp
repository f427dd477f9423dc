// SPDX-License-Identifier: MIT
// The mmap region source of the locality heap, its portable fallback (see
// include/tailor/locality/mmap_region_source.h).
#include "tailor/locality/mmap_region_source.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>

namespace tailor::locality {

std::size_t mmap_region_source::page_size() noexcept {
  static const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  return page;
}

void* mmap_region_source::obtain(std::size_t bytes, std::size_t align) noexcept {
  const std::size_t page = page_size();
  if (align < page) align = page;
  const std::size_t extra = align - page;
  if (bytes == 0 || bytes + extra < bytes) return nullptr;
  void* mem = mmap(nullptr, bytes + extra, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED) return nullptr;
  const auto start = reinterpret_cast<std::uintptr_t>(mem);
  const std::uintptr_t aligned = (start + align - 1) & ~(static_cast<std::uintptr_t>(align) - 1);
  const std::size_t head = aligned - start;
  const std::size_t tail = extra - head;
  if (head != 0) munmap(mem, head);
  if (tail != 0) munmap(reinterpret_cast<void*>(aligned + bytes), tail);
  return reinterpret_cast<void*>(aligned);
}

void mmap_region_source::give_back(void* p, std::size_t bytes) noexcept { munmap(p, bytes); }

}  // namespace tailor::locality
