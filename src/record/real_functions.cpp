// SPDX-License-Identifier: MIT
// Resolution of the next definitions and the bootstrap heap (see the header).
#include "record/real_functions.h"

#include <dlfcn.h>

#include <atomic>
#include <cstdint>
#include <cstring>

namespace tailor::record {

RealFunctions real{};

namespace {

// dlsym's own allocations (a few hundred bytes in glibc) and anything else
// that arrives before resolution finishes.
std::atomic<std::size_t> bootstrap_used{0};

template <class F>
void next(F& slot, const char* name) noexcept {
  slot = reinterpret_cast<F>(dlsym(RTLD_NEXT, name));
}

// True if fn is defined in a C++ runtime whose operator delete only calls free.
template <class F>
bool in_cxx_runtime(F fn) noexcept {
  Dl_info info;
  if (!fn || dladdr(reinterpret_cast<void*>(fn), &info) == 0 || !info.dli_fname) return false;
  const char* base = std::strrchr(info.dli_fname, '/');
  base = base ? base + 1 : info.dli_fname;
  return std::strncmp(base, "libstdc++.so", 12) == 0 || std::strncmp(base, "libc++.so", 9) == 0;
}

// The next operator delete, or null if it is the runtime's (see RealFunctions).
template <class F>
void next_delete(F& slot, const char* name) noexcept {
  next(slot, name);
  if (in_cxx_runtime(slot)) slot = nullptr;
}

}  // namespace

alignas(64) unsigned char bootstrap_arena[kBootstrapBytes];

void* bootstrap_alloc(std::size_t size, std::size_t alignment) noexcept {
  if (alignment < 16) alignment = 16;
  std::size_t header = alignment;  // size is kept in the word just below the block
  std::size_t used = bootstrap_used.load(std::memory_order_relaxed);
  for (;;) {
    std::size_t start = (used + header + alignment - 1) & ~(alignment - 1);
    if (start + size > kBootstrapBytes || start + size < start) return nullptr;
    if (bootstrap_used.compare_exchange_weak(used, start + size, std::memory_order_relaxed)) {
      std::uint64_t sz = size;
      std::memcpy(bootstrap_arena + start - sizeof sz, &sz, sizeof sz);
      return bootstrap_arena + start;
    }
  }
}

std::size_t bootstrap_size(const void* p) noexcept {
  std::uint64_t sz;
  std::memcpy(&sz, static_cast<const unsigned char*>(p) - sizeof sz, sizeof sz);
  return sz;
}

void resolve_real_functions() noexcept {
  if (real.malloc) return;
  RealFunctions r{};
  // Allocation entry points first, so that later dlsym calls can allocate for real.
  next(r.free, "free");
  next(r.calloc, "calloc");
  next(r.realloc, "realloc");
  next(r.malloc, "malloc");
  next(r.reallocarray, "reallocarray");
  next(r.memalign, "memalign");
  next(r.posix_memalign, "posix_memalign");
  next(r.aligned_alloc, "aligned_alloc");
  next(r.valloc, "valloc");
  next(r.pvalloc, "pvalloc");
  next(r.free_sized, "free_sized");
  next(r.free_aligned_sized, "free_aligned_sized");

  next(r.get_new_handler, "_ZSt15get_new_handlerv");
  next(r.throw_bad_alloc, "_ZSt17__throw_bad_allocv");
  next_delete(r.op_delete, "_ZdlPv");
  next_delete(r.op_delete_array, "_ZdaPv");
  next_delete(r.op_delete_sized, "_ZdlPvm");
  next_delete(r.op_delete_array_sized, "_ZdaPvm");
  next_delete(r.op_delete_aligned, "_ZdlPvSt11align_val_t");
  next_delete(r.op_delete_array_aligned, "_ZdaPvSt11align_val_t");
  next_delete(r.op_delete_sized_aligned, "_ZdlPvmSt11align_val_t");
  next_delete(r.op_delete_array_sized_aligned, "_ZdaPvmSt11align_val_t");
  next_delete(r.op_delete_nothrow, "_ZdlPvRKSt9nothrow_t");
  next_delete(r.op_delete_array_nothrow, "_ZdaPvRKSt9nothrow_t");
  next_delete(r.op_delete_aligned_nothrow, "_ZdlPvSt11align_val_tRKSt9nothrow_t");
  next_delete(r.op_delete_array_aligned_nothrow, "_ZdaPvSt11align_val_tRKSt9nothrow_t");

  next(r.exit_now, "_exit");
  next(r.Exit_now, "_Exit");
  next(r.abort, "abort");
  next(r.assert_fail, "__assert_fail");
  next(r.execve, "execve");
  next(r.execv, "execv");
  next(r.execvp, "execvp");
  next(r.execvpe, "execvpe");
  next(r.fexecve, "fexecve");
  next(r.dlclose, "dlclose");

  // Publish malloc last: hooks test it to know resolution is complete.
  RealFunctions copy = r;
  copy.malloc = nullptr;
  real = copy;
  std::atomic_thread_fence(std::memory_order_release);
  __atomic_store_n(&real.malloc, r.malloc, __ATOMIC_RELEASE);
}

}  // namespace tailor::record
