// SPDX-License-Identifier: MIT
// Freed huge blocks, kept mapped for a while. A block above LARGE_MAX has a
// mapping of its own; unmapping it at free and mapping a fresh one for the
// next request makes a program that churns blocks of several MiB fault every
// page in again (2.6x glibc's time on such a churn, which glibc avoids by
// raising its mmap threshold). The cache keeps up to HUGE_CACHE bytes of
// freed huge mappings, resident, for PURGE_DELAY ms; a request takes the
// best-fitting one, trimmed or grown in place (mremap moves pages, it does
// not copy them), so most of its pages are already there.
//
// Process-wide, because any thread may free a huge block, and lock-free: a
// slot holds a mapping's address and its size in OS pages in one word (huge
// mappings are aligned to SEGMENT_SIZE, so the low bits are free), and a
// thread owns a cached mapping only once it has swapped its slot to empty.
// Nothing is read from a mapping it does not own. Fork-safe for the same
// reason: there is no lock to inherit.
#pragma once

#include <cstddef>

#include "alloc/segment.h"

namespace tailor::alloc {

// A cached mapping of at least `total` bytes (a multiple of the OS page; at
// most a quarter more, its size in seg->size), aligned to SEGMENT_SIZE, with
// its old contents (not zero), or nullptr. The OS counters still count it as
// mapped; the caller counts the huge block.
Segment* huge_cache_take(std::size_t total) noexcept;

// Keeps the mapping of a freed huge block (already uncounted as a huge
// block); false if the cache is off or full (the caller unmaps it).
bool huge_cache_put(Segment* seg) noexcept;

// Unmaps the cached mappings whose delay has passed; every one if `all`.
// Cheap when nothing is due (one atomic load), so the back end calls it
// wherever it checks its own purge deadline.
void huge_cache_expire(bool all) noexcept;

// Bytes held in the cache now (statistics, tests).
std::size_t huge_cache_bytes() noexcept;

}  // namespace tailor::alloc
