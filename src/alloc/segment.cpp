// SPDX-License-Identifier: MIT
// The back end (segment.h): segments and their slice descriptors, free spans
// in size bins with immediate coalescing, purging after the delay, and huge
// blocks mapped one per segment.
#include "alloc/segment.h"

#include <sched.h>

#include <cerrno>
#include <cstring>

#include "alloc/huge_cache.h"
#include "alloc/heap.h"
#include "alloc/misuse.h"
#include "alloc/os.h"
#include "alloc/spin_lock.h"

namespace tailor::alloc {

OsCounters g_os_counters;

namespace {

std::size_t slice_bytes(std::uint32_t n) { return static_cast<std::size_t>(n) << g_config.slice_shift; }

std::uint32_t bin_of(std::uint32_t n) {
  if (n <= 16) return n - 1;
  unsigned e = 31u - static_cast<unsigned>(__builtin_clz(n));
  return 16 + (e - 4) * 2 + ((n >> (e - 1)) & 1u);
}

void bin_insert(SegmentPool& pool, Page* s) {
  TAILOR_ASSERT(s->kind == PageKind::kFree && s->slice_count > 0 && s->slice_back == 0);
  std::uint32_t b = bin_of(s->slice_count);
  s->prev = nullptr;
  s->next = pool.bins[b];
  if (s->next) s->next->prev = s;
  pool.bins[b] = s;
  pool.bin_mask |= std::uint64_t{1} << b;
}

void bin_remove(SegmentPool& pool, Page* s) {
  std::uint32_t b = bin_of(s->slice_count);
  if (s->prev) s->prev->next = s->next;
  else pool.bins[b] = s->next;
  if (s->next) s->next->prev = s->prev;
  if (pool.bins[b] == nullptr) pool.bin_mask &= ~(std::uint64_t{1} << b);
  s->next = s->prev = nullptr;
}

// Marks slices [idx, idx + n) of seg as one free span (not yet binned), of
// which `dirty` slices hold resident pages. Where they lie is not tracked:
// they are counted from the span's start, where the next request is cut.
Page* set_free_span(Segment* seg, std::uint32_t idx, std::uint32_t n, std::uint8_t zero, std::uint32_t dirty,
                    std::uint64_t purge_at) {
  TAILOR_ASSERT(n > 0 && dirty <= n && idx >= seg->header_slices && idx + n <= seg->slice_count);
  Page* head = seg->pages() + idx;
  head->kind = PageKind::kFree;
  head->slice_count = n;
  set_slice_back(*head, 0);
  head->is_zero = zero;
  head->dirty_slices = dirty;
  head->purge_at = purge_at;
  head->in_full = 0;
  head->block_magic = 0;
  head->start = reinterpret_cast<std::uint8_t*>(seg) + slice_bytes(idx);
  if (n > 1) set_slice_back(seg->pages()[idx + n - 1], n - 1);
  return head;
}

std::uint32_t segment_slices() { return static_cast<std::uint32_t>(g_config.segment_size >> g_config.slice_shift); }

std::uint32_t segment_header_slices() {
  const std::size_t header = sizeof(Segment) + segment_slices() * (sizeof(Page) + sizeof(std::uint16_t));  // + slice_classes()
  return static_cast<std::uint32_t>((header + g_config.slice_size - 1) >> g_config.slice_shift);
}

Segment* segment_new(SegmentPool& pool) {
  const std::size_t size = g_config.segment_size;
  auto* seg = static_cast<Segment*>(os::reserve_aligned(size, size));
  if (seg == nullptr) return nullptr;
  if (g_config.huge_pages) os::advise_huge_pages(seg, size);
  segment_register(seg, pool.owner != nullptr ? pool.owner->tag : kTagNone);
  // Registered under the owner's tag, or shared when it has none (misuse.h).
  TAILOR_ASSERT(segment_tag(seg) ==
                (pool.owner != nullptr && pool.owner->tag <= kTagLast ? pool.owner->tag : std::uint32_t{kTagShared}));
  g_os_counters.segments.fetch_add(1, std::memory_order_relaxed);
  g_os_counters.bytes_mapped.fetch_add(size, std::memory_order_relaxed);
  const std::uint32_t slices = segment_slices();
  const std::uint32_t header_slices = segment_header_slices();
  seg->heap.store(pool.owner, std::memory_order_relaxed);
  seg->size = size;
  seg->slice_count = slices;
  seg->header_slices = header_slices;
  seg->used_slices = 0;
  seg->kind = pool.region != nullptr ? SegmentKind::kRegion : SegmentKind::kNormal;
  seg->region = pool.region;
  for (std::uint32_t i = 0; i < header_slices; ++i) {
    seg->pages()[i].kind = PageKind::kHeader;
    set_slice_back(seg->pages()[i], i);
  }
  seg->prev = nullptr;
  segments_lock();
  seg->next = pool.segments;
  if (seg->next) seg->next->prev = seg;
  pool.segments = seg;
  segments_unlock();
  pool.segment_count++;
  Page* span = set_free_span(seg, header_slices, slices - header_slices, 1, 0, 0);
  pool.free_bytes += slice_bytes(span->slice_count);
  bin_insert(pool, span);
  return seg;
}

void segment_release(SegmentPool& pool, Segment* seg) {
  Page* span = seg->pages() + seg->header_slices;
  // Only a segment that is one free span goes back to the OS.
  TAILOR_ASSERT(seg->used_slices == 0 && span->kind == PageKind::kFree &&
                span->slice_count == seg->slice_count - seg->header_slices);
  bin_remove(pool, span);
  pool.free_bytes -= slice_bytes(span->slice_count);
  pool.dirty_bytes -= slice_bytes(span->dirty_slices);
  segments_lock();
  if (seg->prev) seg->prev->next = seg->next;
  else pool.segments = seg->next;
  if (seg->next) seg->next->prev = seg->prev;
  pool.segment_count--;
  g_os_counters.segments.fetch_sub(1, std::memory_order_relaxed);
  g_os_counters.bytes_mapped.fetch_sub(seg->size, std::memory_order_relaxed);
  segment_unregister(seg);
  os::release(seg, seg->size);
  segments_unlock();
}

void purge_span(SegmentPool& pool, Page* span) {
  // Refused (the pages keep their contents): still counted resident, and
  // not known to read as zero.
  if (!os::purge(span->start, slice_bytes(span->slice_count))) return;
  const std::size_t bytes = slice_bytes(span->dirty_slices);
  span->dirty_slices = 0;
  span->is_zero = 1;
  pool.dirty_bytes -= bytes;
  g_os_counters.bytes_purged.fetch_add(bytes, std::memory_order_relaxed);
}

// Takes the free span `s` (slice `idx` of `seg`) out of the bins and keeps its
// first `n` slices; the rest goes back to the bins as a free span with the
// same zero and dirty state and purge deadline.
void take_free_span(SegmentPool& pool, Segment* seg, Page* s, std::uint32_t idx, std::uint32_t n) {
  TAILOR_ASSERT(s->kind == PageKind::kFree && s->slice_count >= n && s == seg->pages() + idx);
  bin_remove(pool, s);
  const std::uint32_t have = s->slice_count;
  pool.free_bytes -= slice_bytes(have);
  pool.dirty_bytes -= slice_bytes(s->dirty_slices);
  if (have > n) {
    const std::uint32_t dirty = s->dirty_slices > n ? s->dirty_slices - n : 0;
    Page* rest = set_free_span(seg, idx + n, have - n, dirty == 0 && s->is_zero, dirty, s->purge_at);
    pool.free_bytes += slice_bytes(have - n);
    pool.dirty_bytes += slice_bytes(dirty);
    bin_insert(pool, rest);
  }
}

void span_release(SegmentPool& pool, Page* page, std::uint32_t dirty) noexcept;

// Calls f(span) for every free span of the pool with resident pages.
template <class F>
void for_each_dirty_span(SegmentPool& pool, F f) {
  for (Segment* seg = pool.segments; seg != nullptr; seg = seg->next)
    for (std::uint32_t i = seg->header_slices; i < seg->slice_count;) {
      Page* p = seg->pages() + i;
      i += p->slice_count;
      if (p->kind == PageKind::kFree && p->dirty_slices != 0) f(p);
    }
}

// More than HEAP_CACHE resident in free spans: purges the spans freed
// longest ago until half of it is left. (Purging all of them made a program
// that turns over a few hundred MiB of large blocks fault them all in again
// every time it crossed the line.) At most three walks: the older half of
// the deadlines, then the rest.
void pool_trim(SegmentPool& pool) {
  const std::size_t goal = g_config.heap_cache_bytes / 2;
  for (int round = 0; round < 3 && pool.dirty_bytes > goal; ++round) {
    std::uint64_t lo = UINT64_MAX, hi = 0;
    for_each_dirty_span(pool, [&](Page* p) {
      lo = p->purge_at < lo ? p->purge_at : lo;
      hi = p->purge_at > hi ? p->purge_at : hi;
    });
    if (lo > hi) return;
    const std::uint64_t cut = round == 2 ? hi : lo + (hi - lo) / 2;
    for_each_dirty_span(pool, [&](Page* p) {
      if (pool.dirty_bytes > goal && p->purge_at <= cut) purge_span(pool, p);
    });
  }
}

void maybe_purge(SegmentPool& pool) {
  if (pool.next_purge != 0 && os::now_ms() >= pool.next_purge) pool_purge(pool, false);
  huge_cache_expire(false);
}

// A free span of at least n slices: the first that fits in n's bin, else
// the first of the next bin that has one; nullptr when no span is large enough.
Page* find_span(SegmentPool& pool, std::uint32_t n) {
  const std::uint32_t b = bin_of(n);
  for (Page* p = pool.bins[b]; p != nullptr; p = p->next)
    if (p->slice_count >= n) return p;
  const std::uint64_t higher = b + 1 < 64 ? pool.bin_mask & ~((std::uint64_t{2} << b) - 1) : 0;
  return higher != 0 ? pool.bins[__builtin_ctzll(higher)] : nullptr;
}

// The same for region pools and call-site pools, preferring a span with
// resident pages (the first kResidentLook that fit in each bin from n's up).
// Their spans are large and given back whole: a locality heap turning its
// regions over, or a call-site pool giving back its pages and taking new
// ones (span_alloc_resident), would otherwise be handed the untouched rest
// of a segment while the spans it gave back wait for their purge, and its
// footprint would double.
constexpr int kResidentLook = 8;
Page* find_span_resident_first(SegmentPool& pool, std::uint32_t n) {
  Page* first = nullptr;
  for (std::uint64_t bins = pool.bin_mask & ~((std::uint64_t{1} << bin_of(n)) - 1); bins != 0; bins &= bins - 1) {
    int looked = 0;
    for (Page* p = pool.bins[__builtin_ctzll(bins)]; p != nullptr && looked < kResidentLook; p = p->next) {
      if (p->slice_count < n) continue;
      if (p->dirty_slices != 0) return p;
      if (first == nullptr) first = p;
      ++looked;
    }
  }
  return first;
}

}  // namespace

namespace {
Page* span_take(SegmentPool& pool, std::uint32_t n, bool resident_first) noexcept {
  maybe_purge(pool);
  Page* s = resident_first ? find_span_resident_first(pool, n) : find_span(pool, n);
  if (s == nullptr) {
    Segment* seg = segment_new(pool);
    if (seg == nullptr) return nullptr;
    s = seg->pages() + seg->header_slices;
    if (s->slice_count < n) return nullptr;  // cannot happen: LARGE_MAX <= SEGMENT_SIZE/2
  }
  Segment* seg = segment_of_page(s);
  const auto idx = static_cast<std::uint32_t>(s - seg->pages());
  take_free_span(pool, seg, s, idx, n);
  for (std::uint32_t i = 1; i < n; ++i) set_slice_back(seg->pages()[idx + i], i);
  s->slice_count = n;
  set_slice_back(*s, 0);
  s->free = s->local_free = nullptr;
  s->used = s->capacity = s->reserved = 0;
  s->in_full = 0;
  s->site_pool = 0;
  s->dirty_slices = 0;
  s->block_magic = 0;
  s->next = s->prev = nullptr;
  seg->used_slices += n;
  TAILOR_ASSERT(seg->used_slices <= seg->slice_count - seg->header_slices);
  return s;
}
}  // namespace

Page* span_alloc(SegmentPool& pool, std::uint32_t n) noexcept { return span_take(pool, n, pool.region != nullptr); }

Page* span_alloc_resident(SegmentPool& pool, std::uint32_t n) noexcept { return span_take(pool, n, true); }

std::uint32_t segment_span_slices() noexcept { return segment_slices() - segment_header_slices(); }

Page* span_alloc_aligned(SegmentPool& pool, std::uint32_t n, std::uint32_t align_slices) noexcept {
  if (align_slices <= 1) return span_alloc(pool, n);
  Page* s = span_alloc(pool, n + align_slices - 1);
  if (s == nullptr) return nullptr;
  Segment* seg = segment_of_page(s);
  const auto idx = static_cast<std::uint32_t>(s - seg->pages());
  const std::uint32_t total = s->slice_count;
  const std::uint32_t at = (idx + align_slices - 1) / align_slices * align_slices;
  const std::uint32_t head = at - idx, tail = total - head - n;
  if (head == 0 && tail == 0) return s;
  // The aligned page first, so that the slack freed below never coalesces with it.
  Page* pg = seg->pages() + at;
  if (head != 0) {
    *pg = *s;
    pg->start = reinterpret_cast<std::uint8_t*>(seg) + slice_bytes(at);
    for (std::uint32_t i = 1; i < n; ++i) set_slice_back(seg->pages()[at + i], i);
  }
  pg->slice_count = n;
  set_slice_back(*pg, 0);
  pg->kind = PageKind::kLarge;  // in use: the caller sets the kind it wants
  // Describe both slacks before freeing either: freeing may purge, and the
  // purge walks the segment span by span.
  const std::uint32_t clean = s->is_zero;  // slack of a fresh or purged span was never touched
  auto describe = [&](std::uint32_t from, std::uint32_t count) {
    Page* slack = seg->pages() + from;
    slack->kind = PageKind::kLarge;
    slack->slice_count = count;
    set_slice_back(*slack, 0);
    slack->is_zero = static_cast<std::uint8_t>(clean);
    slack->start = reinterpret_cast<std::uint8_t*>(seg) + slice_bytes(from);
    for (std::uint32_t i = 1; i < count; ++i) set_slice_back(seg->pages()[from + i], i);
    return slack;
  };
  Page* before = head != 0 ? describe(idx, head) : nullptr;
  Page* after = tail != 0 ? describe(at + n, tail) : nullptr;
  if (before != nullptr) span_release(pool, before, clean ? 0 : head);
  if (after != nullptr) span_release(pool, after, clean ? 0 : tail);
  return pg;
}

void span_free(SegmentPool& pool, Page* page) noexcept {
  if (page->kind == PageKind::kClass && page->size_class < kPoolPageClass) slice_class_set(page, 0);
  span_release(pool, page, page->slice_count);
}

namespace {
// Returns a span in use to the free bins, `dirty` of its slices resident
// (a page's slices were handed out: span_free counts them all as touched).
void span_release(SegmentPool& pool, Page* page, std::uint32_t dirty) noexcept {
  Segment* seg = segment_of_page(page);
  auto idx = static_cast<std::uint32_t>(page - seg->pages());
  std::uint32_t n = page->slice_count;
  bool zero = dirty == 0 && page->is_zero;
  TAILOR_ASSERT(page->kind != PageKind::kFree && page->kind != PageKind::kHeader && page->slice_back == 0);
  TAILOR_ASSERT(seg->used_slices >= n && dirty <= n);
  page->block_magic = 0;  // no block here any more (misuse.h)
  seg->used_slices -= n;
  pool.free_bytes += slice_bytes(n);
  pool.dirty_bytes += slice_bytes(dirty);
  const std::uint32_t r = idx + n;
  if (r < seg->slice_count && seg->pages()[r].kind == PageKind::kFree) {
    Page* right = seg->pages() + r;
    bin_remove(pool, right);
    n += right->slice_count;
    dirty += right->dirty_slices;  // already in pool.dirty_bytes
    zero = zero && right->is_zero;
    right->kind = PageKind::kClass;  // no longer a span head
  }
  if (idx > seg->header_slices) {
    Page* last = seg->pages() + idx - 1;
    Page* left = span_head(last);
    if (left->kind == PageKind::kFree) {
      bin_remove(pool, left);
      n += left->slice_count;
      dirty += left->dirty_slices;
      zero = zero && left->is_zero;
      idx = static_cast<std::uint32_t>(left - seg->pages());
      page->kind = PageKind::kClass;
    }
  }
  const std::int64_t delay = g_config.purge_delay_ms;
  const std::uint64_t now = os::now_ms();
  std::uint64_t at = delay < 0 ? UINT64_MAX : now + static_cast<std::uint64_t>(delay);
  Page* span = set_free_span(seg, idx, n, zero, dirty, at);
  bin_insert(pool, span);
  TAILOR_ASSERT(pool.dirty_bytes <= pool.free_bytes);
  if (dirty == 0) return;
  if (delay == 0) {
    pool_purge(pool, true);
    return;
  }
  if (pool.dirty_bytes > g_config.heap_cache_bytes) pool_trim(pool);
  if (delay > 0 && (pool.next_purge == 0 || at < pool.next_purge)) pool.next_purge = at;
  if (pool.next_purge != 0 && now >= pool.next_purge) pool_purge(pool, false);
}
}  // namespace

bool span_try_grow(SegmentPool& pool, Page* page, std::uint32_t slices) noexcept {
  Segment* seg = segment_of_page(page);
  const auto idx = static_cast<std::uint32_t>(page - seg->pages());
  const std::uint32_t n = page->slice_count;
  if (slices <= n) return true;
  const std::uint32_t r = idx + n, need = slices - n;
  if (r >= seg->slice_count) return false;
  Page* right = seg->pages() + r;
  if (right->kind != PageKind::kFree || right->slice_count < need) return false;
  take_free_span(pool, seg, right, r, need);
  right->kind = PageKind::kClass;
  for (std::uint32_t i = n; i < slices; ++i) set_slice_back(seg->pages()[idx + i], i);
  page->slice_count = slices;
  seg->used_slices += need;
  return true;
}

void pool_purge(SegmentPool& pool, bool force) noexcept {
  const std::uint64_t now = os::now_ms();
  std::uint64_t next = 0;
  for (Segment* seg = pool.segments; seg != nullptr;) {
    Segment* following = seg->next;
    if (seg->used_slices == 0) {
      Page* span = seg->pages() + seg->header_slices;
      bool due = force || (span->dirty_slices != 0 && span->purge_at <= now);
      if (due && (force || pool.segment_count > 1)) {
        segment_release(pool, seg);
      } else if (span->dirty_slices != 0) {
        if (due) purge_span(pool, span);
        else if (next == 0 || span->purge_at < next) next = span->purge_at;
      }
      seg = following;
      continue;
    }
    for (std::uint32_t i = seg->header_slices; i < seg->slice_count;) {
      Page* p = seg->pages() + i;
      if (p->kind == PageKind::kFree && p->dirty_slices != 0) {
        if (force || p->purge_at <= now) purge_span(pool, p);
        else if (next == 0 || p->purge_at < next) next = p->purge_at;
      }
      i += p->slice_count;
    }
    seg = following;
  }
  pool.next_purge = next == UINT64_MAX ? 0 : next;
}

void pool_release_all(SegmentPool& pool) noexcept {
  segments_lock();
  for (Segment* seg = pool.segments; seg != nullptr;) {
    Segment* next = seg->next;
    g_os_counters.segments.fetch_sub(1, std::memory_order_relaxed);
    g_os_counters.bytes_mapped.fetch_sub(seg->size, std::memory_order_relaxed);
    segment_unregister(seg);
    os::release(seg, seg->size);
    seg = next;
  }
  pool.segments = nullptr;
  segments_unlock();
  pool.segment_count = 0;
  for (auto& b : pool.bins) b = nullptr;
  pool.bin_mask = 0;
  pool.next_purge = 0;
  pool.dirty_bytes = pool.free_bytes = 0;
}

void pool_stats(const SegmentPool& pool, std::uint64_t& used, std::uint64_t& free_bytes, std::uint64_t& dirty) noexcept {
  used = 0;
  for (Segment* seg = pool.segments; seg != nullptr; seg = seg->next) {
    for (std::uint32_t i = seg->header_slices; i < seg->slice_count;) {
      Page* p = seg->pages() + i;
      if (p->kind == PageKind::kClass) used += std::uint64_t{p->used} * p->block_size;
      else if (p->kind == PageKind::kLarge && p->used) used += slice_bytes(p->slice_count);
      i += p->slice_count;
    }
  }
  free_bytes = pool.free_bytes;
  dirty = pool.dirty_bytes;
}

// ------------------------------------------------------------ segments lock

namespace {
SpinLock g_segments_lock;
}  // namespace

void segments_lock() noexcept { g_segments_lock.lock(); }
void segments_unlock() noexcept { g_segments_lock.unlock(); }
void segments_lock_reset() noexcept { g_segments_lock.reset(); }

// ---------------------------------------------------------------- huge blocks

namespace {
void raise_max(std::atomic<std::uint64_t>& max, std::uint64_t v) {
  std::uint64_t m = max.load(std::memory_order_relaxed);
  while (v > m && !max.compare_exchange_weak(m, v, std::memory_order_relaxed)) {
  }
}

// A live huge block more (blocks 1) or one resized (blocks 0, bytes the
// difference, wrapping when it shrinks): mallinfo2's hblks and hblkhd.
void huge_count(std::uint64_t blocks, std::uint64_t bytes) {
  const std::uint64_t n = g_os_counters.huge_blocks.fetch_add(blocks, std::memory_order_relaxed) + blocks;
  const std::uint64_t b = g_os_counters.huge_bytes.fetch_add(bytes, std::memory_order_relaxed) + bytes;
  raise_max(g_os_counters.huge_blocks_max, n);
  raise_max(g_os_counters.huge_bytes_max, b);
}
std::size_t round_up(std::size_t n, std::size_t to) { return (n + to - 1) & ~(to - 1); }
}  // namespace

void* huge_alloc(std::size_t size, std::size_t align) noexcept {
  const std::size_t seg_size = g_config.segment_size;
  const std::size_t ospage = os::page_size();
  std::size_t off = align <= ospage ? ospage : (align <= seg_size ? align : seg_size);
  if (size > (std::size_t{1} << 62)) { errno = ENOMEM; return nullptr; }
  std::size_t total = round_up(off + size, ospage);
  Segment* seg = align <= seg_size ? huge_cache_take(total) : nullptr;
  const bool fresh = seg == nullptr;
  if (seg != nullptr) {
    total = seg->size;
  } else if (align <= seg_size) {
    huge_cache_expire(false);
    seg = static_cast<Segment*>(os::reserve_aligned(total, seg_size));
    if (seg == nullptr) return nullptr;
  } else {
    // The block must start at an `align` boundary exactly one segment past
    // the header, so that (p - 1) masked still finds the header.
    std::size_t raw_size = total + align;
    auto* raw = static_cast<std::uint8_t*>(os::reserve_aligned(raw_size, seg_size));
    if (raw == nullptr) return nullptr;
    auto base = reinterpret_cast<std::uintptr_t>(raw);
    std::uintptr_t u = (base + seg_size + align - 1) & ~(std::uintptr_t{align} - 1);
    auto* s = reinterpret_cast<std::uint8_t*>(u - seg_size);
    if (s > raw) os::release(raw, static_cast<std::size_t>(s - raw));
    std::size_t tail = static_cast<std::size_t>(raw + raw_size - (s + total));
    if (tail) os::release(s + total, tail);
    seg = reinterpret_cast<Segment*>(s);
  }
  if (fresh && g_config.huge_pages) os::advise_huge_pages(seg, total);
  if (fresh) {
    segment_register(seg, kTagNone);
    g_os_counters.segments.fetch_add(1, std::memory_order_relaxed);
    g_os_counters.bytes_mapped.fetch_add(total, std::memory_order_relaxed);
  }
  seg->heap.store(nullptr, std::memory_order_relaxed);
  seg->size = total;
  huge_count(1, total);
  seg->huge_align = align;
  seg->kind = SegmentKind::kHuge;
  seg->region = nullptr;
  seg->slice_count = 1;
  seg->header_slices = 0;
  Page* page = seg->pages();
  page->kind = PageKind::kHuge;
  page->start = reinterpret_cast<std::uint8_t*>(seg) + off;
  page->block_size = total - off;
  page->used = 1;
  page->is_zero = fresh ? 1 : 0;
  if (!fresh && page->block_size >= 2 * sizeof(void*)) block_key(page->start) = 0;
  return page->start;
}

void huge_free(Segment* seg) noexcept {
  g_os_counters.huge_blocks.fetch_sub(1, std::memory_order_relaxed);
  g_os_counters.huge_bytes.fetch_sub(seg->size, std::memory_order_relaxed);
  seg->pages()->used = 0;  // a cached mapping: a second free is a double free (misuse.h)
  if (!huge_cache_put(seg)) huge_unmap(seg, seg->size);
}

void huge_unmap(Segment* seg, std::size_t size) noexcept {
  g_os_counters.segments.fetch_sub(1, std::memory_order_relaxed);
  g_os_counters.bytes_mapped.fetch_sub(size, std::memory_order_relaxed);
  segment_unregister(seg);
  os::release(seg, size);
}

std::size_t huge_usable(Segment* seg, const void* p) noexcept {
  return seg->size - static_cast<std::size_t>(static_cast<const std::uint8_t*>(p) - reinterpret_cast<std::uint8_t*>(seg));
}

void* huge_realloc(Segment* seg, void* p, std::size_t size) noexcept {
  const std::size_t seg_size = g_config.segment_size;
  if (seg->huge_align > seg_size) return nullptr;
  const auto off = static_cast<std::size_t>(static_cast<std::uint8_t*>(p) - reinterpret_cast<std::uint8_t*>(seg));
  if (size > (std::size_t{1} << 62)) return nullptr;
  const std::size_t total = round_up(off + size, os::page_size());
  const std::size_t old = seg->size;
  if (total <= old) {
    os::shrink(seg, old, total);
  } else {
    // Unregistered across the move, as in huge_cache_take: the block is the
    // caller's alone meanwhile, and the old range may be another's by the
    // time mremap returns.
    segment_unregister(seg);
    void* q = os::remap(seg, old, total, seg_size);
    segment_register(q == nullptr ? seg : q, kTagNone);
    if (q == nullptr) return nullptr;
    seg = static_cast<Segment*>(q);
  }
  g_os_counters.bytes_mapped.fetch_add(total - old, std::memory_order_relaxed);  // wraps correctly when shrinking
  huge_count(0, total - old);
  seg->size = total;
  Page* page = seg->pages();
  page->start = reinterpret_cast<std::uint8_t*>(seg) + off;
  page->block_size = total - off;
  return page->start;
}

}  // namespace tailor::alloc
