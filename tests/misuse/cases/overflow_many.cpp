// Writes 64 bytes past the end of a 40-byte block, then frees it and its neighbours.
#include "common.h"
int main() {
  auto* p = static_cast<unsigned char*>(alloc_bytes(40));
  void* q = alloc_bytes(40);
  void* r = alloc_bytes(40);
  std::memset(opaque(p) + 40, 0x41, 64);
  std::free(p);
  std::free(q);
  std::free(r);
  return unnoticed();
}
