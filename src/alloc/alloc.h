// SPDX-License-Identifier: MIT
// The allocation entry points of the core, inlined into the exported
// functions (api.cpp and the malloc/new overrides). The fast paths: malloc of
// up to 1 KiB is a TLS load, an indexed load and a free-list pop; free by the
// owning thread is a mask, a descriptor load and a push. No lock, no atomic.
#pragma once

#include <cstddef>
#include <cstdint>

#include "alloc/dmm_front.h"
#include "alloc/heap.h"
#include "alloc/misuse.h"
#include "alloc/secure.h"

#define TAILOR_LIKELY(x) __builtin_expect(!!(x), 1)
#define TAILOR_UNLIKELY(x) __builtin_expect(!!(x), 0)

namespace tailor::alloc {

// A block popped from a direct page, marked not freed (misuse.h); nullptr
// when the page has none.
[[gnu::always_inline]] inline void* pop_direct(Page* pg) noexcept {
  Block* b = pg->free;
  if (TAILOR_LIKELY(b != nullptr)) {
    // A direct page is a class page of this heap or a stash (of no kind).
    TAILOR_ASSERT(pg->kind != PageKind::kClass || (page_holds_block(pg, b) && pg->used < pg->capacity));
    pg->free = b->next;
    pg->used++;
    block_key(b) = 0;
    return b;
  }
  return nullptr;
}

// The fast path every malloc and new shares: a block from the direct page
// of its size; nullptr when the size is not direct or the page has none.
[[gnu::always_inline]] inline void* malloc_fast(Heap* h, std::size_t size) noexcept {
  if (TAILOR_LIKELY(size <= kDirectMax)) return pop_direct(h->direct[(size + 7) >> 3]);
  return nullptr;
}

// The same from the routed direct pointers, after the call-site pools'
// routing (heap.h).
[[gnu::always_inline]] inline void* malloc_fast_routed(Heap* h, std::size_t size) noexcept {
  if (TAILOR_LIKELY(size <= kDirectMax)) return pop_direct(h->routed_direct[(size + 7) >> 3]);
  return nullptr;
}

inline void* malloc_inline(std::size_t size) noexcept {
  Heap* h = tl_heap;
  if (void* p = malloc_fast(h, size); TAILOR_LIKELY(p != nullptr)) return p;
  // A tail call (the exported functions that inline this return its value):
  // heap_malloc_generic's return address is the program's call site.
  return heap_malloc_generic(h, size);
}

// The same where the slow path is not a tail call of the exported function:
// the call site for call-site pools (site_pool.h) is passed explicitly
// (nullptr: a request no pool serves).
inline void* malloc_inline_at(std::size_t size, const void* site) noexcept {
  Heap* h = tl_heap;
  if (void* p = malloc_fast(h, size); TAILOR_LIKELY(p != nullptr)) return p;
  return heap_malloc_site(h, size, site);
}

[[gnu::always_inline]] inline void free_inline(void* p) noexcept {
  Segment* seg = segment_of_fast(p);  // NULL: 0, never registered
  Heap* h = tl_heap;
  // The segment's registry byte is this heap's tag: libtailor's, and ours
  // (misuse.h). Anything else (NULL, unknown, a DMM's block, another heap's,
  // huge, a tagless heap's) is sorted out of line.
  const std::uint32_t tag = segment_tag(seg);
  if (TAILOR_LIKELY(tag == h->tag)) {
    Page* pg = page_of(seg, p);
    if (TAILOR_UNLIKELY(!block_start_ok(pg, p) || block_key(p) == g_free_key)) {  // interior, or freed
      misuse_in_segment("free", seg, p);
      return;
    }
    // The registry byte (misuse.h) and the segment's header name one owner.
    TAILOR_ASSERT(seg->heap.load(std::memory_order_relaxed) == h);
    free_owned(h, pg, p);
    return;
  }
  // Another tagged heap's block: set aside unread, looked at with the
  // others later (heap.h, Heap::deferred).
  if (tag - 1u < kTagLast && h->defer_left != 0) {
    h->deferred[kDeferMax - h->defer_left] = p;
    if (--h->defer_left == 0) free_deferred(h);
    return;
  }
  free_not_mine(p);  // a tail call: nothing to save on the owner's path
}

// Sized frees. operator delete(p, size) (strict): the block's class must be
// the class of `size` (block_size - size < size_span: min_request < size <=
// block_size, in the descriptor the free reads anyway), checked in the same
// pass as free's own checks. free_sized, free_aligned_sized and aligned sized
// delete: misuse.h's size_check (loose: what realloc and alignment may
// leave), then free.
[[gnu::always_inline]] inline void delete_sized_inline(void* p, std::size_t size, const char* fn) noexcept {
  Segment* seg = segment_of_fast(p);  // NULL: 0, never registered
  Heap* h = tl_heap;
  if (TAILOR_LIKELY(segment_tag(seg) == h->tag)) {
    Page* pg = page_of(seg, p);
    if (TAILOR_UNLIKELY(!block_start_ok(pg, p) || block_key(p) == g_free_key)) {
      misuse_in_segment(fn, seg, p);
      return;
    }
    if (TAILOR_UNLIKELY(!page_own_size(pg, size))) {
      misuse_size_in_segment(fn, seg, p, size);
      return;
    }
    free_owned(h, pg, p);
    return;
  }
  delete_sized_not_mine(p, size, fn);
}

inline void free_sized_inline(void* p, std::size_t size, std::size_t align, const char* fn) noexcept {
  if (TAILOR_UNLIKELY(p == nullptr)) return;
  if (TAILOR_UNLIKELY(dmm_owns(p))) {
    dmm_free(p);
    return;
  }
  if (TAILOR_UNLIKELY(secure_block(p))) {
    secure_free(fn, p, true, size);  // the exact size, checked and freed in one look-up
    return;
  }
  if (TAILOR_UNLIKELY(!size_check(fn, p, size, align, false))) return;
  free_inline(p);
}

// Size of the block p points into, from p to its end.
std::size_t usable_size(const void* p) noexcept;
void* calloc_impl(std::size_t count, std::size_t size) noexcept;
void* realloc_impl(void* p, std::size_t size) noexcept;
// align: a power of two; larger than 16 takes the aligned path.
void* aligned_impl(std::size_t align, std::size_t size) noexcept;

}  // namespace tailor::alloc
