// SPDX-License-Identifier: MIT
// calloc of a large block on memory used before must make it read as zero.
// Three ways: write zeros over the whole (memset); give its pages back
// (MADV_DONTNEED), so that they read as zero and fault in again one by one
// as the program touches them; or write zeros only over the pages that have
// memory behind them, leaving the page table holes, which read as zero
// already (os::backed_map, from /proc/self/pagemap). Which pays depends on
// the program: one that fills its blocks has every page backed, and the
// memset is all there is to do; one that touches a few words of a big
// zeroed buffer (mimalloc's stress test, threads coming and going) has a
// few backed pages in a block of holes, and a memset of the whole faults in
// every hole for nothing (10x the faults of jemalloc, 2.2x its time), while
// purging costs a TLB shootdown across the process's cores and a fault per
// page touched again (92 us for a 2.3 MiB block with two pages touched, on
// a VM with a second thread running; 3 us to zero those two pages alone).
//
// So libtailor watches. A large block zeroed sparsely (its backed pages
// only; or purged, by stretches of which most pages are backed, or where
// the OS cannot tell which are, when it is at least kCallocPurgeMin) is marked
// (Page::zeroed_sparsely); when it is freed, its resident pages are counted
// (mincore). While those are fewer than half (a decaying count,
// process-wide), calloc zeroes sparsely; otherwise it writes the whole, and
// one calloc in so many still zeroes sparsely, to keep watching: one in
// kProbeEvery at first, half as often after each probe that finds it still
// does not pay, down to one in kProbeMax (a probe that has to purge, in a
// program that fills its blocks, costs a fault per page). Below
// kCallocPurgeMin a block is zeroed sparsely only while the count says so,
// never as a probe, and never by purging: there a memset of resident pages
// costs less than the map's three system calls, or than the madvise and
// the faults of two touched pages (a 256 KiB block: 1.5x slower purged).
// A huge block reused from the huge cache has its backed pages written and
// its holes left, always: against a memset of 32 MiB or more, the map's
// system calls cost nothing, and a mapping grown by mremap, or a buffer the
// program touched sparsely, is mostly holes that a memset would fault in.
#pragma once

#include <cstddef>

#include "alloc/segment.h"

namespace tailor::alloc {

constexpr std::size_t kCallocPurgeMin = 512 * 1024;

// Zeroes the first `total` bytes of the block of large page pg (memory used
// before).
void calloc_zero_large(Page* pg, std::size_t total) noexcept;

// Zeroes the first `total` bytes of huge block p (a mapping from the huge
// cache, used before).
void calloc_zero_huge(void* p, std::size_t total) noexcept;

// Large page pg, zeroed sparsely, is freed: counts its touched pages.
void calloc_observe(Page* pg) noexcept;

// The policy alone, for secure mode's large regions (secure.cpp), which
// clears them as calloc does: whether purging pays now (a decaying count of
// the touched pages of blocks that were handed out reading as zero), and
// one such block of `bytes` from `start` (page-aligned) freed: its resident
// pages are counted.
bool zeroing_purge_pays() noexcept;
void zeroing_observe(const void* start, std::size_t bytes) noexcept;

}  // namespace tailor::alloc
