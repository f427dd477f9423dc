// SPDX-License-Identifier: MIT
// Shared by the misuse programs: each does one wrong thing with the heap and
// then exits 0, so that an allocator that does not notice lets it finish.
#pragma once

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

// Reached only if the misuse went unnoticed.
inline int unnoticed() {
  std::fputs("misuse not detected\n", stderr);
  return 0;
}
