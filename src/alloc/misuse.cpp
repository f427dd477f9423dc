// SPDX-License-Identifier: MIT
// Heap misuse (misuse.h): the segment registry, the freed-block key, the
// checks of the paths that are not the owner's fast path, and the one-line
// reports. Everything here runs inside malloc: no stdio, no allocation.
#include "alloc/misuse.h"

#include <sys/random.h>

#include <atomic>
#include <cstdlib>

#include "alloc/config.h"
#include "alloc/dmm_front.h"
#include "alloc/heap.h"
#include "alloc/os.h"
#include "dmm/text.h"
#include "alloc/secure.h"

namespace tailor::alloc {

namespace {
// Until the registry is made (at load), free's fast path reads this: free(NULL)
// looks up byte 0 and finds 0 (the slow path returns), even in a constructor
// that runs before libtailor's.
std::uint8_t g_segmap_boot[64];
}  // namespace
std::uint8_t* g_segmap = g_segmap_boot;
std::uintptr_t g_free_key = 0;

namespace {

constexpr std::size_t kSegmapBytes = std::size_t{1} << (kAddressBits - kSegmapShift);

std::size_t segmap_index(const void* seg) {
  const auto a = reinterpret_cast<std::uintptr_t>(seg);
  return a >> kSegmapShift;  // as segment_known (misuse.h)
}

OnError on_error() { return static_cast<OnError>(g_config.value[static_cast<int>(Param::kOnError)]); }

// One report line, formatted without allocation.
using Line = dmm::TextBuffer<256>;

void emit(Line& l) {
  const OnError mode = on_error();
  if (mode == OnError::kIgnore) return;
  l.append("\n");
  os::write_stderr(l.c_str());
  if (mode == OnError::kAbort) abort();
}

void start(Line& l, const char* fn, const char* what, const void* p) {
  l.append("tailor: ");
  l.append(fn);
  l.append("(): ");
  l.append(what);
  l.append(" ");
  l.append_hex(reinterpret_cast<std::uintptr_t>(p));
}

enum class Verdict { kOk, kNotStart, kFreed, kNotBlock };

// What p is in a registered segment. size: the block's size (or the size of
// the block p points into), 0 if unknown; base: that block's start.
Verdict classify(Segment* seg, void* p, std::size_t& size, std::uintptr_t& base) {
  size = 0;
  base = 0;
  if (seg->kind == SegmentKind::kHuge) {
    Page* pg = seg->pages();
    size = pg->block_size;
    base = reinterpret_cast<std::uintptr_t>(pg->start);
    if (p != pg->start) return Verdict::kNotStart;
    return pg->used == 0 ? Verdict::kFreed : Verdict::kOk;
  }
  if (seg->kind == SegmentKind::kRegion) return Verdict::kOk;  // the region's owner checks its blocks
  const auto off = reinterpret_cast<std::uintptr_t>(p) - reinterpret_cast<std::uintptr_t>(seg);
  if (off < (std::uintptr_t{seg->header_slices} << g_config.slice_shift)) return Verdict::kNotBlock;
  Page* pg = page_of(seg, p);
  if ((pg->kind != PageKind::kClass && pg->kind != PageKind::kLarge) || pg->block_magic == 0 || pg->block_size == 0) {
    // A free span (the block's page was freed since) or a stale descriptor:
    // a block freed here still carries the mark, unless purged since.
    if ((reinterpret_cast<std::uintptr_t>(p) & 15) == 0 && block_key(p) == g_free_key) return Verdict::kFreed;
    return Verdict::kNotBlock;
  }
  size = pg->block_size;
  if (!block_start_ok(pg, p)) {
    // The start of the block p points into, for the report only: a
    // division, which every cross-thread free (free_remote) would pay.
    const auto rel = reinterpret_cast<std::uintptr_t>(p) - reinterpret_cast<std::uintptr_t>(pg->start);
    base = reinterpret_cast<std::uintptr_t>(pg->start) + rel / size * size;
    return Verdict::kNotStart;
  }
  base = reinterpret_cast<std::uintptr_t>(p);
  return block_key(p) == g_free_key ? Verdict::kFreed : Verdict::kOk;
}

void report(const char* fn, Verdict v, void* p, std::size_t size, std::uintptr_t base) {
  Line l;
  switch (v) {
    case Verdict::kOk:
      return;
    case Verdict::kFreed:  // free twice, or realloc / usable size of a freed block
      start(l, fn, fn[0] == 'f' || fn[0] == 'o' ? "double free of" : "block already freed:", p);
      if (size != 0) {
        l.append(" (block of ");
        l.append_uint(size);
        l.append(" bytes, already free)");
      } else {
        l.append(" (already free, its page too)");
      }
      break;
    case Verdict::kNotStart:
      start(l, fn, "invalid pointer", p);
      l.append(" (not the start of a block: ");
      l.append_uint(reinterpret_cast<std::uintptr_t>(p) - base);
      l.append(" bytes into the block of ");
      l.append_uint(size);
      l.append(" bytes at ");
      l.append_hex(base);
      l.append(")");
      break;
    case Verdict::kNotBlock:
      start(l, fn, "invalid pointer", p);
      l.append(" (in libtailor's memory but in no live block: freed page or metadata)");
      break;
  }
  emit(l);
}

}  // namespace

void misuse_init() noexcept {
  if (g_segmap != g_segmap_boot) return;  // done at load (misuse_at_load), before process_init
  auto* map = static_cast<std::uint8_t*>(os::reserve_aligned(kSegmapBytes, os::page_size()));
  if (map == nullptr) {
    os::write_stderr("tailor: cannot reserve the segment registry; aborting\n");
    abort();
  }
  g_segmap = map;
  std::uintptr_t key = 0;
  if (getrandom(&key, sizeof key, GRND_NONBLOCK) != static_cast<ssize_t>(sizeof key)) key = 0;
  key ^= os::now_ms() * 0x9e3779b97f4a7c15u ^ reinterpret_cast<std::uintptr_t>(&key);
  g_free_key = key | 1;  // odd: never a pointer, never zero
  os::fault_init();       // TAILOR_FAULT_INJECT, in test builds only (os.h)
}

void segment_register(const void* seg, std::uint32_t tag) noexcept {
  const auto b = static_cast<std::uint8_t>(tag >= 1 && tag <= kTagLast ? tag : kTagShared);
  __atomic_store_n(&g_segmap[segmap_index(seg)], b, __ATOMIC_RELAXED);
}

std::uint32_t heap_tag_new() noexcept {
  static std::atomic<std::uint32_t> next{1};
  if (next.load(std::memory_order_relaxed) > kTagLast) return kTagNone;  // (the counter never wraps)
  const std::uint32_t t = next.fetch_add(1, std::memory_order_relaxed);
  return t <= kTagLast ? t : kTagNone;
}
void segment_unregister(const void* seg) noexcept {
  __atomic_store_n(&g_segmap[segmap_index(seg)], 0, __ATOMIC_RELAXED);
}

void misuse_unknown(const char* fn, const void* p) noexcept {
  Line l;
  start(l, fn, "invalid pointer", p);
  l.append(" (not allocated by libtailor, or its memory was given back)");
  emit(l);
}

void misuse_in_segment(const char* fn, Segment* seg, void* p) noexcept {
  std::size_t size;
  std::uintptr_t base;
  const Verdict v = classify(seg, p, size, base);
  if (v == Verdict::kOk) {  // cannot happen: the fast path saw a failed check
    Line l;
    start(l, fn, "inconsistent check at", p);
    emit(l);
    return;
  }
  report(fn, v, p, size, base);
}

void misuse_report(const char* fn, const char* what, const void* p, const char* note, std::uint64_t n,
                   const char* tail) noexcept {
  Line l;
  start(l, fn, what, p);
  if (note != nullptr) {
    l.append(" (");
    l.append(note);
    if (n != kNoNumber) l.append_uint(n);
    if (tail != nullptr) l.append(tail);
    l.append(")");
  }
  emit(l);
}

void misuse_wrong_size(const char* fn, const void* p, std::size_t given, std::size_t block) noexcept {
  Line l;
  start(l, fn, "wrong size for", p);
  l.append(" (");
  l.append_uint(given);
  l.append(" bytes given, block of ");
  l.append_uint(block);
  l.append(" bytes)");
  emit(l);
}

void misuse_size_in_segment(const char* fn, Segment* seg, void* p, std::size_t given) noexcept {
  misuse_wrong_size(fn, p, given, page_of(seg, p)->block_size);
}

bool pointer_check(const char* fn, void* p) noexcept {
  Segment* seg = segment_of(p);
  if (!segment_known(seg)) {
    misuse_unknown(fn, p);
    return false;
  }
  if (secure_owns(seg)) return secure_check(fn, p, false, 0);
  std::size_t size;
  std::uintptr_t base;
  const Verdict v = classify(seg, p, size, base);
  if (v == Verdict::kOk) return true;
  report(fn, v, p, size, base);
  return false;
}

bool size_check(const char* fn, void* p, std::size_t size, std::size_t align, bool strict) noexcept {
  if (!pointer_check(fn, p)) return false;
  Segment* seg = segment_of(p);
  std::size_t block;
  bool ok;
  if (seg->kind == SegmentKind::kHuge) {
    block = seg->pages()->block_size;
    ok = size <= block;
  } else if (seg->kind == SegmentKind::kRegion) {
    return !secure_owns(seg) || secure_check(fn, p, true, size);  // secure mode knows the exact size
  } else {
    Page* pg = page_of(seg, p);
    block = pg->block_size;
    if (strict && align <= 16 && pg->kind == PageKind::kClass && size <= g_config.middle_max)
      ok = page_own_size(pg, size);
    else
      ok = size <= block;
  }
  // Loose bound for the rest: realloc keeps a block down to half its size,
  // grows by at most half again, and rounds large blocks to slices; an
  // aligned block is at least its alignment.
  const std::size_t want = size > align ? size : align;
  if (ok && !(strict && seg->kind == SegmentKind::kNormal && align <= 16 && size <= g_config.middle_max))
    ok = block - size <= want + g_config.slice_size;
  if (ok) return true;
  misuse_wrong_size(fn, p, size, block);
  return false;
}

void free_not_mine(void* p) noexcept {
  if (dmm_owns(p)) {  // a block of the DMM serving malloc (dmm_front.h): first, it is all there is
    dmm_free(p);
    return;
  }
  if (p == nullptr) return;
  if (secure_block(p)) {  // at once
    secure_free("free", p, false, 0);
    return;
  }
  Segment* seg = segment_of(p);
  if (segment_tag(seg) == 0) {
    if (dmm_owns(p)) dmm_free(p);  // a block of the DMM serving malloc (dmm_front.h)
    else misuse_unknown("free", p);
    return;
  }
  Heap* h = tl_heap;
  if (seg->heap.load(std::memory_order_relaxed) == h) {  // a heap without a tag (kTagNone)
    Page* pg = page_of(seg, p);
    if (!block_start_ok(pg, p) || block_key(p) == g_free_key) {
      misuse_in_segment("free", seg, p);
      return;
    }
    free_owned(h, pg, p);
    return;
  }
  free_remote(seg, p);
}

void delete_sized_not_mine(void* p, std::size_t size, const char* fn) noexcept {
  if (p == nullptr) return;
  if (secure_block(p)) {  // checked and freed in one look-up
    secure_free(fn, p, true, size);
    return;
  }
  Segment* seg = segment_of(p);
  if (segment_tag(seg) == 0) {
    if (dmm_owns(p)) dmm_free(p);
    else misuse_unknown(fn, p);
    return;
  }
  if (size_check(fn, p, size, 0, true)) {
    Heap* h = tl_heap;
    if (seg->heap.load(std::memory_order_relaxed) == h) free_owned(h, page_of(seg, p), p);
    else free_remote(seg, p);
  }
}

}  // namespace tailor::alloc

// The registry must exist before the first free, which may come before any
// malloc (a program freeing a pointer that was never allocated): it is made
// when libtailor is loaded. Only the registry: the configuration is still
// read at the first malloc, so that a program (or a test) may set TAILOR_*
// variables before it allocates.
__attribute__((constructor(101))) static void misuse_at_load() { tailor::alloc::misuse_init(); }

#ifdef TAILOR_FAULT_INJECTION
// The switch of libtailor-fault.so (test builds), for programs that test
// themselves under failing mmap, madvise and mremap (os.h: fault_set).
extern "C" __attribute__((visibility("default"))) void tailor_fault_inject(long after, long count, unsigned ops) {
  tailor::alloc::process_init();
  tailor::alloc::os::fault_set(after, count, ops);
}
extern "C" __attribute__((visibility("default"))) unsigned long tailor_faults_injected() {
  return tailor::alloc::os::faults_injected();
}
#endif
