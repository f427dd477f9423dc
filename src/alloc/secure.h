// SPDX-License-Identifier: MIT
// Secure mode (TAILOR_SECURE=1; docs/allocator.md, "Secure mode"): checks
// built on the thread heaps' own blocks, and regions of its own for large
// and zero-size blocks.
//
// Why on the thread heaps: a hardened allocator of its own (slabs with
// guard pages, a header before every block, metadata out of line) cost
// 2.3x the default mode's time in geometric mean, most of it not in its
// checks but in its layout: blocks a header and a canary larger than the
// default's, spread over more cache lines and pages, and system calls for
// guard pages under threads. Here a block is the heap's own block of the
// class of its size plus an 8-byte trailer, with the default mode's
// locality, per-thread heaps and cross-thread frees; the checks add one
// word of state per block.
//
// How the default paths reach it: a thread's heap in secure mode has no
// tag, so free's fast path never matches and every free comes to
// secure_free through free's slow path (free_not_mine); its direct
// pointers live in routed_direct[] (as with call-site pools), so every
// malloc takes the slow path, which routes here. Nothing is added to the
// default mode's fast paths.
//
// Layout and checks of a heap block [blk, blk + bs) holding n bytes: the
// last 8 bytes are the trailer (n and a check of the secret, blk and n);
// the up to 16 bytes after the user's end are a canary (a pattern of the
// trailer, never 0x00 or 0xff). free, realloc and malloc_usable_size check
// the block's start (interior pointers), its trailer (overflows reaching
// its end, double frees: a freed block's trailer is zero), its canary
// (overflows by a byte) and the trailer of the block before it on its page
// (underflows), and sized frees compare n. A freed block is cleared whole
// (SECURE_ZERO; its first 64 bytes otherwise) and held in the thread's
// quarantine (SECURE_QUARANTINE blocks, FIFO); leaving it, it is checked to
// be still zero (writes after free) and goes back to its page's free list,
// where the heap's link and freed mark are its first two words until the
// next malloc of its class clears them. Pages that held other blocks are
// cleared before they serve a class, so every block handed out reads as
// zero.
//
// Large blocks (above MIDDLE_MAX) and zero-size blocks come from a region
// pool (region.h): a large block has a region of its own ending at a guard
// page, a 16-byte header and the canary; malloc(0) returns an address in a
// no-access region. free, realloc and malloc_usable_size reach them through
// the segment mask and the region's hooks.
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
// A thread's exit: the blocks of its heap's quarantine go back (checked).
void secure_heap_done(Heap* h) noexcept;

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

// The region pool of large and zero-size blocks.
struct RegionPool;
extern RegionPool* g_secure_region __attribute__((visibility("hidden")));
inline bool secure_owns(const Segment* seg) noexcept {
  return seg->kind == SegmentKind::kRegion && seg->region == g_secure_region && g_secure_region != nullptr;
}
// In secure mode every pointer freed is secure mode's to check (free's slow
// paths send it to secure_free at once), but for blocks of other region
// pools (call-site pools, the locality heap's), which go their usual way.
inline bool secure_block(const void* p) noexcept {
  if (!secure_active()) return false;
  Segment* seg = segment_of(p);
  return !segment_known(seg) || seg->kind != SegmentKind::kRegion || secure_owns(seg);
}

}  // namespace tailor::alloc
