// SPDX-License-Identifier: MIT
// The definitions our hooks stand in front of: libc's (or whatever allocator
// comes next in symbol order) malloc family, operator new/delete, and the
// process-ending calls, resolved with dlsym(RTLD_NEXT). dlsym itself may
// allocate before the pointers are known; those requests are served from a
// small static bootstrap heap that is never freed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <new>

namespace tailor::record {

struct RealFunctions {
  void* (*malloc)(std::size_t);
  void (*free)(void*);
  void* (*calloc)(std::size_t, std::size_t);
  void* (*realloc)(void*, std::size_t);
  void* (*reallocarray)(void*, std::size_t, std::size_t);
  void* (*memalign)(std::size_t, std::size_t);
  int (*posix_memalign)(void**, std::size_t, std::size_t);
  void* (*aligned_alloc)(std::size_t, std::size_t);
  void* (*valloc)(std::size_t);
  void* (*pvalloc)(std::size_t);
  void (*free_sized)(void*, std::size_t);
  void (*free_aligned_sized)(void*, std::size_t, std::size_t);

  // The C++ runtime's new-handler and bad_alloc thrower (libstdc++), null if
  // the program has no C++ runtime. operator new is implemented on malloc with
  // these, as libstdc++ does, so that no exception crosses a recorder frame
  // while its thread is marked busy.
  std::new_handler (*get_new_handler)();
  [[noreturn]] void (*throw_bad_alloc)();

  // operator delete of the next object, null if none is loaded or if it is
  // the C++ runtime's own (libstdc++, libc++), which does nothing but call
  // free: the hooks then call free themselves, instead of a trip through the
  // runtime and back into this library's operator delete and free hooks
  // (about 120 instructions of a recorded delete). A replacement delete from
  // another library (an allocator preloaded after the recorder) is kept.
  void (*op_delete)(void*);
  void (*op_delete_array)(void*);
  void (*op_delete_sized)(void*, std::size_t);
  void (*op_delete_array_sized)(void*, std::size_t);
  void (*op_delete_aligned)(void*, std::align_val_t);
  void (*op_delete_array_aligned)(void*, std::align_val_t);
  void (*op_delete_sized_aligned)(void*, std::size_t, std::align_val_t);
  void (*op_delete_array_sized_aligned)(void*, std::size_t, std::align_val_t);
  void (*op_delete_nothrow)(void*, const std::nothrow_t&);
  void (*op_delete_array_nothrow)(void*, const std::nothrow_t&);
  void (*op_delete_aligned_nothrow)(void*, std::align_val_t, const std::nothrow_t&);
  void (*op_delete_array_aligned_nothrow)(void*, std::align_val_t, const std::nothrow_t&);

  // Process control.
  [[noreturn]] void (*exit_now)(int);  // _exit
  [[noreturn]] void (*Exit_now)(int);  // _Exit
  [[noreturn]] void (*abort)();
  [[noreturn]] void (*assert_fail)(const char*, const char*, unsigned, const char*);
  int (*execve)(const char*, char* const[], char* const[]);
  int (*execv)(const char*, char* const[]);
  int (*execvp)(const char*, char* const[]);
  int (*execvpe)(const char*, char* const[], char* const[]);
  int (*fexecve)(int, char* const[], char* const[]);

  // The loader.
  int (*dlclose)(void*);
};

/// The resolved functions; all null until resolve_real_functions() returned.
extern RealFunctions real;

/// Fills `real`. Idempotent; the caller must have marked its thread busy so
/// that allocations made by dlsym reach the bootstrap heap.
void resolve_real_functions() noexcept;

/// Allocation for the window in which `real.malloc` is still null.
void* bootstrap_alloc(std::size_t size, std::size_t alignment = 16) noexcept;
/// The bootstrap heap's memory (real_functions.cpp).
inline constexpr std::size_t kBootstrapBytes = 1 << 18;
extern unsigned char bootstrap_arena[kBootstrapBytes] __attribute__((visibility("hidden")));
/// True if p came from bootstrap_alloc (such blocks are never released).
/// Inline: every free and delete asks.
inline bool is_bootstrap(const void* p) noexcept {
  return reinterpret_cast<std::uintptr_t>(p) - reinterpret_cast<std::uintptr_t>(bootstrap_arena) < kBootstrapBytes;
}
/// Size requested from bootstrap_alloc for p.
std::size_t bootstrap_size(const void* p) noexcept;

}  // namespace tailor::record
