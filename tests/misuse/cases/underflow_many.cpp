// Writes 32 bytes before the start of a block, then frees it.
#include "common.h"
int main() {
  void* keep = alloc_bytes(40);
  auto* p = static_cast<unsigned char*>(alloc_bytes(40));
  std::memset(opaque(p) - 32, 0x41, 32);
  std::free(p);
  std::free(keep);
  return unnoticed();
}
