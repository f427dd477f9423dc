// SPDX-License-Identifier: MIT
// The front end: one heap per thread, reached through an initial-exec TLS
// pointer. A heap keeps, per size class, a queue of pages whose free lists
// serve malloc without a lock or an atomic; sizes up to 1 KiB also have a
// direct pointer to their class's current page. The owner frees onto the
// page's free list, last in first out, so that its next malloc of the class
// gets the block it freed last, still in this core's cache (glibc's tcache,
// tcmalloc); another thread's free goes back to the owning heap through one
// lock-free list per heap (batched, see REMOTE_BATCH), drained by the owner
// on its slow path and every kFreeBeat of its own frees. Pages come from the
// heap's SegmentPool (the back end). A thread that exits frees what it can
// and leaves its heap on a lock-free list, from which the next new thread
// adopts it whole: the heap whose block it frees first, if that heap is
// idle, else the last one left.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "alloc/segment.h"
#include "alloc/size_class.h"
#include "alloc/misuse.h"

namespace tailor::alloc {

struct SitePools;

// Call-site pools (site_pool.h): 0: off; 1: online monitor (TAILOR_POOLS=1);
// 2: offline profile (TAILOR_POOLS_FILE).
extern std::atomic<int> g_pools_mode __attribute__((visibility("hidden")));
inline bool pools_active() noexcept { return g_pools_mode.load(std::memory_order_relaxed) != 0; }

struct PageQueue {
  Page* first;
};

extern Page g_empty_page;

// Classes that may hold foreign blocks for reuse (see Heap::stash): those
// whose index is below kStashClasses and size at most kStashMaxSize, with at
// most kStashMax blocks and kStashBytes bytes each.
constexpr std::uint32_t kStashClasses = 64;
constexpr std::uint32_t kStashMaxSize = 8192;
constexpr std::uint32_t kStashMax = 32;
constexpr std::uint32_t kStashBytes = 64 * 1024;
constexpr std::uint32_t kStashReturnEvery = 8;  // a power of two, dividing kDormantPushes
constexpr std::uint32_t kDormantPushes = 1024;
static_assert(kDormantPushes % kStashReturnEvery == 0 && (kStashReturnEvery & (kStashReturnEvery - 1)) == 0);

// Other heaps' blocks freed by this thread, on their way back to one owner:
// a chain through the blocks' first words (head .. tail, `count` blocks).
// `index` is the block of the batch with the most room for an index of the
// others (`room` pointers), which the hand-back writes into it so that the
// owner takes the batch back without walking its chain (flush_batch).
struct RemoteBatch {
  Heap* owner;
  Block* head;
  Block* tail;
  Block* index;
  std::uint32_t count;
  std::uint32_t room;
};
constexpr std::uint32_t kBatchOwners = 4;
// Foreign frees a thread sets aside before it looks at them (Heap::deferred).
constexpr std::uint32_t kDeferMax = 32;
// Slow paths between two hand-backs of every batch, full or not: the
// longest a freed block waits in a live thread's batches.
constexpr std::uint32_t kBatchFlushEvery = 32;

// Heap::state bits. Owned: a thread uses the heap, or works on it alone
// (upkeep of idle heaps). OnStack: the heap is on the idle stack. A heap
// can be claimed where it lies on the stack (owned and on it at once, see
// heap.cpp's idle_claim); whoever pops it then leaves it to its claimer.
constexpr std::uint32_t kHeapOwned = 1;
// Own frees between two heartbeats (free_owned).
constexpr std::uint32_t kFreeBeat = 256;
constexpr std::uint32_t kHeapOnStack = 2;

struct alignas(64) Heap {
  // This heap's byte in the segment registry (misuse.h), which free compares
  // with the byte of the block's segment; kTagNone (equal to no byte) for
  // heaps beyond the tags and the empty heap.
  std::uint32_t tag = kTagNone;
  // kHeapOwned | kHeapOnStack. Read by other threads' frees of this heap's
  // blocks (free_remote, stash_push), on a line the owner writes only when
  // a class's current page changes.
  std::atomic<std::uint32_t> state{kHeapOwned};
  Page* direct[kDirectSlots];  // sizes 0..1024 -> current page of their class (or its stash)
  PageQueue queues[kMaxClasses] = {};
  SegmentPool pool = {};
  // Frees of other heaps' blocks, gathered per owner (kBatchOwners owners
  // at a time) for one hand-back each (heap.cpp, "cross-thread frees").
  RemoteBatch batches[kBatchOwners] = {};
  std::uint32_t batch_pending = 0;                 // batches holding blocks
  std::uint32_t batch_victim = 0;                  // the slot a new owner takes when all are in use
  std::uint32_t batch_flush_in = kBatchFlushEvery;  // slow paths until every batch is handed back
  // Own frees until the next heartbeat (free_owned): a thread whose mallocs
  // its own frees serve never takes the slow path, which is where other
  // threads' frees to it are taken back.
  // Counts down (a decrement and a branch on the fast path).
  std::uint32_t free_beat = kFreeBeat;
  std::atomic<Heap*> next_idle{nullptr};   // link on the idle (abandoned) list
  Heap* next_all = nullptr;                // link on the list of every heap (never unlinked: heaps live for ever)
  // Blocks of other heaps that this thread freed, kept to be reused by its
  // next malloc of their class (most recently freed first, so the memory is
  // still in this core's cache), as glibc's tcache and tcmalloc's thread
  // caches do. Only classes whose size is a multiple of the cache line, so a
  // reused block shares no line with its owner's blocks. A stash is a page
  // of no segment: for sizes up to kDirectMax direct[] points at it and the
  // fast path pops its `free` and counts `used` up (larger sizes pop it in
  // heap_malloc_generic); a stashed block counts it down, so it holds -used
  // blocks. The owner's page still counts the block as in use.
  // While a class's stash holds blocks, its direct[] range points at it
  // (update_direct), whatever changes among its pages meanwhile.
  Page stash[kStashClasses] = {};
  // Taken by a thread at its first free of another thread's block, before
  // any malloc: it stashes nothing until it allocates (a queue's consumer
  // would keep the blocks it stashed, unused, for good).
  bool frees_only = false;
  // The owner whose blocks this heap stashes lately, its slow-path count
  // when last looked at (if counted yet), blocks stashed since, and whether
  // it took no slow path meanwhile (dormant: stash_push hands some of its
  // blocks back).
  Heap* watched = nullptr;
  std::uint32_t watched_slow = 0;
  std::uint32_t watched_pushes = 0;
  bool watched_counted = false;
  bool watched_dormant = false;
  // Slow paths the owner took: written by the owner at each, read by a
  // thread that stashes its blocks once per kDormantPushes of them (to tell
  // a dormant owner, stash_push); so on a line of the owner's, not on the
  // remote list's, which other threads write.
  std::atomic<std::uint32_t> slow_paths{0};
  // Frees of other tagged heaps' blocks, set aside by free (alloc.h) and
  // looked at kDeferMax at a time (free_deferred), at the next slow path,
  // at thread exit and by heap_collect. In a thread that frees blocks other
  // threads just wrote (a server draining its inbox), free returns at once,
  // so the program's loads of the next blocks overlap with the miss on
  // this one, and the checks and hand-offs run later as a loop over lines
  // now in this core's cache. defer_left counts the free entries down
  // from kDeferMax; 0 in a heap that defers nothing (the empty heap, a
  // DMM serving malloc, secure mode, REMOTE_BATCH 1).
  std::uint32_t defer_left = 0;
  void* deferred[kDeferMax] = {};
  alignas(64) std::atomic<Block*> remote{nullptr};  // blocks freed by other threads
  // With call-site pools on (site_pool.h), direct[] stays empty so that
  // every malloc reaches the routing, and these are the direct pointers:
  // a request no pool serves pops them right after the routing. Last, so
  // that without pools the fields above keep their places.
  alignas(64) Page* routed_direct[kDirectSlots];
  // This heap's call-site pools (site_pool.h), made at its first pooled
  // request; they are pages of this heap, so they go with it when its
  // thread exits and another adopts it.
  SitePools* site_pools = nullptr;
  // With call-site pools on, the sizes (by direct slot) whose requests no
  // longer go through the routing in this heap: direct[] mirrors
  // routed_direct[] for them (site_pool.h, "quiet sizes").
  std::uint8_t unrouted[kDirectSlots] = {};
  // Secure mode's quarantine of the blocks this thread freed last (secure.cpp).
  void* secure_quarantine = nullptr;

  constexpr Heap() : direct{}, routed_direct{} {
    for (auto& d : direct) d = &g_empty_page;
    for (auto& d : routed_direct) d = &g_empty_page;
  }
};

// The empty heap every thread starts with: its direct pages have no free
// block, so the first malloc takes the slow path, which sets up a real heap.
extern Heap g_empty_heap;
extern thread_local constinit Heap* tl_heap __attribute__((tls_model("initial-exec")));

// Slow paths.
// Reached by a tail call from an exported function (malloc_inline), so that
// its return address is the program's call site (call-site pools, site_pool.h).
void* heap_malloc_generic(Heap* heap, std::size_t size) noexcept;
// The same with the call site given (nullptr: no pool serves the request).
void* heap_malloc_site(Heap* heap, std::size_t size, const void* site) noexcept;
// The slow path proper: the above after their test for call-site pools, and
// with pools on, a request that no pool serves and no routed direct pointer
// could (site_pool.h's pools_malloc).
[[gnu::noinline]] void* heap_malloc_unrouted(Heap* heap, std::size_t size) noexcept;
void* heap_malloc_aligned(Heap* heap, std::size_t size, std::size_t align) noexcept;
// The slow path's work on a set-up heap, without the front ends' tests
// (secure mode takes its blocks here when direct pointers have none).
void* heap_malloc_plain(Heap* heap, std::size_t size) noexcept;
// The same on a given heap, never the thread's (the DMM front end's fallback).
void* heap_malloc_aligned_on(Heap* heap, std::size_t size, std::size_t align) noexcept;
// A heap no thread owns: the caller serializes its use (dmm_front.cpp).
Heap* heap_create_detached() noexcept;
void page_free_slow(Heap* heap, Page* page) noexcept;  // local free left used == 0 or page was full
// The owner's free of a checked block p of its page pg (marks it freed).
// Onto the page's free list, where malloc pops it next (random replacement
// of 2,500 blocks of 8-1,024 bytes ran 1.2x faster than onto local_free,
// mimalloc's way, where a malloc got a block freed before its page's last
// refill). A call-site pool's page hands its slots out from there too.
// The heartbeat also brings sizes that call-site pools left quiet back to
// their routing now and then (site_pool.h).
// Every kFreeBeat-th goes through free_owned_beat: the heartbeat first
// (while the block still counts in its page, so that taking other threads'
// frees back cannot empty the page under it), then this free (a tail call:
// the fast path saves no register).
[[gnu::noinline, gnu::cold]] void free_owned_beat(Heap* h, Page* pg, void* p) noexcept;
[[gnu::always_inline]] inline void free_owned(Heap* h, Page* pg, void* p, bool beat = true) noexcept {
  if (beat && __builtin_expect(--h->free_beat == 0, 0)) return free_owned_beat(h, pg, p);
  TAILOR_ASSERT(pg->used > 0);
  TAILOR_ASSERT(pg->kind == PageKind::kClass ? page_holds_block(pg, p) : pg->kind == PageKind::kLarge && p == pg->start);
  auto* b = static_cast<Block*>(p);
  block_key(b) = g_free_key;
  b->next = pg->free;
  pg->free = b;
  if (__builtin_expect(--pg->used != 0 && !pg->in_full, 1)) return;
  page_free_slow(h, pg);
}
void free_remote(Segment* seg, void* p) noexcept;      // another heap's block, or huge
void free_deferred(Heap* h) noexcept;                 // the blocks of Heap::deferred
inline void deferred_flush(Heap* h) noexcept {
  if (h->defer_left != 0 && h->defer_left != kDeferMax) free_deferred(h);
}
// What the slow path does first: takes back the blocks other threads freed
// to this heap, and hands back this thread's batch of theirs.
void heap_prepare(Heap* heap) noexcept;
void heap_collect(Heap* heap) noexcept;
// After a block could not be had: if the OS refused a mapping meanwhile,
// gives cached memory back (heap_collect of the calling thread's heap, the
// idle heaps, the huge cache) and returns true, so that the caller asks
// once more; false otherwise (heap.cpp says why).
__attribute__((cold)) bool heap_give_back_after_refusal() noexcept;
// heap_collect on every idle heap (those of exited threads): malloc_trim.
void idle_heaps_collect() noexcept;
Heap* heap_get() noexcept;                             // the thread's heap, set up if needed
void process_init() noexcept;                          // idempotent
// What a heap holds (mallinfo2): bytes of its segments that hold memory
// (headers, pages, the resident slices of free spans; not address space
// reserved and never used, or purged), bytes in live
// blocks (a class page's used blocks times their size, a large page's
// block), free chunks (free spans and free blocks of class pages) and the
// bytes of free spans still resident. Another thread's heap is read while
// it runs (relaxed loads of its descriptors, under segments_lock so that no
// segment is unmapped meanwhile): a racy snapshot.
struct HeapTotals {
  std::uint64_t arena, used, free_chunks, releasable;
};
void heap_totals(Heap* heap, HeapTotals& out) noexcept;
// fn(heap, arg) for every heap ever made (live, idle, the DMM's fallback).
void heaps_for_each(void (*fn)(Heap*, void*), void* arg) noexcept;
std::uint64_t heaps_created() noexcept;
std::uint64_t heaps_adopted() noexcept;
std::uint64_t heaps_idle() noexcept;

}  // namespace tailor::alloc
