// Frees a pointer 4 KiB into a 1 MiB block.
#include "common.h"
int main() {
  auto* p = static_cast<char*>(alloc_bytes(1u << 20));
  std::free(opaque(p + 4096));
  return unnoticed();
}
