// SPDX-License-Identifier: MIT
// The allocation entry points of the core, inlined into the exported
// functions (api.cpp and the malloc/new overrides). The fast paths: malloc of
// up to 1 KiB is a TLS load, an indexed load and a free-list pop; free by the
// owning thread is a mask, a descriptor load and a push. No lock, no atomic.
#pragma once

#include <cstddef>
#include <cstdint>

#include "dmm_front.h"
#include "heap.h"

#define TAILOR_LIKELY(x) __builtin_expect(!!(x), 1)
#define TAILOR_UNLIKELY(x) __builtin_expect(!!(x), 0)

namespace tailor::alloc {

inline void* malloc_inline(std::size_t size) noexcept {
  Heap* h = tl_heap;
  if (TAILOR_LIKELY(size <= kDirectMax)) {
    Page* pg = h->direct[(size + 7) >> 3];
    Block* b = pg->free;
    if (TAILOR_LIKELY(b != nullptr)) {
      pg->free = b->next;
      pg->used++;
      return b;
    }
  }
  // A tail call (the exported functions that inline this return its value):
  // heap_malloc_generic's return address is the program's call site.
  return heap_malloc_generic(h, size);
}

// The same where the slow path is not a tail call of the exported function:
// the call site for call-site pools (site_pool.h) is passed explicitly
// (nullptr: a request no pool serves).
inline void* malloc_inline_at(std::size_t size, const void* site) noexcept {
  Heap* h = tl_heap;
  if (TAILOR_LIKELY(size <= kDirectMax)) {
    Page* pg = h->direct[(size + 7) >> 3];
    Block* b = pg->free;
    if (TAILOR_LIKELY(b != nullptr)) {
      pg->free = b->next;
      pg->used++;
      return b;
    }
  }
  return heap_malloc_site(h, size, site);
}

inline void free_inline(void* p) noexcept {
  if (TAILOR_UNLIKELY(p == nullptr)) return;
  if (TAILOR_UNLIKELY(dmm_owns(p))) {  // a block of the DMM serving malloc (dmm_front.h)
    dmm_free(p);
    return;
  }
  Segment* seg = segment_of(p);
  Heap* h = tl_heap;
  if (TAILOR_LIKELY(seg->heap.load(std::memory_order_relaxed) == h)) {
    Page* pg = page_of(seg, p);
    auto* b = static_cast<Block*>(p);
    b->next = pg->local_free;
    pg->local_free = b;
    if (TAILOR_LIKELY(--pg->used != 0 && !pg->in_full)) return;
    page_free_slow(h, pg);
    return;
  }
  free_remote(seg, p);
}

// Size of the block p points into, from p to its end.
std::size_t usable_size(const void* p) noexcept;
void* calloc_impl(std::size_t count, std::size_t size) noexcept;
void* realloc_impl(void* p, std::size_t size) noexcept;
// align: a power of two; larger than 16 takes the aligned path.
void* aligned_impl(std::size_t align, std::size_t size) noexcept;

}  // namespace tailor::alloc
