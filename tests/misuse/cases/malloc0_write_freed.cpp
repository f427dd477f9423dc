// SPDX-License-Identifier: MIT
// Frees the pointer malloc(0) returned, then writes through it.
#include "common.h"
int main() {
  auto* p = static_cast<unsigned char*>(opaque(std::malloc(0)));
  if (p == nullptr) return 77;
  std::free(p);
  auto* q = static_cast<volatile unsigned char*>(opaque(p));
  {
    Access a;
    for (int i = 0; i < 8; ++i) q[i] = 0x41;
  }
  std::free(alloc_bytes(16));
  return unnoticed();
}
