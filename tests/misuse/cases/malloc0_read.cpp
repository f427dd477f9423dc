// SPDX-License-Identifier: MIT
// Reads 8 bytes through the pointer malloc(0) returned (what a program that
// forgot a length check would print or copy), then frees it.
#include "common.h"
int main() {
  auto* p = static_cast<volatile unsigned char*>(opaque(std::malloc(0)));
  if (p == nullptr) return 77;
  unsigned sum = 0;
  {
    Access a;
    for (int i = 0; i < 8; ++i) sum += p[i];
  }
  std::free(const_cast<unsigned char*>(p));
  std::printf("%u\n", sum);
  return unnoticed();
}
