// SPDX-License-Identifier: MIT
// Secure mode (TAILOR_SECURE=1; docs/allocator.md, "Secure mode"): a
// hardened front end that serves every request instead of the thread heaps.
//
// Why a front end of its own rather than flags on the default one: the
// default fast paths stay exactly as they are (not one instruction more),
// and the hardened layout can differ where it must. It is built on a region
// pool (region.h), like the call-site pools: free, realloc and
// malloc_usable_size reach its blocks through the segment mask, and the
// thread heaps are never set up, so every malloc takes the slow path, which
// routes here, and every free of a secure block comes here from free's slow
// path (free_not_mine) or, through the region's hooks, from free_remote.
//
// Layout. Sizes up to 8 KiB (kSlabMax, with their 16-byte header and at least
// one canary byte) come from slabs: 64 KiB regions of one block size whose
// last OS page is a guard page (PROT_NONE), the blocks packed against it.
// Larger requests get a region each, the block ending at most 16 bytes
// before a guard page. Every block is [header 16][user bytes][canary >= 1]:
// the header holds a check word (of the slab's secret, the block's address
// and the requested size) and the requested size; the canary bytes after the
// user's end are a pattern of the same secret (never 0x00 or 0xff, the
// bytes an off-by-one most often writes). The metadata (which blocks are in
// use, which other threads freed, the stack of freed blocks, the secret)
// lives in a separate mapping, found through the region's descriptor in the
// segment header: no free-list link is ever stored in user memory, so there
// is none to forge.
//
// Checks. free, realloc and malloc_usable_size check the header (underflow,
// interior pointers), the canary (overflow) and the in-use bit (double
// free); sized frees compare the exact requested size. A freed block's
// first 64 bytes (kFillMax, its header included) are filled with a
// pattern, checked when the block is handed out again (writes after free).
// Fresh blocks are handed out in random order; freed ones last in, first
// out, so that a write after free is found at the next malloc of that size
// by the thread that owns the slab.
//
// Threads: every thread has a secure heap of its own (a current slab and a
// list of slabs with free blocks per class), used without a lock or an
// atomic read-modify-write. Another thread's free sets the block's bit in
// the slab's remote bitmap (an atomic OR, which also catches two threads
// freeing one block) and lists the slab on the owner's remote list; the
// owner takes those blocks back when a class runs out. A thread that exits
// leaves its heap idle for the next new thread, and the threads that free
// its blocks meanwhile take them back themselves. pthread_atfork handlers
// take the few locks (heap list, spare slabs, metadata).
#pragma once

#include <cstddef>

#include "alloc/heap.h"
#include "alloc/misuse.h"
#include "alloc/segment.h"

namespace tailor::alloc {

extern bool g_secure __attribute__((visibility("hidden")));
inline bool secure_active() noexcept { return __builtin_expect(g_secure, 0); }

// Sets the front end up if TAILOR_SECURE=1 (process_init, after the
// configuration). Pools and TAILOR_DMM are not used in secure mode.
void secure_init() noexcept;

// A block of `size` bytes aligned to `align` (0 or a power of two); nullptr
// with errno ENOMEM when memory runs out.
void* secure_malloc(std::size_t size, std::size_t align) noexcept;
void* secure_realloc(void* p, std::size_t size) noexcept;
// Frees p after the checks of secure_check, in one look-up (sized frees go
// here directly rather than through size_check and the region's hook).
void secure_free(const char* fn, void* p, bool sized, std::size_t size) noexcept;

// Whether every block secure_malloc hands out reads as zero (SECURE_ZERO):
// calloc needs no memset of its own.
bool secure_zeroes() noexcept;

// What secure mode holds, added to `out` (mallinfo2): system bytes (slabs,
// large regions and the spares kept of both), bytes in use (blocks in block
// sizes, large regions whole), spares as free chunks and as releasable bytes.
// Another thread's counts are read while it runs: a racy snapshot.
void secure_totals(HeapTotals& out) noexcept;

// Checks p as `fn` would before using it (live block start, header, canary;
// `size`, if sized, must be the size asked for); reports and returns false
// otherwise. secure_usable returns the size asked for (0 if p fails).
bool secure_check(const char* fn, void* p, bool sized, std::size_t size) noexcept;
std::size_t secure_usable(const char* fn, void* p) noexcept;

struct RegionPool;
extern RegionPool* g_secure_region __attribute__((visibility("hidden")));
inline bool secure_owns(const Segment* seg) noexcept {
  return seg->kind == SegmentKind::kRegion && seg->region == g_secure_region && g_secure_region != nullptr;
}
// p is in one of secure mode's segments (free's slow paths send it to
// secure_free at once; a pointer of no segment, or of another region pool,
// goes the usual way).
inline bool secure_block(const void* p) noexcept {
  if (!secure_active()) return false;
  Segment* seg = segment_of(p);
  return segment_known(seg) && secure_owns(seg);
}

}  // namespace tailor::alloc
