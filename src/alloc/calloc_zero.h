// SPDX-License-Identifier: MIT
// calloc of a large block on memory used before must make it read as zero,
// and there are two ways: write zeros (memset), or give its pages back
// (MADV_DONTNEED), so that they read as zero and fault in again one by one
// as the program touches them. jemalloc purges (a zeroed request that
// recycles a dirty extent), mimalloc writes. Which pays depends on the
// program: one that fills the block pays a fault per page instead of the
// stores of the memset (5x slower per block), one that touches a
// few words of a big zeroed buffer pays a memset of the whole for nothing,
// and makes resident the pages purging had given back (mimalloc's stress
// test, threads coming and going: 10x the faults of jemalloc, 2.2x its
// time).
//
// So libtailor watches. A large block zeroed by purging is marked
// (Page::zeroed_by_purge); when it is freed, its pages that became resident
// are counted (mincore). While the program has touched fewer than half of
// such pages (a decaying count, process-wide), calloc purges; otherwise it
// writes zeros, and one calloc in so many still purges, to keep watching:
// one in kProbeEvery at first, half as often after each probe that finds
// purging still does not pay, down to one in kProbeMax (a probe of a block
// the program fills costs a fault per page: on a VM whose faults cost 12
// us, 60 times a memset of the page). Blocks under kCallocPurgeMin, and
// huge blocks, are written: below 512 KiB, the madvise and the faults of two touched pages cost more
// than the memset (a 256 KiB block: 1.5x slower purged).
#pragma once

#include <cstddef>

#include "alloc/segment.h"

namespace tailor::alloc {

constexpr std::size_t kCallocPurgeMin = 512 * 1024;

// Zeroes the first `total` bytes of the block of large page pg (memory used
// before, total >= kCallocPurgeMin).
void calloc_zero_large(Page* pg, std::size_t total) noexcept;

// Large page pg, zeroed by purging, is freed: counts its touched pages.
void calloc_observe(Page* pg) noexcept;

// The policy alone, for secure mode's large regions (secure.cpp), which
// clears them as calloc does: whether purging pays now (a decaying count of
// the touched pages of blocks that were handed out reading as zero), and
// one such block of `bytes` from `start` (page-aligned) freed: its resident
// pages are counted.
bool zeroing_purge_pays() noexcept;
void zeroing_observe(const void* start, std::size_t bytes) noexcept;

}  // namespace tailor::alloc
