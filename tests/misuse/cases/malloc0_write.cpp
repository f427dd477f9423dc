// SPDX-License-Identifier: MIT
// Writes 8 bytes through the pointer malloc(0) returned, then frees it.
#include "common.h"
int main() {
  auto* p = static_cast<volatile unsigned char*>(opaque(std::malloc(0)));
  if (p == nullptr) return 77;  // an allocator may return NULL: nothing to misuse
  {
    Access a;
    for (int i = 0; i < 8; ++i) p[i] = 0x41;
  }
  std::free(const_cast<unsigned char*>(p));
  return unnoticed();
}
