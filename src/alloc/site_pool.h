// SPDX-License-Identifier: MIT
// Call-site pools (seed 003, docs/pools.md): with TAILOR_POOLS=1 every
// allocation request carries the return address of its caller (the call
// site); a monitor per site watches its first requests, and a site whose
// requests keep one size gets pools of its own: per thread, same-size
// slots carved by a bump pointer from areas, a stack of freed slots per
// area, each new area twice the size of the last, an area given back when
// all its slots are free. Other requests go to the thread heap as usual.
// With TAILOR_POOLS_FILE=path the sites come from an offline profile
// (`tailor pools`) instead of the monitor.
//
// Areas are spans of one region pool (region.h): free, realloc and
// malloc_usable_size reach a pooled block through the segment mask and the
// region's hooks, in O(1), and the area header sits at the start of the
// span, found through the span's page descriptor.
//
// Threads: a thread's pools are its own (no lock on its malloc and free);
// another thread's free pushes the slot on the area's atomic list, which
// the owner drains when it runs out of room. A thread that exits leaves its
// pools, with their live blocks, to the next thread that needs pools.
//
// The fast paths of malloc and free do not change: with pools on, the
// thread heap's direct pointers stay empty, so every malloc takes the slow
// path (heap_malloc_generic), which is where requests are routed.
#pragma once

#include <atomic>
#include <cstddef>

#include "heap.h"
#include "segment.h"
#include "tailor/tailor.h"

namespace tailor::alloc {

// 0: off; 1: online monitor (TAILOR_POOLS=1); 2: offline profile (TAILOR_POOLS_FILE).
extern std::atomic<int> g_pools_mode __attribute__((visibility("hidden")));
extern RegionPool* g_pools_region;
inline bool pools_active() noexcept { return g_pools_mode.load(std::memory_order_relaxed) != 0; }

// Largest request a pool serves.
constexpr std::size_t kPoolMaxRequest = 1024;

// Sets pools up from TAILOR_POOLS / TAILOR_POOLS_FILE (process_init, after
// the configuration and the DMM; pools stay off under a DMM). A bad profile
// is one line on stderr, and the program runs without pools.
void pools_init() noexcept;

// The routing (heap_malloc_generic and heap_malloc_site with pools on): a
// block for `size` bytes from the pool of `site`, or when the site is not
// pooled (yet), the size is not the site's, or the pool ran out of memory,
// from heap h, through its routed direct pointers (heap.h) or its slow
// path. site nullptr: a request no pool serves.
[[gnu::noinline]] void* pools_malloc(Heap* h, std::size_t size, const void* site) noexcept;

inline bool pools_own(const Segment* seg) noexcept {
  return seg->kind == SegmentKind::kRegion && seg->region == g_pools_region && g_pools_region != nullptr;
}

// free of a pooled block (pools_own(seg)), reached from free_not_mine
// without the region's indirect hook; other threads' blocks go back to
// their owner's area.
[[gnu::noinline]] void pools_free(Segment* seg, void* p) noexcept;
// The same for the sized frees (sized delete, free_sized): `size` must round
// to the block's slot size, or the misuse is reported (misuse.h).
[[gnu::noinline]] void pools_free_sized(Segment* seg, void* p, std::size_t size, const char* fn) noexcept;

void pools_get_stats(tailor_pools_stats* out) noexcept;
std::size_t pool_slot_size(const void* p) noexcept;

}  // namespace tailor::alloc
