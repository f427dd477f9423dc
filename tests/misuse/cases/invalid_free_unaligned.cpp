// Frees a pointer one byte past the start of a block.
#include "common.h"
int main() {
  auto* p = static_cast<char*>(alloc_bytes(64));
  std::free(opaque(p + 1));
  return unnoticed();
}
