// SPDX-License-Identifier: MIT
// Frees the pointer malloc(0) returned twice.
#include "common.h"
int main() {
  void* p = opaque(std::malloc(0));
  if (p == nullptr) return 77;
  std::free(p);
  std::free(opaque(p));
  return unnoticed();
}
