// SPDX-License-Identifier: MIT
// Call-site pools (the pool allocation paper, docs/pools.md): with TAILOR_POOLS=1 every
// allocation request carries the return address of its caller (the call
// site); a monitor per site watches its first requests, and a site whose
// requests keep one size gets pools of its own: per thread heap, pages of
// same-size slots, carved by a bump pointer, with a stack of freed slots
// per page, each new page twice the size of the last, a page given back
// when all its slots are free. Other requests go to the thread heap as
// usual. With TAILOR_POOLS_FILE=path the sites come from an offline
// profile (`tailor pools`) instead of the monitor.
//
// A pool's pages are class pages of the thread heap (segment.h) marked
// with the pool's index (Page::site_pool): free, realloc and
// malloc_usable_size find a pooled block as any other, in O(1), and the
// owner's free of a pooled block is the heap's own fast path. Only when a
// page empties or stops being full does the heap hand it to the pool
// (pools_page_free).
//
// Threads: a heap's pools are its own (no lock on its malloc and free);
// another thread's free goes back through the heap's remote list, which
// the owner drains when a pool runs out of room. A thread that exits
// leaves its pools, with their live blocks, in its heap, to the thread
// that adopts it.
//
// The fast paths of malloc and free do not change: with pools on, the
// thread heap's direct pointers stay empty, so every malloc takes the slow
// path (heap_malloc_generic), which is where requests are routed.
#pragma once

#include <atomic>
#include <cstddef>

#include "alloc/heap.h"
#include "alloc/segment.h"
#include "alloc/site_pool_policy.h"
#include "tailor/tailor.h"

namespace tailor::alloc {

// g_pools_mode and pools_active(): heap.h (the owner's free tests it).

using pools_policy::kPoolMaxRequest;

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

// A pool's page that emptied or stopped being full (page_free_slow, by the
// page's owner).
void pools_page_free(Heap* h, Page* pg) noexcept;

// Every kFreeBeat-th free of the heap's owner (heap.h): now and then, the
// sizes that went quiet come back to the routing, so that a site that
// starts asking for one of them is seen by its monitor even when the
// heap's free lists serve all its requests on the fast path.
void pools_heartbeat(Heap* h) noexcept;

// Thread exit (the heap goes idle): gives back the pools' empty pages.
void pools_heap_exit(Heap* h) noexcept;

// heap_collect (malloc_trim, tailor_collect, a refused mapping): gives
// back the empty pages the pools keep for their next growth.
void pools_collect(Heap* h) noexcept;

void pools_get_stats(tailor_pools_stats* out) noexcept;
std::size_t pool_slot_size(const void* p) noexcept;

}  // namespace tailor::alloc
