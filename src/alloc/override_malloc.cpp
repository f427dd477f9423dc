// SPDX-License-Identifier: MIT
// libtailor as the process's malloc: every C allocation entry point of glibc
// (and C23's free_sized / free_aligned_sized, and the __libc_* aliases),
// forwarding to the core. Kept in one object file so that linking -ltailor
// statically pulls in the whole family at once. errno follows glibc: ENOMEM
// on exhaustion or overflow, EINVAL for a bad alignment; free preserves it.
#include <malloc.h>

#include <cerrno>
#include <cstddef>

#include "alloc/alloc.h"
#include "alloc/huge_cache.h"
#include "alloc/mallinfo.h"

using namespace tailor::alloc;

#define TAILOR_EXPORT extern "C" __attribute__((visibility("default")))

namespace {
constexpr std::size_t kOsPage = 4096;
bool is_pow2(std::size_t x) { return x != 0 && (x & (x - 1)) == 0; }
}  // namespace

TAILOR_EXPORT void* malloc(std::size_t size) noexcept { return malloc_inline(size); }

TAILOR_EXPORT void free(void* p) noexcept { free_inline(p); }

TAILOR_EXPORT void cfree(void* p) noexcept { free_inline(p); }

TAILOR_EXPORT void* calloc(std::size_t count, std::size_t size) noexcept { return calloc_impl(count, size); }

TAILOR_EXPORT void* realloc(void* p, std::size_t size) noexcept { return realloc_impl(p, size); }

TAILOR_EXPORT void* reallocarray(void* p, std::size_t count, std::size_t size) noexcept {
  std::size_t total;
  if (__builtin_mul_overflow(count, size, &total)) {
    errno = ENOMEM;
    return nullptr;
  }
  return realloc_impl(p, total);
}

TAILOR_EXPORT void* aligned_alloc(std::size_t align, std::size_t size) noexcept {
  if (!is_pow2(align)) {
    errno = EINVAL;
    return nullptr;
  }
  return aligned_impl(align, size);
}

TAILOR_EXPORT int posix_memalign(void** out, std::size_t align, std::size_t size) noexcept {
  if (!is_pow2(align) || align % sizeof(void*) != 0) return EINVAL;
  int saved = errno;
  void* p = aligned_impl(align, size);
  if (p == nullptr) {
    errno = saved;
    return ENOMEM;
  }
  *out = p;
  return 0;
}

TAILOR_EXPORT void* memalign(std::size_t align, std::size_t size) noexcept {
  // glibc rounds a non-power-of-two alignment up to the next power of two.
  if (align > (std::size_t{1} << 63)) {
    errno = EINVAL;
    return nullptr;
  }
  if (!is_pow2(align)) align = align == 0 ? 1 : std::size_t{1} << (64 - __builtin_clzll(align));
  return aligned_impl(align, size);
}

TAILOR_EXPORT void* valloc(std::size_t size) noexcept { return aligned_impl(kOsPage, size); }

TAILOR_EXPORT void* pvalloc(std::size_t size) noexcept {
  std::size_t rounded;
  if (__builtin_add_overflow(size, kOsPage - 1, &rounded)) {
    errno = ENOMEM;
    return nullptr;
  }
  rounded &= ~(kOsPage - 1);
  return aligned_impl(kOsPage, rounded == 0 ? kOsPage : rounded);
}

TAILOR_EXPORT std::size_t malloc_usable_size(void* p) noexcept { return p == nullptr ? 0 : usable_size(p); }

TAILOR_EXPORT void free_sized(void* p, std::size_t size) noexcept { free_sized_inline(p, size, 0, "free_sized"); }

TAILOR_EXPORT void free_aligned_sized(void* p, std::size_t align, std::size_t size) noexcept {
  free_sized_inline(p, size, align, "free_aligned_sized");
}

// glibc's malloc_trim: gives free memory back to the OS now (the calling
// thread's free spans, the heaps of exited threads, the huge cache), whatever
// the purge delay; 1 if some memory was given back, 0 otherwise. `pad` (the
// top of glibc's main heap to keep) has no counterpart.
TAILOR_EXPORT int malloc_trim(std::size_t) noexcept {
  process_init();
  if (dmm_active()) return 0;
  const std::uint64_t purged = g_os_counters.bytes_purged.load(std::memory_order_relaxed);
  const std::uint64_t mapped = g_os_counters.bytes_mapped.load(std::memory_order_relaxed);
  heap_collect(tl_heap);
  idle_heaps_collect();
  huge_cache_expire(true);
  return g_os_counters.bytes_purged.load(std::memory_order_relaxed) != purged ||
                 g_os_counters.bytes_mapped.load(std::memory_order_relaxed) < mapped
             ? 1
             : 0;
}

// glibc's mallinfo2, mallinfo and malloc_stats, from libtailor's own state
// (mallinfo.h: what each field means here). mallinfo's int fields are
// truncated as glibc's are.
TAILOR_EXPORT struct mallinfo2 mallinfo2() noexcept {
  const MallInfo m = mallinfo_collect(false);
  struct mallinfo2 r {};
  r.arena = m.arena;
  r.ordblks = m.ordblks;
  r.hblks = m.hblks;
  r.hblkhd = m.hblkhd;
  r.uordblks = m.uordblks;
  r.fordblks = m.fordblks;
  r.keepcost = m.keepcost;
  return r;
}

TAILOR_EXPORT struct mallinfo mallinfo() noexcept {
  const MallInfo m = mallinfo_collect(false);
  struct mallinfo r {};
  r.arena = static_cast<int>(m.arena);
  r.ordblks = static_cast<int>(m.ordblks);
  r.hblks = static_cast<int>(m.hblks);
  r.hblkhd = static_cast<int>(m.hblkhd);
  r.uordblks = static_cast<int>(m.uordblks);
  r.fordblks = static_cast<int>(m.fordblks);
  r.keepcost = static_cast<int>(m.keepcost);
  return r;
}

TAILOR_EXPORT void malloc_stats() noexcept { malloc_stats_print(); }

// glibc's internal names, which some programs and libraries call directly.
// (Wrappers rather than aliases: glibc's declarations of the targets carry
// attributes an alias cannot repeat.)
TAILOR_EXPORT void* __libc_malloc(std::size_t size) noexcept { return malloc_inline(size); }
TAILOR_EXPORT void __libc_free(void* p) noexcept { free_inline(p); }
TAILOR_EXPORT void __libc_cfree(void* p) noexcept { free_inline(p); }
TAILOR_EXPORT void* __libc_calloc(std::size_t count, std::size_t size) noexcept { return calloc_impl(count, size); }
TAILOR_EXPORT void* __libc_realloc(void* p, std::size_t size) noexcept { return realloc_impl(p, size); }
TAILOR_EXPORT void* __libc_reallocarray(void* p, std::size_t count, std::size_t size) noexcept {
  return reallocarray(p, count, size);
}
TAILOR_EXPORT void* __libc_memalign(std::size_t align, std::size_t size) noexcept { return memalign(align, size); }
TAILOR_EXPORT void* __libc_valloc(std::size_t size) noexcept { return valloc(size); }
TAILOR_EXPORT void* __libc_pvalloc(std::size_t size) noexcept { return pvalloc(size); }
TAILOR_EXPORT int __posix_memalign(void** out, std::size_t align, std::size_t size) noexcept {
  return posix_memalign(out, align, size);
}
