// Frees a pointer 16 bytes into a 64-byte block.
#include "common.h"
int main() {
  auto* p = static_cast<char*>(alloc_bytes(64));
  std::free(opaque(p + 16));
  return unnoticed();
}
