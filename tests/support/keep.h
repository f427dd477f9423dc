// SPDX-License-Identifier: MIT
// keep(): makes the compiler keep an allocation call whose block a support
// program never uses. Without it gcc drops malloc/free pairs (and calls whose
// blocks are never used), and the recorder tests would miss the calls they
// count. Shared by the programs of tests/support rather than copied into each.
#pragma once

namespace tailor::test {

// A pointer that escapes into an asm statement with a memory clobber, in a
// function that is not inlined, is used.
__attribute__((noinline)) inline void* keep(void* p) {
  asm volatile("" : : "r"(p) : "memory");
  return p;
}

}  // namespace tailor::test
