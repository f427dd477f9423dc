// SPDX-License-Identifier: MIT
// Every form of C++ operator new and delete (plain, array, sized, aligned,
// nothrow), recorded as New / Delete events whose flags tell the form apart.
//
// new is implemented here on the next malloc / aligned_alloc with the
// standard new-handler loop, exactly as libstdc++ implements it, rather than
// forwarded to libstdc++'s operator new: a bad_alloc thrown from inside a
// forwarded call would unwind through a frame holding the thread's busy mark.
// Here the handler runs and bad_alloc is thrown outside any recorder state,
// and the recorder needs no C++ runtime of its own (it is built without
// exceptions and linked without libstdc++). delete forwards to the next
// definition when another library replaces it, else straight to free (the
// C++ runtime's delete would only call free, through this library's hooks
// again).
#include <cstdint>
#include <cstdlib>
#include <new>

#include "record/real_functions.h"
#include "record/recorder.h"
#include "record/sampler.h"

using tailor::record::BusyScope;
using tailor::record::real;
using tailor::record::tls;
using tailor::trace::Op;
namespace rec = tailor::record;
namespace tr = tailor::trace;

namespace {

std::uint64_t addr(const void* p) { return reinterpret_cast<std::uint64_t>(p); }

[[gnu::always_inline]] inline void* raw_alloc(std::size_t n, std::size_t alignment) {
  if (alignment <= alignof(std::max_align_t)) return real.malloc ? real.malloc(n) : rec::bootstrap_alloc(n);
  if (!real.aligned_alloc) return rec::bootstrap_alloc(n, alignment);
  return real.aligned_alloc(alignment, (n + alignment - 1) & ~(alignment - 1));
}

// A sampled trace's attempt that the countdown did not let through: a
// sampled block is remembered and recorded (sampler.h, keep_sample).
[[gnu::noinline]] void* sampled_attempt(const void* caller, std::uint8_t flags, std::size_t n, std::size_t request,
                                        std::size_t alignment) {
  if (!rec::sample_this(request)) return raw_alloc(request, alignment);
  BusyScope busy;
  void* p = raw_alloc(request, alignment);
  if (p) rec::keep_sample(Op::New, flags, n, p, alignment, caller);
  return p;
}

// One attempt, recorded (with the size the program asked for) if it succeeds.
[[gnu::always_inline]] inline void* attempt(const void* caller, std::uint8_t flags, std::size_t n, std::size_t alignment) {
  std::size_t request = n ? n : 1;  // new(0) must return a unique pointer
  if (__builtin_expect(rec::passes_unrecorded(request), 1)) return raw_alloc(request, alignment);
  if (tls.busy || !rec::active()) return raw_alloc(request, alignment);
  if (rec::sample_interval) return sampled_attempt(caller, flags, n, request, alignment);
  BusyScope busy;
  void* p = raw_alloc(request, alignment);
  if (p) rec::record(Op::New, flags, n, addr(p), alignment, caller, rec::now_ticks());
  return p;
}

// The nothrow form's final answer, a null pointer, recorded as a failed New.
[[gnu::noinline]] void* failed(const void* caller, std::uint8_t flags, std::size_t n, std::size_t alignment) {
  if (!tls.busy && rec::active()) {
    BusyScope busy;
    rec::record(Op::New, flags, n, 0, alignment, caller, rec::now_ticks());
  }
  return nullptr;
}

// The new-handler is asked for only once an attempt has failed, as libstdc++
// does: a successful new costs no call into the C++ runtime.
[[gnu::noinline]] void* new_hooked(const void* caller, std::uint8_t flags, std::size_t n, std::size_t alignment) {
  for (;;) {
    if (void* p = attempt(caller, flags, n, alignment)) return p;
    std::new_handler handler = real.get_new_handler ? real.get_new_handler() : nullptr;
    if (!handler) {
      if (flags & tr::kNothrow) return failed(caller, flags, n, alignment);
      if (real.throw_bad_alloc) real.throw_bad_alloc();
      std::abort();  // operator new called without a C++ runtime loaded
    }
    handler();  // may throw bad_alloc: no recorder state is held here
  }
}

// The filter (sampler.h) inline, the rest apart: an unrecorded new is a
// filter and a call of the real malloc.
// The call site is read only on the recording path (an inlined
// __builtin_return_address(0) is the exported operator's).
[[gnu::always_inline]] inline void* hook_new(std::uint8_t flags, std::size_t n, std::size_t alignment) {
  // new(0) must return a unique block; glibc's malloc(0) does, and any other's null goes on to attempt().
  if (__builtin_expect(alignment == 0 && rec::passes_unrecorded(n), 1))
    if (void* p = real.malloc(n); __builtin_expect(p != nullptr, 1)) return p;
  return new_hooked(__builtin_return_address(0), flags, n, alignment);
}

template <class Next, class... Args>
[[gnu::noinline]] void delete_hooked(const void* caller, std::uint8_t flags, Next next, void* p, std::size_t size,
                                     std::size_t alignment, Args... args) {
  if (rec::sample_interval) {
    rec::forget_sample(Op::Delete, flags, size, p, alignment, caller);
    if (next) next(p, args...); else real.free(p);
    return;
  }
  if (!tls.busy && rec::active()) {
    BusyScope busy;
    rec::record(Op::Delete, flags, size, addr(p), alignment, caller, rec::now_ticks_ordered());
    if (next) next(p, args...); else if (real.free) real.free(p);
    return;
  }
  if (next) next(p, args...); else if (real.free) real.free(p);
}

template <class Next, class... Args>
[[gnu::always_inline]] inline void hook_delete(std::uint8_t flags, Next next, void* p, std::size_t size,
                                               std::size_t alignment, Args... args) {
  if (rec::is_bootstrap(p)) return;
  if (__builtin_expect(!rec::release_needs_hook(p), 1)) {
    if (next) return next(p, args...);
    return real.free(p);
  }
  delete_hooked(__builtin_return_address(0), flags, next, p, size, alignment, args...);
}

constexpr std::uint8_t kArr = tr::kArray;
constexpr std::uint8_t kAl = tr::kAligned;
constexpr std::uint8_t kNo = tr::kNothrow;
constexpr std::uint8_t kSz = tr::kSized;
std::size_t al(std::align_val_t a) { return static_cast<std::size_t>(a); }

}  // namespace

#define TAILOR_EXPORT __attribute__((visibility("default")))

TAILOR_EXPORT void* operator new(std::size_t n) { return hook_new(0, n, 0); }
TAILOR_EXPORT void* operator new[](std::size_t n) { return hook_new(kArr, n, 0); }
TAILOR_EXPORT void* operator new(std::size_t n, const std::nothrow_t&) noexcept { return hook_new(kNo, n, 0); }
TAILOR_EXPORT void* operator new[](std::size_t n, const std::nothrow_t&) noexcept {
  return hook_new(kArr | kNo, n, 0);
}
TAILOR_EXPORT void* operator new(std::size_t n, std::align_val_t a) { return hook_new(kAl, n, al(a)); }
TAILOR_EXPORT void* operator new[](std::size_t n, std::align_val_t a) { return hook_new(kArr | kAl, n, al(a)); }
TAILOR_EXPORT void* operator new(std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
  return hook_new(kAl | kNo, n, al(a));
}
TAILOR_EXPORT void* operator new[](std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
  return hook_new(kArr | kAl | kNo, n, al(a));
}

TAILOR_EXPORT void operator delete(void* p) noexcept { hook_delete(0, real.op_delete, p, 0, 0); }
TAILOR_EXPORT void operator delete[](void* p) noexcept { hook_delete(kArr, real.op_delete_array, p, 0, 0); }
TAILOR_EXPORT void operator delete(void* p, std::size_t n) noexcept {
  hook_delete(kSz, real.op_delete_sized, p, n, 0, n);
}
TAILOR_EXPORT void operator delete[](void* p, std::size_t n) noexcept {
  hook_delete(kArr | kSz, real.op_delete_array_sized, p, n, 0, n);
}
TAILOR_EXPORT void operator delete(void* p, std::align_val_t a) noexcept {
  hook_delete(kAl, real.op_delete_aligned, p, 0, al(a), a);
}
TAILOR_EXPORT void operator delete[](void* p, std::align_val_t a) noexcept {
  hook_delete(kArr | kAl, real.op_delete_array_aligned, p, 0, al(a), a);
}
TAILOR_EXPORT void operator delete(void* p, std::size_t n, std::align_val_t a) noexcept {
  hook_delete(kSz | kAl, real.op_delete_sized_aligned, p, n, al(a), n, a);
}
TAILOR_EXPORT void operator delete[](void* p, std::size_t n, std::align_val_t a) noexcept {
  hook_delete(kArr | kSz | kAl, real.op_delete_array_sized_aligned, p, n, al(a), n, a);
}
TAILOR_EXPORT void operator delete(void* p, const std::nothrow_t& t) noexcept {
  hook_delete(kNo, real.op_delete_nothrow, p, 0, 0, t);
}
TAILOR_EXPORT void operator delete[](void* p, const std::nothrow_t& t) noexcept {
  hook_delete(kArr | kNo, real.op_delete_array_nothrow, p, 0, 0, t);
}
TAILOR_EXPORT void operator delete(void* p, std::align_val_t a, const std::nothrow_t& t) noexcept {
  hook_delete(kAl | kNo, real.op_delete_aligned_nothrow, p, 0, al(a), a, t);
}
TAILOR_EXPORT void operator delete[](void* p, std::align_val_t a, const std::nothrow_t& t) noexcept {
  hook_delete(kArr | kAl | kNo, real.op_delete_array_aligned_nothrow, p, 0, al(a), a, t);
}
