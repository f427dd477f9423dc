// SPDX-License-Identifier: MIT
// libtailor as the C++ allocator: every replaceable operator new and delete
// (plain, array, sized, aligned, nothrow). Built without exceptions and
// without linking libstdc++ (so preloading libtailor into a C program does
// not load it): the new-handler and std::bad_alloc are reached through weak
// references, which resolve in any program that uses operator new.
#include <cerrno>
#include <cstddef>
#include <cstdlib>
#include <new>

#include "alloc/alloc.h"

using namespace tailor::alloc;

namespace std {
[[noreturn]] void __throw_bad_alloc() __attribute__((weak));
new_handler get_new_handler() noexcept __attribute__((weak));
}  // namespace std

namespace {

// One more attempt after the new-handler ran; false when there is none.
bool call_new_handler(bool nothrow) {
  std::new_handler handler = &std::get_new_handler != nullptr ? std::get_new_handler() : nullptr;
  if (handler == nullptr) {
    if (nothrow) return false;
    if (&std::__throw_bad_alloc != nullptr) std::__throw_bad_alloc();
    std::abort();
  }
  handler();  // may throw; -fno-exceptions frames unwind through .eh_frame
  return true;
}

// The size new_slow is serving, for its failure path: so that new_slow
// keeps nothing alive across its one call, and saves no register. (With
// call-site pools on, every new of a routed size takes new_slow: five
// registers saved and restored were a third of the routing's cost.)
thread_local std::size_t tl_new_size __attribute__((tls_model("initial-exec"))) = 0;

// The heap had no memory: the new-handler loop (or nullptr for nothrow).
template <bool kNothrow>
[[gnu::noinline, gnu::cold]] void* new_failed(const void* site) {
  const std::size_t size = tl_new_size;  // before the handler, which may call new
  for (;;) {
    if (!call_new_handler(kNothrow)) return nullptr;
    if (void* p = malloc_inline_at(size, site)) return p;
  }
}

// operator new's slow path, reached by a tail call from the operator: its
// return address is the program's call site (call-site pools, site_pool.h),
// and the operator's fast path needs no stack frame for the retry loop.
template <bool kNothrow>
[[gnu::noinline]] void* new_slow(std::size_t size) {
  tl_new_size = size;
  void* p = heap_malloc_site(tl_heap, size, __builtin_return_address(0));
  if (TAILOR_LIKELY(p != nullptr)) return p;
  return new_failed<kNothrow>(__builtin_return_address(0));
}

inline void* new_impl(std::size_t size, bool nothrow) {
  if (void* p = malloc_fast(tl_heap, size); TAILOR_LIKELY(p != nullptr)) return p;
  return nothrow ? new_slow<true>(size) : new_slow<false>(size);
}

void* new_aligned(std::size_t size, std::size_t align, bool nothrow) {
  void* p = aligned_impl(align, size);
  while (TAILOR_UNLIKELY(p == nullptr)) {
    if (!call_new_handler(nothrow)) return nullptr;
    p = aligned_impl(align, size);
  }
  return p;
}

}  // namespace

#define TAILOR_NEW_EXPORT __attribute__((visibility("default")))

TAILOR_NEW_EXPORT void* operator new(std::size_t n) { return new_impl(n, false); }
TAILOR_NEW_EXPORT void* operator new[](std::size_t n) { return new_impl(n, false); }
TAILOR_NEW_EXPORT void* operator new(std::size_t n, const std::nothrow_t&) noexcept { return new_impl(n, true); }
TAILOR_NEW_EXPORT void* operator new[](std::size_t n, const std::nothrow_t&) noexcept { return new_impl(n, true); }
TAILOR_NEW_EXPORT void* operator new(std::size_t n, std::align_val_t a) {
  return new_aligned(n, static_cast<std::size_t>(a), false);
}
TAILOR_NEW_EXPORT void* operator new[](std::size_t n, std::align_val_t a) {
  return new_aligned(n, static_cast<std::size_t>(a), false);
}
TAILOR_NEW_EXPORT void* operator new(std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
  return new_aligned(n, static_cast<std::size_t>(a), true);
}
TAILOR_NEW_EXPORT void* operator new[](std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
  return new_aligned(n, static_cast<std::size_t>(a), true);
}

TAILOR_NEW_EXPORT void operator delete(void* p) noexcept { free_inline(p); }
TAILOR_NEW_EXPORT void operator delete[](void* p) noexcept { free_inline(p); }
TAILOR_NEW_EXPORT void operator delete(void* p, std::size_t n) noexcept { delete_sized_inline(p, n, "operator delete"); }
TAILOR_NEW_EXPORT void operator delete[](void* p, std::size_t n) noexcept {
  delete_sized_inline(p, n, "operator delete[]");
}
TAILOR_NEW_EXPORT void operator delete(void* p, const std::nothrow_t&) noexcept { free_inline(p); }
TAILOR_NEW_EXPORT void operator delete[](void* p, const std::nothrow_t&) noexcept { free_inline(p); }
TAILOR_NEW_EXPORT void operator delete(void* p, std::align_val_t) noexcept { free_inline(p); }
TAILOR_NEW_EXPORT void operator delete[](void* p, std::align_val_t) noexcept { free_inline(p); }
TAILOR_NEW_EXPORT void operator delete(void* p, std::size_t n, std::align_val_t a) noexcept {
  free_sized_inline(p, n, static_cast<std::size_t>(a), "operator delete");
}
TAILOR_NEW_EXPORT void operator delete[](void* p, std::size_t n, std::align_val_t a) noexcept {
  free_sized_inline(p, n, static_cast<std::size_t>(a), "operator delete[]");
}
TAILOR_NEW_EXPORT void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept { free_inline(p); }
TAILOR_NEW_EXPORT void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept { free_inline(p); }
