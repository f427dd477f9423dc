// SPDX-License-Identifier: MIT
// Shared by the misuse programs: each does one wrong thing with the heap and
// then exits 0, so that an allocator that does not notice lets it finish.
#pragma once

#include <unistd.h>

#include <csignal>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>

// Hides a pointer's origin from the compiler, so that it neither warns about
// nor optimizes away the misuse.
template <class T>
T* opaque(T* p) {
  asm volatile("" : "+r"(p));
  return p;
}

inline void* alloc_bytes(std::size_t n) {
  void* p = std::malloc(n);
  if (p == nullptr) std::exit(2);
  std::memset(p, 0x5a, n);
  return opaque(p);
}

// The size of the blocks a case works on, from its first argument: small
// (the case's own size, the default), medium (3 KiB more: a middle size
// class in libtailor, glibc's small bins) or large (512 KiB more: above
// glibc's mmap threshold, a large block in libtailor). The small size's
// remainder modulo 16 is kept, so that a block's end stays where the case
// put it relative to the size classes. Exit 64 on another argument.
inline std::size_t case_size(int argc, char** argv, std::size_t small) {
  if (argc < 2 || std::strcmp(argv[1], "small") == 0) return small;
  if (std::strcmp(argv[1], "medium") == 0) return small + 3 * 1024;
  if (std::strcmp(argv[1], "large") == 0) return small + 512 * 1024;
  std::fprintf(stderr, "usage: %s [small|medium|large]\n", argv[0]);
  std::exit(64);
}

// Reached when the allocator's layout defeated the misuse without a report
// (a freed block not handed out again at once, freed or fresh memory that
// holds no earlier data): exit 3, which the suite counts as prevented.
inline int prevented(const char* how) {
  std::fprintf(stderr, "misuse prevented: %s\n", how);
  return 3;
}

// The misuse's own accesses (a write past a block, a read of freed memory)
// run inside an Access: a fault there is the allocator stopping the misuse
// at the access (a guard page, a no-access region), and the program exits
// 4, which the suite counts as caught (fault). A fault anywhere else (inside
// malloc or free following a damaged link) stays a crash.
inline volatile sig_atomic_t g_in_access = 0;
extern "C" inline void on_access_fault(int sig) {
  if (g_in_access != 0) _exit(4);
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}
struct Access {
  Access() {
    std::signal(SIGSEGV, on_access_fault);
    std::signal(SIGBUS, on_access_fault);
    g_in_access = 1;
  }
  ~Access() { g_in_access = 0; }
  Access(const Access&) = delete;
  Access& operator=(const Access&) = delete;
};

// Reached only if the misuse went unnoticed.
inline int unnoticed() {
  std::fputs("misuse not detected\n", stderr);
  return 0;
}
