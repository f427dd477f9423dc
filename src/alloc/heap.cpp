// SPDX-License-Identifier: MIT
// The front end (heap.h): thread heaps and their page queues, the slow path
// of malloc, local and cross-thread frees, and the life cycle of heaps
// (process init, thread init, thread exit with abandonment and adoption).
#include "alloc/heap.h"

#include <pthread.h>
#include <sched.h>

#include <cerrno>
#include <cstring>
#include <new>

#include "alloc/alloc.h"
#include "alloc/calloc_zero.h"
#include "alloc/dmm_front.h"
#include "alloc/huge_cache.h"
#include "alloc/misuse.h"
#include "alloc/os.h"
#include "alloc/region.h"
#include "alloc/secure.h"
#include "alloc/site_pool.h"

namespace tailor::alloc {

constinit Page g_empty_page{};
constinit Heap g_empty_heap;
thread_local Heap* tl_heap __attribute__((tls_model("initial-exec"))) = &g_empty_heap;

namespace {

std::atomic<int> g_init_state{0};  // 0: not started, 1: running, 2: done
pthread_key_t g_thread_key;
std::atomic<std::uint64_t> g_idle{0};  // Treiber stack of idle heaps: (tag << 48) | pointer
std::atomic<std::uint64_t> g_created{0}, g_adopted{0}, g_idle_count{0}, g_idle_sweeps{0};
std::atomic<Heap*> g_all_heaps{nullptr};  // every heap, newest first (heap_new)
// Sweeps in progress (idle_sweep_maybe), each holding idle heaps off the
// stack: a new thread that finds the stack empty waits for them rather
// than make a heap (heap_init_thread).
std::atomic<int> g_idle_swept{0};
pthread_once_t g_fork_once = PTHREAD_ONCE_INIT;
void fork_child_reset() {
  segments_lock_reset();
  g_idle_swept.store(0, std::memory_order_relaxed);  // a sweep of another thread never ends in the child
}
void register_fork_handler() { pthread_atfork(nullptr, nullptr, &fork_child_reset); }

constexpr std::uint64_t kPtrMask = (std::uint64_t{1} << 48) - 1;

// The idle stack. A heap on it is either free for anyone to pop (state
// kHeapOnStack) or claimed where it lies by a thread that freed one of its
// blocks first (kHeapOnStack | kHeapOwned, idle_claim): a Treiber stack
// cannot unlink an entry from its middle, so the entry stays and whoever
// pops it clears kHeapOnStack and leaves the heap to its owner, who pushes
// it again when it gives it up (idle_push).
void stack_push(Heap* h) {
  std::uint64_t old = g_idle.load(std::memory_order_relaxed);
  std::uint64_t next;
  do {
    h->next_idle.store(reinterpret_cast<Heap*>(old & kPtrMask), std::memory_order_relaxed);
    next = ((old >> 48) + 1) << 48 | reinterpret_cast<std::uint64_t>(h);
  } while (!g_idle.compare_exchange_weak(old, next, std::memory_order_release, std::memory_order_relaxed));
  g_idle_count.fetch_add(1, std::memory_order_relaxed);
}

// Gives up an owned heap: back on the stack, unless its entry is still
// there (it was claimed in place and nobody popped it since).
void idle_push(Heap* h) {
  const std::uint32_t s = h->state.exchange(kHeapOnStack, std::memory_order_release);
  if ((s & kHeapOnStack) == 0) stack_push(h);
  else g_idle_count.fetch_add(1, std::memory_order_relaxed);
}

Heap* stack_pop() {
  std::uint64_t old = g_idle.load(std::memory_order_acquire);
  for (;;) {
    auto* h = reinterpret_cast<Heap*>(old & kPtrMask);
    if (h == nullptr) return nullptr;
    Heap* after = h->next_idle.load(std::memory_order_relaxed);  // heaps are never unmapped
    std::uint64_t next = ((old >> 48) + 1) << 48 | reinterpret_cast<std::uint64_t>(after);
    if (g_idle.compare_exchange_weak(old, next, std::memory_order_acquire, std::memory_order_acquire)) {
      return h;
    }
  }
}

// An idle heap for the caller alone (adoption, upkeep, collection), or
// nullptr. Entries of heaps claimed in place are dropped on the way.
Heap* idle_pop() {
  for (;;) {
    Heap* h = stack_pop();
    if (h == nullptr) return nullptr;
    std::uint32_t s = h->state.load(std::memory_order_relaxed);
    std::uint32_t want;
    do {
      want = (s & kHeapOwned) != 0 ? s & ~kHeapOnStack : kHeapOwned;
    } while (!h->state.compare_exchange_weak(s, want, std::memory_order_acquire, std::memory_order_relaxed));
    if ((s & kHeapOwned) == 0) {
      g_idle_count.fetch_sub(1, std::memory_order_relaxed);
      return h;
    }
  }
}

// Takes an idle heap where it lies on the stack; false if someone has it.
bool idle_claim(Heap* h) {
  std::uint32_t s = kHeapOnStack;
  if (!h->state.compare_exchange_strong(s, kHeapOnStack | kHeapOwned, std::memory_order_acquire,
                                        std::memory_order_relaxed))
    return false;
  g_idle_count.fetch_sub(1, std::memory_order_relaxed);
  return true;
}

// ------------------------------------------------------------ page queues

// The direct pointers of the heap's pages: direct[], or with call-site
// pools on routed_direct[]. direct[] then stays empty for the sizes the
// pools route (so that their mallocs take the slow path, where pools route
// them) and mirrors routed_direct[] for the sizes they do not (unrouted[],
// site_pool.h).
// Secure mode uses routed_direct[] the same way, with direct[] empty for
// every size (secure.h).
inline bool routed() { return __builtin_expect(pools_active() || secure_active(), 0); }
inline Page** live_direct(Heap* h) { return routed() ? h->routed_direct : h->direct; }

inline void set_direct(Heap* h, std::uint32_t c, Page* pg) {
  std::size_t lo = c == 0 ? 0 : (g_classes.cls[c - 1].size + 8) >> 3;
  std::size_t hi = g_classes.cls[c].size >> 3;
  if (routed()) {
    for (std::size_t w = lo; w <= hi; ++w) {
      h->routed_direct[w] = pg;
      if (h->unrouted[w]) h->direct[w] = pg;
    }
    return;
  }
  for (std::size_t w = lo; w <= hi; ++w) h->direct[w] = pg;
}

// A class's stash while it holds blocks, else its first page. (Pointed at
// the first page whenever that changed, a stash that had blocks left was
// served no more until its next push: one refused because it was full
// never came, and the stash kept its blocks while the class took fresh
// ones from its pages.)
void update_direct(Heap* h, std::uint32_t c) {
  if (g_classes.cls[c].size > kDirectMax) return;
  if (c < kStashClasses && h->stash[c].free != nullptr) {
    set_direct(h, c, &h->stash[c]);
    return;
  }
  set_direct(h, c, h->queues[c].first ? h->queues[c].first : &g_empty_page);
}

void list_remove(PageQueue& q, Page* pg) {
  if (pg->prev) pg->prev->next = pg->next;
  else q.first = pg->next;
  if (pg->next) pg->next->prev = pg->prev;
  pg->next = pg->prev = nullptr;
}

void list_push_front(PageQueue& q, Page* pg) {
  pg->prev = nullptr;
  pg->next = q.first;
  if (q.first) q.first->prev = pg;
  q.first = pg;
}

void extend(Page* pg) {
  TAILOR_ASSERT(pg->kind == PageKind::kClass && pg->size_class < g_classes.count && pg->capacity < pg->reserved);
  const SizeClass& sc = g_classes.cls[pg->size_class];
  std::uint32_t n = pg->reserved - pg->capacity;
  if (n > sc.extend) n = sc.extend;
  const std::size_t bs = pg->block_size;
  std::uint8_t* first = pg->start + pg->capacity * bs;
  std::uint8_t* p = first;
  for (std::uint32_t i = 1; i < n; ++i, p += bs) reinterpret_cast<Block*>(p)->next = reinterpret_cast<Block*>(p + bs);
  reinterpret_cast<Block*>(p)->next = pg->free;
  pg->free = reinterpret_cast<Block*>(first);
  pg->capacity += n;
}

void idle_sweep_maybe();

Page* page_new(Heap* h, std::uint32_t c) {
  idle_sweep_maybe();
  const SizeClass& sc = g_classes.cls[c];
  Page* pg = span_alloc(h->pool, sc.slices);
  if (pg == nullptr) return nullptr;
  TAILOR_ASSERT(c < g_classes.count && pg->used == 0 && pg->capacity == 0 && pg->free == nullptr);
  pg->kind = PageKind::kClass;
  pg->size_class = static_cast<std::uint16_t>(c);
  pg->block_size = sc.size;
  pg->reserved = sc.blocks;
  pg->block_magic = sc.magic;
  pg->size_span = c == 0 ? sc.size + 1 : sc.size - g_classes.cls[c - 1].size;  // class 0: sizes 0..size
  slice_class_set(pg, static_cast<std::uint8_t>(c + 1));
  // Secure mode's blocks read as zero when handed out, and a never-used
  // slot's trailer is zero (secure.h): a span that held other blocks
  // before is cleared of what their free lists left in it.
  if (secure_active() && !pg->is_zero) std::memset(pg->start, 0, std::size_t{sc.slices} << g_config.slice_shift);
  extend(pg);
  list_push_front(h->queues[c], pg);
  update_direct(h, c);
  return pg;
}

// A page with no free block leaves its queue and is on no list: nothing ever
// walks full pages, and free finds them through their address (page_of).
// Linking them cost two cold descriptors per full page, written at every
// round trip between full and not full (random replacement in many pages
// makes one such round trip per malloc).
#if defined(TAILOR_DEBUG) && TAILOR_DEBUG
// An empty class page's blocks: every block it carved is on its free list or
// its list of blocks taken back from other threads, once, and nowhere else.
void check_empty_page(const Page* pg) {
  std::uint32_t n = 0;
  for (const Block* b : {pg->free, pg->local_free})
    for (; b != nullptr; b = b->next, ++n) TAILOR_ASSERT(page_holds_block(pg, b) && n < pg->capacity);
  TAILOR_ASSERT(pg->used == 0 && n == pg->capacity);
}
#endif

void move_to_full(Heap* h, Page* pg) {
  TAILOR_ASSERT(!pg->in_full && pg->free == nullptr && pg->local_free == nullptr && pg->capacity == pg->reserved);
  list_remove(h->queues[pg->size_class], pg);
  pg->in_full = 1;
}

void* malloc_from_class(Heap* h, std::uint32_t c) {
  PageQueue& q = h->queues[c];
  Page* pg = q.first;
  bool moved = false;
  while (pg != nullptr) {
    if (pg->free) break;
    if (pg->local_free) {
      pg->free = pg->local_free;
      pg->local_free = nullptr;
      break;
    }
    if (pg->capacity < pg->reserved) {
      // The free blocks of the page behind before fresh ones here: memory
      // already touched before memory that would be faulted in. (A full
      // page that gets blocks back goes right behind this one when this one
      // still has free blocks, page_free_slow; with the blocks it carves,
      // this one used to fill up first.)
      if (Page* nx = pg->next; nx != nullptr && (nx->free != nullptr || nx->local_free != nullptr)) {
        list_remove(q, nx);
        list_push_front(q, nx);
        moved = true;
        pg = nx;
        continue;
      }
      extend(pg);
      break;
    }
    Page* next = pg->next;
    move_to_full(h, pg);
    moved = true;
    pg = next;
  }
  if (moved) update_direct(h, c);
  if (pg == nullptr) {
    pg = page_new(h, c);
    if (pg == nullptr && heap_give_back_after_refusal()) pg = page_new(h, c);
    if (pg == nullptr) {
      errno = ENOMEM;
      return nullptr;
    }
  }
  Block* b = pg->free;
  TAILOR_ASSERT(page_holds_block(pg, b) && pg->used < pg->capacity);
  pg->free = b->next;
  pg->used++;
  block_key(b) = 0;
  return b;
}

void* large_alloc(Heap* h, std::size_t size, std::size_t align) {
  const std::size_t slice = g_config.slice_size;
  auto n = static_cast<std::uint32_t>((size + slice - 1) >> g_config.slice_shift);
  if (n == 0) n = 1;  // aligned_alloc(align, 0)
  // An aligned block starts its span (the slack goes back to the bins), so
  // that every large block is its page's start (misuse.h checks it).
  auto span = [&] {
    return align > slice ? span_alloc_aligned(h->pool, n, static_cast<std::uint32_t>(align >> g_config.slice_shift))
                         : span_alloc(h->pool, n);
  };
  Page* pg = span();
  if (pg == nullptr && heap_give_back_after_refusal()) pg = span();
  if (pg == nullptr) {
    errno = ENOMEM;
    return nullptr;
  }
  pg->kind = PageKind::kLarge;
  pg->size_class = kLargeClass;
  pg->block_size = static_cast<std::size_t>(n) << g_config.slice_shift;
  pg->block_magic = block_magic(pg->block_size);
  pg->size_span = slice;  // sizes above block_size - slice
  pg->reserved = pg->capacity = pg->used = 1;
  pg->zeroed_sparsely = 0;
  if (!pg->is_zero) block_key(pg->start) = 0;
  return pg->start;
}

// ------------------------------------------------------- cross-thread frees

void push_remote(Heap* owner, Block* head, Block* tail) {
  TAILOR_ASSERT(head != nullptr && tail != nullptr && owner != nullptr);
  Block* old = owner->remote.load(std::memory_order_relaxed);
  do {
    tail->next = old;
  } while (!owner->remote.compare_exchange_weak(old, head, std::memory_order_release, std::memory_order_relaxed));
}

// A batch's index, written by the hand-back over its block with the most
// room (RemoteBatch::index), past the block's chain link and free mark
// (misuse.h): word 2 counts the batch's other blocks, words 3.. hold their
// addresses, and the block's last word is left alone (secure mode keeps a
// mark there). The pointer to an indexed batch, in the owner's remote list,
// carries kIndexTag. The owner reads the addresses at once, so that the
// misses on blocks last written by another core overlap, instead of one
// after the other along the chain, and clears the index as it reads it.
constexpr std::uintptr_t kIndexTag = 1;
constexpr std::uint32_t kIndexMin = 3;  // smaller batches go back as chains

std::uint32_t index_room(std::uint32_t c) {
  if (c >= g_classes.count) return 0;  // large blocks and call-site pools' pages: chains
  const std::uint32_t words = g_classes.cls[c].size / 8;
  return words > 4 ? words - 4 : 0;
}

void flush_batch(Heap* h, RemoteBatch& bt) {
  if (bt.count == 0) return;
  Block* head = bt.head;
  Block* tail = bt.tail;
  if (bt.count >= kIndexMin && bt.room >= bt.count - 1) {
    auto* w = reinterpret_cast<std::uintptr_t*>(bt.index);
    std::uintptr_t n = 0;
    for (Block* b = bt.head;; b = b->next) {  // blocks this thread has just freed: in its cache
      if (b != bt.index) {
        w[3 + n++] = reinterpret_cast<std::uintptr_t>(b);
        tail = b;
      }
      if (b == bt.tail) break;
    }
    TAILOR_ASSERT(n == bt.count - 1);
    w[2] = n;
    head = reinterpret_cast<Block*>(reinterpret_cast<std::uintptr_t>(bt.index) | kIndexTag);
  }
  push_remote(bt.owner, head, tail);
  bt = RemoteBatch{};
  h->batch_pending--;
}

// Hands every batch back (each slow path's kBatchFlushEvery-th, thread exit,
// collect).
void flush_batches(Heap* h) {
  if (h->batch_pending == 0) return;
  for (RemoteBatch& bt : h->batches) flush_batch(h, bt);
  h->batch_flush_in = kBatchFlushEvery;
}

// ------------------------------------------------------------------ stashes

// Each class's stash capacity (SizeClass::stash_max): classes whose index
// is below kStashClasses and size a multiple of the line up to
// kStashMaxSize, at most kStashMax blocks and kStashBytes bytes.
void stash_classes_init() {
  for (std::uint32_t c = 0; c < g_classes.count; ++c) {
    SizeClass& k = g_classes.cls[c];
    const bool stashable = c < kStashClasses && k.size <= kStashMaxSize && k.size % 64 == 0;
    k.stash_max = stashable ? std::min(kStashMax, kStashBytes / k.size) : 0;
  }
}

bool is_stash(const Heap* h, const Page* pg) { return pg >= h->stash && pg < h->stash + kStashClasses; }

// Keeps another heap's block `b` (of a page of class c) for this heap's next
// malloc of class c; false if the class does not qualify or its stash is full.
// (c may be no class: a call-site pool's page has kPoolPageClass.)
[[gnu::always_inline]] inline bool stash_push(Heap* h, std::uint32_t c, Block* b, Heap* owner) {
  if (c >= kStashClasses) return false;
  Page& s = h->stash[c];
  if (0u - s.used >= g_classes.cls[c].stash_max) return false;  // full, or a class that is not stashed
  // A stashed block handed out and freed again is stashed again, so the
  // blocks of a live heap whose thread does not allocate (a thread waiting
  // for its workers, as larson's main thread does) stayed foreign for good,
  // every free of theirs a remote one and every malloc a cold stashed
  // block. So every kStashReturnEvery-th block of such a dormant owner goes
  // back to it all the same. Dormant: it took no slow path while this heap
  // stashed kDormantPushes of its blocks. (An owner that allocates drains
  // its list and gets its blocks back, but then the thread that stashes
  // them allocates afresh instead: more memory for the two of them.)
  // The owner's count of slow paths is read only at the end of a window
  // (the first window of a newly watched owner takes the count; the second
  // tells): it is on a line the owner writes at each slow path, and blocks
  // of several owners in turn (threads passing objects around) switched
  // the watch, and read that line, at nearly every free.
  if (owner->state.load(std::memory_order_relaxed) == kHeapOwned) {
    if (h->watched != owner) {
      h->watched = owner;
      h->watched_counted = false;
      h->watched_pushes = 0;
      h->watched_dormant = false;
    } else if (++h->watched_pushes >= kDormantPushes) {
      const std::uint32_t now = owner->slow_paths.load(std::memory_order_relaxed);
      h->watched_dormant = h->watched_counted && now == h->watched_slow;
      h->watched_slow = now;
      h->watched_counted = true;
      h->watched_pushes = 0;
    }
    if (h->watched_dormant && (h->watched_pushes & (kStashReturnEvery - 1)) == 0) return false;
  }
  b->next = s.free;
  s.free = b;
  s.used--;
  // Larger classes: heap_malloc_generic pops it. (A class's direct range
  // is up to 16 slots wide: written only when it changes.)
  if (const std::uint32_t size = g_classes.cls[c].size; size <= kDirectMax && live_direct(h)[size >> 3] != &s) set_direct(h, c, &s);
  return true;
}

// Hands every stashed block back to its owner (thread exit, collect).
void stash_flush(Heap* h) {
  for (std::uint32_t c = 0; c < kStashClasses && c < g_classes.count; ++c) {
    Page& s = h->stash[c];
    if (s.free == nullptr) continue;
    for (Block* b = s.free; b != nullptr;) {
      Block* next = b->next;
      push_remote(segment_of(b)->heap.load(std::memory_order_relaxed), b, b);
      b = next;
    }
    s.free = nullptr;
    s.used = 0;
    if (g_classes.cls[c].size <= kDirectMax && live_direct(h)[g_classes.cls[c].size >> 3] == &s) update_direct(h, c);
  }
}

// Adds `owner`'s block b (of class c, or no class) to this heap's batch for
// that owner, handed back when full (REMOTE_BATCH blocks, at least 2).
void batch_add(Heap* me, Heap* owner, Block* b, std::uint32_t c) {
  // The owner's batch, else a free slot, else the next slot in turn, handed
  // back first. (One batch for whichever owner came last made batches of
  // one or two blocks where a thread frees blocks of several threads in
  // turn, and each its own push on a line the owner reads.)
  RemoteBatch* bt = nullptr;
  RemoteBatch* unused = nullptr;
  for (RemoteBatch& s : me->batches) {
    if (s.owner == owner) {
      bt = &s;
      break;
    }
    if (s.owner == nullptr && unused == nullptr) unused = &s;
  }
  if (bt == nullptr) {
    if (unused == nullptr) {
      unused = &me->batches[me->batch_victim];
      me->batch_victim = (me->batch_victim + 1) % kBatchOwners;
      flush_batch(me, *unused);
    }
    bt = unused;
    bt->owner = owner;
    bt->tail = b;
    b->next = nullptr;
    me->batch_pending++;
  } else {
    b->next = bt->head;
  }
  bt->head = b;
  if (const std::uint32_t room = index_room(c); room > bt->room) {
    bt->room = room;
    bt->index = b;
  }
  if (++bt->count >= g_config.remote_batch) flush_batch(me, *bt);
}

void free_local(Heap* h, void* p) {
  Segment* seg = segment_of(p);
  Page* pg = page_of(seg, p);
  // Another thread's free came back to the heap that owns the block.
  TAILOR_ASSERT(seg->heap.load(std::memory_order_relaxed) == h && pg->used > 0);
  TAILOR_ASSERT(pg->kind == PageKind::kClass ? page_holds_block(pg, p) : p == pg->start);
  auto* b = static_cast<Block*>(p);
  b->next = pg->local_free;
  pg->local_free = b;
  if (--pg->used == 0 || pg->in_full) page_free_slow(h, pg);
}

void drain_remote(Heap* h) {
  Block* e = h->remote.exchange(nullptr, std::memory_order_acquire);
  while (e != nullptr) {
    const auto v = reinterpret_cast<std::uintptr_t>(e);
    if ((v & kIndexTag) == 0) {
      Block* next = e->next;
      free_local(h, e);
      e = next;
      continue;
    }
    // An indexed batch (flush_batch): its blocks' addresses first, then
    // each block freed; the next entry is in the last block's link.
    auto* index = reinterpret_cast<Block*>(v & ~kIndexTag);
    auto* w = reinterpret_cast<std::uintptr_t*>(index);
    const std::uintptr_t n = w[2];
    TAILOR_ASSERT(n >= kIndexMin - 1);
    for (std::uintptr_t i = 0; i < n; ++i) __builtin_prefetch(reinterpret_cast<void*>(w[3 + i]), 1);
    Block* next = reinterpret_cast<Block*>(w[2 + n])->next;
    for (std::uintptr_t i = 0; i < n; ++i) {
      auto* b = reinterpret_cast<Block*>(w[3 + i]);
      w[3 + i] = 0;
      free_local(h, b);
    }
    w[2] = 0;
    free_local(h, index);  // last: the index lived in it
    e = next;
  }
}

void prepare_slow_path(Heap* h) {
  deferred_flush(h);
  h->slow_paths.store(h->slow_paths.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  if (h->remote.load(std::memory_order_relaxed) != nullptr) drain_remote(h);
  if (h->batch_pending != 0 && --h->batch_flush_in == 0) flush_batches(h);
}

// Drains the remote list, hands this heap's batches back and returns every
// empty page's span to the back end, but for the first page of each class
// while their spans come to at most `keep` bytes in all; returns the bytes
// of the pages kept.
std::size_t free_empty_pages(Heap* h, std::size_t keep = 0) {
  std::size_t kept = 0;
  prepare_slow_path(h);
  flush_batches(h);
  for (std::uint32_t c = 0; c < g_classes.count; ++c) {
    PageQueue& q = h->queues[c];
    bool changed = false;
    for (Page* pg = q.first; pg != nullptr;) {
      Page* next = pg->next;
      if (pg->used == 0) {
        const std::size_t bytes = std::size_t{pg->slice_count} << g_config.slice_shift;
        if (pg == q.first && kept + bytes <= keep) {
          kept += bytes;
        } else {
          list_remove(q, pg);
          span_free(h->pool, pg);
          changed = true;
        }
      }
      pg = next;
    }
    if (changed) update_direct(h, c);
  }
  return kept;
}

// ---------------------------------------------------------------- life cycle

// What an exiting thread's heap keeps resident for its adopter: the first
// empty page of each class (where the adopter's first blocks of that class
// land, on the lines and pages its predecessor touched) and free spans, at
// most this much in all; the rest goes back to the OS at once. A program
// whose threads come and go, each adopting the heap of one that ended, then
// does not fault the same pages in again for every thread. (With the empty
// pages freed at exit, their spans coalesced, and each new thread's pages,
// made in another order, were cut at other offsets: the memory each heap
// had touched grew round after round, up to all of its spans.)
constexpr std::size_t kAbandonedResident = 8u << 20;

// An idle heap's upkeep (idle_sweep_maybe): what its thread would do on its
// slow paths, with purging by the usual delay.
void heap_tidy(Heap* h) {
  free_empty_pages(h);
  pool_purge(h->pool, false);
}

void thread_done(void* value) {
  auto* h = static_cast<Heap*>(value);
  if (h == nullptr || h == &g_empty_heap) return;
  if (h->secure_quarantine != nullptr) secure_heap_done(h);  // before the stash: it may fill it
  deferred_flush(h);  // before the stash: it may fill it too
  stash_flush(h);
  h->watched = nullptr;
  const std::size_t kept = free_empty_pages(h, kAbandonedResident);
  if (h->site_pools != nullptr) pools_heap_exit(h);
  pool_purge(h->pool, h->pool.dirty_bytes + kept > kAbandonedResident);
  if (tl_heap == h) tl_heap = &g_empty_heap;
  idle_push(h);
}

// Heaps of exited threads (idle, waiting for a new thread to adopt them)
// still receive their blocks back from live threads, and keep free spans.
// So that a program whose threads are gone for good does not keep that
// memory, a live thread on its slow path (a new page, an emptied page)
// takes, at most every kIdleSweepMs, up to kIdleSweepHeaps idle heaps off the
// stack, does what their owner would have done (drains their remote frees,
// frees their empty pages, purges the free spans whose delay has passed,
// unmaps empty segments) and puts them back. Off the stack, a heap belongs
// to nobody else, so this is the owner's single-threaded work. A thread
// that starts meanwhile and finds the stack empty waits for them: made
// there, its own heap would be kept for good with its pages (waves of
// threads that start on new pages made a heap at nearly every sweep,
// docs/allocator.md). The sweep puts each heap back as soon as it is
// tidied, oldest first.
constexpr std::uint64_t kIdleSweepMs = 50;
constexpr int kIdleSweepHeaps = 16;
std::atomic<std::uint64_t> g_next_idle_sweep{0};

void heap_tidy(Heap* h);

void idle_sweep_maybe() {
  if (g_idle.load(std::memory_order_relaxed) == 0) return;
  const std::uint64_t now = os::now_ms();
  std::uint64_t next = g_next_idle_sweep.load(std::memory_order_relaxed);
  if (now < next || !g_next_idle_sweep.compare_exchange_strong(next, now + kIdleSweepMs, std::memory_order_relaxed))
    return;
  Heap* taken[kIdleSweepHeaps];
  int n = 0;
  g_idle_swept.fetch_add(1, std::memory_order_seq_cst);  // before the pops: a thread that finds the stack empty sees it
  while (n < kIdleSweepHeaps && (taken[n] = idle_pop()) != nullptr) ++n;
  while (n > 0) {
    heap_tidy(taken[--n]);
    idle_push(taken[n]);
  }
  g_idle_swept.fetch_sub(1, std::memory_order_release);
  g_idle_sweeps.fetch_add(1, std::memory_order_relaxed);
}

Heap* heap_new() {
  std::size_t bytes = (sizeof(Heap) + os::page_size() - 1) & ~(os::page_size() - 1);
  void* mem = os::reserve_aligned(bytes, os::page_size());
  if (mem == nullptr) return nullptr;
  Heap* h = new (mem) Heap();
  h->pool.owner = h;
  // Secure mode's heaps have no tag: every free reaches secure_free through
  // free's slow path (secure.h).
  h->tag = secure_active() ? kTagNone : heap_tag_new();
  Heap* head = g_all_heaps.load(std::memory_order_relaxed);
  do {
    h->next_all = head;
  } while (!g_all_heaps.compare_exchange_weak(head, h, std::memory_order_release, std::memory_order_relaxed));
  g_created.fetch_add(1, std::memory_order_relaxed);
  return h;
}

// Makes h (owned by the caller: new, popped or claimed) the thread's heap.
void heap_set_thread(Heap* h) {
  tl_heap = h;
  // (A DMM serving malloc and secure mode are set at process_init, before
  // any heap: their blocks are never deferred.)
  if (h->defer_left == 0 && g_config.remote_batch > 1 && !dmm_active() && !secure_active()) h->defer_left = kDeferMax;
  pthread_setspecific(g_thread_key, h);
  // After the heap is set: pthread_atfork may allocate. A child forked while
  // another thread held segments_lock (segment.h) must not wait for it.
  pthread_once(&g_fork_once, &register_fork_handler);
}

Heap* heap_init_thread() {
  process_init();
  Heap* h = idle_pop();
  while (h == nullptr && g_idle_swept.load(std::memory_order_seq_cst) != 0) {  // a sweep holds the idle heaps
    sched_yield();
    h = idle_pop();
  }
  if (h != nullptr) {
    g_adopted.fetch_add(1, std::memory_order_relaxed);
  } else {
    h = heap_new();
    if (h == nullptr) return nullptr;
  }
  heap_set_thread(h);
  return h;
}

}  // namespace

void process_init() noexcept {
  if (g_init_state.load(std::memory_order_acquire) == 2) return;
  int expected = 0;
  if (g_init_state.compare_exchange_strong(expected, 1, std::memory_order_acq_rel)) {
    config_init();
    misuse_init();
    size_classes_init();
    stash_classes_init();
    pthread_key_create(&g_thread_key, &thread_done);
    // Secure mode serves every request (secure.h): no DMM, no pools. Set
    // before the state is 2, so that no thread allocates from a heap
    // meanwhile; its region pool is made after (it calls process_init).
    g_secure = g_config.value[static_cast<int>(Param::kSecure)] != 0;
    if (!g_secure) {
      dmm_init();
      pools_init();  // before any heap fills its direct pointers (live_direct)
    }
    g_init_state.store(2, std::memory_order_release);
    if (g_secure) secure_init();
    return;
  }
  while (g_init_state.load(std::memory_order_acquire) != 2) sched_yield();
}

Heap* heap_get() noexcept {
  Heap* h = tl_heap;
  if (h != &g_empty_heap) return h;
  return heap_init_thread();
}

Heap* heap_create_detached() noexcept { return heap_new(); }

namespace {
__attribute__((always_inline)) inline void* malloc_slow(Heap* h, std::size_t size) noexcept;
__attribute__((always_inline)) inline void* malloc_from_heap(Heap* h, std::size_t size) noexcept;
}  // namespace

// Both only test the front ends and jump: the pools' routing must not
// start behind the registers the slow path saves. Pools first: with them
// on, every request of a routed size comes here (secure mode and a DMM
// never run with pools: process_init). A DMM serving malloc (dmm_front.h):
// its threads never get a heap, so every request of theirs comes here.
void* heap_malloc_generic(Heap* h, std::size_t size) noexcept {
  if (__builtin_expect(pools_active(), 0)) return pools_malloc(h, size, __builtin_return_address(0));
  if (__builtin_expect(secure_active(), 0)) return secure_malloc(size, 0);  // every request (secure.h)
  if (__builtin_expect(dmm_active(), 0)) return dmm_malloc(size, 0);
  return heap_malloc_unrouted(h, size);
}

void* heap_malloc_site(Heap* h, std::size_t size, const void* site) noexcept {
  if (__builtin_expect(pools_active(), 0)) return pools_malloc(h, size, site);
  if (__builtin_expect(secure_active(), 0)) return secure_malloc(size, 0);
  if (__builtin_expect(dmm_active(), 0)) return dmm_malloc(size, 0);
  return heap_malloc_unrouted(h, size);
}

void* heap_malloc_unrouted(Heap* h, std::size_t size) noexcept { return malloc_slow(h, size); }

void* heap_malloc_plain(Heap* h, std::size_t size) noexcept { return malloc_from_heap(h, size); }

// When the OS refuses a mapping, what the process keeps cached is given back
// (the calling thread's empty pages and free spans, the idle heaps', the
// huge cache) and the mapping is asked for once more, as mimalloc collects
// and retries: under RLIMIT_AS, vm.max_map_count or a transient refusal the
// second request may get what the first could not. Only when a mapping was
// refused (os::take_refused): a request no memory could serve (a size near
// SIZE_MAX) is not worth a collection. Called where a block could not be
// had (no page, no span, no huge mapping, no heap for a new thread), with
// the heap consistent and no lock held; nothing is paid on the way of a
// request that succeeds.
bool heap_give_back_after_refusal() noexcept {
  if (!os::take_refused()) return false;
  heap_collect(tl_heap);
  idle_heaps_collect();
  huge_cache_expire(true);
  return true;
}

namespace {
// huge_alloc (segment.cpp, a layer below the heaps) with the retry above.
__attribute__((noinline)) void* huge_alloc_retried(std::size_t size, std::size_t align) noexcept {
  void* p = huge_alloc(size, align);
  if (p == nullptr && heap_give_back_after_refusal()) p = huge_alloc(size, align);
  return p;
}
}  // namespace

namespace {
__attribute__((always_inline)) inline void* malloc_slow(Heap* h, std::size_t size) noexcept {
  // Secure mode serves every request: heap_malloc_generic and _site send
  // them there first once it is set, which only process_init does, so a
  // process's first request is tested again after it.
  if (h == &g_empty_heap) process_init();
  if (secure_active()) return secure_malloc(size, 0);
  if (h == &g_empty_heap) {
    if (dmm_active()) return dmm_malloc(size, 0);  // threads never get a heap of their own
    h = heap_init_thread();
    if (h == nullptr && heap_give_back_after_refusal()) h = heap_init_thread();
    if (h == nullptr) {
      errno = ENOMEM;
      return nullptr;
    }
  }
  return malloc_from_heap(h, size);
}

// The slow path on a thread's heap, for any size.
__attribute__((always_inline)) inline void* malloc_from_heap(Heap* h, std::size_t size) noexcept {
  h->frees_only = false;
  if (size <= g_config.middle_max) {
    const std::uint32_t c = class_of(size);
    if (size <= kDirectMax) {
      prepare_slow_path(h);
      if (is_stash(h, live_direct(h)[(size + 7) >> 3])) update_direct(h, c);  // its stash ran dry
      return malloc_from_class(h, c);
    }
    // Sizes above kDirectMax have no direct pointer: every request comes
    // here, and is served like the fast path's when it can be (its stash,
    // then its first page's free list), without the slow path's upkeep.
    // That upkeep reads the remote list, which other threads write, and
    // hands this heap's gathered frees back to their owner: at every
    // request of 1-8 KiB it took lines from other cores (mt_server).
    // Other threads' frees to this heap are taken back when the first page
    // runs dry and at the heartbeat of its own frees (free_owned).
    if (c < kStashClasses && h->stash[c].free != nullptr) {
      Page& st = h->stash[c];
      Block* b = st.free;
      st.free = b->next;
      st.used++;
      block_key(b) = 0;
      return b;
    }
    if (Page* pg = h->queues[c].first; pg != nullptr && pg->free != nullptr) {
      Block* b = pg->free;
      pg->free = b->next;
      pg->used++;
      block_key(b) = 0;
      return b;
    }
    prepare_slow_path(h);
    return malloc_from_class(h, c);
  }
  prepare_slow_path(h);
  if (size <= g_config.large_max) return large_alloc(h, size, 0);
  return huge_alloc_retried(size, 0);
}

}  // namespace

void* heap_malloc_aligned(Heap*, std::size_t size, std::size_t align) noexcept {
  return heap_malloc_aligned_on(heap_get(), size, align);  // aligned_impl has sent DMM requests to the DMM
}

void* heap_malloc_aligned_on(Heap* h, std::size_t size, std::size_t align) noexcept {
  if (h == nullptr) {
    errno = ENOMEM;
    return nullptr;
  }
  prepare_slow_path(h);
  if (size > PTRDIFF_MAX - align) {
    errno = ENOMEM;
    return nullptr;
  }
  if (align <= g_config.slice_size && size <= g_config.middle_max) {
    // Pages start on a slice boundary, so a class whose size is a multiple
    // of the alignment has every block aligned. The next power of two is
    // always such a class.
    std::size_t want = size < align ? align : size;
    if (want <= g_config.middle_max) {
      std::uint32_t c = class_of(want);
      while (c < g_classes.count && g_classes.cls[c].size % align != 0) ++c;
      if (c < g_classes.count) return malloc_from_class(h, c);
    }
  }
  std::size_t extra = align > g_config.slice_size ? align : 0;
  if (size + extra <= g_config.large_max) return large_alloc(h, size, align);
  return huge_alloc_retried(size, align);
}

namespace {
// Largest block whose full page, given a block back, goes to the front of
// its class queue; pages of larger blocks go second (page_free_slow).
constexpr std::size_t kFrontMaxBlock = 128;
}  // namespace

void page_free_slow(Heap* h, Page* pg) noexcept {
  const std::uint32_t c = pg->size_class;
  if (c >= kPoolPageClass) {
    if (c == kLargeClass) {
      if (pg->zeroed_sparsely) calloc_observe(pg);
      span_free(h->pool, pg);
    } else {
      pools_page_free(h, pg);  // a call-site pool's page
    }
    return;
  }
  PageQueue& q = h->queues[c];
  if (pg->in_full) {
    // Back into its queue, with the freed block on its free list (a full
    // page has none) for the fast path. Blocks of up to kFrontMaxBlock bytes:
    // at the front, so that a program that frees a small block and
    // allocates one of its size at once gets the same slot back (olden_health,
    // walking long lists of 24-byte cells, ran 2x slower with such pages at
    // the back and 1.3x slower with them second). Larger blocks: second,
    // behind a front page that still serves: at the front, random
    // replacement in many full pages made the page with one hole and the
    // one behind it take turns at the front, two slow-path mallocs and two
    // rewrites of a wide direct range per block (docs/allocator.md). Either
    // way the holes of older pages are filled before the allocation front
    // moves on to fresh memory.
    pg->in_full = 0;
    Page* front = q.first;
    const bool second =
        pg->block_size > kFrontMaxBlock && front != nullptr &&
        (front->free != nullptr || front->local_free != nullptr);
    if (pg->free == nullptr) {  // other threads' frees, taken back (free_local)
      pg->free = pg->local_free;
      pg->local_free = nullptr;
    }
    if (second) {
      pg->prev = front;
      pg->next = front->next;
      if (front->next) front->next->prev = pg;
      front->next = pg;
    } else {
      list_push_front(q, pg);
      update_direct(h, c);
    }
  }
  if (pg->used == 0) {
    // Keep the only page of a class, so that a program allocating and
    // freeing one block does not create and destroy a page each time (and
    // its next page of the class, cut from the coalesced free spans, does
    // not land on memory the last one did not touch: threads that used a
    // few blocks of many middle classes faulted in more and more of their
    // spans that way).
    if (q.first == pg && pg->next == nullptr) return;
    TAILOR_DEBUG_ONLY(check_empty_page(pg));
    bool was_first = q.first == pg;
    list_remove(q, pg);
    if (was_first) update_direct(h, c);
    span_free(h->pool, pg);
    idle_sweep_maybe();
  }
}

void heap_prepare(Heap* h) noexcept { prepare_slow_path(h); }

void free_owned_beat(Heap* h, Page* pg, void* p) noexcept {
  h->free_beat = kFreeBeat;
  prepare_slow_path(h);
  if (__builtin_expect(pools_active(), 0)) pools_heartbeat(h);
  free_owned(h, pg, p, false);
}

void free_remote(Segment* seg, void* p) noexcept {
  if (seg->kind == SegmentKind::kRegion) {  // a block of an allocator layered on libtailor (region.h)
    region_free(seg, p);
    return;
  }
  // A block of a class page: its class and its checks from the segment's
  // slice map and the class table (segment.h, slice_classes), without the
  // page's descriptor. Any other block: pointer_check, which reads the
  // descriptor.
  std::uint32_t c = kLargeClass;
  if (seg->kind == SegmentKind::kNormal) {
    const std::uintptr_t off = reinterpret_cast<std::uintptr_t>(p) - reinterpret_cast<std::uintptr_t>(seg);
    const std::uintptr_t i = off >> g_config.slice_shift;
    if (const std::uint32_t m = i < seg->slice_count ? seg->slice_classes()[i] : 0; m != 0) {
      c = (m & 0xff) - 1;
      const std::uintptr_t in_page = (std::uintptr_t{m >> 8} << g_config.slice_shift) + (off & (g_config.slice_size - 1));
      if (!offset_start_ok(in_page, g_classes.cls[c].magic) || block_key(p) == g_free_key) {
        misuse_in_segment("free", seg, p);  // interior, or freed (misuse.h)
        return;
      }
    }
  }
  if (c == kLargeClass) {
    if (!pointer_check("free", p)) return;  // interior, freed (misuse.h)
    if (seg->kind == SegmentKind::kHuge) {
      huge_free(seg);
      return;
    }
  }
  block_key(p) = g_free_key;
  Heap* owner = seg->heap.load(std::memory_order_relaxed);
  auto* b = static_cast<Block*>(p);
  Heap* me = tl_heap;
  // A thread with no heap yet whose first free is of an idle heap's block
  // adopts that heap, where it lies on the idle stack: a thread that takes
  // over the work of one that ended (a server handing its blocks to a new
  // thread) then owns the blocks it inherited, and frees them on the fast
  // path. (Secure mode and a DMM serving malloc never get here with
  // blocks of thread heaps; call-site pools go with their heap.)
  if (me == &g_empty_heap && owner->state.load(std::memory_order_relaxed) == kHeapOnStack && idle_claim(owner)) {
    g_adopted.fetch_add(1, std::memory_order_relaxed);
    heap_set_thread(owner);
    free_local(owner, p);
    return;
  }
  // Any other thread with no heap gets one at its first remote free: a
  // thread that only frees (the consumer of a queue) then hands its blocks
  // back in batches the owner reads at once, instead of one push each on a
  // line the owner reads, and a chain the owner walks miss after miss (the
  // owner's walk was 40% of mt_producer_consumer's time).
  if (me == &g_empty_heap && g_config.remote_batch > 1 && !dmm_active() && !secure_active()) {
    if (Heap* h = heap_init_thread(); h != nullptr) {
      me = h;
      me->frees_only = true;
    }
  }
  // Every foreign free tries the stash: a refusal (full, or a class that
  // is not stashable) costs reads of this heap's own lines and the class
  // table only. (A thread used to stop trying for 4096 frees after 64
  // refusals in a row, when a try read the owner's page descriptor; in a
  // server whose threads hand each other blocks, one drained inbox
  // brought 64 refusals, and the frees after it went back to their owners
  // while the stash could take them: mt_server 5% slower.)
  if (me != &g_empty_heap && !me->frees_only) {
    // The owner's page stays in use while the block lives on here: its
    // class and kind are stable, so reading them races with nothing.
    if (c == kLargeClass) {
      const Page* pg = page_of(seg, p);
      if (pg->kind == PageKind::kClass) c = pg->size_class;  // (a pool page's is no class: not stashable)
    }
    if (stash_push(me, c, b, owner)) return;
  }
  if (me == &g_empty_heap || g_config.remote_batch <= 1) {
    push_remote(owner, b, b);
    return;
  }
  batch_add(me, owner, b, c);
}

// The checks free_remote makes and its hand-off, for each deferred block in
// turn: a thread with a heap skips the rest of free_remote for the blocks of
// class pages, and the configuration's and the key's loads are made once.
void free_deferred(Heap* h) noexcept {
  const std::uint32_t n = kDeferMax - h->defer_left;
  h->defer_left = kDeferMax;
  const auto shift = g_config.slice_shift;
  const std::uintptr_t in_slice = g_config.slice_size - 1;
  const std::uintptr_t key = g_free_key;
  for (std::uint32_t i = 0; i < n; ++i) {
    void* p = h->deferred[i];
    Segment* seg = segment_of(p);
    std::uint32_t m = 0;  // the slice's class + 1 and page offset (segment.h); 0: not a class page
    const std::uintptr_t off = reinterpret_cast<std::uintptr_t>(p) - reinterpret_cast<std::uintptr_t>(seg);
    if (seg->kind == SegmentKind::kNormal && (off >> shift) < seg->slice_count) m = seg->slice_classes()[off >> shift];
    if (m == 0) {
      free_remote(seg, p);
      continue;
    }
    const std::uint32_t c = (m & 0xff) - 1;
    const std::uintptr_t in_page = (std::uintptr_t{m >> 8} << shift) + (off & in_slice);
    if (!offset_start_ok(in_page, g_classes.cls[c].magic) || block_key(p) == key) {
      misuse_in_segment("free", seg, p);  // interior, or freed (misuse.h)
      continue;
    }
    block_key(p) = key;
    auto* b = static_cast<Block*>(p);
    Heap* owner = seg->heap.load(std::memory_order_relaxed);
    if (!h->frees_only && stash_push(h, c, b, owner)) continue;
    batch_add(h, owner, b, c);
  }
}

void heap_collect(Heap* h) noexcept {
  if (h == &g_empty_heap) return;
  deferred_flush(h);
  stash_flush(h);
  free_empty_pages(h);
  pools_collect(h);
  pool_purge(h->pool, true);
}

void idle_heaps_collect() noexcept {
  // Off the stack a heap belongs to the caller alone (as in idle_sweep_maybe);
  // all are taken first, chained through their idle link, so none is
  // collected twice, then given back.
  Heap* taken = nullptr;
  while (Heap* h = idle_pop()) {
    h->next_idle.store(taken, std::memory_order_relaxed);
    taken = h;
  }
  while (taken != nullptr) {
    Heap* next = taken->next_idle.load(std::memory_order_relaxed);
    heap_collect(taken);
    idle_push(taken);
    taken = next;
  }
}

namespace {
template <class T>
T peek(const T& field) {
  T v;
  __atomic_load(&field, &v, __ATOMIC_RELAXED);
  return v;
}
}  // namespace

void heap_totals(Heap* h, HeapTotals& t) noexcept {
  t = HeapTotals{};
  const std::size_t slice = g_config.slice_size;
  segments_lock();
  for (Segment* seg = peek(h->pool.segments); seg != nullptr; seg = peek(seg->next)) {
    const std::uint32_t slices = peek(seg->slice_count);
    const std::uint32_t header = peek(seg->header_slices);
    t.arena += std::uint64_t{header} * slice;
    for (std::uint32_t i = header; i < slices;) {
      Page* p = seg->pages() + i;
      std::uint32_t n = peek(p->slice_count);
      if (n == 0 || n > slices - i) n = 1;  // a descriptor being rewritten: step one slice
      const PageKind kind = peek(p->kind);
      if (kind != PageKind::kFree) t.arena += std::uint64_t{n} * slice;
      switch (kind) {
        case PageKind::kClass: {
          std::uint64_t used = peek(p->used), reserved = peek(p->reserved);
          if (used > reserved) used = reserved;
          t.used += used * peek(p->block_size);
          t.free_chunks += reserved - used;
          break;
        }
        case PageKind::kLarge:
          if (peek(p->used) != 0) t.used += peek(p->block_size);
          else t.free_chunks++;
          break;
        case PageKind::kFree: {  // only its resident slices are memory the heap holds
          const std::uint64_t dirty = std::uint64_t{peek(p->dirty_slices)} * slice;
          t.free_chunks++;
          t.arena += dirty;
          t.releasable += dirty;
          break;
        }
        default:
          break;
      }
      i += n;
    }
  }
  segments_unlock();
}

void heaps_for_each(void (*fn)(Heap*, void*), void* arg) noexcept {
  for (Heap* h = g_all_heaps.load(std::memory_order_acquire); h != nullptr; h = h->next_all) fn(h, arg);
}

std::uint64_t heaps_created() noexcept { return g_created.load(std::memory_order_relaxed); }
std::uint64_t heaps_adopted() noexcept { return g_adopted.load(std::memory_order_relaxed); }
std::uint64_t heaps_idle() noexcept { return g_idle_count.load(std::memory_order_relaxed); }

}  // namespace tailor::alloc
