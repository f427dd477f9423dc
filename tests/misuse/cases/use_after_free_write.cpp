// Writes into a freed block, then allocates blocks of its size again.
#include "common.h"
int main() {
  auto* p = static_cast<unsigned char*>(alloc_bytes(48));
  std::free(p);
  std::memset(opaque(p), 0x41, 48);
  for (int i = 0; i < 4; ++i) std::free(alloc_bytes(48));
  return unnoticed();
}
