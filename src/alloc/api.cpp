// SPDX-License-Identifier: MIT
// The extended C API of include/tailor/tailor.h (tailor_malloc and friends,
// statistics, configuration) and the parts of calloc, realloc and the aligned
// forms that the malloc override shares with it.
#include <cerrno>
#include <cstring>

#include "alloc/alloc.h"
#include "alloc/calloc_zero.h"
#include "alloc/huge_cache.h"
#include "alloc/os.h"
#include "alloc/region.h"
#include "alloc/secure.h"
#include "alloc/site_pool.h"
#include "alloc/sized_out.h"
#include "tailor/tailor.h"

namespace tailor::alloc {

std::size_t usable_size(const void* p) noexcept {
  if (TAILOR_UNLIKELY(dmm_owns(p))) return dmm_usable(p);
  if (TAILOR_UNLIKELY(secure_block(p))) return secure_usable("malloc_usable_size", const_cast<void*>(p));
  Segment* seg = segment_of(p);
  if (TAILOR_UNLIKELY(!segment_known(seg))) {
    misuse_unknown("malloc_usable_size", p);
    return 0;
  }
  if (seg->kind == SegmentKind::kHuge) return huge_usable(seg, p);
  if (seg->kind == SegmentKind::kRegion) return region_usable(seg, p);
  Page* pg = page_of(seg, p);
  if (pg->kind == PageKind::kLarge)
    return static_cast<std::size_t>(pg->start + pg->block_size - static_cast<const std::uint8_t*>(p));
  return pg->block_size;
}

void* calloc_impl(std::size_t count, std::size_t size) noexcept {
  // Reached by a tail call from calloc and tailor_calloc: the program's call site.
  const void* site = __builtin_return_address(0);
  process_init();
  std::size_t total;
  if (__builtin_mul_overflow(count, size, &total)) {
    errno = ENOMEM;
    return nullptr;
  }
  if (TAILOR_UNLIKELY(secure_active() || dmm_active())) {  // front ends that do not know fresh memory
    void* p = secure_active() ? secure_malloc(total, 16) : dmm_malloc(total, 0);
    if (p != nullptr && !(secure_active() && secure_zeroes())) std::memset(p, 0, total);
    return p;
  }
  void* p = malloc_inline_at(total, site);
  if (p == nullptr) return nullptr;
  Segment* seg = segment_of(p);
  if (seg->kind == SegmentKind::kHuge) {
    if (!seg->pages()->is_zero) calloc_zero_huge(p, total);  // not fresh from mmap: from the huge cache
    return p;
  } else if (Page* pg = page_of(seg, p); pg->kind == PageKind::kLarge) {
    if (pg->is_zero) return p;  // fresh or purged span
    calloc_zero_large(pg, total);  // used before: its backed pages, or the whole (calloc_zero.h)
    return p;
  }
  std::memset(p, 0, total);
  return p;
}

void* realloc_impl(void* p, std::size_t size) noexcept {
  if (p == nullptr) return malloc_inline_at(size, nullptr);  // realloc is not pooled (the pool allocation paper)
  // p came from an allocation, so the process is set up and dmm_active() is settled.
  if (TAILOR_UNLIKELY(secure_block(p))) return secure_realloc(p, size);
  if (TAILOR_UNLIKELY(dmm_active())) return dmm_realloc(p, size);
  if (TAILOR_UNLIKELY(!pointer_check("realloc", p))) {  // interior, freed, foreign (misuse.h)
    errno = EINVAL;
    return nullptr;
  }
  if (size == 0) {  // glibc frees and returns NULL
    free_inline(p);
    return nullptr;
  }
  Segment* seg = segment_of(p);
  std::size_t avail;
  if (seg->kind == SegmentKind::kHuge) {
    avail = huge_usable(seg, p);
    if (size > g_config.large_max) {
      int saved = errno;
      void* q = huge_realloc(seg, p, size);
      errno = saved;
      if (q != nullptr) return q;
    }
  } else if (seg->kind == SegmentKind::kRegion) {  // its owner's block: keep it if it fits, else move it here
    avail = region_usable(seg, p);
    if (size <= avail && size >= avail / 2) return p;
  } else {
    Page* pg = page_of(seg, p);
    avail = usable_size(p);
    // A pooled block always moves out, freeing its slot (the pool allocation paper).
    if (size <= avail && size >= avail / 2 && pg->site_pool == 0) return p;
    if (pg->kind == PageKind::kLarge && size > avail && size <= g_config.large_max &&
        seg->heap.load(std::memory_order_relaxed) == tl_heap) {
      std::size_t off = static_cast<std::size_t>(static_cast<std::uint8_t*>(p) - pg->start);
      auto n = static_cast<std::uint32_t>((off + size + g_config.slice_size - 1) >> g_config.slice_shift);
      if (span_try_grow(tl_heap->pool, pg, n)) {
        pg->block_size = static_cast<std::size_t>(n) << g_config.slice_shift;
        return p;
      }
    }
  }
  // A block that has to move to grow gets room to grow further, so that a
  // block grown step by step is copied O(log n) times, not at every class:
  // a quarter more below MIDDLE_MAX (as tcmalloc does), half more for large
  // blocks, whose extra pages are not touched until used (no RSS).
  std::size_t want = size;
  if (size > avail && size <= g_config.large_max) {
    std::size_t roomy = avail + (size > g_config.middle_max ? avail / 2 : avail / 4);
    if (roomy > size) want = roomy < g_config.large_max ? roomy : g_config.large_max;
  }
  void* q = malloc_inline_at(want, nullptr);
  if (q == nullptr) return nullptr;  // p is left untouched
  std::memcpy(q, p, avail < size ? avail : size);
  free_inline(p);
  return q;
}

void* aligned_impl(std::size_t align, std::size_t size) noexcept {
  process_init();
  if (TAILOR_UNLIKELY(secure_active())) return secure_malloc(size, align);
  if (TAILOR_UNLIKELY(dmm_active())) return dmm_malloc(size, align);  // the alignment asked for, as traced
  if (align <= 8 || (align <= 16 && !g_classes.exact)) {
    // Every class from 16 bytes up is a multiple of 16 on a slice-aligned
    // page, unless exact classes were asked for (size_class.h).
    return malloc_inline_at(size < align ? align : size, nullptr);  // aligned requests are not pooled
  }
  return heap_malloc_aligned(tl_heap, size, align);
}

}  // namespace tailor::alloc

using namespace tailor::alloc;

extern "C" {

void* tailor_malloc(size_t size) {
#if defined(__SANITIZE_THREAD__)
  // ThreadSanitizer's function-exit hook forbids the tail call through which
  // the slow path reads the call site (call-site pools): pass it.
  return malloc_inline_at(size, __builtin_return_address(0));
#else
  return malloc_inline(size);
#endif
}

void tailor_free(void* p) { free_inline(p); }

void* tailor_calloc(size_t count, size_t size) { return calloc_impl(count, size); }

void* tailor_realloc(void* p, size_t size) { return realloc_impl(p, size); }

void* tailor_aligned_alloc(size_t alignment, size_t size) {
  if (alignment == 0 || (alignment & (alignment - 1)) != 0) {
    errno = EINVAL;
    return nullptr;
  }
  return aligned_impl(alignment, size);
}

size_t tailor_usable_size(const void* p) { return p == nullptr ? 0 : usable_size(p); }

void tailor_collect(void) {
  heap_collect(tl_heap);
  huge_cache_expire(true);
}

void tailor_get_stats_sized(tailor_stats* out, size_t size) {
  if (out == nullptr) return;
  process_init();
  tailor_stats st{};
  st.segments_mapped = g_os_counters.segments.load(std::memory_order_relaxed);
  st.bytes_mapped = g_os_counters.bytes_mapped.load(std::memory_order_relaxed);
  st.huge_blocks = g_os_counters.huge_blocks.load(std::memory_order_relaxed);
  st.bytes_purged = g_os_counters.bytes_purged.load(std::memory_order_relaxed);
  st.heaps_created = heaps_created();
  st.heaps_adopted = heaps_adopted();
  st.heaps_abandoned = heaps_idle();
  Heap* h = tl_heap;
  if (h != &g_empty_heap) {
    std::uint64_t used, free_bytes, dirty;
    pool_stats(h->pool, used, free_bytes, dirty);
    st.thread_used_bytes = used;
    st.thread_free_bytes = free_bytes;
    st.thread_dirty_bytes = dirty;
  }
  copy_out(st, out, size);
}

void tailor_dmm_get_stats_sized(tailor_dmm_stats* out, size_t size) {
  if (out == nullptr) return;
  process_init();
  tailor_dmm_stats st{};
  dmm_get_stats(&st);
  copy_out(st, out, size);
}

void tailor_dmm_reset_peak(void) { dmm_reset_peak(); }

size_t tailor_config_sized(tailor_config_entry* out, size_t n, size_t entry_size) {
  process_init();
  constexpr auto count = static_cast<size_t>(Param::kCount);
  for (size_t i = 0; out != nullptr && i < n && i < count; ++i) {
    const ParamInfo& info = param_info(static_cast<Param>(i));
    tailor_config_entry e{};
    e.name = info.env;
    e.value = g_config.value[i];
    e.unit = info.unit;
    e.source = static_cast<tailor_config_source>(g_config.source[i]);
    e.description = info.description;
    copy_out(e, reinterpret_cast<char*>(out) + i * entry_size, entry_size);
  }
  return count;
}

const char* tailor_config_file(void) {
  process_init();
  return config_file_path();
}

const char* tailor_config_section(void) {
  process_init();
  return g_config.section[0] ? g_config.section : nullptr;
}

const char* tailor_config_dmm(tailor_config_source* source) {
  process_init();
  if (source != nullptr) *source = static_cast<tailor_config_source>(g_config.dmm_source);
  return g_config.dmm[0] ? g_config.dmm : nullptr;
}

}  // extern "C"
