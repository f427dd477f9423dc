// SPDX-License-Identifier: MIT
// Regions: libtailor's back end lent to an allocator outside the core.
//
// Why this exists: another policy (the locality heap of issue 6, built on
// libtailor rather than on a second back end) must be able to carve its own
// blocks out of libtailor's memory, and a program must still release those
// blocks with plain free. A region pool hands out aligned spans of segments
// that belong to the pool, not to a thread heap. Its segments are marked
// SegmentKind::kRegion and point back to the pool, so free, realloc and
// malloc_usable_size find a block's owner in O(1) through the same segment
// mask as any other block, and call the owner's hooks.
//
// free's fast path is untouched: a region segment has no owning heap, so
// its blocks never pass the owner test and take the slow path (free_remote),
// which checks the segment kind there.
//
// A pool is shared between threads: every call takes the pool's spin lock
// (slab-sized operations only; the owner's own blocks are its business).
// The hooks run without that lock held, so they may give regions back.
//
// fork: the live pools are listed, and handlers registered with
// pthread_atfork when the first pool is made take every pool's lock before
// a fork and release them after, so a child never starts with a lock that
// a thread it does not have was holding. An owner that calls the pool under
// a lock of its own registers its handlers after making its pool, so that
// its prepare handler (run before ours) takes its lock first: the order in
// which it takes both locks anyway.
#pragma once

#include <atomic>
#include <cstddef>

#include "alloc/segment.h"
#include "alloc/spin_lock.h"
#include "tailor/tailor.h"

namespace tailor::alloc {

struct RegionPool {
  SpinLock lock;
  RegionPool* next_live = nullptr;  // the list of live pools (fork handlers)
  RegionPool* prev_live = nullptr;
  tailor_region_hooks hooks{};
  SegmentPool pool{};         // segments of kind kRegion
  Segment* dedicated = nullptr;  // regions too large for a segment, one mapping each
};

// The largest alignment a region can have: half a segment, so that a block
// in the first half of its region finds the segment header by masking.
std::size_t region_max_align() noexcept;
// The granule of regions (the OS page): sizes are rounded up to it.
std::size_t region_page_size() noexcept;

RegionPool* region_pool_create(const tailor_region_hooks& hooks) noexcept;
// Unmaps all of the pool's memory, including regions not given back.
void region_pool_destroy(RegionPool* pool) noexcept;
// `bytes` (> 0) at a multiple of `align` (a power of two up to
// region_max_align()); nullptr if the OS refuses memory or the request is
// out of range. Contents unspecified.
void* region_obtain(RegionPool* pool, std::size_t bytes, std::size_t align) noexcept;
// Returns a region from region_obtain (bytes as obtained). A pointer that is
// not the start of one of the pool's regions is reported on stderr and ignored.
void region_give_back(RegionPool* pool, void* p, std::size_t bytes) noexcept;

// One word an allocator on a region pool may keep with each region, out of
// the region's own memory (in the span's descriptor, in the segment
// header): set once after region_obtain, read by its hooks to find the
// region's metadata from any pointer into it in O(1).
void region_set_word(void* region, void* word) noexcept;

// The descriptor of the live region that contains p, or nullptr. The word
// is kept in the descriptor's `next`, which a span in use does not need.
// Inline: secure mode's free looks its slab up with it on every call.
inline Page* region_page(Segment* seg, const void* p) noexcept {
  if (seg->kind != SegmentKind::kRegion) return nullptr;
  const auto a = reinterpret_cast<std::uintptr_t>(p);
  if (seg->header_slices == 0) {  // mapped on its own
    Page* pg = seg->pages();
    const auto start = reinterpret_cast<std::uintptr_t>(pg->start);
    if (pg->kind != PageKind::kRegion || a < start || a >= reinterpret_cast<std::uintptr_t>(seg) + seg->size)
      return nullptr;
    return pg;
  }
  const auto off = a - reinterpret_cast<std::uintptr_t>(seg);
  if (off < (std::uintptr_t{seg->header_slices} << g_config.slice_shift) || off >= seg->size) return nullptr;
  Page* pg = page_of(seg, p);
  return pg->kind == PageKind::kRegion ? pg : nullptr;
}
// The word of the live region of a pool that contains p, or nullptr when p
// is in no live region (a free span, a header, a region given back).
inline void* region_word(Segment* seg, const void* p) noexcept {
  Page* pg = region_page(seg, p);
  return pg == nullptr ? nullptr : pg->next;
}

// A block inside a region, released by free (routed from free_remote).
inline void region_free(Segment* seg, void* p) noexcept {
  const tailor_region_hooks& h = seg->region->hooks;
  h.free(h.owner, p);
}
inline std::size_t region_usable(Segment* seg, const void* p) noexcept {
  const tailor_region_hooks& h = seg->region->hooks;
  return h.usable_size(h.owner, p);
}

}  // namespace tailor::alloc
