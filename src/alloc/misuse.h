// SPDX-License-Identifier: MIT
// Detection of heap misuse in the default mode (docs/allocator.md, "Heap
// misuse"): the checks cheap enough for the fast paths, and the cold
// functions that name the error on stderr and act on TAILOR_ON_ERROR.
//
//  - A registry of segment headers (one byte per MiB of address space,
//    reserved, touched only where segments are): a pointer whose segment
//    is not registered was never handed out (stack, global, another
//    allocator's, freed huge mapping); it is rejected before anything is
//    read through it. The byte is also the owner's tag: the first 254
//    heaps have a tag of their own (1-254), which the free fast path
//    compares with the thread heap's (one load answers both "is this
//    libtailor's?" and "is it mine?", without reading the segment);
//    later heaps, huge and region segments are registered as kTagShared,
//    whose owner the slow path reads from the segment header.
//  - Every block handed out has its second word cleared; free writes a
//    per-process random key there. A free that finds the key is a double
//    free, wherever the first free left the block (page lists, another
//    heap's remote list, a batch, a stash).
//  - A pointer inside a page must be the start of a block: the offset is
//    checked for divisibility by the block size with one multiplication
//    (Lemire's test: n % d == 0 iff n * c < c, c = 2^64 / d + 1, for
//    n, d < 2^32). Page descriptors that hold no blocks have c = 0, so
//    every pointer into them fails.
// Every class is at least 16 bytes, so the second word is always the
// block's own.
#pragma once

#include <cstddef>
#include <cstdint>

#include "alloc/segment.h"

namespace tailor::alloc {

constexpr unsigned kSegmapShift = 20;    // segments are at least 1 MiB, aligned to their size
constexpr unsigned kAddressBits = 47;    // user space on x86-64 (as the idle stack's tag assumes)

// Hidden: loaded RIP-relative by the fast paths, not through the GOT.
extern std::uint8_t* g_segmap __attribute__((visibility("hidden")));         // 1 where a segment header starts (address >> 20)
extern std::uintptr_t g_free_key __attribute__((visibility("hidden")));      // the mark of a freed block (second word)

// Registry values: 0 unknown, 1..kTagLast the owner heap's tag, kTagShared
// registered with the owner in the segment header (or none: huge, region).
constexpr std::uint32_t kTagLast = 254;
constexpr std::uint8_t kTagShared = 255;
constexpr std::uint32_t kTagNone = 256;  // Heap::tag of heaps that have no tag: equals no registry byte

enum class OnError : int { kAbort = 0, kWarn = 1, kIgnore = 2 };

// The registry byte of a segment (0: not libtailor's). Relaxed atomic: a
// plain load on x86-64; registered before any pointer into the segment is
// handed out, so the program's own hand-over orders it. An address above
// 2^47 (not user space) indexes past the map: not checked.
inline std::uint32_t segment_tag(const Segment* seg) noexcept {
  return __atomic_load_n(&g_segmap[reinterpret_cast<std::uintptr_t>(seg) >> kSegmapShift], __ATOMIC_RELAXED);
}
inline bool segment_known(const Segment* seg) noexcept { return segment_tag(seg) != 0; }

using alias_word = std::uintptr_t __attribute__((may_alias));
inline alias_word& block_key(void* p) noexcept { return static_cast<alias_word*>(p)[1]; }

// c for the divisibility test of offsets by block size d (0 < d < 2^32).
inline std::uint64_t block_magic(std::size_t d) noexcept { return UINT64_MAX / d + 1; }

// off is a multiple of the block size whose block_magic is `magic`.
inline bool offset_start_ok(std::uint64_t off, std::uint64_t magic) noexcept { return off * magic < magic; }

// p is the start of a block of pg (a class or large page of a live segment).
inline bool block_start_ok(const Page* pg, const void* p) noexcept {
  return offset_start_ok(reinterpret_cast<std::uintptr_t>(p) - reinterpret_cast<std::uintptr_t>(pg->start),
                         pg->block_magic);
}

// `size` is one of pg's own request sizes (a class page's class, a call-site
// pool page's slot, a large page's slices): the strict check of sized delete.
inline bool page_own_size(const Page* pg, std::size_t size) noexcept {
  return pg->block_size - size < pg->size_span;
}

// Sets up the registry and the key (process_init, before any segment).
void misuse_init() noexcept;
// tag: the owner heap's Heap::tag (kTagNone or no owner: kTagShared).
void segment_register(const void* seg, std::uint32_t tag) noexcept;
// A tag for a new heap: 1..kTagLast while they last, then kTagNone.
std::uint32_t heap_tag_new() noexcept;
void segment_unregister(const void* seg) noexcept;

// Reports misuse found by a fast path: `fn` is the entry point ("free",
// "realloc", ...). Each prints one line (abort, warn) or nothing (ignore);
// abort does not return. The caller skips the operation when they return.
[[gnu::cold, gnu::noinline]] void misuse_unknown(const char* fn, const void* p) noexcept;
// A pointer into a registered segment that failed block_start_ok or had the
// freed mark: tells which, with the block's size.
[[gnu::cold, gnu::noinline]] void misuse_in_segment(const char* fn, Segment* seg, void* p) noexcept;
[[gnu::cold, gnu::noinline]] void misuse_wrong_size(const char* fn, const void* p, std::size_t given,
                                                    std::size_t block) noexcept;
// The same for a block of a class or large page of seg (its size read there).
[[gnu::cold, gnu::noinline]] void misuse_size_in_segment(const char* fn, Segment* seg, void* p,
                                                         std::size_t given) noexcept;

// A report of misuse found by secure mode (secure.h), one line:
// "tailor: FN(): WHAT 0xP (NOTE N TAIL)"; N is left out when it is
// kNoNumber, the parenthesis when note is nullptr.
constexpr std::uint64_t kNoNumber = ~std::uint64_t{0};
[[gnu::cold, gnu::noinline]] void misuse_report(const char* fn, const char* what, const void* p, const char* note,
                                                std::uint64_t n, const char* tail) noexcept;

// Free of a pointer whose registry byte is not the thread heap's tag (the
// fast paths look it up at segment_of_fast): NULL, unknown (a DMM's block,
// or misuse), a tagless heap's own block (checked as on the fast path),
// another heap's, huge or a region's (free_remote). Sized delete checks the
// size as well (size_check, strict).
[[gnu::noinline]] void free_not_mine(void* p) noexcept;
[[gnu::noinline]] void delete_sized_not_mine(void* p, std::size_t size, const char* fn) noexcept;

// Full check of a pointer about to be freed by a path that is not the owner's
// fast path (another thread's block, huge, realloc, usable size): true if it
// is a live block's start; otherwise reported (and false).
bool pointer_check(const char* fn, void* p) noexcept;

// free_sized / sized delete: `size` must be the size asked for (strict: the
// block's class must be the class of size, as for operator new; otherwise
// loose: within what realloc and aligned requests may leave). True if the
// free may proceed.
bool size_check(const char* fn, void* p, std::size_t size, std::size_t align, bool strict) noexcept;


}  // namespace tailor::alloc
