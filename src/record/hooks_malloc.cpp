// SPDX-License-Identifier: MIT
// The C allocation entry points the recorder interposes. Each forwards to the
// next definition (real_functions.h) and records one event. Times are taken
// after a call that returns a block and before a call that releases one, so
// that merging threads by time never puts a block's free before its allocation.
// Calls made while the thread is already inside the recorder (or a hook) pass
// straight through: dlsym bootstrap, zstd, libstdc++'s new calling malloc.
// Each hook first asks the sampler's filters (sampler.h): in a sampled trace
// an unsampled call goes straight to the real function (a tail call, no
// frame), and a sampled block is recorded and remembered until its release
// (sampled_set.h). The recording paths live in functions of their own.
#include <cerrno>
#include <cstdint>
#include <cstring>

#include <unistd.h>

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

inline bool recording() { return !tls.busy && rec::active(); }

void* pass_malloc(std::size_t n) { return real.malloc ? real.malloc(n) : rec::bootstrap_alloc(n); }

void pass_free(void* p) {
  if (!p || rec::is_bootstrap(p)) return;
  if (real.free) real.free(p);
}

void* pass_calloc(std::size_t n, std::size_t size) {
  if (real.calloc) return real.calloc(n, size);
  std::size_t bytes;
  if (__builtin_mul_overflow(n, size, &bytes)) {
    errno = ENOMEM;
    return nullptr;
  }
  return rec::bootstrap_alloc(bytes);  // the bootstrap arena is zero and never reused
}

// realloc of a block from the bootstrap arena: move it into real memory.
void* move_from_bootstrap(void* p, std::size_t n) {
  void* q = pass_malloc(n);
  if (q) {
    std::size_t old = rec::bootstrap_size(p);
    std::memcpy(q, p, old < n ? old : n);
  }
  return q;
}

// Sampled traces: an allocation the countdown did not let through
// (passes_unrecorded). `allocate()` makes the call; a sampled block is
// remembered and recorded (with the size `n` and `aux` the call was given;
// `bytes`: the bytes it requests, for the countdown).
template <class Allocate>
[[gnu::noinline]] void* sampled_allocation(Op op, std::uint8_t flags, std::size_t n, std::size_t bytes,
                                           std::uint64_t aux, const void* caller, Allocate allocate) {
  if (!rec::sample_this(bytes)) return allocate();
  BusyScope busy;
  void* p = allocate();
  if (p) rec::keep_sample(op, flags, n, p, aux, caller);
  return p;
}

// realloc in a sampled trace, for a call the filters did not let through.
// The trace sees the release of a sampled old block and the allocation of a
// sampled new one, as one realloc when both are sampled; realloc(p, 0) of a
// sampled p is recorded as realloc does it (a release, no new block).
[[gnu::noinline]] void* sampled_realloc(void* old, std::size_t n, std::uint8_t flags, const void* caller) {
  const bool records = recording();
  const bool old_sampled = old && rec::sampled_set::remove(old);  // before realloc can hand its address out again
  const bool new_sampled = records && n != 0 && !rec::passes_unrecorded(n) && rec::sample_this(n);
  if (!old_sampled && !new_sampled) return real.realloc(old, n);
  BusyScope busy;
  void* q = real.realloc(old, n);
  if (!q && n != 0) {  // failed: the old block stays
    if (old_sampled) rec::sampled_set::insert(old);
    return q;
  }
  const bool kept = new_sampled && q && rec::sampled_set::insert(q);
  if (new_sampled && q && !kept) rec::note_dropped(1);  // keep_sample's rule, recorded below as one realloc
  if (!records) return q;
  const std::uint64_t time = rec::sample_time();
  if (kept) rec::record(Op::Realloc, flags, n, addr(q), old_sampled ? addr(old) : 0, caller, time);
  else if (old_sampled && !q) rec::record(Op::Realloc, flags, 0, 0, addr(old), caller, time);  // realloc(p, 0)
  else if (old_sampled) rec::record(Op::Free, 0, 0, addr(old), 0, caller, time);
  return q;
}

bool valid_alignment(std::size_t alignment) {
  return alignment >= sizeof(void*) && (alignment & (alignment - 1)) == 0;
}

// The hooks' recording paths, apart from their filters so that an unrecorded
// call is a filter and a tail call, with no frame of its own.

[[gnu::noinline]] void* malloc_hooked(std::size_t n, const void* caller) {
  if (!recording()) return pass_malloc(n);
  if (rec::sample_interval) return sampled_allocation(Op::Malloc, 0, n, n, 0, caller, [n] { return real.malloc(n); });
  BusyScope busy;
  void* p = real.malloc(n);
  rec::record(Op::Malloc, 0, n, addr(p), 0, caller, rec::now_ticks());
  return p;
}

[[gnu::noinline]] void free_hooked(void* p, const void* caller) {
  if (rec::sample_interval) {
    rec::forget_sample(Op::Free, 0, 0, p, 0, caller);
    return real.free(p);
  }
  if (!recording()) return pass_free(p);
  BusyScope busy;
  rec::record(Op::Free, 0, 0, addr(p), 0, caller, rec::now_ticks_ordered());
  real.free(p);
}

[[gnu::noinline]] void* calloc_hooked(std::size_t n, std::size_t size, const void* caller) {
  if (!recording()) return pass_calloc(n, size);
  std::size_t bytes;
  if (rec::sample_interval) {
    if (__builtin_mul_overflow(n, size, &bytes)) return real.calloc(n, size);  // fails: nothing to sample
    return sampled_allocation(Op::Calloc, 0, n, bytes, size, caller, [n, size] { return real.calloc(n, size); });
  }
  BusyScope busy;
  void* p = real.calloc(n, size);
  rec::record(Op::Calloc, 0, n, addr(p), size, caller, rec::now_ticks());
  return p;
}

[[gnu::noinline]] void* realloc_hooked(void* old, std::size_t n, const void* caller) {
  if (rec::sample_interval) return sampled_realloc(old, n, 0, caller);
  if (!recording()) return real.realloc ? real.realloc(old, n) : pass_malloc(n);
  BusyScope busy;
  void* p = real.realloc(old, n);
  rec::record(Op::Realloc, 0, n, addr(p), addr(old), caller, rec::now_ticks_ordered());
  return p;
}

[[gnu::noinline]] void* realloc_from_bootstrap(void* old, std::size_t n, const void* caller) {
  void* q = move_from_bootstrap(old, n);
  if (recording()) {
    BusyScope busy;
    rec::record(Op::Malloc, 0, n, addr(q), 0, caller, rec::now_ticks());
  }
  return q;
}

[[gnu::noinline]] void* memalign_hooked(std::size_t alignment, std::size_t n, const void* caller) {
  if (!recording()) return real.memalign ? real.memalign(alignment, n) : rec::bootstrap_alloc(n, alignment);
  if (rec::sample_interval)
    return sampled_allocation(Op::Memalign, 0, n, n, alignment, caller, [=] { return real.memalign(alignment, n); });
  BusyScope busy;
  void* p = real.memalign(alignment, n);
  rec::record(Op::Memalign, 0, n, addr(p), alignment, caller, rec::now_ticks());
  return p;
}

[[gnu::noinline]] int posix_memalign_hooked(void** out, std::size_t alignment, std::size_t n, const void* caller) {
  if (!recording()) {
    if (real.posix_memalign) return real.posix_memalign(out, alignment, n);
    *out = rec::bootstrap_alloc(n, alignment);
    return *out ? 0 : ENOMEM;
  }
  if (rec::sample_interval) {
    if (!valid_alignment(alignment)) return real.posix_memalign(out, alignment, n);  // EINVAL: nothing to sample
    int rc = 0;
    void* p = sampled_allocation(Op::PosixMemalign, 0, n, n, alignment, caller, [&]() -> void* {
      void* q = nullptr;
      rc = real.posix_memalign(&q, alignment, n);
      return rc == 0 ? q : nullptr;
    });
    if (rc == 0) *out = p;
    return rc;
  }
  BusyScope busy;
  void* before = *out;
  int rc = real.posix_memalign(out, alignment, n);
  rec::record(Op::PosixMemalign, 0, n, rc == 0 ? addr(*out) : 0, alignment, caller, rec::now_ticks());
  if (rc != 0) *out = before;
  return rc;
}

[[gnu::noinline]] void* aligned_alloc_hooked(std::size_t alignment, std::size_t n, const void* caller) {
  if (!recording()) return real.aligned_alloc ? real.aligned_alloc(alignment, n) : rec::bootstrap_alloc(n, alignment);
  if (rec::sample_interval)
    return sampled_allocation(Op::AlignedAlloc, 0, n, n, alignment, caller,
                              [=] { return real.aligned_alloc(alignment, n); });
  BusyScope busy;
  void* p = real.aligned_alloc(alignment, n);
  rec::record(Op::AlignedAlloc, 0, n, addr(p), alignment, caller, rec::now_ticks());
  return p;
}

[[gnu::noinline]] void* valloc_hooked(std::size_t n, const void* caller) {
  if (!recording()) return real.valloc ? real.valloc(n) : rec::bootstrap_alloc(n, 4096);
  const auto page = static_cast<std::uint64_t>(sysconf(_SC_PAGESIZE));
  if (rec::sample_interval) return sampled_allocation(Op::Valloc, 0, n, n, page, caller, [n] { return real.valloc(n); });
  BusyScope busy;
  void* p = real.valloc(n);
  rec::record(Op::Valloc, 0, n, addr(p), page, caller, rec::now_ticks());
  return p;
}

[[gnu::noinline]] void* pvalloc_hooked(std::size_t n, const void* caller) {
  if (!recording()) return real.pvalloc ? real.pvalloc(n) : rec::bootstrap_alloc(n, 4096);
  const auto page = static_cast<std::uint64_t>(sysconf(_SC_PAGESIZE));
  if (rec::sample_interval) {
    const std::size_t rounded = n ? (n + page - 1) & ~(page - 1) : page;  // what pvalloc allocates
    return sampled_allocation(Op::Pvalloc, 0, n, rounded < n ? n : rounded, page, caller,
                              [n] { return real.pvalloc(n); });
  }
  BusyScope busy;
  void* p = real.pvalloc(n);
  rec::record(Op::Pvalloc, 0, n, addr(p), page, caller, rec::now_ticks());
  return p;
}

void forward_free_sized(void* p, std::size_t size) {
  if (real.free_sized) real.free_sized(p, size); else real.free(p);
}

void forward_free_aligned_sized(void* p, std::size_t alignment, std::size_t size) {
  if (real.free_aligned_sized) real.free_aligned_sized(p, alignment, size); else real.free(p);
}

[[gnu::noinline]] void free_sized_hooked(void* p, std::size_t size, const void* caller) {
  if (rec::sample_interval) {
    rec::forget_sample(Op::Free, tr::kSized, size, p, 0, caller);
    return forward_free_sized(p, size);
  }
  if (!recording()) return real.free_sized ? real.free_sized(p, size) : pass_free(p);
  BusyScope busy;
  rec::record(Op::Free, tr::kSized, size, addr(p), 0, caller, rec::now_ticks_ordered());
  forward_free_sized(p, size);
}

[[gnu::noinline]] void free_aligned_sized_hooked(void* p, std::size_t alignment, std::size_t size, const void* caller) {
  if (rec::sample_interval) {
    rec::forget_sample(Op::Free, tr::kSized | tr::kAligned, size, p, alignment, caller);
    return forward_free_aligned_sized(p, alignment, size);
  }
  if (!recording()) return real.free_aligned_sized ? real.free_aligned_sized(p, alignment, size) : pass_free(p);
  BusyScope busy;
  rec::record(Op::Free, tr::kSized | tr::kAligned, size, addr(p), alignment, caller, rec::now_ticks_ordered());
  forward_free_aligned_sized(p, alignment, size);
}

}  // namespace

extern "C" {

#define TAILOR_EXPORT __attribute__((visibility("default")))
#define CALLER __builtin_return_address(0)

TAILOR_EXPORT void* malloc(std::size_t n) {
  if (__builtin_expect(rec::passes_unrecorded(n), 1)) return real.malloc(n);
  return malloc_hooked(n, CALLER);
}

TAILOR_EXPORT void free(void* p) {
  if (rec::is_bootstrap(p)) return;
  if (__builtin_expect(!rec::release_needs_hook(p), 1)) return real.free(p);
  return free_hooked(p, CALLER);
}

TAILOR_EXPORT void* calloc(std::size_t n, std::size_t size) {
  std::size_t bytes;
  const bool overflow = __builtin_mul_overflow(n, size, &bytes);
  if (__builtin_expect(!overflow && rec::passes_unrecorded(bytes), 1)) return real.calloc(n, size);
  return calloc_hooked(n, size, CALLER);
}

TAILOR_EXPORT void* realloc(void* old, std::size_t n) {
  if (rec::is_bootstrap(old)) return realloc_from_bootstrap(old, n, CALLER);
  if (__builtin_expect(!rec::release_needs_hook(old) && rec::passes_unrecorded(n), 1)) return real.realloc(old, n);
  return realloc_hooked(old, n, CALLER);
}

TAILOR_EXPORT void* reallocarray(void* old, std::size_t n, std::size_t size) {
  std::size_t bytes;
  bool overflow = __builtin_mul_overflow(n, size, &bytes);
  if (rec::is_bootstrap(old) || !real.reallocarray) {
    if (overflow) {
      errno = ENOMEM;
      return nullptr;
    }
    return realloc(old, bytes);
  }
  if (__builtin_expect(!rec::release_needs_hook(old) && !overflow && rec::passes_unrecorded(bytes), 1))
    return real.reallocarray(old, n, size);
  if (rec::sample_interval) {
    if (overflow) return real.reallocarray(old, n, size);  // fails, and leaves the old block as it was
    return sampled_realloc(old, bytes, tr::kArray, CALLER);
  }
  if (!recording()) return real.reallocarray(old, n, size);
  BusyScope busy;
  void* p = real.reallocarray(old, n, size);
  rec::record(Op::Realloc, tr::kArray, overflow ? UINT64_MAX : bytes, addr(p), addr(old), CALLER,
              rec::now_ticks_ordered());
  return p;
}

TAILOR_EXPORT void* memalign(std::size_t alignment, std::size_t n) {
  if (__builtin_expect(rec::passes_unrecorded(n), 1)) return real.memalign(alignment, n);
  return memalign_hooked(alignment, n, CALLER);
}

TAILOR_EXPORT int posix_memalign(void** out, std::size_t alignment, std::size_t n) {
  if (__builtin_expect(rec::passes_unrecorded(n), 1)) return real.posix_memalign(out, alignment, n);
  return posix_memalign_hooked(out, alignment, n, CALLER);
}

TAILOR_EXPORT void* aligned_alloc(std::size_t alignment, std::size_t n) {
  if (__builtin_expect(rec::passes_unrecorded(n), 1)) return real.aligned_alloc(alignment, n);
  return aligned_alloc_hooked(alignment, n, CALLER);
}

TAILOR_EXPORT void* valloc(std::size_t n) {
  if (__builtin_expect(rec::passes_unrecorded(n), 1)) return real.valloc(n);
  return valloc_hooked(n, CALLER);
}

TAILOR_EXPORT void* pvalloc(std::size_t n) {
  if (__builtin_expect(rec::passes_unrecorded(n), 1)) return real.pvalloc(n);
  return pvalloc_hooked(n, CALLER);
}

// C23 sized frees (glibc 2.43); forwarded to plain free where libc lacks them.
TAILOR_EXPORT void free_sized(void* p, std::size_t size) {
  if (rec::is_bootstrap(p)) return;
  if (__builtin_expect(!rec::release_needs_hook(p), 1)) return forward_free_sized(p, size);
  return free_sized_hooked(p, size, CALLER);
}

TAILOR_EXPORT void free_aligned_sized(void* p, std::size_t alignment, std::size_t size) {
  if (rec::is_bootstrap(p)) return;
  if (__builtin_expect(!rec::release_needs_hook(p), 1)) return forward_free_aligned_sized(p, alignment, size);
  return free_aligned_sized_hooked(p, alignment, size, CALLER);
}

}  // extern "C"
