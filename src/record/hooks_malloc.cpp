// SPDX-License-Identifier: MIT
// The C allocation entry points the recorder interposes. Each forwards to the
// next definition (real_functions.h) and records one event. Times are taken
// after a call that returns a block and before a call that releases one, so
// that merging threads by time never puts a block's free before its allocation.
// Calls made while the thread is already inside the recorder (or a hook) pass
// straight through: dlsym bootstrap, zstd, libstdc++'s new calling malloc.
#include <cerrno>
#include <cstdint>
#include <cstring>

#include <unistd.h>

#include "record/real_functions.h"
#include "record/recorder.h"

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

}  // namespace

extern "C" {

__attribute__((visibility("default"))) void* malloc(std::size_t n) {
  if (!recording()) return pass_malloc(n);
  BusyScope busy;
  void* p = real.malloc(n);
  rec::record(Op::Malloc, 0, n, addr(p), 0, __builtin_return_address(0), rec::now_ticks());
  return p;
}

__attribute__((visibility("default"))) void free(void* p) {
  if (rec::is_bootstrap(p)) return;
  if (!recording()) return pass_free(p);
  BusyScope busy;
  rec::record(Op::Free, 0, 0, addr(p), 0, __builtin_return_address(0), rec::now_ticks_ordered());
  real.free(p);
}

__attribute__((visibility("default"))) void* calloc(std::size_t n, std::size_t size) {
  if (!recording()) return pass_calloc(n, size);
  BusyScope busy;
  void* p = real.calloc(n, size);
  rec::record(Op::Calloc, 0, n, addr(p), size, __builtin_return_address(0), rec::now_ticks());
  return p;
}

__attribute__((visibility("default"))) void* realloc(void* old, std::size_t n) {
  if (rec::is_bootstrap(old)) {
    void* q = move_from_bootstrap(old, n);
    if (recording()) {
      BusyScope busy;
      rec::record(Op::Malloc, 0, n, addr(q), 0, __builtin_return_address(0), rec::now_ticks());
    }
    return q;
  }
  if (!recording()) return real.realloc ? real.realloc(old, n) : pass_malloc(n);
  BusyScope busy;
  void* p = real.realloc(old, n);
  rec::record(Op::Realloc, 0, n, addr(p), addr(old), __builtin_return_address(0), rec::now_ticks_ordered());
  return p;
}

__attribute__((visibility("default"))) void* reallocarray(void* old, std::size_t n, std::size_t size) {
  std::size_t bytes;
  bool overflow = __builtin_mul_overflow(n, size, &bytes);
  if (rec::is_bootstrap(old) || !real.reallocarray) {
    if (overflow) {
      errno = ENOMEM;
      return nullptr;
    }
    return realloc(old, bytes);
  }
  if (!recording()) return real.reallocarray(old, n, size);
  BusyScope busy;
  void* p = real.reallocarray(old, n, size);
  rec::record(Op::Realloc, tr::kArray, overflow ? UINT64_MAX : bytes, addr(p), addr(old), __builtin_return_address(0),
       rec::now_ticks_ordered());
  return p;
}

__attribute__((visibility("default"))) void* memalign(std::size_t alignment, std::size_t n) {
  if (!recording()) return real.memalign ? real.memalign(alignment, n) : rec::bootstrap_alloc(n, alignment);
  BusyScope busy;
  void* p = real.memalign(alignment, n);
  rec::record(Op::Memalign, 0, n, addr(p), alignment, __builtin_return_address(0), rec::now_ticks());
  return p;
}

__attribute__((visibility("default"))) int posix_memalign(void** out, std::size_t alignment, std::size_t n) {
  if (!recording()) {
    if (real.posix_memalign) return real.posix_memalign(out, alignment, n);
    *out = rec::bootstrap_alloc(n, alignment);
    return *out ? 0 : ENOMEM;
  }
  BusyScope busy;
  void* before = *out;
  int rc = real.posix_memalign(out, alignment, n);
  rec::record(Op::PosixMemalign, 0, n, rc == 0 ? addr(*out) : 0, alignment, __builtin_return_address(0), rec::now_ticks());
  if (rc != 0) *out = before;
  return rc;
}

__attribute__((visibility("default"))) void* aligned_alloc(std::size_t alignment, std::size_t n) {
  if (!recording()) return real.aligned_alloc ? real.aligned_alloc(alignment, n) : rec::bootstrap_alloc(n, alignment);
  BusyScope busy;
  void* p = real.aligned_alloc(alignment, n);
  rec::record(Op::AlignedAlloc, 0, n, addr(p), alignment, __builtin_return_address(0), rec::now_ticks());
  return p;
}

__attribute__((visibility("default"))) void* valloc(std::size_t n) {
  if (!recording()) return real.valloc ? real.valloc(n) : rec::bootstrap_alloc(n, 4096);
  BusyScope busy;
  void* p = real.valloc(n);
  rec::record(Op::Valloc, 0, n, addr(p), static_cast<std::uint64_t>(sysconf(_SC_PAGESIZE)), __builtin_return_address(0),
       rec::now_ticks());
  return p;
}

__attribute__((visibility("default"))) void* pvalloc(std::size_t n) {
  if (!recording()) return real.pvalloc ? real.pvalloc(n) : rec::bootstrap_alloc(n, 4096);
  BusyScope busy;
  void* p = real.pvalloc(n);
  rec::record(Op::Pvalloc, 0, n, addr(p), static_cast<std::uint64_t>(sysconf(_SC_PAGESIZE)), __builtin_return_address(0),
       rec::now_ticks());
  return p;
}

// C23 sized frees (glibc 2.43); forwarded to plain free where libc lacks them.
__attribute__((visibility("default"))) void free_sized(void* p, std::size_t size) {
  if (rec::is_bootstrap(p)) return;
  if (!recording()) return real.free_sized ? real.free_sized(p, size) : pass_free(p);
  BusyScope busy;
  rec::record(Op::Free, tr::kSized, size, addr(p), 0, __builtin_return_address(0), rec::now_ticks_ordered());
  if (real.free_sized) real.free_sized(p, size); else real.free(p);
}

__attribute__((visibility("default"))) void free_aligned_sized(void* p, std::size_t alignment, std::size_t size) {
  if (rec::is_bootstrap(p)) return;
  if (!recording()) return real.free_aligned_sized ? real.free_aligned_sized(p, alignment, size) : pass_free(p);
  BusyScope busy;
  rec::record(Op::Free, tr::kSized | tr::kAligned, size, addr(p), alignment, __builtin_return_address(0), rec::now_ticks_ordered());
  if (real.free_aligned_sized) real.free_aligned_sized(p, alignment, size); else real.free(p);
}

}  // extern "C"
