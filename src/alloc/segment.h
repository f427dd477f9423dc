// SPDX-License-Identifier: MIT
// The back end: segments, slices, spans, huge blocks and purging.
//
// A segment is SEGMENT_SIZE bytes of address space aligned to its size, owned
// by one thread heap. It is cut into slices of PAGE_SIZE bytes; its first
// slices hold the header, which keeps one descriptor (a Page) per slice. A
// span is a run of slices: either free (kept in size-binned lists of the
// owning pool, coalesced with free neighbours at once) or in use as a page
// (blocks of one size class, or a single large block). Any pointer finds its
// segment by masking and its page through the slice descriptor, in O(1).
//
// Blocks above LARGE_MAX get a "huge" segment of their own, mapped directly
// and unmapped on free by whichever thread frees them.
//
// A region pool (region.h) owns segments of a third kind: their spans are
// handed whole to an allocator outside the core, and free routes their
// blocks back to it.
//
// Free spans stay resident for PURGE_DELAY ms (so a program that frees and
// allocates again does not pay page faults), then go back to the OS with
// madvise(MADV_DONTNEED); a segment whose slices are all free is unmapped.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "alloc/config.h"
#include "dmm/assert.h"

namespace tailor::alloc {

struct Heap;
struct RegionPool;
struct Block { Block* next; };

enum class PageKind : std::uint8_t { kHeader, kFree, kClass, kLarge, kHuge, kRegion };

// One per slice; the fields are meaningful on the first slice of a span,
// except slice_back, which every slice of a page has (distance to the span
// head, in bytes of descriptors: page_of subtracts it without a multiply)
// and the last slice of a free span has (for coalescing from the right).
//
// Two cache lines, each of one kind of use. The first holds what the
// owner thread writes as it allocates and frees (free lists, counts, queue
// links, a free span's purge state). The second holds what is set when the
// span becomes a page and then only read: a page's shape, which other
// threads read too (a cross-thread free checks the block and finds its
// class there). Mixed in one line, every owner's malloc or free took that
// line away from the freeing threads (mt_server: 10% slower).
struct alignas(64) Page {
  // Written by the owner.
  Block* free;            // blocks ready for malloc; the owner frees onto it (owner only)
  Block* local_free;      // blocks of other threads' frees taken back (drain_remote)
  std::uint32_t used;     // live blocks, including those in transit back from other threads
  std::uint32_t capacity; // blocks carved so far
  std::uint8_t in_full;   // no free block: out of its class queue (on no list)
  std::uint8_t is_zero;   // memory of this span reads as zero (fresh or purged)
  std::uint8_t zeroed_sparsely;  // large page: calloc zeroed its backed pages or purged it (calloc_zero.h); counted at its free
  std::uint32_t dirty_slices;  // free span: slices with resident pages (counted from its start)
  Page* next;             // class queue or span bin
  Page* prev;
  std::uint64_t purge_at; // free span: when it may go back to the OS
  // Set when the span becomes a page or a free span; read by any thread.
  alignas(64) PageKind kind;
  std::uint16_t size_class;
  // Class page of a call-site pool (site_pool.h): the pool's index + 1 in
  // its heap's SitePools; 0 for every other span.
  std::uint16_t site_pool;
  std::uint32_t reserved; // blocks that fit
  std::size_t block_size;
  std::uint8_t* start;    // first block
  std::uint32_t slice_count;
  std::uint32_t slice_back;  // (slices from the span's head) * sizeof(Page)
  std::uint64_t block_magic;   // class or large page: block_magic(block_size) (misuse.h); otherwise 0
  std::size_t size_span;       // class or large page: its own sizes are those with block_size - size < size_span
};
static_assert(sizeof(Page) == 128, "a page descriptor is two cache lines (owner's, shared)");

// Page::size_class of the pages that are of no class: a large block's, and
// a call-site pool's (site_pool.h). page_free_slow sorts them out by this
// one field, which it reads anyway.
constexpr std::uint16_t kLargeClass = 0xffff;
constexpr std::uint16_t kPoolPageClass = 0xfffe;

// kRegion: a segment of a region pool (no thread heap owns it), or a region
// mapped on its own (header_slices == 0), like a huge segment.
enum class SegmentKind : std::uint32_t { kNormal, kHuge, kRegion };

struct alignas(64) Segment {
  std::atomic<Heap*> heap;    // owner; nullptr for huge segments
  std::size_t size;           // bytes mapped
  std::size_t huge_align;     // huge: the alignment it was mapped with
  std::uint32_t slice_count;
  std::uint32_t header_slices;
  SegmentKind kind;
  RegionPool* region;         // kRegion: the pool whose owner frees its blocks
  std::uint64_t idle_until;   // huge, freed and cached (huge_cache.h): when it may be unmapped (ms)
  // What the owner writes as spans come and go: on a line of its own, since
  // every other thread's free of a block here reads the line above (heap,
  // kind, slice_count), and would take it from the owner's cache after each
  // page the owner made or freed.
  alignas(64) std::uint32_t used_slices;  // slices in pages
  Segment* next;              // the owning pool's list
  Segment* prev;

  Page* pages() noexcept { return reinterpret_cast<Page*>(this + 1); }
  // One entry per slice, after the descriptors: for a slice of a class page
  // of a thread heap, class + 1 in the low byte and the slice's place in
  // its page in the high byte; 0 for any other slice. Another thread's
  // free of a block of up to 128 KiB learns the block's class and checks
  // it here, on a line that covers 32 slices, instead of in the page's
  // descriptor (free_remote). Set by page_new, cleared by span_free; a
  // block's page cannot change while the block is live.
  std::uint16_t* slice_classes() noexcept { return reinterpret_cast<std::uint16_t*>(pages() + slice_count); }
};

constexpr std::uint32_t kSpanBins = 48;

// The spans and segments of one heap. Owner thread only.
struct SegmentPool {
  Heap* owner;                // stored in its segments; nullptr for a region pool
  RegionPool* region;         // the region pool this is part of, or nullptr
  Page* bins[kSpanBins];
  std::uint64_t bin_mask;
  Segment* segments;
  std::uint32_t segment_count;
  std::uint64_t next_purge;   // earliest purge_at among dirty free spans; 0 if none
  std::size_t dirty_bytes;    // resident bytes in free spans (sum of their dirty_slices)
  std::size_t free_bytes;     // all bytes in free spans
};

inline Segment* segment_of(const void* p) noexcept {
  return reinterpret_cast<Segment*>((reinterpret_cast<std::uintptr_t>(p) - 1) & g_config.segment_mask);
}

// The same for the fast paths of free: p & mask. Equal to segment_of(p)
// for every block of a class or large page (never a segment's first byte);
// for NULL it is 0, and for a huge block aligned to a segment boundary it
// is an address inside that block's own mapping, which the registry does
// not know (misuse.h): both go to free's slow path, which uses segment_of.
inline Segment* segment_of_fast(const void* p) noexcept {
  return reinterpret_cast<Segment*>(reinterpret_cast<std::uintptr_t>(p) & g_config.segment_mask);
}

inline Page* page_of(Segment* seg, const void* p) noexcept {
  std::size_t i = (reinterpret_cast<std::uintptr_t>(p) - reinterpret_cast<std::uintptr_t>(seg)) >> g_config.slice_shift;
  Page* slice = seg->pages() + i;
  return reinterpret_cast<Page*>(reinterpret_cast<std::uint8_t*>(slice) - slice->slice_back);
}

// p is a block this class page has carved: inside its first `capacity`
// blocks, at a block boundary. For TAILOR_ASSERT: the free lists of a page
// hold only its own blocks (a division; never on a release path).
inline bool page_holds_block(const Page* pg, const void* p) noexcept {
  const auto* b = static_cast<const std::uint8_t*>(p);
  return pg->block_size != 0 && b >= pg->start && b < pg->start + std::size_t{pg->capacity} * pg->block_size &&
         static_cast<std::size_t>(b - pg->start) % pg->block_size == 0;
}

// The slice_classes() entries of a page's slices: `cls` (class + 1, or 0
// to clear them) and each slice's place in the page (page_new, span_free).
inline void slice_class_set(const Page* pg, std::uint8_t cls) noexcept {
  Segment* seg = segment_of_fast(pg->start);  // a page's start is its first slice's: inside its segment
  std::uint16_t* e = seg->slice_classes() + ((pg->start - reinterpret_cast<std::uint8_t*>(seg)) >> g_config.slice_shift);
  for (std::uint32_t k = 0; k < pg->slice_count; ++k)
    e[k] = cls == 0 ? 0 : static_cast<std::uint16_t>(k << 8 | cls);
}

// The slice `i` slices after its span's head.
inline void set_slice_back(Page& slice, std::uint32_t i) noexcept {
  slice.slice_back = i * static_cast<std::uint32_t>(sizeof(Page));
}
inline Page* span_head(Page* slice) noexcept {
  return reinterpret_cast<Page*>(reinterpret_cast<std::uint8_t*>(slice) - slice->slice_back);
}

inline Segment* segment_of_page(const Page* page) noexcept {
  return reinterpret_cast<Segment*>(reinterpret_cast<std::uintptr_t>(page) & g_config.segment_mask);
}

// A span of `slices` slices in use (kind and block fields set by the
// caller), or nullptr when the OS refuses memory. page->start points at its
// memory, page->is_zero tells whether that memory reads as zero.
Page* span_alloc(SegmentPool& pool, std::uint32_t slices) noexcept;
// The same, preferring a span with resident pages to an untouched one (as
// region pools always do): for pages that are given back and taken again
// whole (call-site pools).
Page* span_alloc_resident(SegmentPool& pool, std::uint32_t slices) noexcept;
// A span of `slices` slices whose first slice index is a multiple of
// `align_slices` (so its address is aligned to align_slices slices); the
// slack before and after it goes back to the free bins.
Page* span_alloc_aligned(SegmentPool& pool, std::uint32_t slices, std::uint32_t align_slices) noexcept;
// The slices a fresh segment has for spans (all but its header).
std::uint32_t segment_span_slices() noexcept;
// Returns a page's span to the free bins, coalescing; may purge.
void span_free(SegmentPool& pool, Page* page) noexcept;
// Grows a large page in place into the free span right after it, if that
// span has enough slices. Returns true on success.
bool span_try_grow(SegmentPool& pool, Page* page, std::uint32_t slices) noexcept;
// Purges free spans whose delay has passed (all of them if force) and
// unmaps segments that are entirely free (if force, or all but one).
void pool_purge(SegmentPool& pool, bool force) noexcept;
// Unmaps every segment of the pool, whatever it holds (a region pool's end).
void pool_release_all(SegmentPool& pool) noexcept;
void pool_stats(const SegmentPool& pool, std::uint64_t& used, std::uint64_t& free_bytes, std::uint64_t& dirty) noexcept;

// Huge blocks, one per mapping. `zero` tells the caller the memory is fresh.
void* huge_alloc(std::size_t size, std::size_t align) noexcept;
void huge_free(Segment* seg) noexcept;
// Unmaps a huge mapping of `size` bytes and uncounts it (huge_free, the cache).
void huge_unmap(Segment* seg, std::size_t size) noexcept;
std::size_t huge_usable(Segment* seg, const void* p) noexcept;
// Resizes a huge block without copying (mremap); nullptr if it cannot.
void* huge_realloc(Segment* seg, void* p, std::size_t size) noexcept;

// Process-wide counters (tailor_stats).
struct OsCounters {
  std::atomic<std::uint64_t> segments, bytes_mapped, huge_blocks, bytes_purged;
  std::atomic<std::uint64_t> huge_bytes;                       // mapped bytes of live huge blocks
  std::atomic<std::uint64_t> huge_blocks_max, huge_bytes_max;  // their highest values so far
};
extern OsCounters g_os_counters;

// Segments are linked into and out of pools under this lock (a spin lock,
// taken only where a segment is mapped or unmapped), so that mallinfo2 can
// walk other threads' pools with no segment unmapped under it. A forked
// child resets it (the thread that held it is gone).
void segments_lock() noexcept;
void segments_unlock() noexcept;
void segments_lock_reset() noexcept;

}  // namespace tailor::alloc
